/**
 * The one middleware every request passes through: a request id, Host validation, the error body for
 * everything that goes wrong (unknown routes, malformed JSON, schema failures, defects) with its headers
 * (Retry-After, WWW-Authenticate), security headers, and one log line per request.
 */
import { HttpIncomingMessage, HttpLayerRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { BadRequest, Forbidden, Internal, NotFound, PayloadTooLarge, SOURCE_CONTENT_MAX_BYTES, ValidationError } from "@dock/domain"
import { Cause, Clock, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { ServerConfig } from "../Config.ts"
import { resourceMetadataUrl } from "./DiscoveryHttp.ts"
import { MCP_MAX_BODY_BYTES } from "./McpHttp.ts"
import { isArtifactPath, notFoundPage } from "./ArtifactHttp.ts"
import { errorResponse } from "./ErrorResponse.ts"

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]", "::1"]

/** Hosts this server answers for: the base URL's host and, in development, loopback names. */
export const allowedHosts = (config: ServerConfig): ReadonlySet<string> =>
  new Set([
    new URL(config.baseUrl).hostname,
    ...Option.toArray(Option.map(config.artifactOrigin, (origin) => new URL(origin).hostname)),
    ...(config.env === "development" ? LOOPBACK : [])
  ])

/**
 * With DOCK_ARTIFACT_ORIGIN on a host of its own, that host serves artifacts and nothing else: untrusted pages
 * then never share an origin (cookies, storage) with the app or the API.
 */
const artifactOnlyHost = (config: ServerConfig): string | undefined => {
  const artifactHost = Option.getOrUndefined(Option.map(config.artifactOrigin, (origin) => new URL(origin).hostname))
  return artifactHost === undefined || artifactHost === new URL(config.baseUrl).hostname ? undefined : artifactHost
}


/** "example.com:8787" → "example.com"; "[::1]:80" → "[::1]". */
const hostnameOf = (host: string): string => {
  const trimmed = host.trim().toLowerCase()
  if (trimmed.startsWith("[")) return trimmed.slice(0, trimmed.indexOf("]") + 1)
  const colon = trimmed.lastIndexOf(":")
  return colon === -1 ? trimmed : trimmed.slice(0, colon)
}

const securityHeaders = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    ...(response.headers["x-frame-options"] === undefined ? { "x-frame-options": "DENY" } : {}),
    ...(response.headers["content-security-policy"] === undefined
      ? { "content-security-policy": "frame-ancestors 'none'" }
      : {}),
    // Errors are never worth caching, whichever layer produced them.
    ...(response.status >= 400 && response.headers["cache-control"] === undefined ? { "cache-control": "no-store" } : {})
  })

interface DecodeIssue {
  readonly path?: ReadonlyArray<PropertyKey>
  readonly message?: string
}

interface ErrorLike {
  readonly _tag?: unknown
  readonly issues?: ReadonlyArray<DecodeIssue>
  readonly message?: string
  readonly error?: { readonly retry_after_seconds?: unknown }
}

const bodyJson = (response: HttpServerResponse.HttpServerResponse): ErrorLike | undefined => {
  if (response.body._tag !== "Uint8Array") return undefined
  try {
    return JSON.parse(new TextDecoder().decode(response.body.body))
  } catch {
    return undefined
  }
}

/**
 * The finishing touches every error response gets, whichever layer produced it:
 * - HttpApi's own `HttpApiDecodeError` body becomes our validation_error naming the path of the first problem;
 * - 429 carries `Retry-After` from the body's `retry_after_seconds`;
 * - 401 carries the bearer challenge pointing at the protected-resource metadata (with
 *   `error="invalid_token"` when a token was sent).
 */
const finishErrorResponse = (
  response: HttpServerResponse.HttpServerResponse,
  request: HttpServerRequest.HttpServerRequest,
  baseUrl: string
) => {
  if (response.status < 400) return response
  const body = bodyJson(response)
  if (response.status === 400 && body?._tag === "HttpApiDecodeError") {
    const first = body.issues?.[0]
    const path = (first?.path ?? []).map(String)
    const where = path.length === 0 ? "request" : path.join(".")
    return errorResponse(
      new ValidationError({
        message: `Invalid ${where}: ${first?.message ?? body.message ?? "does not match the expected shape"}`,
        details: { path, issues: body.issues ?? [] }
      })
    )
  }
  const retryAfter = body?.error?.retry_after_seconds
  if (response.status === 429 && response.headers["retry-after"] === undefined && typeof retryAfter === "number") {
    return HttpServerResponse.setHeader(response, "retry-after", String(Math.max(1, Math.ceil(retryAfter))))
  }
  if (response.status === 401 && response.headers["www-authenticate"] === undefined) {
    const challenge = request.url.startsWith("/admin")
      ? `Bearer realm="dock-admin"`
      : `Bearer resource_metadata="${resourceMetadataUrl(baseUrl)}"` +
        (request.headers["authorization"] === undefined ? "" : `, error="invalid_token"`)
    return HttpServerResponse.setHeader(response, "www-authenticate", challenge)
  }
  return response
}

/**
 * How large a request body may be: MCP carries images (push_image, ~21 MB of base64); POST /admin/sources carries
 * a source of up to 5 MiB of text, JSON-escaped; everything else is small JSON. Checked against Content-Length
 * before anything is read, and enforced while reading chunked bodies.
 */
const bodyLimitFor = (url: string) =>
  url.startsWith("/mcp")
    ? MCP_MAX_BODY_BYTES
    : url === "/admin/sources" || url.startsWith("/admin/sources?")
    ? SOURCES_MAX_BODY_BYTES
    : JSON_MAX_BODY_BYTES
export const JSON_MAX_BODY_BYTES = 1024 * 1024
/** Twice SOURCE_CONTENT_MAX_BYTES and some: room for escaped quotes, backslashes and line breaks. */
export const SOURCES_MAX_BODY_BYTES = 2 * SOURCE_CONTENT_MAX_BYTES + 1024 * 1024

/** The platform fails a body it cannot read or parse with a "Decode" RequestError. */
const isBodyError = (error: unknown): error is HttpServerError.RequestError =>
  error instanceof HttpServerError.RequestError && error.reason === "Decode"

/** …and one over the size limit carries the reader's "maxBytes exceeded". */
const isTooLarge = (error: unknown) =>
  isBodyError(error) && error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

export const requestMiddleware = (config: ServerConfig) => {
  const hosts = allowedHosts(config)
  const artifactHost = artifactOnlyHost(config)
  // The function runs once when routes are built; the Effect it returns runs per request.
  return HttpLayerRouter.middleware((httpEffect) => Effect.suspend(() => {
    const requestId = randomUUID()
    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const started = yield* Clock.currentTimeMillis
      const host = request.headers["host"]

      const failed = (cause: Cause.Cause<unknown>) =>
        Effect.gen(function*() {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure) && failure.value instanceof HttpServerError.RouteNotFound) {
            if (request.method === "GET" && isArtifactPath(request.url)) return notFoundPage
            return errorResponse(new NotFound({ message: `No route for ${request.method} ${request.url.split("?")[0]}` }))
          }
          const defect = Cause.dieOption(cause)
          const bodyError = [failure, defect].find((option) => Option.isSome(option) && isBodyError(option.value))
          if (bodyError !== undefined && Option.isSome(bodyError)) {
            return isTooLarge(bodyError.value)
              ? errorResponse(new PayloadTooLarge({ message: "The request body is larger than this endpoint accepts" }))
              : errorResponse(new BadRequest({ message: "The request body is not valid JSON" }))
          }
          if (Cause.isInterruptedOnly(cause)) {
            return HttpServerResponse.empty({ status: 499 })
          }
          yield* Effect.logError("Unhandled failure", cause)
          return errorResponse(
            new Internal({ message: `Internal error (request id ${requestId})`, request_id: requestId })
          )
        })

      const limit = bodyLimitFor(request.url)
      const declared = Number(request.headers["content-length"] ?? 0)
      const response = host === undefined || !hosts.has(hostnameOf(host))
        ? errorResponse(new Forbidden({ message: `This server does not answer for the host ${host ?? "(none)"}` }))
        : hostnameOf(host) === artifactHost && !isArtifactPath(request.url)
        ? errorResponse(new NotFound({ message: `No route for ${request.method} ${request.url.split("?")[0]} on the artifact origin` }))
        : declared > limit
        ? errorResponse(new PayloadTooLarge({ message: `The request body is larger than ${limit} bytes`, details: { limit } }))
        : yield* httpEffect.pipe(
          HttpIncomingMessage.withMaxBodySize(Option.some(limit)),
          Effect.catchAllCause(failed),
          Effect.map((response) => finishErrorResponse(response, request, config.baseUrl))
        )

      const finished = yield* Clock.currentTimeMillis
      yield* Effect.logInfo(`${request.method} ${request.url} ${response.status}`).pipe(
        Effect.annotateLogs({ status: response.status, duration_ms: finished - started })
      )
      return securityHeaders(HttpServerResponse.setHeader(response, "x-request-id", requestId))
    }).pipe(
      Effect.annotateLogs("request_id", requestId),
      // Every failure is answered above; the router's typing wants the "unhandled" marker kept.
      (effect) => effect as Effect.Effect<HttpServerResponse.HttpServerResponse, HttpLayerRouter.unhandled, HttpServerRequest.HttpServerRequest>
    )
  }), { global: true })
}
