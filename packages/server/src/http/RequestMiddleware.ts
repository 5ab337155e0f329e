/**
 * The one middleware every request passes through: a request id, the Host guard (HostGuard.ts), the body limit
 * the routes declared (BodyLimit.ts), error finishing for everything that goes wrong (ErrorFinishing.ts),
 * security headers, and one log line per request. It knows no route: the server hands it the body limits.
 */
import { HttpIncomingMessage, HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { ServerConfig } from "../Config.ts"
import { answerOversizedChunkedBodies, type BodyLimit, bodyLimitFor, payloadTooLarge } from "./BodyLimit.ts"
import { failureResponse, finishErrorResponse } from "./ErrorFinishing.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { hostGuard } from "./HostGuard.ts"

const securityHeaders = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    ...(response.headers["x-frame-options"] === undefined ? { "x-frame-options": "DENY" } : {}),
    ...(response.headers["content-security-policy"] === undefined
      ? { "content-security-policy": "frame-ancestors 'none'" }
      : {}),
    // Errors are never worth caching, whichever layer produced them.
    ...(response.status >= 400 && response.headers["cache-control"] === undefined
      ? { "cache-control": "no-store" }
      : {})
  })

export const requestMiddleware = (config: ServerConfig, bodyLimits: ReadonlyArray<BodyLimit>) => {
  const refusedHost = hostGuard(config)
  // The function runs once when routes are built; the Effect it returns runs per request.
  return HttpLayerRouter.middleware((httpEffect) =>
    Effect.suspend(() => {
      const requestId = randomUUID()
      return Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const started = yield* Clock.currentTimeMillis
        const limit = bodyLimitFor(bodyLimits, request.url)
        const declared = Number(request.headers["content-length"] ?? 0)
        if (request.headers["transfer-encoding"] !== undefined) answerOversizedChunkedBodies(request)
        const refused = refusedHost(request) ?? (declared > limit ? payloadTooLarge(limit) : undefined)
        const response = refused !== undefined
          ? errorResponse(refused)
          : yield* httpEffect.pipe(
            HttpIncomingMessage.withMaxBodySize(Option.some(limit)),
            Effect.catchAllCause((cause) => failureResponse(cause, request, { bodyLimit: limit, requestId })),
            Effect.flatMap((response) => finishErrorResponse(response, request, config.baseUrl))
          )

        const finished = yield* Clock.currentTimeMillis
        yield* Effect.logInfo(`${request.method} ${request.url} ${response.status}`).pipe(
          Effect.annotateLogs({ status: response.status, duration_ms: finished - started })
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
