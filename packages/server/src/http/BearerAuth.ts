/**
 * Bearer authentication for every token-authenticated route (the /mcp mount uses it): the token comes from
 * the Authorization header only, its checksum is checked before any database work, and the per-token request
 * rate applies. Success provides CurrentPrincipal; failures answer 401 (with the RFC 9728 challenge, added by
 * the request middleware) or 429.
 */
import { HttpLayerRouter, HttpServerRequest } from "@effect/platform"
import { CurrentPrincipal, Limits, mcpMessageLimit, type Principal, RateLimits, Tokens, Unauthorized } from "@dock/domain"
import { Effect } from "effect"
import { errorResponse } from "./ErrorResponse.ts"

const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i

/** The bearer token's principal, without counting the request (the MCP mount counts its messages instead). */
export const authenticateToken = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const tokens = yield* Tokens
    const header = request.headers["authorization"]
    if (header === undefined) {
      return yield* new Unauthorized({ message: "A bearer token is required (Authorization: Bearer <token>)" })
    }
    const match = BEARER.exec(header)
    if (match === null) return yield* new Unauthorized({ message: "The Authorization header is not a bearer token" })
    const principal: Principal = yield* tokens.authenticate(match[1]!)
    return principal
  })

/** The token's principal, with this request counted (as one message) against the token's rate. */
export const authenticateRequest = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const principal = yield* authenticateToken(request)
    const limits = yield* Limits
    yield* Effect.flatMap(RateLimits, (rateLimits) =>
      rateLimits.hit(mcpMessageLimit({ tokenId: principal.tokenId ?? "" }, 1, limits)))
    return principal
  })

/** Route middleware: only authenticated requests reach the handler, with CurrentPrincipal provided. */
export const BearerAuthMiddleware = HttpLayerRouter.middleware<{ provides: CurrentPrincipal }>()(
  Effect.gen(function*() {
    const context = yield* Effect.context<Tokens | RateLimits | Limits>()
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        return yield* authenticateRequest(request).pipe(
          Effect.provide(context),
          Effect.matchEffect({
            onFailure: (error) => Effect.succeed(errorResponse(error)),
            onSuccess: (principal) => Effect.provideService(httpEffect, CurrentPrincipal, principal)
          })
        )
      })
  })
)
