/**
 * How large a request body may be. Every route takes small JSON (JSON_MAX_BODY_BYTES) unless its module declares a
 * `BodyLimit` of its own (McpHttp, AdminHttp) and the server hands those declarations to the request middleware.
 * The limit is checked against Content-Length before anything is read, and enforced while reading chunked bodies.
 */
import { BadRequest, PayloadTooLarge } from "@dock/domain"
import { HttpServerError, type HttpServerRequest } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Cause, Option } from "effect"

/** A route's declared body limit: requests whose URL (path and query) `matches` may carry up to `bytes`. */
export interface BodyLimit {
  readonly matches: (url: string) => boolean
  readonly bytes: number
}

export const JSON_MAX_BODY_BYTES = 1024 * 1024

/** The first declared limit whose route matches the URL, else the small-JSON default. */
export const bodyLimitFor = (limits: ReadonlyArray<BodyLimit>, url: string): number =>
  limits.find((limit) => limit.matches(url))?.bytes ?? JSON_MAX_BODY_BYTES

export const payloadTooLarge = (limit: number) =>
  new PayloadTooLarge({ message: `The request body is larger than ${limit} bytes`, details: { limit } })

/** The platform fails a body it cannot read or parse with a "Decode" RequestError. */
const isBodyError = (error: unknown): error is HttpServerError.RequestError =>
  error instanceof HttpServerError.RequestError && error.reason === "Decode"

/** …and one over the size limit carries the reader's "maxBytes exceeded". */
const isTooLarge = (error: HttpServerError.RequestError) =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

/**
 * What a failure reading the body is answered with: PayloadTooLarge past the limit, BadRequest for a body that is
 * not JSON; undefined when the cause is no body failure (as a failure or as a defect).
 */
export const bodyReadError = (cause: Cause.Cause<unknown>, limit: number): PayloadTooLarge | BadRequest | undefined => {
  const bodyError = [Cause.failureOption(cause), Cause.dieOption(cause)].flatMap(Option.toArray).find(isBodyError)
  if (bodyError === undefined) return undefined
  return isTooLarge(bodyError)
    ? payloadTooLarge(limit)
    : new BadRequest({ message: "The request body is not valid JSON" })
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
export const answerOversizedChunkedBodies = (request: HttpServerRequest.HttpServerRequest) => {
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
