/**
 * The rules of idempotent retries over the key table: claim the key in one statement before writing (so two calls
 * with one key never both write, on one instance or many), keep the answer after, free the key when the write
 * fails, and tell a retry, a reuse with other arguments and a call still running apart.
 */
import { Clock, Duration, Effect, Layer } from "effect"
import { Conflict } from "../Errors.ts"
import { spanned, traced } from "../Spans.ts"
import {
  Idempotency,
  IDEMPOTENCY_CLAIM_STALE,
  IDEMPOTENCY_TTL,
  IDEMPOTENCY_WAIT,
  type IdempotentCall
} from "./Idempotency.ts"
import { makeIdempotencyRepo } from "./IdempotencyRepo.ts"

/** The pauses between looks at a key another call holds: short first, then a look every half second. */
const pauseMillis = (attempt: number) => Math.min(500, 25 * 2 ** attempt)

export const IdempotencyLive = Layer.effect(
  Idempotency,
  Effect.gen(function*() {
    const repo = yield* makeIdempotencyRepo

    const otherArguments = (call: IdempotentCall, tool: string) =>
      new Conflict({
        message: tool === call.tool
          ? `This idempotency_key was used with other arguments for ${tool}; a retry must send the same arguments, ` +
            "or a new key for a new write"
          : `This idempotency_key was used for ${tool}; use a new key for a new write`,
        details: { idempotency_key: call.key, tool }
      })

    /** Claims the key, or answers the kept answer (waiting a little while the first call still runs). */
    const claimOrAnswer = (call: IdempotentCall, claim: string) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        for (let attempt = 0;; attempt++) {
          const now = yield* Clock.currentTimeMillis
          const claimed = yield* repo.claim(
            call,
            claim,
            new Date(now),
            new Date(now - Duration.toMillis(IDEMPOTENCY_CLAIM_STALE)),
            new Date(now - Duration.toMillis(IDEMPOTENCY_TTL))
          )
          if (claimed) return { _tag: "Claimed" } as const
          const row = yield* repo.find(call)
          // Gone between the two statements (its call failed, or it was swept): claim again.
          if (row === undefined) continue
          if (row.tool !== call.tool || row.fingerprint !== call.fingerprint) {
            return yield* otherArguments(call, row.tool)
          }
          if (row.state === "done" && row.answer !== null) {
            return { _tag: "Answered", answer: JSON.parse(row.answer) as unknown } as const
          }
          if (now - started >= Duration.toMillis(IDEMPOTENCY_WAIT)) {
            return yield* new Conflict({
              message: "A call with this idempotency_key is still in progress; retry it later with the same " +
                "arguments to get its answer",
              details: { idempotency_key: call.key, in_progress: true }
            })
          }
          yield* Effect.sleep(Duration.millis(pauseMillis(attempt)))
        }
      })

    const once = <E, R>(call: IdempotentCall, write: Effect.Effect<unknown, E, R>) =>
      Effect.gen(function*() {
        const claim = crypto.randomUUID()
        const begun = yield* claimOrAnswer(call, claim)
        if (begun._tag === "Answered") return begun.answer
        return yield* write.pipe(
          // Kept as JSON text: a retry answers exactly what the first call answered.
          Effect.tap((answer) => repo.complete(call, claim, JSON.stringify(answer))),
          Effect.onError(() => repo.release(call, claim))
        )
      }).pipe(spanned("Idempotency.once"))

    const sweep = traced("Idempotency.sweep")(function*(ttl: Duration.Duration = IDEMPOTENCY_TTL) {
      return yield* repo.deleteCreatedBefore(new Date((yield* Clock.currentTimeMillis) - Duration.toMillis(ttl)))
    })

    return { once, sweep }
  })
)
