// Fixed-window rate limits in the database: counting, refusals with the seconds left in the window, unlimited,
// window resets, exactness under a parallel burst, and pruning of old windows.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { type RateLimit, RateLimits } from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)

/** Every test but the pruning one runs in 2031, far from the 1970 windows that test prunes. */
const MIDNIGHT = Date.UTC(2031, 5, 1)

const limit = (key: string, limit: number, window: Duration.DurationInput = "1 minute"): RateLimit => ({
  key,
  limit,
  window: Duration.decode(window),
  message: "Too many test hits"
})

const hit = (rateLimit: RateLimit) => Effect.flatMap(RateLimits, (limits) => limits.hit(rateLimit))
const count = (key: string, window: Duration.DurationInput = "1 minute") =>
  Effect.flatMap(RateLimits, (limits) => limits.count(key, Duration.decode(window)))

layer(DomainTest)("RateLimits", (it) => {
  it.effect("counts hits per key in the current window", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MIDNIGHT)
      const a = `a-${unique()}`
      const b = `b-${unique()}`
      expect(yield* count(a)).toBe(0)
      for (let n = 0; n < 3; n++) yield* hit(limit(a, 10))
      yield* hit(limit(b, 10))
      expect(yield* count(a)).toBe(3)
      expect(yield* count(b)).toBe(1)
      // Still the same window 59.999 seconds in.
      yield* TestClock.adjust(59_999)
      yield* hit(limit(a, 10))
      expect(yield* count(a)).toBe(4)
    }))

  it.effect("refuses the hit after the limit with rate_limited and the seconds left in the window", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MIDNIGHT + 45_000)
      const key = `over-${unique()}`
      yield* hit(limit(key, 2))
      yield* hit(limit(key, 2))
      const error = yield* Effect.flip(hit(limit(key, 2)))
      expect(error.code).toBe("rate_limited")
      expect(error.status).toBe(429)
      expect(error.retry_after_seconds).toBe(15)
      expect(error.message).toBe("Too many test hits: at most 2 per 1 minute")
      expect(error.details).toEqual({ limit: 2, window: "1 minute" })

      yield* TestClock.adjust(14_500)
      expect((yield* Effect.flip(hit(limit(key, 2)))).retry_after_seconds).toBe(1)
    }))

  it.effect("rounds the seconds left up, in longer windows too", () =>
    Effect.gen(function*() {
      // 10:20:00.500 inside the 10:00–11:00 window: 39 minutes 59.5 seconds left.
      yield* TestClock.setTime(MIDNIGHT + (10 * 60 + 20) * 60_000 + 500)
      const key = `hourly-${unique()}`
      yield* hit(limit(key, 1, "1 hour"))
      const error = yield* Effect.flip(hit(limit(key, 1, "1 hour")))
      expect(error.retry_after_seconds).toBe(2400)

      // A daily window ends at midnight UTC: 13 h 39 min 59.5 s later.
      const daily = `daily-${unique()}`
      yield* hit(limit(daily, 1, "1 day"))
      expect((yield* Effect.flip(hit(limit(daily, 1, "1 day")))).retry_after_seconds).toBe(
        (13 * 60 + 40) * 60
      )
    }))

  it.effect("treats a limit of 0 as unlimited", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MIDNIGHT)
      const key = `unlimited-${unique()}`
      for (let n = 0; n < 100; n++) yield* hit(limit(key, 0))
      const results = yield* Effect.all(Array.from({ length: 50 }, () => Effect.either(hit(limit(key, 0)))), {
        concurrency: "unbounded"
      })
      expect(results.every((result) => result._tag === "Right")).toBe(true)
    }))

  it.effect("starts counting afresh in a new window", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MIDNIGHT + 30_000)
      const key = `reset-${unique()}`
      for (let n = 0; n < 3; n++) yield* hit(limit(key, 3))
      expect((yield* Effect.flip(hit(limit(key, 3)))).code).toBe("rate_limited")
      yield* TestClock.adjust("30 seconds") // the next minute starts
      expect(yield* count(key)).toBe(0)
      for (let n = 0; n < 3; n++) yield* hit(limit(key, 3))
      expect(yield* count(key)).toBe(3)
      expect((yield* Effect.flip(hit(limit(key, 3)))).retry_after_seconds).toBe(60)
    }))

  it.effect("lets exactly the limit through from 50 parallel hits", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MIDNIGHT)
      const key = `burst-${unique()}`
      const results = yield* Effect.all(Array.from({ length: 50 }, () => Effect.either(hit(limit(key, 10)))), {
        concurrency: "unbounded"
      })
      expect(results.filter((result) => result._tag === "Right")).toHaveLength(10)
      const refused = results.flatMap((result) => (result._tag === "Left" ? [result.left] : []))
      expect(refused).toHaveLength(40)
      for (const error of refused) {
        expect(error.code).toBe("rate_limited")
        expect(error.retry_after_seconds).toBe(60)
      }
    }))

  it.effect("counts per-minute rates (durable: false) apart, as exactly: 10 of 50 parallel hits pass", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MIDNIGHT)
      const sql = yield* SqlClient.SqlClient
      const key = `fast-${unique()}`
      const fast = { ...limit(key, 10), durable: false }
      const results = yield* Effect.all(Array.from({ length: 50 }, () => Effect.either(hit(fast))), {
        concurrency: "unbounded"
      })
      expect(results.filter((result) => result._tag === "Right")).toHaveLength(10)
      expect(yield* Effect.flatMap(RateLimits, (limits) => limits.count(key, Duration.minutes(1), false))).toBe(50)
      // In the UNLOGGED table only: the durable counter of the same key is untouched.
      expect(yield* count(key)).toBe(0)
      const table = yield* sql<{ relpersistence: string }>`select relpersistence from pg_class
        where relname = 'request_counters'`
      expect(table).toEqual([{ relpersistence: "u" }])
    }))

  it.effect("rolls a refused hit back with its transaction", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MIDNIGHT)
      const sql = yield* SqlClient.SqlClient
      const key = `tx-${unique()}`
      yield* hit(limit(key, 1))
      const error = yield* Effect.flip(sql.withTransaction(hit(limit(key, 1))))
      expect(error._tag).toBe("RateLimited")
      expect(yield* count(key)).toBe(1)
    }))

  it.effect("claims a period once: the first claim in a window is true, the rest false, a new window claims again", () =>
    Effect.gen(function*() {
      const rateLimits = yield* RateLimits
      const key = `claim:${crypto.randomUUID()}`
      const claims = yield* Effect.all(Array.from({ length: 10 }, () => rateLimits.claim(key, Duration.minutes(1))), {
        concurrency: "unbounded"
      })
      expect(claims.filter((claimed) => claimed)).toHaveLength(1)
      yield* TestClock.adjust("1 minute")
      expect(yield* rateLimits.claim(key, Duration.minutes(1))).toBe(true)
      expect(yield* rateLimits.claim(key, Duration.minutes(1))).toBe(false)
      expect(yield* rateLimits.claim(key, Duration.zero)).toBe(true)
    }))

  it.effect("prunes windows that ended before the given time, and only those", () =>
    Effect.gen(function*() {
      // 1970: before every other test's windows, so the count pruned is exactly this test's.
      yield* TestClock.setTime(0)
      const sql = yield* SqlClient.SqlClient
      const old = `old-${unique()}`
      const other = `other-${unique()}`
      yield* hit(limit(old, 100))
      yield* hit(limit(old, 100))
      yield* hit(limit(other, 100, "1 hour"))
      yield* TestClock.setTime(Duration.toMillis("1 day"))
      yield* hit(limit(old, 100))

      const pruned = yield* Effect.flatMap(RateLimits, (limits) => limits.prune(new Date(Duration.toMillis("1 day"))))
      expect(pruned).toBe(2)
      const left = yield* sql<{ key: string; window_start: Date }>`select key, window_start from rate_limit_counters
        where key in (${old}, ${other})`
      expect(left.map((row) => [row.key, row.window_start.getTime()])).toEqual([[old, Duration.toMillis("1 day")]])
      expect(yield* count(old)).toBe(1)
      expect(yield* Effect.flatMap(RateLimits, (limits) => limits.prune(new Date(Duration.toMillis("1 day"))))).toBe(0)
    }))
})
