/**
 * Fixed-window rate limits kept in PostgreSQL, so every instance counts the same hits. A hit is one atomic
 * upsert; inside a transaction it also holds the counter's row lock until commit, which makes caps exact under
 * parallel requests (a refused hit rolls back with its transaction).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { RateLimited } from "../Errors.ts"
import { describeDuration } from "../Limits.ts"

export interface RateLimit {
  /** What is counted, e.g. `token-requests:<id>`; callers never put secrets here. */
  readonly key: string
  /** Hits allowed per window; 0 means unlimited. */
  readonly limit: number
  readonly window: Duration.Duration
  /** How the refusal reads, e.g. "Too many registrations from this address today". */
  readonly message: string
  /** How many hits this one counts (a JSON-RPC batch counts each message); 1 when absent. */
  readonly hits?: number
}

export class RateLimits extends Context.Tag("@dock/domain/RateLimits")<RateLimits, {
  /** Counts one hit (or `hits`, in the same single upsert); fails with rate_limited (and the seconds until the window ends) once over the limit. */
  readonly hit: (limit: RateLimit) => Effect.Effect<void, RateLimited>
  /** Hits counted in the current window. */
  readonly count: (key: string, window: Duration.Duration) => Effect.Effect<number>
  /** Drops windows that ended before `before`. */
  readonly prune: (before: Date) => Effect.Effect<number>
}>() {}

/**
 * The per-minute budget of MCP messages: per token on /mcp, per client address on /mcp/public (no token). Each
 * JSON-RPC message counts, so a batch of N tool calls costs N, exactly as N requests would.
 */
export const mcpMessageLimit = (
  caller: { readonly tokenId: string } | { readonly address: string },
  messages: number,
  limits: { readonly tokenRequestsPerMinute: number; readonly publicMcpRequestsPerMinute: number }
): RateLimit =>
  "tokenId" in caller
    ? {
      key: `token-requests:${caller.tokenId}`,
      limit: limits.tokenRequestsPerMinute,
      window: Duration.minutes(1),
      message: "Too many requests with this token",
      hits: messages
    }
    : {
      key: `public-mcp:${caller.address}`,
      limit: limits.publicMcpRequestsPerMinute,
      window: Duration.minutes(1),
      message: "Too many requests to /mcp/public from this address",
      hits: messages
    }

const windowStart = (now: number, window: Duration.Duration) => {
  const size = Duration.toMillis(window)
  return Math.floor(now / size) * size
}

export const RateLimitsLive = Layer.effect(
  RateLimits,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const hit = Effect.fn("RateLimits.hit")(function*(limit: RateLimit) {
      if (limit.limit <= 0) return
      const hits = limit.hits ?? 1
      const now = yield* Clock.currentTimeMillis
      const start = windowStart(now, limit.window)
      const rows = yield* sql<{ count: number }>`insert into rate_limit_counters (key, window_start, count)
        values (${limit.key}, ${new Date(start)}, ${hits})
        on conflict (key, window_start) do update set count = rate_limit_counters.count + ${hits}
        returning count`.pipe(Effect.orDie)
      if ((rows[0]?.count ?? 0) > limit.limit) {
        const retryAfter = Math.max(1, Math.ceil((start + Duration.toMillis(limit.window) - now) / 1000))
        return yield* new RateLimited({
          message: `${limit.message}: at most ${limit.limit} per ${describeDuration(limit.window)}`,
          retry_after_seconds: retryAfter,
          details: { limit: limit.limit, window: describeDuration(limit.window) }
        })
      }
    })

    const count = Effect.fn("RateLimits.count")(function*(key: string, window: Duration.Duration) {
      const start = windowStart(yield* Clock.currentTimeMillis, window)
      const rows = yield* sql<{ count: number }>`select count from rate_limit_counters
        where key = ${key} and window_start = ${new Date(start)}`.pipe(Effect.orDie)
      return rows[0]?.count ?? 0
    })

    const prune = Effect.fn("RateLimits.prune")(function*(before: Date) {
      const rows = yield* sql`delete from rate_limit_counters where window_start < ${before} returning 1`.pipe(Effect.orDie)
      return rows.length
    })

    return { hit, count, prune }
  })
)
