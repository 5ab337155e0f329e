/**
 * Error finishing: the answer for everything that goes wrong, whichever layer it went wrong in, from the typed
 * error (a DockError, the platform's HttpApiDecodeError, a RouteNotFound, a body read failure, a defect).
 */
import {
  BadRequest,
  type DockError,
  Internal,
  NotFound,
  PayloadTooLarge,
  statementTimeoutError,
  ValidationError,
  wire
} from "@dock/domain"
import { HttpApiError, HttpServerError, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option, Schema } from "effect"
import { isArtifactPath, notFoundPage } from "./ArtifactPage.ts"
import { bearerChallenge } from "./BearerAuth.ts"
import { bodyReadError } from "./BodyLimit.ts"
import { errorResponse, retryAfterHeader } from "./ErrorResponse.ts"

/**
 * The answer for a failure no route answered: an unknown route is 404 (an artifact path gets the artifact 404
 * page), an unreadable body 413 or 400, a statement timeout 503, an interruption 499; anything else is logged
 * and answered 500 with the request id.
 */
export const failureResponse = (
  cause: Cause.Cause<unknown>,
  request: HttpServerRequest.HttpServerRequest,
  options: { readonly bodyLimit: number; readonly requestId: string }
) =>
  Effect.gen(function*() {
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure) && failure.value instanceof HttpServerError.RouteNotFound) {
      if (request.method === "GET" && isArtifactPath(request.url)) return notFoundPage
      return errorResponse(new NotFound({ message: `No route for ${request.method} ${request.url.split("?")[0]}` }))
    }
    const bodyError = bodyReadError(cause, options.bodyLimit)
    if (bodyError instanceof PayloadTooLarge) {
      // The rest of the body was never read: this connection cannot carry another request.
      return HttpServerResponse.setHeader(errorResponse(bodyError), "connection", "close")
    }
    if (bodyError !== undefined) return errorResponse(bodyError)
    const timedOut = statementTimeoutError(cause)
    if (timedOut !== undefined) return errorResponse(timedOut)
    if (Cause.isInterruptedOnly(cause)) {
      return HttpServerResponse.empty({ status: 499 })
    }
    yield* Effect.logError("Unhandled failure", cause)
    const requestId = options.requestId
    return errorResponse(new Internal({ message: `Internal error (request id ${requestId})`, request_id: requestId }))
  })

/**
 * The errors HttpApi answers with a body of its own making, read back with the schemas that wrote them: the
 * platform encodes them inside its route wrapper and hands over only the response, never the error value.
 */
const HttpApiAnswer = Schema.parseJson(Schema.Union(HttpApiError.HttpApiDecodeError, wire("rate_limited")))
const decodeHttpApiAnswer = Schema.decodeUnknownOption(HttpApiAnswer)

const httpApiErrorOf = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array"
    ? Option.getOrUndefined(decodeHttpApiAnswer(new TextDecoder().decode(response.body.body)))
    : undefined

/** HttpApi's decode error as our validation_error, naming the path of the first problem. */
const validationErrorOf = (error: HttpApiError.HttpApiDecodeError): DockError => {
  const first = error.issues[0]
  const path = (first?.path ?? []).map(String)
  const where = path.length === 0 ? "request" : path.join(".")
  return new ValidationError({
    message: `Invalid ${where}: ${first?.message ?? error.message}`,
    details: { path, issues: error.issues }
  })
}

/**
 * HttpApi decodes an empty body as no payload and reports the payload's shape; but an empty body is not JSON at
 * all, which is bad_request like any other body that is not JSON. (The body was read already: `text` is cached.)
 */
const isEmptyBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.method === "GET" || request.method === "HEAD"
    ? Effect.succeed(false)
    : Effect.map(request.text.pipe(Effect.orElseSucceed(() => "not empty")), (text) => text.trim() === "")

/**
 * The finishing touches every error response gets, whichever layer produced it:
 * - HttpApi's decode error becomes our validation_error (bad_request for an empty body);
 * - 429 carries `Retry-After` from the error's `retry_after_seconds`;
 * - 401 carries the bearer challenge pointing at the protected-resource metadata, except from the OAuth endpoints:
 *   their 401 is invalid_client, which names Basic if the client used it and nothing else (RFC 6749 §5.2).
 */
export const finishErrorResponse = (
  response: HttpServerResponse.HttpServerResponse,
  request: HttpServerRequest.HttpServerRequest,
  baseUrl: string
) =>
  Effect.gen(function*() {
    if (response.status === 400) {
      const error = httpApiErrorOf(response)
      if (!(error instanceof HttpApiError.HttpApiDecodeError)) return response
      return (yield* isEmptyBody(request))
        ? errorResponse(new BadRequest({ message: "The request body is empty: send a JSON object" }))
        : errorResponse(validationErrorOf(error))
    }
    if (response.status === 429 && response.headers["retry-after"] === undefined) {
      const error = httpApiErrorOf(response)
      return error === undefined || error instanceof HttpApiError.HttpApiDecodeError
        ? response
        : HttpServerResponse.setHeader(response, "retry-after", retryAfterHeader(error.retry_after_seconds))
    }
    if (
      response.status === 401 && response.headers["www-authenticate"] === undefined &&
      !request.url.startsWith("/oauth/")
    ) {
      return HttpServerResponse.setHeader(response, "www-authenticate", bearerChallenge(request, baseUrl))
    }
    return response
  })
