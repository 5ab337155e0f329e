/**
 * Prepared statements for the hot, fixed-shape statements: a statement whose text starts with the PREPARED mark
 * (`sql`/* prepared *\/ select …``) is sent as a named statement, parsed once per connection and, once PostgreSQL
 * finds its generic plan as good as a custom one (after five runs, `plan_cache_mode = auto`), never planned again.
 * For a lookup by key, parsing and planning cost PostgreSQL several times the execution: the bearer check took
 * 0.3 ms to parse and 0.6 ms to plan for 0.15 ms of running (issue 15; docs/decisions.md "Fewer plans, fewer
 * counts, one validation").
 *
 * Only statements that are marked: a statement whose best plan depends on its values (search, Micro DB queries)
 * stays unnamed and is planned for its values every time, and so does every statement whose text varies with its
 * input (lists spliced in, optional clauses), which would otherwise fill the connection's cache with one-off plans.
 * The names are per connection (`d<connection>_<n>`): the embedded database's pglite-socket serves every
 * connection from one session, which keeps a name after its connection closes; at most PREPARED_MAX texts get one.
 */
import type * as Pg from "pg"

/** The mark a statement's text starts with to be prepared. */
export const PREPARED = "/* prepared */"

/** Distinct marked texts prepared per connection at most; past it a marked statement runs unnamed, as any other. */
export const PREPARED_MAX = 256

let connections = 0

/** Makes `client` send the statements marked PREPARED as named statements (the pool's "connect" hook). */
export const prepareMarked = (client: Pg.PoolClient): void => {
  const connection = ++connections
  const names = new Map<string, string>()
  const nameOf = (text: string) => {
    let name = names.get(text)
    if (name === undefined && names.size < PREPARED_MAX) {
      name = `d${connection}_${names.size + 1}`
      names.set(text, name)
    }
    return name
  }
  const query = client.query.bind(client) as (...args: Array<unknown>) => unknown
  // @effect/sql-pg calls query(text, values, callback); anything else (a config object, a cursor) passes as it is.
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === "string" && text.startsWith(PREPARED) && Array.isArray(values)
      ? nameOf(text)
      : undefined
    return name === undefined ? query(text, values, callback) : query({ name, text, values }, callback)
  }) as typeof client.query
}
