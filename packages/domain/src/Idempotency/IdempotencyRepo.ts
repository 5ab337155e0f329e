/** The idempotency keys (`idempotency_keys`, migration 13): every statement of the capability. SqlError is a defect. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { IdempotentCall } from "./Idempotency.ts"

export interface KeyRow {
  readonly tool: string
  readonly fingerprint: string
  readonly state: "pending" | "done"
  readonly answer: string | null
}

export const makeIdempotencyRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * Claims the key for the call named `claim`, in one atomic statement: a new key, or one whose holder is taken for
   * dead (pending since before `staleBefore`) or which expired (created before `expiredBefore`, not swept yet).
   * Answers whether this call holds the claim now; a key another live call holds, or a kept answer, is left as is.
   */
  const claim = (call: IdempotentCall, claim: string, now: Date, staleBefore: Date, expiredBefore: Date) =>
    sql<{ claim: string }>`insert into idempotency_keys
        (owner, key, tool, fingerprint, claim, state, answer, created_at, claimed_at)
      values (${call.owner}, ${call.key}, ${call.tool}, ${call.fingerprint}, ${claim}, 'pending', null, ${now}, ${now})
      on conflict (owner, key) do update set tool = excluded.tool, fingerprint = excluded.fingerprint,
        claim = excluded.claim, state = 'pending', answer = null, created_at = excluded.created_at,
        claimed_at = excluded.claimed_at
      where (idempotency_keys.state = 'pending' and idempotency_keys.claimed_at < ${staleBefore})
        or idempotency_keys.created_at < ${expiredBefore}
      returning claim`.pipe(
      Effect.map((rows) => rows[0]?.claim === claim),
      Effect.orDie
    )

  const find = (call: IdempotentCall) =>
    sql<KeyRow>`select tool, fingerprint, state, answer from idempotency_keys
      where owner = ${call.owner} and key = ${call.key}`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  /** Keeps the answer of the call that holds the claim (nothing, if another call took the key over). */
  const complete = (call: IdempotentCall, claim: string, answer: string) =>
    sql`update idempotency_keys set state = 'done', answer = ${answer}
      where owner = ${call.owner} and key = ${call.key} and claim = ${claim}`.pipe(Effect.asVoid, Effect.orDie)

  /** Frees the key the call holds (its write failed). */
  const release = (call: IdempotentCall, claim: string) =>
    sql`delete from idempotency_keys
      where owner = ${call.owner} and key = ${call.key} and claim = ${claim} and state = 'pending'`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  const deleteCreatedBefore = (before: Date) =>
    sql<{ n: number }>`with gone as (delete from idempotency_keys where created_at < ${before} returning 1)
      select count(*)::int as n from gone`.pipe(
      Effect.map((rows) => rows[0]?.n ?? 0),
      Effect.orDie
    )

  return { claim, find, complete, release, deleteCreatedBefore } as const
})
