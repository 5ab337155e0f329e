/** The RateLimits port: fixed-window counters every instance shares (RateLimitsLive says how they stay exact). */
import { Context, Duration, type Effect } from "effect"
import type { RateLimited } from "../Errors.ts"

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
