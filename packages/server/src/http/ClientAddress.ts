/** The requester's IP: the socket's address, or the first X-Forwarded-For hop only when DOCK_TRUST_PROXY is set. */
import type { HttpServerRequest } from "@effect/platform"
import { Option } from "effect"

export const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]?.split(",")[0]?.trim()
    if (forwarded) return forwarded
  }
  return Option.getOrElse(request.remoteAddress, () => "unknown").replace(/^::ffff:/, "")
}
