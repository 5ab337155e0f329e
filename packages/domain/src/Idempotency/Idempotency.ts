/**
 * Idempotent retries (issue 18, item 2): a write called with an `idempotency_key` runs once per caller and key.
 * A retry with the same key and the same arguments within IDEMPOTENCY_TTL answers the first call's answer without
 * writing again; the same key with other arguments (or for another tool) is `conflict`. Keys are per caller
 * (`ownerOf`) and kept in PostgreSQL, so every instance on the database sees them. docs/decisions.md,
 * "Idempotent retries".
 */
import { Context, Duration, type Effect } from "effect"
import type { Conflict } from "../Errors.ts"
import type { Principal } from "../Principal.ts"
import { sha256 } from "../Secrets.ts"

/** The longest idempotency_key (characters). */
export const IDEMPOTENCY_KEY_MAX = 200
/** How long a key answers its first call's answer; swept after (server/src/Jobs.ts). */
export const IDEMPOTENCY_TTL = Duration.hours(24)
/**
 * A call still running after this long is taken for dead (its process stopped mid-call) and its key may be
 * claimed again: far above what one write may take (a render deadline of seconds, statements of at most 10 s).
 */
export const IDEMPOTENCY_CLAIM_STALE = Duration.seconds(60)
/** How long a retry waits for the first call with its key to finish before it answers `conflict` (in progress). */
export const IDEMPOTENCY_WAIT = Duration.seconds(5)

/** One keyed write: whose key it is, the key, the tool and the fingerprint of its arguments. */
export interface IdempotentCall {
  readonly owner: string
  readonly key: string
  readonly tool: string
  readonly fingerprint: string
}

export class Idempotency extends Context.Tag("@dock/domain/Idempotency")<Idempotency, {
  /**
   * Runs `write` (which answers the call's JSON answer) once for the call's owner and key: the first call runs it
   * and keeps its answer; a retry with the same tool and fingerprint answers that answer (a copy parsed from the
   * stored JSON) without running it, waiting up to IDEMPOTENCY_WAIT while the first call still runs; another tool
   * or fingerprint is Conflict. A failed `write` (an error, a defect or an interruption) keeps nothing: the key is
   * free again, since a failed write wrote nothing.
   */
  readonly once: <E, R>(
    call: IdempotentCall,
    write: Effect.Effect<unknown, E, R>
  ) => Effect.Effect<unknown, E | Conflict, R>
  /** Drops keys older than `ttl` (IDEMPOTENCY_TTL when absent); answers how many went. */
  readonly sweep: (ttl?: Duration.Duration) => Effect.Effect<number>
}>() {}

/**
 * Whose keys a principal uses: its token's id, or `user:<id>` for a user acting without a token (an app session, a
 * test). A principal with neither (the anonymous public, who cannot write) has none.
 */
export const ownerOf = (principal: Principal): string | undefined =>
  principal.tokenId ?? (principal.userId === null ? undefined : `user:${principal.userId}`)

/** JSON with every object's keys sorted: the same arguments give the same text, however their keys were ordered. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === "object" && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner) ?? "null"

/** The fingerprint of a call's arguments (the idempotency_key itself left out by the caller). */
export const fingerprintOf = (args: unknown): string => sha256(canonicalJson(args))
