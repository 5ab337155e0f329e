/**
 * Fixed-window rate limits kept in PostgreSQL, so every instance counts the same hits. A hit is one atomic
 * upsert of the window's row, which every instance increments under that row's lock: the count each hit reads
 * back is exact, and the verdict (`refusalOf`) is taken on it. Inside a transaction the hit also holds the row
 * lock until commit (a refused hit rolls back with its transaction). Per-minute rates live in an UNLOGGED table:
 * as exact, without a WAL flush per hit (docs/decisions.md, "The MCP hot path").
 */
import { Clock, Duration, Effect, Layer } from "effect"
import { traced } from "../Spans.ts"
import { type RateLimit, RateLimits, refusalOf, windowStartOf } from "./RateLimits.ts"
import { makeRateLimitsRepo } from "./RateLimitsRepo.ts"

export const RateLimitsLive = Layer.effect(
  RateLimits,
  Effect.gen(function*() {
    const repo = yield* makeRateLimitsRepo

    const hit = traced("RateLimits.hit")(function*(limit: RateLimit) {
      if (limit.limit <= 0) return
      const now = yield* Clock.currentTimeMillis
      const start = new Date(windowStartOf(now, limit.window))
      const count = yield* repo.addHits(limit.key, start, limit.hits ?? 1, limit.durable ?? true)
      const refusal = refusalOf(limit, count, now)
      if (refusal !== undefined) return yield* refusal
    })

    const claim = (key: string, window: Duration.Duration) =>
      Duration.toMillis(window) <= 0
        ? Effect.succeed(true)
        : hit({ key, limit: 1, window, message: "This period was claimed already" }).pipe(
          Effect.as(true),
          Effect.catchTag("RateLimited", () => Effect.succeed(false))
        )

    const count = traced("RateLimits.count")(function*(key: string, window: Duration.Duration, durable = true) {
      return yield* repo.countInWindow(key, new Date(windowStartOf(yield* Clock.currentTimeMillis, window)), durable)
    })

    const prune = traced("RateLimits.prune")(function*(before: Date) {
      return yield* repo.deleteWindowsBefore(before)
    })

    return { hit, claim, count, prune }
  })
)
