/**
 * Bearer authentication for every token-authenticated route (/mcp, private images): the token comes from the
 * Authorization header only, its checksum is checked before any database work, and the request counts against the
 * token's per-minute rate. Failures are 401 (with the RFC 9728 challenge below, added by error
 * finishing) or 429.
 */
import {
  Limits,
  mcpAudience,
  type Principal,
  PublicBaseUrl,
  tokenRequestRate,
  Tokens,
  Unauthorized
} from "@dock/domain"
import type { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"

/** RFC 9728 protected-resource metadata for /mcp: where a 401 sends the client to learn how to get a token. */
export const resourceMetadataUrl = (baseUrl: string) => `${baseUrl}/.well-known/oauth-protected-resource/mcp`

/**
 * The WWW-Authenticate challenge of a 401: the admin realm under /admin; elsewhere the resource metadata, with
 * `error="invalid_token"` when a token was sent.
 */
export const bearerChallenge = (request: HttpServerRequest.HttpServerRequest, baseUrl: string) =>
  request.url.startsWith("/admin")
    ? `Bearer realm="dock-admin"`
    : `Bearer resource_metadata="${resourceMetadataUrl(baseUrl)}"` +
      (request.headers["authorization"] === undefined ? "" : `, error="invalid_token"`)

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i

/** The token of an `Authorization: Bearer <token>` header, or undefined when the header is not that. */
export const bearerToken = (header: string): string | undefined => BEARER.exec(header)?.[1]

/**
 * The bearer token's principal, with this request counted (as one message) against the token's rate in the same
 * statement that finds the token: one round trip for the whole check. The MCP mount counts a batch's further
 * messages once it has read them.
 */
export const authenticateRequest = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const tokens = yield* Tokens
    const limits = yield* Limits
    const header = request.headers["authorization"]
    if (header === undefined) {
      return yield* new Unauthorized({ message: "A bearer token is required (Authorization: Bearer <token>)" })
    }
    const token = bearerToken(header)
    if (token === undefined) {
      return yield* new Unauthorized({ message: "The Authorization header is not a bearer token" })
    }
    // OAuth access tokens are audience-bound to this server's /mcp (private images are part of that resource).
    const audience = mcpAudience(yield* PublicBaseUrl)
    const principal: Principal = yield* tokens.authenticate(token, tokenRequestRate(1, limits), audience)
    return principal
  })
