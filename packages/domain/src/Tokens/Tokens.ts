/** The Tokens port: issuing, listing, revoking and authenticating MCP bearer tokens. */
import { Context, type Effect } from "effect"
import type { NotFound, RateLimited, Unauthorized, ValidationError } from "../Errors.ts"
import type { DockId, UserId } from "../Ids.ts"
import type { Principal, Scope } from "../Principal.ts"
import type { PerTokenRate } from "../RateLimits/RateLimits.ts"
import type { CreatedToken, TokenInfo, TokenKind } from "./Token.ts"

export interface NewToken {
  readonly userId: UserId
  readonly label?: string | null | undefined
  readonly kind: TokenKind
  /** Defaults to read and write. */
  readonly scopes?: ReadonlyArray<Scope> | undefined
  /** null = any Dock the user can edit. */
  readonly allowedBucketIds?: ReadonlyArray<DockId> | null | undefined
  readonly expiresAt?: Date | null | undefined
  /** OAuth access tokens (kind "oauth"): the grant they belong to and their audience (`<base>/mcp`). */
  readonly grantId?: string | null | undefined
  readonly audience?: string | null | undefined
}

export class Tokens extends Context.Tag("@dock/domain/Tokens")<Tokens, {
  readonly create: (input: NewToken) => Effect.Effect<CreatedToken, ValidationError>
  readonly list: (userId?: UserId) => Effect.Effect<ReadonlyArray<TokenInfo>>
  /** With `owner`, another user's token is NotFound too (a person revokes only their own). */
  readonly revoke: (id: string, owner?: UserId) => Effect.Effect<TokenInfo, NotFound>
  /**
   * A new secret for the owner's live token, in one transaction: the old token is revoked and a new one with the
   * same label, kind, scopes, Docks and expiry takes its place (rotation renews the secret, not the lifetime).
   * Another user's, an unknown, a revoked or an expired token is NotFound; an OAuth token is rotated by its
   * client (refresh), never here: ValidationError.
   */
  readonly rotate: (id: string, owner: UserId) => Effect.Effect<CreatedToken, NotFound | ValidationError>
  /**
   * The principal behind a bearer secret. Malformed values fail before any database work; unknown, revoked
   * and expired tokens fail alike. Records `last_used_at` at most once a minute. With `rate`, the request is
   * counted against the token's rate in the same statement (the whole bearer check is one round trip, and never a
   * durable write but for that once-a-minute time); past it, rate_limited.
   *
   * Nothing about a token is remembered between requests: each check reads the token's row, so a revocation or
   * an expiry takes effect on the very next request, on every instance.
   *
   * `audience` is the resource being called (`<base>/mcp`): an OAuth access token issued for another one fails
   * like an unknown token. Personal tokens have no audience.
   */
  readonly authenticate: (
    secret: string,
    rate?: PerTokenRate,
    audience?: string
  ) => Effect.Effect<Principal, Unauthorized | RateLimited>
}>() {}
