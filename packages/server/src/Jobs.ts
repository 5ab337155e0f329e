/**
 * Background jobs. The sandbox sweep runs every DOCK_JOB_INTERVAL; the domain holds a Postgres advisory lock
 * for its duration, so with several instances one sweeps at a time and the rest find nothing left to do.
 * Killing it midway is safe: the sweep is one transaction and re-running it is idempotent.
 */
import { Registrations } from "@dock/domain"
import { Duration, Effect, Layer, Schedule } from "effect"

export const sandboxSweepJob = (interval: Duration.Duration) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const registrations = yield* Registrations
    // Uninterruptible: shutdown waits for a running sweep (one short transaction) instead of cancelling its
    // query midway, which the embedded database's single connection answers only after a timeout.
    const once = Effect.uninterruptible(registrations.sweep).pipe(
      Effect.tap((result) =>
        result.expired + result.purged > 0
          ? Effect.logInfo(`Sandbox sweep: ${result.expired} expired, ${result.purged} purged`)
          : Effect.void
      ),
      Effect.catchAllCause((cause) => Effect.logError("Sandbox sweep failed", cause))
    )
    yield* Effect.forkScoped(once.pipe(Effect.repeat(Schedule.spaced(interval))))
  }))
