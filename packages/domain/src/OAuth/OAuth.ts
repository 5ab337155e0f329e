/**
 * The OAuth port (issue 17, docs/oauth.md): an authorization server for MCP clients. Clients register (RFC 7591)
 * or are named by a Client ID Metadata Document; a person's consent is a grant; a grant's authorization code is
 * exchanged (PKCE S256) for an access token (a `tokens` row of kind "oauth", so /mcp authenticates it like any
 * token) and a refresh token rotated on every use. A replayed code or a reused refresh token revokes the grant.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { NotFound, RateLimited } from "../Errors.ts"
import type { DockId, UserId } from "../Ids.ts"
import type { Scope } from "../Principal.ts"

/**
 * An RFC 6749 §5.2 error (`invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type`,
 * `invalid_scope`, `invalid_client_metadata`, `invalid_redirect_uri`): the token and registration endpoints
 * answer OAuth's own body `{"error","error_description"}`, not Dock's error table, because OAuth clients read it.
 */
export class OAuthError extends Schema.TaggedError<OAuthError>()("OAuthError", {
  error: Schema.String,
  error_description: Schema.String
}) {}

export interface OAuthClient {
  readonly clientId: string
  readonly kind: "registered" | "metadata_document"
  readonly clientName: string
  readonly clientUri: string | null
  readonly redirectUris: ReadonlyArray<string>
  readonly createdAt: Date
}

export interface ClientRegistration {
  readonly clientName: string | undefined
  readonly clientUri: string | undefined
  readonly redirectUris: ReadonlyArray<string>
  /** Counted against the registrations per address. */
  readonly requesterIp: string
}

export interface Authorization {
  readonly userId: UserId
  readonly clientId: string
  readonly redirectUri: string
  readonly codeChallenge: string
  readonly scopes: ReadonlyArray<Scope>
  /** null = every Dock the person may write. */
  readonly allowedBucketIds: ReadonlyArray<DockId> | null
  readonly resource: string
}

export interface TokenPair {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token: string
  readonly scope: string
}

export interface GrantInfo {
  readonly id: string
  readonly clientId: string
  readonly clientName: string
  readonly clientUri: string | null
  readonly scopes: ReadonlyArray<Scope>
  readonly allowedBucketIds: ReadonlyArray<DockId> | null
  readonly createdAt: Date
  readonly lastUsedAt: Date | null
}

/** A fetched Client ID Metadata Document's fields that matter here (the server's fetcher checks the rest). */
export interface ClientMetadataDocument {
  readonly client_id: string
  readonly client_name: string | undefined
  readonly client_uri: string | undefined
  readonly redirect_uris: ReadonlyArray<string>
}

/**
 * Fetches a Client ID Metadata Document (an https URL) with SSRF protection; the server provides it
 * (ClientMetadataFetch.ts). Fails with `invalid_client` when the document cannot be had or is unacceptable.
 */
export class ClientMetadataFetcher extends Context.Tag("@dock/domain/ClientMetadataFetcher")<
  ClientMetadataFetcher,
  (url: string) => Effect.Effect<ClientMetadataDocument, OAuthError>
>() {}

export class OAuth extends Context.Tag("@dock/domain/OAuth")<OAuth, {
  /** RFC 7591 registration of a public client; rate-limited per address. */
  readonly register: (registration: ClientRegistration) => Effect.Effect<OAuthClient, OAuthError | RateLimited>
  /**
   * The client behind a `client_id`: a registered one, or for an https URL its metadata document (fetched
   * through ClientMetadataFetcher, cached for CLIENT_METADATA_TTL; each fetch counted against the requester's
   * address). None for an unknown registered id.
   */
  readonly client: (
    clientId: string,
    requesterIp: string
  ) => Effect.Effect<Option.Option<OAuthClient>, OAuthError | RateLimited>
  /** The person's consent: a grant and its one-time authorization code (answered once, stored hashed). */
  readonly authorize: (authorization: Authorization) => Effect.Effect<string>
  /** `grant_type=authorization_code`. */
  readonly exchangeCode: (request: {
    readonly code: string
    readonly clientId: string
    readonly redirectUri: string
    readonly codeVerifier: string
    readonly resource: string | undefined
  }) => Effect.Effect<TokenPair, OAuthError>
  /** `grant_type=refresh_token`: a fresh pair; the old refresh token is spent (reusing it revokes the grant). */
  readonly refresh: (request: {
    readonly refreshToken: string
    readonly clientId: string
    readonly scope: string | undefined
    readonly resource: string | undefined
  }) => Effect.Effect<TokenPair, OAuthError>
  /** RFC 7009: revokes an access token, or a refresh token with its whole grant; unknown tokens are ignored. */
  readonly revokeToken: (token: string, clientId: string | undefined) => Effect.Effect<void>
  /** The person's live grants, newest first. */
  readonly grants: (userId: UserId) => Effect.Effect<ReadonlyArray<GrantInfo>>
  /** Revokes one of the person's grants: its access and refresh tokens die at once. NotFound for anyone else's. */
  readonly revokeGrant: (userId: UserId, grantId: string) => Effect.Effect<void, NotFound>
  /**
   * Drops expired codes, expired or revoked refresh tokens, grants revoked over a day ago, registrations never used
   * within a week, and cached metadata-document clients no grant names once their cache has expired.
   */
  readonly sweep: Effect.Effect<number>
}>() {}
