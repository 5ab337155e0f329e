/**
 * The authorization server's machine endpoints (issue 17, docs/oauth.md): RFC 8414 metadata, RFC 7591 dynamic
 * client registration, the token endpoint (authorization_code with PKCE, refresh_token with rotation) and RFC 7009
 * revocation. They answer OAuth's own JSON (`{"error","error_description"}`), which OAuth clients read, and allow
 * any origin: no cookie is involved, and browser-based MCP clients (the Inspector) call them cross-origin.
 */
import { OAuth, OAuthError, RateLimited, Scopes } from "@dock/domain"
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { Effect, Option } from "effect"
import type { ServerConfig } from "../Config.ts"
import { clientAddress } from "./ClientAddress.ts"

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "authorization, content-type, mcp-protocol-version",
  "access-control-max-age": "600"
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers: { ...CORS, "cache-control": "no-store", ...headers } })

/**
 * An RFC 6749 §5.2 error answer. An invalid_client is 401, and names the Basic scheme only when the client
 * authenticated with it (a public client sending client_id in the body has no credentials to retry).
 */
const oauthError = (
  error: OAuthError,
  status = error.error === "invalid_client" ? 401 : 400,
  challenge: string | undefined = undefined
) =>
  json(
    status,
    { error: error.error, error_description: error.error_description },
    status === 401 && challenge !== undefined ? { "www-authenticate": challenge } : {}
  )

const rateLimited = (error: RateLimited) =>
  json(429, { error: "slow_down", error_description: error.message }, {
    "retry-after": String(error.retry_after_seconds)
  })

export const authorizationServerMetadata = (baseUrl: string) => ({
  issuer: baseUrl,
  authorization_endpoint: `${baseUrl}/oauth/authorize`,
  token_endpoint: `${baseUrl}/oauth/token`,
  registration_endpoint: `${baseUrl}/oauth/register`,
  revocation_endpoint: `${baseUrl}/oauth/revoke`,
  scopes_supported: [...Scopes],
  response_types_supported: ["code"],
  response_modes_supported: ["query"],
  grant_types_supported: ["authorization_code", "refresh_token"],
  token_endpoint_auth_methods_supported: ["none"],
  revocation_endpoint_auth_methods_supported: ["none"],
  code_challenge_methods_supported: ["S256"],
  authorization_response_iss_parameter_supported: true,
  client_id_metadata_document_supported: true,
  service_documentation: `${baseUrl}/docs/connect/agents`
})

/** A form body's fields; a JSON body is accepted too (some clients send one to /oauth/revoke). */
const bodyFields = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const type = request.headers["content-type"] ?? ""
    if (type.startsWith("application/json")) {
      const body = yield* request.json.pipe(Effect.orElseSucceed(() => ({})))
      const record = typeof body === "object" && body !== null ? body as Record<string, unknown> : {}
      return (name: string) => (typeof record[name] === "string" ? record[name] as string : undefined)
    }
    const form = yield* request.urlParamsBody.pipe(Effect.orElseSucceed((): UrlParams.UrlParams => []))
    return (name: string) => Option.getOrUndefined(UrlParams.getFirst(form, name))
  })

/**
 * Who the client says it is: the body's `client_id`, or the user part of HTTP Basic (some clients send
 * `client_id:` that way even with no secret, percent-encoded per RFC 6749 §2.3.1). `basic` says whether the client
 * used Basic, which decides the 401's challenge; `malformed` is a Basic user that does not decode.
 */
const clientIdOf = (
  request: HttpServerRequest.HttpServerRequest,
  get: (name: string) => string | undefined
): { readonly clientId: string | undefined; readonly basic: boolean; readonly malformed: boolean } => {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(request.headers["authorization"] ?? "")
  if (basic !== null) {
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8")
    const user = decoded.split(":")[0]
    if (user !== undefined && user !== "") {
      try {
        return { clientId: decodeURIComponent(user), basic: true, malformed: false }
      } catch {
        return { clientId: undefined, basic: true, malformed: true }
      }
    }
  }
  return { clientId: get("client_id"), basic: basic !== null, malformed: false }
}

export const oauthHttp = (config: ServerConfig) => {
  const metadata = authorizationServerMetadata(config.baseUrl)

  const register = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* request.json.pipe(Effect.orElseSucceed(() => undefined))
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return json(400, { error: "invalid_client_metadata", error_description: "The body must be a JSON object" })
    }
    const metadataIn = body as Record<string, unknown>
    const redirectUris = metadataIn["redirect_uris"]
    if (!Array.isArray(redirectUris) || redirectUris.some((uri) => typeof uri !== "string")) {
      return json(400, { error: "invalid_redirect_uri", error_description: "redirect_uris must be an array of URIs" })
    }
    const grantTypes = metadataIn["grant_types"]
    if (
      grantTypes !== undefined &&
      (!Array.isArray(grantTypes) ||
        grantTypes.some((type) => type !== "authorization_code" && type !== "refresh_token"))
    ) {
      return json(400, {
        error: "invalid_client_metadata",
        error_description: "grant_types may hold authorization_code and refresh_token only"
      })
    }
    const text = (name: string) => typeof metadataIn[name] === "string" ? metadataIn[name] as string : undefined
    return yield* Effect.flatMap(OAuth, (oauth) =>
      oauth.register({
        clientName: text("client_name"),
        clientUri: text("client_uri"),
        redirectUris: redirectUris as ReadonlyArray<string>,
        requesterIp: clientAddress(request, config.trustProxy)
      })).pipe(
        Effect.map((client) =>
          json(201, {
            client_id: client.clientId,
            client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
            client_name: client.clientName,
            ...(client.clientUri === null ? {} : { client_uri: client.clientUri }),
            redirect_uris: client.redirectUris,
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "none",
            scope: Scopes.join(" ")
          })
        ),
        Effect.catchTags({
          OAuthError: (error) => Effect.succeed(oauthError(error, 400)),
          RateLimited: (error) => Effect.succeed(rateLimited(error))
        })
      )
  })

  const token = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const get = yield* bodyFields(request)
    const caller = clientIdOf(request, get)
    const { clientId } = caller
    const challenge = caller.basic ? `Basic realm="${config.baseUrl}"` : undefined
    const grantType = get("grant_type")
    const oauth = yield* OAuth
    const missing = (name: string) =>
      Effect.succeed(oauthError(new OAuthError({ error: "invalid_request", error_description: `${name} is required` })))
    if (grantType === undefined) return yield* missing("grant_type")
    if (grantType !== "authorization_code" && grantType !== "refresh_token") {
      return oauthError(
        new OAuthError({
          error: "unsupported_grant_type",
          error_description: `grant_type ${grantType} is not supported`
        })
      )
    }
    if (caller.malformed) {
      const description = "The HTTP Basic user is not a percent-encoded client_id"
      return oauthError(new OAuthError({ error: "invalid_client", error_description: description }), 401, challenge)
    }
    if (clientId === undefined) {
      const description = "client_id is required"
      return oauthError(new OAuthError({ error: "invalid_client", error_description: description }), 401, challenge)
    }
    const answer = grantType === "authorization_code"
      ? Effect.gen(function*() {
        const code = get("code")
        const redirectUri = get("redirect_uri")
        const verifier = get("code_verifier")
        if (code === undefined) return yield* missing("code")
        if (redirectUri === undefined) return yield* missing("redirect_uri")
        if (verifier === undefined) return yield* missing("code_verifier")
        return json(
          200,
          yield* oauth.exchangeCode({
            code,
            clientId,
            redirectUri,
            codeVerifier: verifier,
            resource: get("resource")
          })
        )
      })
      : Effect.gen(function*() {
        const refreshToken = get("refresh_token")
        if (refreshToken === undefined) return yield* missing("refresh_token")
        return json(
          200,
          yield* oauth.refresh({ refreshToken, clientId, scope: get("scope"), resource: get("resource") })
        )
      })
    return yield* answer.pipe(
      Effect.catchTag("OAuthError", (error) => Effect.succeed(oauthError(error, undefined, challenge)))
    )
  })

  /** RFC 7009: 200 whatever the token was (unknown, already revoked, someone else's). */
  const revoke = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const get = yield* bodyFields(request)
    const value = get("token")
    if (value === undefined) {
      return oauthError(new OAuthError({ error: "invalid_request", error_description: "token is required" }))
    }
    const caller = clientIdOf(request, get)
    if (caller.malformed) {
      const description = "The HTTP Basic user is not a percent-encoded client_id"
      return oauthError(
        new OAuthError({ error: "invalid_client", error_description: description }),
        401,
        `Basic realm="${config.baseUrl}"`
      )
    }
    yield* Effect.flatMap(OAuth, (oauth) => oauth.revokeToken(value, caller.clientId))
    return json(200, {})
  })

  const preflight = Effect.succeed(HttpServerResponse.empty({ status: 204, headers: CORS }))
  const metadataAnswer = Effect.succeed(
    HttpServerResponse.unsafeJson(metadata, { headers: { ...CORS, "cache-control": "public, max-age=300" } })
  )

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/.well-known/oauth-authorization-server", metadataAnswer),
    HttpLayerRouter.route("OPTIONS", "/.well-known/oauth-authorization-server", preflight),
    HttpLayerRouter.route("POST", "/oauth/register", register),
    HttpLayerRouter.route("OPTIONS", "/oauth/register", preflight),
    HttpLayerRouter.route("POST", "/oauth/token", token),
    HttpLayerRouter.route("OPTIONS", "/oauth/token", preflight),
    HttpLayerRouter.route("POST", "/oauth/revoke", revoke),
    HttpLayerRouter.route("OPTIONS", "/oauth/revoke", preflight)
  ])
}
