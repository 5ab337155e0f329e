/**
 * The rules every content write passes after the policy check (Policy.ts decides what a sandbox token may
 * expose: never public or discoverable, no publishing, sharing, grants, forks or new Docks): the write rate per token (sandbox tokens
 * 60/min, others 120/min by default), and the content caps (a sandbox's 25 artifacts and 10 MB, the plan's
 * per-Dock limits), reserved atomically in the write's own transaction so parallel bursts cannot overshoot.
 */
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer } from "effect"
import { type RateLimited, TierLimitExceeded } from "./Errors.ts"
import type { DockId } from "./Ids.ts"
import { Limits } from "./Limits.ts"
import type { Principal } from "./Principal.ts"
import { RateLimits } from "./RateLimits/RateLimits.ts"


/** Change in a Dock's content: +1 artifact and its bytes for a new page, 0 and the size difference for an edit. */
export interface ContentChange {
  readonly artifacts: number
  readonly bytes: number
}

export class WriteRules extends Context.Tag("@dock/domain/WriteRules")<WriteRules, {
  /** Counts one write against the token's per-minute allowance. */
  readonly admitWrite: (principal: Principal) => Effect.Effect<void, RateLimited>
  /**
   * Reserves a content change on a Dock inside the caller's transaction: fails with tier_limit_exceeded when
   * the sandbox or plan cap would be passed. Negative changes release space.
   */
  readonly reserveContent: (dockId: DockId, change: ContentChange) => Effect.Effect<void, TierLimitExceeded>
}>() {}

export const WriteRulesLive = Layer.effect(
  WriteRules,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limits = yield* Limits
    const rateLimits = yield* RateLimits

    const admitWrite = Effect.fn("WriteRules.admitWrite")(function*(principal: Principal) {
      if (principal.tokenId === null) return
      yield* rateLimits.hit({
        key: `token-writes:${principal.tokenId}`,
        limit: principal.sandbox ? limits.sandboxWritesPerMinute : limits.tokenWritesPerMinute,
        window: Duration.minutes(1),
        message: principal.sandbox ? "Too many writes from this sandbox token" : "Too many writes from this token"
      })
    })

    const reserveContent = Effect.fn("WriteRules.reserveContent")(function*(dockId: DockId, change: ContentChange) {
      const docks = yield* sql<{ sandbox: boolean }>`select sandbox from docks where id = ${dockId}`.pipe(Effect.orDie)
      const sandbox = docks[0]?.sandbox === true
      const maxArtifacts = sandbox ? Math.min(limits.sandboxMaxArtifacts, limits.planMaxArtifactsPerDock) : limits.planMaxArtifactsPerDock
      const maxBytes = sandbox ? Math.min(limits.sandboxMaxBytes, limits.planMaxDockBytes) : limits.planMaxDockBytes
      yield* sql`insert into dock_usage (dock_id) values (${dockId}) on conflict (dock_id) do nothing`.pipe(Effect.orDie)
      // One conditional update: the row lock serializes concurrent writers and the condition is the cap.
      const rows = yield* sql<{ artifacts: number }>`update dock_usage
        set artifacts = greatest(artifacts + ${change.artifacts}, 0), bytes = greatest(bytes + ${change.bytes}, 0)
        where dock_id = ${dockId}
          and (${change.artifacts} <= 0 or artifacts + ${change.artifacts} <= ${maxArtifacts})
          and (${change.bytes} <= 0 or bytes + ${change.bytes} <= ${maxBytes})
        returning artifacts`.pipe(Effect.orDie)
      if (rows.length === 0) {
        const usage = yield* sql<{ artifacts: number; bytes: string }>`select artifacts, bytes from dock_usage
          where dock_id = ${dockId}`.pipe(Effect.orDie)
        const used = { artifacts: usage[0]?.artifacts ?? 0, bytes: Number(usage[0]?.bytes ?? 0) }
        const what = used.artifacts + change.artifacts > maxArtifacts
          ? `${maxArtifacts} artifacts`
          : `${maxBytes} bytes of content`
        return yield* new TierLimitExceeded({
          message: `${sandbox ? "An anonymous sandbox" : "A Dock on the free plan"} holds at most ${what}`,
          details: { max_artifacts: maxArtifacts, max_bytes: maxBytes, used, sandbox }
        })
      }
    })

    return { admitWrite, reserveContent }
  })
)
