/**
 * A person's own tokens, as the app's connected-agent settings (`/app/mcp`, spec §5.7) manage them: the signed-in
 * person lists, creates, rotates and revokes tokens of their own account and nobody else's. The ownership rule
 * lives here: every call acts on the CurrentPrincipal's user, and another user's token id is NotFound (never
 * "forbidden": the page does not reveal that it exists). An agent holding a token cannot mint or manage tokens.
 */
import { Clock, Duration, Effect } from "effect"
import { Docks } from "../Docks/Docks.ts"
import { PermissionDenied, Unauthorized, ValidationError } from "../Errors.ts"
import type { DockId, UserId } from "../Ids.ts"
import { checkWrite } from "../Policy.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { traced } from "../Spans.ts"
import { Tokens } from "./Tokens.ts"

/** The lifetimes the app offers; `null` is a token that never expires (an operator's token may too). */
export const OWN_TOKEN_LIFETIMES_DAYS = [30, 90, 365] as const

export interface NewOwnToken {
  readonly label: string
  /** Write tokens also read (mcp:read + mcp:write); otherwise mcp:read only. */
  readonly write: boolean
  /** The Docks the token may change; empty or undefined = every Dock the person may write. */
  readonly dockIds?: ReadonlyArray<string> | undefined
  /** Days until it expires; null = never. */
  readonly expiresInDays: number | null
}

/** The person behind the app session: a user acting without a token. */
const owner = Effect.gen(function*() {
  const principal = yield* CurrentPrincipal
  if (principal.userId === null) return yield* new Unauthorized({ message: "Sign in to manage your tokens" })
  if (principal.tokenId !== null || principal.sandbox) {
    return yield* new PermissionDenied({ message: "Tokens are managed by a signed-in person, not with a token" })
  }
  return principal.userId as UserId
})

/**
 * The signed-in person's tokens (claimed sandbox tokens included), never with secrets. OAuth access tokens are not
 * among them: each belongs to a grant, which the person sees and revokes as a connected app, and its client renews
 * it every hour (listing them would fill the list with one row per hour per app).
 */
export const listOwnTokens = traced("Tokens.listOwn")(function*() {
  const userId = yield* owner
  const all = yield* Effect.flatMap(Tokens, (tokens) => tokens.list(userId))
  return all.filter((token) => token.kind !== "oauth")
})

export const issueOwnToken = traced("Tokens.issueOwn")(function*(input: NewOwnToken) {
  const userId = yield* owner
  const principal = yield* CurrentPrincipal
  const docks = yield* Docks
  const label = input.label.trim()
  if (label === "") {
    return yield* new ValidationError({
      message: "Give the token a label, such as the agent or machine that will use it",
      details: { field: "label" }
    })
  }
  if (
    input.expiresInDays !== null && !(OWN_TOKEN_LIFETIMES_DAYS as ReadonlyArray<number>).includes(input.expiresInDays)
  ) {
    return yield* new ValidationError({
      message: `Choose an expiry of ${OWN_TOKEN_LIFETIMES_DAYS.join(", ")} days or never`,
      details: { field: "expires_in" }
    })
  }
  const chosen = [...new Set(input.dockIds ?? [])]
  // Only Docks the person may write: the same check every write makes (Policy), never a list kept here.
  const allowed: ReadonlyArray<DockId> | null = chosen.length === 0 ?
    null :
    yield* Effect.forEach(chosen, (id) =>
      Effect.gen(function*() {
        const { access } = yield* docks.named({ bucket_id: id })
        yield* checkWrite(principal, access)
        return access.dockId
      }).pipe(
        Effect.mapError(() =>
          new ValidationError({ message: "You cannot write to one of the chosen Docks", details: { field: "docks" } })
        )
      ))
  const expiresAt = input.expiresInDays === null ? null : new Date(
    (yield* Clock.currentTimeMillis) + Duration.toMillis(Duration.days(input.expiresInDays))
  )
  return yield* Effect.flatMap(Tokens, (tokens) =>
    tokens.create({
      userId,
      label,
      kind: "personal",
      scopes: input.write ? ["mcp:read", "mcp:write"] : ["mcp:read"],
      allowedBucketIds: allowed,
      expiresAt
    }))
})

/** Revokes one of the person's own tokens; another user's is NotFound and stays as it was. */
export const revokeOwnToken = traced("Tokens.revokeOwn")(function*(id: string) {
  const userId = yield* owner
  return yield* Effect.flatMap(Tokens, (tokens) => tokens.revoke(id, userId))
})

/** A new secret for one of the person's own live tokens; the old secret stops working in the same transaction. */
export const rotateOwnToken = traced("Tokens.rotateOwn")(function*(id: string) {
  const userId = yield* owner
  return yield* Effect.flatMap(Tokens, (tokens) => tokens.rotate(id, userId))
})
