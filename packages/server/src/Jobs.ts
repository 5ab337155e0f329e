/**
 * Background jobs. The sandbox sweep runs once per DOCK_JOB_INTERVAL across all instances sharing the database:
 * each instance wakes every interval, and the first to claim the current period (a durable counter row keyed by
 * the job and the period, counted with the rate limits' atomic upsert) sweeps; the others skip that period. The
 * domain also holds a Postgres advisory lock for the sweep's duration, so a sweep of the next period (or
 * `dock sandboxes sweep`) waits for a running one and finds its work done. Killing a sweep midway is safe: it is
 * one transaction and re-running it is idempotent; a period whose claimant died is swept in the next one.
 */
import { AgentChanges, RateLimits, Registrations } from "@dock/domain"
import { type Duration, Effect, Layer, Schedule } from "effect"

/** The counter key that claims a period of the sandbox sweep. */
export const SANDBOX_SWEEP_PERIOD_KEY = "job:sandbox-sweep"

export const sandboxSweepJob = (interval: Duration.Duration) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const registrations = yield* Registrations
    const rateLimits = yield* RateLimits
    const sweepIfClaimed = Effect.gen(function*() {
      if (!(yield* rateLimits.claim(SANDBOX_SWEEP_PERIOD_KEY, interval))) return
      const result = yield* registrations.sweep
      // One line per period across all instances: which instance swept, and what it found.
      yield* Effect.logInfo(`Sandbox sweep: ${result.expired} expired, ${result.purged} purged`)
    })
    // Uninterruptible: shutdown waits for a running sweep (one short transaction) instead of cancelling its
    // query midway, which the embedded database's single connection answers only after a timeout.
    const once = Effect.uninterruptible(sweepIfClaimed).pipe(
      Effect.catchAllCause((cause) => Effect.logError("Sandbox sweep failed", cause))
    )
    yield* Effect.forkScoped(once.pipe(Effect.repeat(Schedule.spaced(interval))))
  }))

/** The counter key that claims a period of the trash sweep. */
export const TRASH_SWEEP_PERIOD_KEY = "job:trash-sweep"

/**
 * The trash sweep (docs/undo.md): once per DOCK_JOB_INTERVAL across instances (claimed as the sandbox sweep is),
 * purges the pages deleted and the row changes logged more than TRASH_RETENTION_DAYS ago. Each purge is one
 * statement; re-running it is idempotent.
 */
export const trashSweepJob = (interval: Duration.Duration) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const agentChanges = yield* AgentChanges
    const rateLimits = yield* RateLimits
    const sweepIfClaimed = Effect.gen(function*() {
      if (!(yield* rateLimits.claim(TRASH_SWEEP_PERIOD_KEY, interval))) return
      const result = yield* agentChanges.sweep
      yield* Effect.logInfo(`Trash sweep: ${result.pages} pages, ${result.rowChanges} row changes purged`)
    })
    const once = Effect.uninterruptible(sweepIfClaimed).pipe(
      Effect.catchAllCause((cause) => Effect.logError("Trash sweep failed", cause))
    )
    yield* Effect.forkScoped(once.pipe(Effect.repeat(Schedule.spaced(interval))))
  }))
