/**
 * Background jobs, each run once per DOCK_JOB_INTERVAL across all instances sharing the database: each instance
 * wakes every interval, and the first to claim the current period (a durable counter row keyed by the job and the
 * period, counted with the rate limits' atomic upsert) runs the job; the others skip that period.
 *
 * - The sandbox sweep: the domain also holds a Postgres advisory lock for the sweep's duration, so a sweep of the
 *   next period (or `dock sandboxes sweep`) waits for a running one and finds its work done. Killing a sweep
 *   midway is safe: it is one transaction and re-running it is idempotent; a period whose claimant died is swept
 *   in the next one.
 * - The idempotency sweep: drops idempotency keys older than 24 hours (one delete; a period missed leaves them
 *   for the next, and an expired key is reusable before it is swept).
 * - The trash sweep: purges deleted pages and logged row changes past their retention (docs/undo.md).
 * - The session sweep: drops web-app sessions and sign-in codes that ended over a day ago (two deletes).
 */
import { AgentChanges, Idempotency, OAuth, RateLimits, Registrations, Sessions } from "@dock/domain"
import { type Duration, Effect, Layer, Schedule } from "effect"

/** The counter key that claims a period of the sandbox sweep. */
export const SANDBOX_SWEEP_PERIOD_KEY = "job:sandbox-sweep"
/** The counter key that claims a period of the idempotency-key sweep. */
export const IDEMPOTENCY_SWEEP_PERIOD_KEY = "job:idempotency-sweep"
/** The counter key that claims a period of the session sweep. */
export const SESSION_SWEEP_PERIOD_KEY = "job:session-sweep"
export const OAUTH_SWEEP_PERIOD_KEY = "job:oauth-sweep"

/** Runs `job` once per `interval` period across the instances (the first to claim it), from the start on. */
const periodicJob = <R>(
  name: string,
  periodKey: string,
  interval: Duration.Duration,
  job: Effect.Effect<void, never, R>
) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const rateLimits = yield* RateLimits
    const context = yield* Effect.context<R>()
    const runIfClaimed = Effect.gen(function*() {
      if (!(yield* rateLimits.claim(periodKey, interval))) return
      yield* Effect.provide(job, context)
    })
    // Uninterruptible: shutdown waits for a running job (one short transaction) instead of cancelling its query
    // midway, which the embedded database's single connection answers only after a timeout.
    const once = Effect.uninterruptible(runIfClaimed).pipe(
      Effect.catchAllCause((cause) => Effect.logError(`${name} failed`, cause))
    )
    yield* Effect.forkScoped(once.pipe(Effect.repeat(Schedule.spaced(interval))))
  }))

export const sandboxSweepJob = (interval: Duration.Duration) =>
  periodicJob(
    "Sandbox sweep",
    SANDBOX_SWEEP_PERIOD_KEY,
    interval,
    Effect.gen(function*() {
      const result = yield* (yield* Registrations).sweep
      // One line per period across all instances: which instance swept, and what it found.
      yield* Effect.logInfo(`Sandbox sweep: ${result.expired} expired, ${result.purged} purged`)
    })
  )

export const idempotencySweepJob = (interval: Duration.Duration) =>
  periodicJob(
    "Idempotency sweep",
    IDEMPOTENCY_SWEEP_PERIOD_KEY,
    interval,
    Effect.gen(function*() {
      const swept = yield* (yield* Idempotency).sweep()
      // Debug: unlike the sandbox sweep, nothing here concerns an operator.
      yield* Effect.logDebug(`Idempotency sweep: ${swept} expired keys dropped`)
    })
  )

/** The counter key that claims a period of the trash sweep. */
export const TRASH_SWEEP_PERIOD_KEY = "job:trash-sweep"

/**
 * The trash sweep (docs/undo.md): purges the pages deleted and the row changes logged more than
 * TRASH_RETENTION_DAYS ago. Each purge is one statement; re-running it is idempotent.
 */
export const trashSweepJob = (interval: Duration.Duration) =>
  periodicJob(
    "Trash sweep",
    TRASH_SWEEP_PERIOD_KEY,
    interval,
    Effect.gen(function*() {
      const result = yield* (yield* AgentChanges).sweep
      yield* Effect.logInfo(`Trash sweep: ${result.pages} pages, ${result.rowChanges} row changes purged`)
    })
  )

export const sessionSweepJob = (interval: Duration.Duration) =>
  periodicJob(
    "Session sweep",
    SESSION_SWEEP_PERIOD_KEY,
    interval,
    Effect.gen(function*() {
      const swept = yield* (yield* Sessions).sweep
      yield* Effect.logDebug(`Session sweep: ${swept} ended sessions dropped`)
    })
  )

/** OAuth's leftovers (docs/oauth.md): expired codes and refresh tokens, revoked grants, unused registrations. */
export const oauthSweepJob = (interval: Duration.Duration) =>
  periodicJob(
    "OAuth sweep",
    OAUTH_SWEEP_PERIOD_KEY,
    interval,
    Effect.gen(function*() {
      const swept = yield* (yield* OAuth).sweep
      yield* Effect.logDebug(`OAuth sweep: ${swept} revoked grants dropped`)
    })
  )
