/**
 * Rate-limit counters: one row per key and window, in `rate_limit_counters` (durable) or `request_counters`
 * (UNLOGGED: the per-minute rates). SqlError is a defect here.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"

const tableOf = (durable: boolean) => (durable ? "rate_limit_counters" : "request_counters")

/**
 * The upsert that adds `hits` to the window of each key `keys` yields (a select of one text column), answering the
 * counts after the hits. The bearer check puts it inside its own statement, so that finding a token and counting
 * its request is one round trip; RateLimitsLive runs it alone.
 */
export const hitStatement = (
  sql: SqlClient.SqlClient,
  keys: Statement.Fragment,
  windowStart: Date,
  hits: number,
  durable: boolean
) => {
  const table = sql(tableOf(durable))
  return sql`insert into ${table} (key, window_start, count)
    select k.key, ${windowStart}, ${hits} from (${keys}) k (key)
    on conflict (key, window_start) do update set count = ${table}.count + excluded.count
    returning count`
}

export const makeRateLimitsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** One atomic upsert; answers the window's count after the hits. */
  const addHits = (key: string, windowStart: Date, hits: number, durable: boolean) =>
    sql<{ count: number }>`${hitStatement(sql, sql`select ${key}::text`, windowStart, hits, durable)}`.pipe(
      Effect.map((rows) => rows[0]?.count ?? 0),
      Effect.orDie
    )

  const countInWindow = (key: string, windowStart: Date, durable: boolean) =>
    sql<{ count: number }>`select count from ${sql(tableOf(durable))}
      where key = ${key} and window_start = ${windowStart}`.pipe(
      Effect.map((rows) => rows[0]?.count ?? 0),
      Effect.orDie
    )

  /** Answers how many windows went, of both tables. */
  const deleteWindowsBefore = (before: Date) =>
    sql<{ n: number }>`with durable as (delete from rate_limit_counters where window_start < ${before} returning 1),
        requests as (delete from request_counters where window_start < ${before} returning 1)
      select (select count(*) from durable)::int + (select count(*) from requests)::int as n`.pipe(
      Effect.map((rows) => rows[0]?.n ?? 0),
      Effect.orDie
    )

  return { addHits, countInWindow, deleteWindowsBefore } as const
})
