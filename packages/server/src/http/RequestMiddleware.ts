/**
 * The one middleware every request passes through: a request id, Host validation, the error body for
 * everything that goes wrong (unknown routes, malformed JSON, schema failures, defects) with its headers
 * (Retry-After, WWW-Authenticate), security headers, and one log line per request.
 */
import { HttpIncomingMessage, HttpLayerRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import {
  BadRequest,
  Forbidden,
  Internal,
  NotFound,
  PayloadTooLarge,
  SOURCE_CONTENT_MAX_BYTES,
  statementTimeoutError,
  ValidationError
} from "@dock/domain"
import { NodeHttpServerRequest } from "@effect/platform-node"
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


/**
 * A Host header is exactly one RFC 3986 authority without userinfo: a registered name or IPv4 address, or an IP
 * literal in brackets, with an optional port. "a:1, evil.com", "a:1:2" or "user@a" is no host at all.
 */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i

/** "example.com:8787" → "example.com"; "[::1]:80" → "[::1]"; undefined for anything but one host[:port]. */
const hostnameOf = (host: string): string | undefined => {
  const match = HOST.exec(host.trim())
  if (match === null || (match[2] !== undefined && Number(match[2]) > 65535)) return undefined
  return match[1]!.toLowerCase()
}

/** What of a refused chunked body is still read (and dropped) so the 413 reaches the client rather than a reset. */
const LINGER_BYTES = 1024 * 1024
const LINGER_MS = 5_000

/**
 * The platform destroys a request whose body passes the size limit while it is read (a chunked body, with no
 * Content-Length to check first), and Node destroys the socket with it: the client saw a reset, not our 413.
 * For such a request, destroying instead stops collecting the body and drops what follows, up to LINGER_BYTES
 * and LINGER_MS (closing the socket at once would let TCP reset the answer away); the 413 then closes the
 * connection (Connection: close).
 */
const answerOversizedChunkedBodies = (request: HttpServerRequest.HttpServerRequest) => {
  const incoming = NodeHttpServerRequest.toIncomingMessage(request)
  incoming.destroy = function(this: typeof incoming) {
    this.removeAllListeners("data")
    let dropped = 0
    const timer = setTimeout(() => this.socket.destroy(), LINGER_MS)
    timer.unref()
    this.on("data", (chunk: Buffer | string) => {
      dropped += chunk.length
      if (dropped > LINGER_BYTES) this.socket.destroy()
    })
    this.once("end", () => clearTimeout(timer))
    this.resume()
    return this
  }
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

/**
 * HttpApi decodes an empty body as no payload and reports the payload's shape; but an empty body is not JSON at
 * all, which is bad_request like any other body that is not JSON. (The body was read already: `text` is cached.)
 */
const emptyBodyIsBadRequest = (response: HttpServerResponse.HttpServerResponse, request: HttpServerRequest.HttpServerRequest) =>
  response.status !== 400 || request.method === "GET" || request.method === "HEAD" || bodyJson(response)?._tag !== "HttpApiDecodeError"
    ? Effect.succeed(response)
    : Effect.map(
      request.text.pipe(Effect.orElseSucceed(() => "not empty")),
      (text) => text.trim() === "" ? errorResponse(new BadRequest({ message: "The request body is empty: send a JSON object" })) : response
    )

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
      const limit = bodyLimitFor(request.url)

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
              ? HttpServerResponse.setHeader(
                errorResponse(new PayloadTooLarge({ message: `The request body is larger than ${limit} bytes`, details: { limit } })),
                // The rest of the body was never read: this connection cannot carry another request.
                "connection",
                "close"
              )
              : errorResponse(new BadRequest({ message: "The request body is not valid JSON" }))
          }
          const timedOut = statementTimeoutError(cause)
          if (timedOut !== undefined) return errorResponse(timedOut)
          if (Cause.isInterruptedOnly(cause)) {
            return HttpServerResponse.empty({ status: 499 })
          }
          yield* Effect.logError("Unhandled failure", cause)
          return errorResponse(
            new Internal({ message: `Internal error (request id ${requestId})`, request_id: requestId })
          )
        })

      const declared = Number(request.headers["content-length"] ?? 0)
      const hostname = host === undefined ? undefined : hostnameOf(host)
      const chunked = request.headers["transfer-encoding"] !== undefined
      if (chunked) answerOversizedChunkedBodies(request)
      const response = hostname === undefined || !hosts.has(hostname)
        ? errorResponse(new Forbidden({ message: `This server does not answer for the host ${host ?? "(none)"}` }))
        : hostname === artifactHost && !isArtifactPath(request.url)
        ? errorResponse(new NotFound({ message: `No route for ${request.method} ${request.url.split("?")[0]} on the artifact origin` }))
        : declared > limit
        ? errorResponse(new PayloadTooLarge({ message: `The request body is larger than ${limit} bytes`, details: { limit } }))
        : yield* httpEffect.pipe(
          HttpIncomingMessage.withMaxBodySize(Option.some(limit)),
          Effect.catchAllCause(failed),
          Effect.flatMap((response) => emptyBodyIsBadRequest(response, request)),
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
