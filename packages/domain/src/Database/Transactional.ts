/**
 * The one way a service runs statements in a transaction. SQL failures inside are defects (the repos turn the
 * few races a rule cares about into domain errors before they get here), so the transaction's own SqlError
 * never reaches a caller's error channel.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const transactional = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>) =>
  sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
