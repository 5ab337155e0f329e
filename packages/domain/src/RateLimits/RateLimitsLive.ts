/**
 * Fixed-window rate limits kept in PostgreSQL, so every instance counts the same hits. A hit is one atomic
 * upsert; inside a transaction it also holds the counter's row lock until commit, which makes caps exact under
 * parallel requests (a refused hit rolls back with its transaction).
 */
import { Clock, Duration, Effect, Layer } from "effect"
import { RateLimited } from "../Errors.ts"
import { describeDuration } from "../Limits.ts"
import { type RateLimit, RateLimits } from "./RateLimits.ts"
import { makeRateLimitsRepo } from "./RateLimitsRepo.ts"

const windowStart = (now: number, window: Duration.Duration) => {
  const size = Duration.toMillis(window)
  return Math.floor(now / size) * size
}

export const RateLimitsLive = Layer.effect(
  RateLimits,
  Effect.gen(function*() {
    const repo = yield* makeRateLimitsRepo

    const hit = Effect.fn("RateLimits.hit")(function*(limit: RateLimit) {
      if (limit.limit <= 0) return
      const now = yield* Clock.currentTimeMillis
      const start = windowStart(now, limit.window)
      const count = yield* repo.addHits(limit.key, new Date(start), limit.hits ?? 1)
      if (count > limit.limit) {
        const retryAfter = Math.max(1, Math.ceil((start + Duration.toMillis(limit.window) - now) / 1000))
        return yield* new RateLimited({
          message: `${limit.message}: at most ${limit.limit} per ${describeDuration(limit.window)}`,
          retry_after_seconds: retryAfter,
          details: { limit: limit.limit, window: describeDuration(limit.window) }
        })
      }
    })

    const count = Effect.fn("RateLimits.count")(function*(key: string, window: Duration.Duration) {
      return yield* repo.countInWindow(key, new Date(windowStart(yield* Clock.currentTimeMillis, window)))
    })

    const prune = Effect.fn("RateLimits.prune")(function*(before: Date) {
      return yield* repo.deleteWindowsBefore(before)
    })

    return { hit, count, prune }
  })
)
