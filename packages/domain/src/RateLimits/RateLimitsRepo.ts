/** Rate-limit counters: one row per key and window. SqlError is a defect here. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const makeRateLimitsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** One atomic upsert; answers the window's count after the hits. */
  const addHits = (key: string, windowStart: Date, hits: number) =>
    sql<{ count: number }>`insert into rate_limit_counters (key, window_start, count)
      values (${key}, ${windowStart}, ${hits})
      on conflict (key, window_start) do update set count = rate_limit_counters.count + ${hits}
      returning count`.pipe(Effect.map((rows) => rows[0]?.count ?? 0), Effect.orDie)

  const countInWindow = (key: string, windowStart: Date) =>
    sql<{ count: number }>`select count from rate_limit_counters where key = ${key} and window_start = ${windowStart}`
      .pipe(Effect.map((rows) => rows[0]?.count ?? 0), Effect.orDie)

  /** Answers how many windows went. */
  const deleteWindowsBefore = (before: Date) =>
    sql`delete from rate_limit_counters where window_start < ${before} returning 1`.pipe(
      Effect.map((rows) => rows.length),
      Effect.orDie
    )

  return { addHits, countInWindow, deleteWindowsBefore } as const
})
