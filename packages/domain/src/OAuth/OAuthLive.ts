/**
 * The authorization server's rules (docs/oauth.md): registration checks, one-time codes bound to client, redirect
 * URI and PKCE challenge; access tokens of an hour for `<base>/mcp`; refresh tokens rotated on use. A replayed code
 * or a reused refresh token is taken as a stolen credential: the whole grant is revoked.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { transactional } from "../Database/Transactional.ts"
import { NotFound } from "../Errors.ts"
import type { UserId } from "../Ids.ts"
import { Limits } from "../Limits.ts"
import type { Scope } from "../Principal.ts"
import { RateLimits } from "../RateLimits/RateLimits.ts"
import {
  ACCESS_TOKEN_PREFIX,
  isWellFormedSecret,
  newRefreshToken,
  randomBase62,
  REFRESH_TOKEN_PREFIX,
  sha256
} from "../Secrets.ts"
import { spanned, traced } from "../Spans.ts"
import { LABEL_MAX } from "../Tokens/Token.ts"
import { Tokens } from "../Tokens/Tokens.ts"
import {
  type Authorization,
  ClientMetadataFetcher,
  type ClientRegistration,
  type GrantInfo,
  OAuth,
  type OAuthClient,
  OAuthError,
  type TokenPair
} from "./OAuth.ts"
import { type ClientRow, type GrantRow, makeOAuthRepo } from "./OAuthRepo.ts"

export const ACCESS_TOKEN_TTL = Duration.hours(1)
export const REFRESH_TOKEN_TTL = Duration.days(30)
export const CODE_TTL = Duration.minutes(1)
/** How long a fetched Client ID Metadata Document is trusted before it is fetched again. */
export const CLIENT_METADATA_TTL = Duration.hours(1)
/** A registration nobody used within this long is dropped. */
export const UNUSED_CLIENT_TTL = Duration.days(7)
export const REDIRECT_URIS_MAX = 10
const CLIENT_ID_PREFIX = "dock_client_"

const invalid = (error: string, description: string) => new OAuthError({ error, error_description: description })

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Why a redirect URI is refused, or undefined when it is acceptable (OAuth 2.1 §2.3, RFC 8252): https; http only
 * on a loopback host; or a private-use scheme with a dot (`com.example.app:/cb`) for native apps. Never
 * `javascript:`, `data:`, `file:` or similar, never a fragment, never user info.
 */
export const redirectUriProblem = (uri: string): string | undefined => {
  if (uri.length > 2000) return "is too long"
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return "is not an absolute URI"
  }
  if (uri.includes("#")) return "has a fragment"
  if (url.username !== "" || url.password !== "") return "carries user info"
  const scheme = url.protocol.slice(0, -1).toLowerCase()
  if (scheme === "https") return url.hostname === "" ? "has no host" : undefined
  if (scheme === "http") {
    return LOOPBACK_HOSTS.has(url.hostname)
      ? undefined
      : "uses http on a host that is not loopback"
  }
  if (["javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss"].includes(scheme)) {
    return `uses the ${scheme}: scheme`
  }
  // A private-use scheme (RFC 8252 §7.1) names the app in reverse DNS: it has a dot.
  return scheme.includes(".") ? undefined : "uses a custom scheme that is not reverse-DNS (e.g. com.example.app:)"
}

/** PKCE S256: BASE64URL(SHA256(verifier)) = challenge; the verifier is 43–128 unreserved characters. */
export const pkceMatches = (verifier: string, challenge: string) =>
  /^[A-Za-z0-9._~-]{43,128}$/.test(verifier) &&
  createHash("sha256").update(verifier).digest("base64url") === challenge

export const scopeText = (scopes: ReadonlyArray<Scope>) => scopes.join(" ")

const toClient = (row: ClientRow): OAuthClient => ({
  clientId: row.id,
  kind: row.kind,
  clientName: row.client_name,
  clientUri: row.client_uri,
  redirectUris: row.redirect_uris,
  createdAt: row.created_at
})

const toGrant = (row: GrantRow): GrantInfo => ({
  id: row.id,
  clientId: row.client_id,
  clientName: row.client_name,
  clientUri: row.client_uri,
  scopes: row.scopes,
  allowedBucketIds: row.allowed_bucket_ids,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const OAuthLive = Layer.effect(
  OAuth,
  Effect.gen(function*() {
    const repo = yield* makeOAuthRepo
    const sql = yield* SqlClient.SqlClient
    const tokens = yield* Tokens
    const rateLimits = yield* RateLimits
    const limits = yield* Limits
    const fetcher = yield* Effect.serviceOption(ClientMetadataFetcher)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const checkedRedirectUris = (uris: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        if (uris.length === 0) return yield* invalid("invalid_redirect_uri", "redirect_uris must name at least one URI")
        if (uris.length > REDIRECT_URIS_MAX) {
          return yield* invalid("invalid_redirect_uri", `at most ${REDIRECT_URIS_MAX} redirect_uris`)
        }
        for (const uri of uris) {
          const problem = typeof uri === "string" ? redirectUriProblem(uri) : "is not a string"
          if (problem !== undefined) return yield* invalid("invalid_redirect_uri", `redirect URI ${uri} ${problem}`)
        }
        return uris
      })

    const checkedName = (name: string | undefined, fallback: string) =>
      Effect.gen(function*() {
        const trimmed = name?.trim() ?? ""
        if (trimmed.length > LABEL_MAX) {
          return yield* invalid("invalid_client_metadata", `client_name is longer than ${LABEL_MAX} characters`)
        }
        return trimmed === "" ? fallback : trimmed
      })

    const checkedClientUri = (uri: string | undefined) =>
      Effect.gen(function*() {
        if (uri === undefined || uri === "") return null
        if (!/^https?:\/\/[^\s]+$/.test(uri) || uri.length > 2000) {
          return yield* invalid("invalid_client_metadata", "client_uri must be an http(s) URL")
        }
        return uri
      })

    const register = traced("OAuth.register")(function*(registration: ClientRegistration) {
      yield* rateLimits.hit({
        key: `oauth-register:${registration.requesterIp}`,
        limit: limits.oauthRegistrationsPerIpPerHour,
        window: Duration.hours(1),
        message: "Too many client registrations from this address"
      })
      const redirectUris = yield* checkedRedirectUris(registration.redirectUris)
      const clientName = yield* checkedName(registration.clientName, "Unnamed client")
      const clientUri = yield* checkedClientUri(registration.clientUri)
      const at = yield* now
      const id = `${CLIENT_ID_PREFIX}${randomBase62(16)}`
      yield* repo.insertClient({ id, kind: "registered", clientName, clientUri, redirectUris, at })
      return { clientId: id, kind: "registered", clientName, clientUri, redirectUris, createdAt: at } as OAuthClient
    })

    const client = traced("OAuth.client")(function*(clientId: string, requesterIp: string) {
      const isUrl = clientId.startsWith("https://") || clientId.startsWith("http://")
      const stored = yield* repo.client(clientId)
      if (!isUrl) return Option.map(stored, toClient)
      const at = yield* now
      if (
        Option.isSome(stored) && stored.value.fetched_at !== null &&
        at.getTime() - stored.value.fetched_at.getTime() < Duration.toMillis(CLIENT_METADATA_TTL)
      ) return Option.some(toClient(stored.value))
      if (Option.isNone(fetcher)) {
        return yield* invalid("invalid_client", "Client ID Metadata Documents are not supported here")
      }
      // Anyone can name any URL here without signing in: each fetch is outbound traffic and a stored row.
      yield* rateLimits.hit({
        key: `oauth-metadata-fetch:${requesterIp}`,
        limit: limits.oauthClientMetadataFetchesPerIpPerHour,
        window: Duration.hours(1),
        message: "Too many client metadata documents fetched for this address"
      })
      const document = yield* fetcher.value(clientId)
      if (document.client_id !== clientId) {
        return yield* invalid("invalid_client", "The metadata document's client_id is not its URL")
      }
      const redirectUris = yield* checkedRedirectUris(document.redirect_uris).pipe(
        Effect.mapError((error) => invalid("invalid_client", error.error_description))
      )
      const clientName = yield* checkedName(document.client_name, new URL(clientId).host).pipe(
        Effect.mapError((error) => invalid("invalid_client", error.error_description))
      )
      const clientUri = yield* checkedClientUri(document.client_uri).pipe(Effect.orElseSucceed(() => null))
      yield* repo.insertClient({ id: clientId, kind: "metadata_document", clientName, clientUri, redirectUris, at })
      return Option.some<OAuthClient>({
        clientId,
        kind: "metadata_document",
        clientName,
        clientUri,
        redirectUris,
        createdAt: Option.match(stored, { onNone: () => at, onSome: (row) => row.created_at })
      })
    })

    const authorize = traced("OAuth.authorize")(function*(authorization: Authorization) {
      const at = yield* now
      const code = randomBase62(32)
      yield* transactional(
        sql,
        Effect.gen(function*() {
          const grantId = yield* repo.insertGrant({
            userId: authorization.userId,
            clientId: authorization.clientId,
            scopes: authorization.scopes,
            allowedBucketIds: authorization.allowedBucketIds,
            resource: authorization.resource,
            at
          })
          yield* repo.insertCode({
            hash: sha256(code),
            grantId,
            clientId: authorization.clientId,
            redirectUri: authorization.redirectUri,
            codeChallenge: authorization.codeChallenge,
            at,
            expiresAt: new Date(at.getTime() + Duration.toMillis(CODE_TTL))
          })
        })
      )
      return code
    })

    /**
     * A new access token and refresh token under a live grant. The access token has `scopes` (the grant's, or fewer
     * when a refresh asked for fewer); the refresh token keeps the grant's (RFC 6749 §6).
     */
    const issue = (grant: GrantRow, at: Date, scopes: ReadonlyArray<Scope> = grant.scopes) =>
      Effect.gen(function*() {
        const access = yield* tokens.create({
          userId: grant.user_id,
          label: grant.client_name,
          kind: "oauth",
          scopes,
          allowedBucketIds: grant.allowed_bucket_ids,
          expiresAt: new Date(at.getTime() + Duration.toMillis(ACCESS_TOKEN_TTL)),
          grantId: grant.id,
          audience: grant.resource
        }).pipe(Effect.orDie)
        const refreshToken = newRefreshToken()
        yield* repo.insertRefresh({
          hash: sha256(refreshToken),
          grantId: grant.id,
          at,
          expiresAt: new Date(at.getTime() + Duration.toMillis(REFRESH_TOKEN_TTL))
        })
        yield* repo.touch(grant.id, grant.client_id, at)
        const pair: TokenPair = {
          access_token: access.token,
          token_type: "Bearer",
          expires_in: Duration.toSeconds(ACCESS_TOKEN_TTL),
          refresh_token: refreshToken,
          scope: scopeText(scopes)
        }
        return pair
      })

    const checkResource = (resource: string | undefined, grant: GrantRow) =>
      resource === undefined || resource === grant.resource
        ? Effect.void
        : Effect.fail(invalid("invalid_target", `resource must be ${grant.resource}`))

    const badCode = () => invalid("invalid_grant", "The authorization code is invalid, expired or already used")

    // The spend and its verdict commit together; a replay's revocation must commit even though the answer is an
    // error, so the error is carried out of the transaction as a value.
    const exchangeCode = traced("OAuth.exchangeCode")(function*(request: {
      readonly code: string
      readonly clientId: string
      readonly redirectUri: string
      readonly codeVerifier: string
      readonly resource: string | undefined
    }) {
      const at = yield* now
      const outcome = yield* transactional(
        sql,
        Effect.gen(function*() {
          const hash = sha256(request.code)
          const spent = yield* repo.spendCode(hash, at)
          if (Option.isNone(spent)) {
            const replayed = yield* repo.spentCodeGrant(hash)
            // A replayed code: whoever holds it may not be the client; everything it issued dies.
            if (Option.isSome(replayed)) yield* repo.revokeGrant(replayed.value, at)
            return yield* badCode()
          }
          const code = spent.value
          if (code.expires_at.getTime() <= at.getTime()) return yield* badCode()
          if (code.client_id !== request.clientId) return yield* badCode()
          if (code.redirect_uri !== request.redirectUri) {
            return yield* invalid("invalid_grant", "redirect_uri does not match the authorization request")
          }
          if (!pkceMatches(request.codeVerifier, code.code_challenge)) {
            return yield* invalid("invalid_grant", "The PKCE code_verifier does not match the code_challenge")
          }
          const grant = yield* repo.grant(code.grant_id)
          if (Option.isNone(grant) || grant.value.revoked_at !== null) return yield* badCode()
          yield* checkResource(request.resource, grant.value)
          return yield* issue(grant.value, at)
        }).pipe(Effect.either)
      )
      return yield* outcome
    })

    /**
     * The scopes a refresh asks for (RFC 6749 §6): absent means the grant's; fewer is allowed and narrows the new
     * access token; more is invalid_scope. Write implies read, as at /oauth/authorize.
     */
    const refreshScopes = (scope: string | undefined, granted: ReadonlyArray<Scope>) =>
      Effect.gen(function*() {
        const asked = (scope ?? "").split(" ").filter((s) => s !== "")
        if (asked.length === 0) return granted
        if (asked.some((s) => !granted.includes(s as Scope))) {
          return yield* invalid("invalid_scope", "A refresh cannot widen the scopes of the grant")
        }
        const narrowed: ReadonlyArray<Scope> = asked.includes("mcp:write") ? ["mcp:read", "mcp:write"] : ["mcp:read"]
        return narrowed
      })

    const badRefresh = () => invalid("invalid_grant", "The refresh token is invalid, expired, revoked or already used")

    const refresh = traced("OAuth.refresh")(function*(request: {
      readonly refreshToken: string
      readonly clientId: string
      readonly scope: string | undefined
      readonly resource: string | undefined
    }) {
      if (!isWellFormedSecret(request.refreshToken, REFRESH_TOKEN_PREFIX)) return yield* badRefresh()
      const at = yield* now
      const outcome = yield* transactional(
        sql,
        Effect.gen(function*() {
          const hash = sha256(request.refreshToken)
          const spent = yield* repo.spendRefresh(hash, at)
          if (Option.isNone(spent)) {
            const reused = yield* repo.spentRefreshGrant(hash)
            // Reuse of a rotated refresh token: one of the two holders is not the client. The grant ends.
            if (Option.isSome(reused)) yield* repo.revokeGrant(reused.value, at)
            return yield* badRefresh()
          }
          const row = spent.value
          if (row.revoked_at !== null || row.expires_at.getTime() <= at.getTime()) return yield* badRefresh()
          const grant = yield* repo.grant(row.grant_id)
          if (Option.isNone(grant) || grant.value.revoked_at !== null) return yield* badRefresh()
          if (grant.value.client_id !== request.clientId) return yield* badRefresh()
          yield* checkResource(request.resource, grant.value)
          const scopes = yield* refreshScopes(request.scope, grant.value.scopes)
          return yield* issue(grant.value, at, scopes)
        }).pipe(Effect.either)
      )
      return yield* outcome
    })

    const revokeToken = traced("OAuth.revokeToken")(function*(token: string, clientId: string | undefined) {
      const at = yield* now
      if (isWellFormedSecret(token, ACCESS_TOKEN_PREFIX)) {
        return yield* repo.revokeAccessToken(sha256(token), at, clientId)
      }
      if (!isWellFormedSecret(token, REFRESH_TOKEN_PREFIX)) return
      const grantId = yield* repo.refreshGrant(sha256(token))
      if (Option.isNone(grantId)) return
      const grant = yield* repo.grant(grantId.value)
      if (Option.isNone(grant) || (clientId !== undefined && grant.value.client_id !== clientId)) return
      yield* transactional(sql, repo.revokeGrant(grantId.value, at))
    })

    const grants = traced("OAuth.grants")(function*(userId: UserId) {
      return (yield* repo.grantsOf(userId)).map(toGrant)
    })

    const revokeGrant = traced("OAuth.revokeGrant")(function*(userId: UserId, grantId: string) {
      const notFound = () => new NotFound({ message: "No such connected app" })
      if (!UUID.test(grantId)) return yield* notFound()
      const grant = yield* repo.grant(grantId)
      if (Option.isNone(grant) || grant.value.user_id !== userId || grant.value.revoked_at !== null) {
        return yield* notFound()
      }
      const at = yield* now
      yield* transactional(sql, repo.revokeGrant(grantId, at))
    })

    const sweep = Effect.gen(function*() {
      const at = (yield* now).getTime()
      return yield* repo.sweep({
        before: new Date(at - Duration.toMillis(Duration.days(1))),
        unusedClientsBefore: new Date(at - Duration.toMillis(UNUSED_CLIENT_TTL)),
        metadataFetchedBefore: new Date(at - Duration.toMillis(CLIENT_METADATA_TTL))
      })
    }).pipe(spanned("OAuth.sweep"))

    return { register, client, authorize, exchangeCode, refresh, revokeToken, grants, revokeGrant, sweep }
  })
)

/** The audience every access token is issued for. */
export const mcpAudience = (baseUrl: string) => `${baseUrl}/mcp`
