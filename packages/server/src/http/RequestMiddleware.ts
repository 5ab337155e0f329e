/**
 * The one middleware every request passes through: a request id, the Host guard (HostGuard.ts), the body limit
 * the routes declared (BodyLimit.ts), error finishing for everything that goes wrong (ErrorFinishing.ts),
 * security headers, one log line per request, and the request's count and latency (Metrics.ts). It knows no
 * route: the server hands it the body limits.
 *
 * The request id is the client's `x-request-id` when it is a sane one (1–128 characters of letters, digits and
 * `._:=+/-`), else a fresh UUID; it is answered in `x-request-id`, annotated on every log line written while the
 * request is handled (fibers forked by the handler inherit the annotation; the MCP tool calls, which run on the
 * application's runtime, get it through RequestId), and named in an internal error's body.
 */
import { HttpIncomingMessage, HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { ServerConfig } from "../Config.ts"
import { makeServerMetrics, type ServerMetrics } from "../Metrics.ts"
import { answerOversizedChunkedBodies, type BodyLimit, bodyLimitFor, payloadTooLarge } from "./BodyLimit.ts"
import { failureResponse, finishErrorResponse } from "./ErrorFinishing.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { hostGuard } from "./HostGuard.ts"

const securityHeaders = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, {
    "x-content-type-options": "nosniff",
    // The web app's pages send same-origin referrers (a form POST under no-referrer carries `Origin: null`).
    ...(response.headers["referrer-policy"] === undefined ? { "referrer-policy": "no-referrer" } : {}),
    ...(response.headers["x-frame-options"] === undefined ? { "x-frame-options": "DENY" } : {}),
    ...(response.headers["content-security-policy"] === undefined
      ? { "content-security-policy": "frame-ancestors 'none'" }
      : {}),
    // Errors are never worth caching, whichever layer produced them.
    ...(response.status >= 400 && response.headers["cache-control"] === undefined
      ? { "cache-control": "no-store" }
      : {})
  })

/** The id of the request being handled ("" outside one). */
export class RequestId extends Context.Reference<RequestId>()("@dock/server/RequestId", { defaultValue: () => "" }) {}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:=+/-]{1,128}$/

/** The client's x-request-id when it is sane, else a fresh one. */
export const requestIdOf = (header: string | undefined): string =>
  header !== undefined && SANE_REQUEST_ID.test(header) ? header : randomUUID()

export const requestMiddleware = (
  config: ServerConfig,
  bodyLimits: ReadonlyArray<BodyLimit>,
  metrics: ServerMetrics = makeServerMetrics()
) => {
  const refusedHost = hostGuard(config)
  const traced = Option.isSome(config.tracing)
  // The function runs once when routes are built; the Effect it returns runs per request.
  return HttpLayerRouter.middleware((httpEffect) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const requestId = requestIdOf(request.headers["x-request-id"])
      return Effect.gen(function*() {
        const started = performance.now()
        const limit = bodyLimitFor(bodyLimits, request.url)
        const declared = Number(request.headers["content-length"] ?? 0)
        if (request.headers["transfer-encoding"] !== undefined) answerOversizedChunkedBodies(request)
        const refused = refusedHost(request) ?? (declared > limit ? payloadTooLarge(limit) : undefined)
        // The request's span carries its id, so that a trace leads to its log lines (only when spans are exported).
        if (traced) yield* Effect.annotateCurrentSpan("request_id", requestId)
        const response = refused !== undefined
          ? errorResponse(refused)
          : yield* httpEffect.pipe(
            HttpIncomingMessage.withMaxBodySize(Option.some(limit)),
            Effect.provideService(RequestId, requestId),
            Effect.catchAllCause((cause) => failureResponse(cause, request, { bodyLimit: limit, requestId })),
            Effect.flatMap((response) => finishErrorResponse(response, request, config.baseUrl))
          )

        const elapsed = performance.now() - started
        metrics.observeRequest(request.url, response.status, elapsed / 1000)
        yield* Effect.logInfo(`${request.method} ${request.url} ${response.status}`).pipe(
          Effect.annotateLogs({ status: response.status, duration_ms: Math.round(elapsed) })
        )
        return securityHeaders(HttpServerResponse.setHeader(response, "x-request-id", requestId))
      }).pipe(
        Effect.annotateLogs("request_id", requestId),
        // Every failure is answered above; the router's typing wants the "unhandled" marker kept.
        (effect) =>
          effect as Effect.Effect<
            HttpServerResponse.HttpServerResponse,
            HttpLayerRouter.unhandled,
            HttpServerRequest.HttpServerRequest
          >
      )
    }), { global: true })
}
