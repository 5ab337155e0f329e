/**
 * The rule every write passes after the policy check (Policy.ts decides what a sandbox token may expose: never
 * public or discoverable, no publishing, sharing, grants, forks or new Docks): the write rate per token (sandbox
 * tokens 60/min, others 120/min by default). The content caps are reserved by the one writer of content, Parts.
 */
import { Context, Duration, Effect, Layer } from "effect"
import type { RateLimited } from "./Errors.ts"
import { Limits } from "./Limits.ts"
import type { Principal } from "./Principal.ts"
import { RateLimits } from "./RateLimits/RateLimits.ts"
import { traced } from "./Spans.ts"

export class WriteRules extends Context.Tag("@dock/domain/WriteRules")<WriteRules, {
  /** Counts one write against the token's per-minute allowance. */
  readonly admitWrite: (principal: Principal) => Effect.Effect<void, RateLimited>
}>() {}

export const WriteRulesLive = Layer.effect(
  WriteRules,
  Effect.gen(function*() {
    const limits = yield* Limits
    const rateLimits = yield* RateLimits

    const admitWrite = traced("WriteRules.admitWrite")(function*(principal: Principal) {
      if (principal.tokenId === null) return
      yield* rateLimits.hit({
        key: `token-writes:${principal.tokenId}`,
        limit: principal.sandbox ? limits.sandboxWritesPerMinute : limits.tokenWritesPerMinute,
        window: Duration.minutes(1),
        message: principal.sandbox ? "Too many writes from this sandbox token" : "Too many writes from this token",
        durable: false
      })
    })

    return { admitWrite }
  })
)
