/**
 * `/mcp` (bearer token) and `/mcp/public` (read tools over public content, no token): the Streamable HTTP
 * endpoint mounted through a thin bridge — Origin and transport checks, authentication, the body read once
 * (with its size limit) and handed over as `parsedBody`, JSON answers buffered and SSE streams piped.
 */
import {
  anonymousPrincipal,
  BadRequest,
  Forbidden,
  Idempotency,
  Limits,
  mcpMessageLimit,
  type Principal,
  RateLimits,
  ValidationError
} from "@dock/domain"
import {
  ARGUMENT_ENTRIES_MAX,
  BODY_VALUES_MAX,
  callerAuthInfo,
  catalogue,
  type CatalogueServices,
  JSON_DEPTH_MAX,
  jsonTextBounds,
  makeMcpHandler,
  publicCatalogue
} from "@dock/mcp"
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { McpHttpHandler } from "@modelcontextprotocol/server"
import { Effect, Option } from "effect"
import { Readable } from "node:stream"
import type { ServerConfig } from "../Config.ts"
import type { ServerMetrics } from "../Metrics.ts"
import { authenticateRequest } from "./BearerAuth.ts"
import type { BodyLimit } from "./BodyLimit.ts"
import { clientAddress } from "./ClientAddress.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { RequestId } from "./RequestMiddleware.ts"

/** push_image carries up to 15 MB of image as base64 (~20 MB) inside JSON-RPC; the request middleware enforces it. */
export const MCP_MAX_BODY_BYTES = 22 * 1024 * 1024

/** /mcp and /mcp/public take bodies up to MCP_MAX_BODY_BYTES. */
export const mcpBodyLimit: BodyLimit = { matches: (url) => url.startsWith("/mcp"), bytes: MCP_MAX_BODY_BYTES }

const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/

/** Browser clients must come from an allowed origin (DNS-rebinding and cross-site defence). */
const checkOrigin = (request: HttpServerRequest.HttpServerRequest, config: ServerConfig) => {
  const origin = request.headers["origin"]
  if (origin === undefined) return Effect.void
  if (config.allowedOrigins.includes(origin) || (config.env === "development" && LOOPBACK_ORIGIN.test(origin))) {
    return Effect.void
  }
  return Effect.fail(new Forbidden({ message: `Origin ${origin} may not call this MCP endpoint` }))
}

/** Production MCP connections require HTTPS (spec §5.6); behind a proxy, X-Forwarded-Proto says so. */
const checkTransport = (request: HttpServerRequest.HttpServerRequest, config: ServerConfig) => {
  if (config.env !== "production") return Effect.void
  const https = config.trustProxy && request.headers["x-forwarded-proto"]?.split(",")[0]?.trim() === "https"
  return https ? Effect.void : Effect.fail(new Forbidden({ message: "MCP connections to this server require HTTPS" }))
}

/**
 * CORS for browser MCP clients from an allowed Origin: the preflight allows the MCP headers, and every answer
 * (a 401 challenge too) exposes WWW-Authenticate and Mcp-Session-Id so the client can read them.
 */
const corsHeaders = (request: HttpServerRequest.HttpServerRequest): Record<string, string> => {
  const origin = request.headers["origin"]
  if (origin === undefined) return {}
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": "WWW-Authenticate, Mcp-Session-Id",
    vary: "Origin"
  }
}

const preflight = (config: ServerConfig) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* checkOrigin(request, config)
    return HttpServerResponse.empty({
      status: 204,
      headers: {
        ...corsHeaders(request),
        "access-control-allow-methods": "POST, GET, DELETE, OPTIONS",
        "access-control-allow-headers":
          "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID",
        "access-control-max-age": "600"
      }
    })
  }).pipe(Effect.catchTag("Forbidden", (error) => Effect.succeed(errorResponse(error))))

/** A GET stream, or a 2026 `subscriptions/listen`: the SSE streams that stay open after the request's answers. */
const staysOpen = (method: string, body: unknown) =>
  method === "GET" ||
  [body].flat().some((message) =>
    typeof message === "object" && message !== null &&
    (message as { method?: unknown }).method === "subscriptions/listen"
  )

/** JSON-RPC messages in a parsed body: a batch counts each; anything else (GET, DELETE, unparsable text) one. */
const messageCount = (body: unknown) => (Array.isArray(body) ? Math.max(1, body.length) : 1)

const bridge = (handler: McpHttpHandler, config: ServerConfig, authenticate: boolean) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* checkOrigin(request, config)
    const cors = corsHeaders(request)
    yield* checkTransport(request, config)
    // A token's check counts the request's first message in the same statement (one round trip).
    const principal: Principal = authenticate ? yield* authenticateRequest(request) : anonymousPrincipal
    const text = request.method === "POST" ? yield* request.text : undefined
    // Bounded before parsing: neither JSON.parse nor the SDK's own schema pass gets to copy a huge structure.
    const bounds = text === undefined ? undefined : jsonTextBounds(text)
    if (bounds?._tag === "TooDeep") {
      return yield* new BadRequest({ message: `The JSON body nests deeper than ${JSON_DEPTH_MAX} levels` })
    }
    if (bounds?._tag === "TooManyValues") {
      return yield* new ValidationError({
        message: `The JSON body holds more than ${BODY_VALUES_MAX} values`,
        details: { limit: BODY_VALUES_MAX }
      })
    }
    if (bounds?._tag === "TooManyEntries") {
      return yield* new ValidationError({
        message: `An object or array in the JSON body holds more than ${ARGUMENT_ENTRIES_MAX} entries`,
        details: { limit: ARGUMENT_ENTRIES_MAX }
      })
    }
    let parsedBody: unknown = undefined
    try {
      parsedBody = text === undefined || text === "" ? undefined : JSON.parse(text)
    } catch {
      // Left to the SDK, which answers malformed JSON with a JSON-RPC parse error.
    }
    // Every message counts against the caller's rate (a batch of N tool calls costs N): per token (the first
    // message was counted with the token's check; the rest of a batch here, and the verdict on the total refuses
    // the batch whole), or per client address on /mcp/public.
    const limits = yield* Limits
    const address = clientAddress(request, config.trustProxy)
    const messages = messageCount(parsedBody)
    if (principal.tokenId === null) {
      yield* Effect.flatMap(RateLimits, (rateLimits) => rateLimits.hit(mcpMessageLimit({ address }, messages, limits)))
    } else if (messages > 1) {
      const tokenId = principal.tokenId
      yield* Effect.flatMap(RateLimits, (rateLimits) =>
        rateLimits.hit(mcpMessageLimit({ tokenId }, messages - 1, limits)))
    }
    const web = new Request(`${config.baseUrl}${request.url}`, {
      method: request.method,
      headers: request.headers as Record<string, string>,
      ...(parsedBody === undefined && text !== undefined && text !== "" ? { body: text } : {})
    })
    const requestId = yield* RequestId
    const parentSpan = Option.getOrUndefined(yield* Effect.option(Effect.currentSpan))
    const response = yield* Effect.promise(() =>
      handler.fetch(web, {
        authInfo: callerAuthInfo({
          principal,
          key: principal.tokenId ?? `address:${address}`,
          requestId: requestId === "" ? undefined : requestId,
          parentSpan
        }),
        ...(parsedBody === undefined ? {} : { parsedBody })
      })
    )
    const headers = { ...endToEndHeaders(response.headers), ...cors }
    const contentType = response.headers.get("content-type") ?? "application/json"
    // An exchange's SSE stream ends with its answers (the server is stateless and its tools send no progress), so
    // it is sent whole, like JSON: one write instead of a piped stream. Only a stream that stays open is piped.
    if (
      contentType.startsWith("text/event-stream") && response.body !== null && staysOpen(request.method, parsedBody)
    ) {
      return HttpServerResponse.raw(Readable.fromWeb(response.body as never), {
        status: response.status,
        headers,
        contentType
      })
    }
    const body = new Uint8Array(
      yield* Effect.promise(() =>
        response.arrayBuffer()
      )
    )
    return HttpServerResponse.uint8Array(body, { status: response.status, headers, contentType })
  }).pipe(
    Effect.catchTags({
      BadRequest: (error) => withCors(errorResponse(error)),
      ValidationError: (error) => withCors(errorResponse(error)),
      Forbidden: (error) => Effect.succeed(errorResponse(error)),
      Unauthorized: (error) => withCors(errorResponse(error)),
      RateLimited: (error) => withCors(errorResponse(error))
    })
  )

/**
 * Hop-by-hop headers describe the SDK's own connection, not ours: Node decides whether a connection is kept. Passed
 * on, the SDK's `Connection: keep-alive` overrode the `Connection: close` a draining server sets (Server.ts), so a
 * client would reuse a connection the server was about to close.
 */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te"])
const endToEndHeaders = (headers: Headers) =>
  Object.fromEntries([...headers].filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())))

/** A refusal from an allowed Origin still carries the CORS headers, so a browser client can read the challenge. */
const withCors = (response: HttpServerResponse.HttpServerResponse) =>
  Effect.map(
    HttpServerRequest.HttpServerRequest,
    (request) => HttpServerResponse.setHeaders(response, corsHeaders(request))
  )

export const mcpRoutes = (config: ServerConfig, metrics: ServerMetrics) =>
  HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      const runtime = yield* Effect.runtime<CatalogueServices>()
      const info = { name: "dock", version: "0.1.0" }
      // Every write tool takes an idempotency_key, kept in the database (the domain's Idempotency).
      const idempotency = yield* Idempotency
      const authenticated = yield* Effect.acquireRelease(
        Effect.sync(() =>
          makeMcpHandler(catalogue, runtime, info, {
            ...config.limits,
            observe: metrics.observeToolCall,
            idempotency
          })
        ),
        (handler) => Effect.promise(() => handler.close())
      )
      const anonymous = yield* Effect.acquireRelease(
        Effect.sync(() =>
          makeMcpHandler(publicCatalogue, runtime, info, { ...config.limits, observe: metrics.observeToolCall })
        ),
        (handler) => Effect.promise(() => handler.close())
      )
      yield* router.add("OPTIONS", "/mcp", preflight(config))
      yield* router.add("OPTIONS", "/mcp/public", preflight(config))
      for (const method of ["POST", "GET", "DELETE"] as const) {
        yield* router.add(method, "/mcp", bridge(authenticated, config, true))
        yield* router.add(method, "/mcp/public", bridge(anonymous, config, false))
      }
    })
  )
