/**
 * Reading PostgreSQL's plans in tests: a statement's `explain` as one text, and a compiled statement's parameters as
 * the literal arguments of an EXECUTE (PostgreSQL takes no bind parameters for a prepared statement's EXECUTE).
 */
import type { Statement } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"

/** The lines of an `explain`, as one text. */
export const planText = (rows: ReadonlyArray<{ readonly "QUERY PLAN": string }>) =>
  rows.map((row) => row["QUERY PLAN"]).join("\n")

/** `explain <options> <statement>` (options such as "(verbose)"), as one text. */
export const planOf = (sql: PgClient.PgClient, statement: Statement.Fragment, options = "") =>
  sql<{ "QUERY PLAN": string }>`explain ${sql.literal(options)} ${statement}`.pipe(Effect.map(planText))

/** A compiled statement's parameters as EXECUTE's arguments: quoted literals, arrays as array literals. */
export const executeArguments = (params: ReadonlyArray<unknown>) =>
  params.map((value) => `'${(Array.isArray(value) ? `{${value.join(",")}}` : String(value)).replaceAll("'", "''")}'`)
    .join(", ")
