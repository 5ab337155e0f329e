/** Turns a DockError into the HTTP response every route answers with: the error body plus its headers. */
import { type DockError, errorBody } from "@dock/domain"
import { HttpServerResponse } from "@effect/platform"

/** Retry-After in whole seconds, at least 1. */
export const retryAfterHeader = (seconds: number) => String(Math.max(1, Math.ceil(seconds)))

export const errorResponse = (error: DockError): HttpServerResponse.HttpServerResponse => {
  const headers: Record<string, string> = { "cache-control": "no-store" }
  if (error.code === "rate_limited" && "retry_after_seconds" in error) {
    headers["retry-after"] = retryAfterHeader(error.retry_after_seconds)
  }
  return HttpServerResponse.unsafeJson(errorBody(error), { status: error.status, headers })
}
