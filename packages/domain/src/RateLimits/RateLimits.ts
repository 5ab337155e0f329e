/** The RateLimits port: fixed-window counters every instance shares (RateLimitsLive says how they stay exact). */
import { Context, Duration, type Effect } from "effect"
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
  /**
   * Whether the count survives a crash of PostgreSQL (true when absent): the daily abuse caps (registrations, OTP
   * sends and wrong tries). The per-minute request and write rates are not durable: they are counted in an
   * UNLOGGED table, which costs no WAL flush per hit and is emptied by a crash (forgetting one minute's counts).
   */
  readonly durable?: boolean
}

export class RateLimits extends Context.Tag("@dock/domain/RateLimits")<RateLimits, {
  /** Counts one hit (or `hits`, in the same single upsert); fails with rate_limited (and the seconds until the window ends) once over the limit. */
  readonly hit: (limit: RateLimit) => Effect.Effect<void, RateLimited>
  /**
   * Whether this is the first claim of `key` in the current fixed window of `window` (a durable count of 1 across
   * every instance on the database): how a periodic job runs once a period however many instances wake for it.
   * Always true for a window of zero, which has no periods.
   */
  readonly claim: (key: string, window: Duration.Duration) => Effect.Effect<boolean>
  /** Hits counted in the current window (of the durable counters, or with `durable: false` of the others). */
  readonly count: (key: string, window: Duration.Duration, durable?: boolean) => Effect.Effect<number>
  /** Drops windows that ended before `before`. */
  readonly prune: (before: Date) => Effect.Effect<number>
}>() {}

/** The start of the fixed window `now` falls in (epoch milliseconds). */
export const windowStartOf = (now: number, window: Duration.Duration) => {
  const size = Duration.toMillis(window)
  return Math.floor(now / size) * size
}

/**
 * The one verdict on a count: the refusal once `count` (the window's hits, this one's included) passes the limit,
 * with the seconds until the window ends; undefined while within it.
 */
export const refusalOf = (limit: RateLimit, count: number, now: number): RateLimited | undefined => {
  if (limit.limit <= 0 || count <= limit.limit) return undefined
  const end = windowStartOf(now, limit.window) + Duration.toMillis(limit.window)
  return new RateLimited({
    message: `${limit.message}: at most ${limit.limit} per ${describeDuration(limit.window)}`,
    retry_after_seconds: Math.max(1, Math.ceil((end - now) / 1000)),
    details: { limit: limit.limit, window: describeDuration(limit.window) }
  })
}

/**
 * A rate counted per token inside the bearer check (one statement finds the token and counts the request): the
 * counter's key is `keyPrefix` followed by the token's id.
 */
export interface PerTokenRate extends Omit<RateLimit, "key"> {
  readonly keyPrefix: string
}

/** A per-token rate as the limit of one token. */
export const forToken = ({ keyPrefix, ...rate }: PerTokenRate, tokenId: string): RateLimit => ({
  ...rate,
  key: `${keyPrefix}${tokenId}`
})

/** The per-minute budget of MCP messages (and other token requests) per token. */
export const tokenRequestRate = (
  messages: number,
  limits: { readonly tokenRequestsPerMinute: number }
): PerTokenRate => ({
  keyPrefix: "token-requests:",
  limit: limits.tokenRequestsPerMinute,
  window: Duration.minutes(1),
  message: "Too many requests with this token",
  hits: messages,
  durable: false
})

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
    ? forToken(tokenRequestRate(messages, limits), caller.tokenId)
    : {
      key: `public-mcp:${caller.address}`,
      limit: limits.publicMcpRequestsPerMinute,
      window: Duration.minutes(1),
      message: "Too many requests to /mcp/public from this address",
      hits: messages,
      durable: false
    }
