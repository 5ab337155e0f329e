/**
 * The ways a service runs statements in a transaction. SQL failures inside are defects (the repos turn the
 * few races a rule cares about into domain errors before they get here), so the transaction's own SqlError
 * never reaches a caller's error channel.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Scope } from "effect"

export const transactional = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>) =>
  sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))

/**
 * Runs statements that must all see the same data (one snapshot) in a read-only repeatable-read transaction that
 * one statement opens: `sql.withTransaction` sends BEGIN, and SET TRANSACTION would be a round trip more on every
 * call (search, issue 15). The rest is `withTransaction`'s own machinery (SqlClient.makeWithTransaction: the
 * connection reserved for the transaction, commit or rollback however the effect ends, interruption included).
 * Within another transaction it is a savepoint of that one, and sees what that one sees.
 */
export const readOnlySnapshot = (sql: SqlClient.SqlClient) =>
  SqlClient.makeWithTransaction({
    transactionTag: SqlClient.TransactionConnection,
    spanAttributes: [],
    acquireConnection: Effect.flatMap(
      Scope.make(),
      (scope) => Effect.map(Scope.extend(sql.reserve, scope), (connection) => [scope, connection] as const)
    ),
    begin: (connection) =>
      connection.executeUnprepared("begin isolation level repeatable read, read only", [], undefined),
    savepoint: (connection, id) => connection.executeUnprepared(`savepoint effect_sql_${id}`, [], undefined),
    commit: (connection) => connection.executeUnprepared("commit", [], undefined),
    rollback: (connection) => connection.executeUnprepared("rollback", [], undefined),
    rollbackSavepoint: (connection, id) =>
      connection.executeUnprepared(`rollback to savepoint effect_sql_${id}`, [], undefined)
  })
