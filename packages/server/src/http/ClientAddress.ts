/**
 * The requester's IP: the socket's address, or — only when DOCK_TRUST_PROXY is set — the last X-Forwarded-For
 * entry, the one our proxy appended. Earlier entries come from the client and can be anything.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Option } from "effect"

export const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]?.split(",").at(-1)?.trim()
    if (forwarded) return forwarded
  }
  return Option.getOrElse(request.remoteAddress, () => "unknown").replace(/^::ffff:/, "")
}
