/**
 * Who reads an artifact in the browser (issue 16, item 8; docs/web.md, "Pages in the app"): the anonymous public,
 * a signed-in person by their session cookie, or, where the cookie does not go (DOCK_ARTIFACT_ORIGIN on another
 * origin), the person a short-lived signed URL names.
 *
 * A signed URL is `/artifacts/<pageId>?v=<userId>&exp=<unix seconds>&sig=<HMAC>`, the HMAC (DOCK_SECRET) over
 * "artifact-view"‖pageId‖userId‖exp. It is made by the page view for its frame, lives a few minutes, and names
 * one page and one person: it lets that person's rights apply where their cookie is not sent, nothing more. The
 * route checks the person may read the page when it is served, so a revoked grant holds at once.
 */
import { Accounts, anonymousPrincipal, HmacKey, type Principal, type UserId, userPrincipal } from "@dock/domain"
import type { HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Option, Redacted } from "effect"
import { createHmac } from "node:crypto"
import type { ServerConfig } from "../Config.ts"
import { sessionOfRequest } from "../web/SessionLookup.ts"
import { cookieNames, sameToken } from "../web/WebSecurity.ts"

/** How long a signed artifact URL lives: long enough to load the frame, short enough not to matter if copied. */
export const SIGNED_ARTIFACT_TTL_SECONDS = 5 * 60

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * The origin artifacts are served from when it is not the app's own (DOCK_ARTIFACT_ORIGIN set to another origin):
 * the session cookie is not sent there, so the app's frames use signed URLs.
 */
export const separateArtifactOrigin = (config: ServerConfig): Option.Option<string> =>
  Option.filter(config.artifactOrigin, (origin) => new URL(origin).origin !== new URL(config.baseUrl).origin)

const signature = (key: Redacted.Redacted, pageId: string, userId: string, exp: number) =>
  createHmac("sha256", Redacted.value(key)).update(`artifact-view\u0000${pageId}\u0000${userId}\u0000${exp}`).digest(
    "base64url"
  )

/** The query (`v`, `exp`, `sig`) that lets `userId` read page `pageId` on the artifact origin for a few minutes. */
export const signedArtifactQuery = (pageId: string, userId: string) =>
  Effect.gen(function*() {
    const key = yield* HmacKey
    const exp = Math.floor((yield* Clock.currentTimeMillis) / 1000) + SIGNED_ARTIFACT_TTL_SECONDS
    const sig = signature(key, pageId.toLowerCase(), userId, exp)
    return `v=${encodeURIComponent(userId)}&exp=${exp}&sig=${sig}`
  })

/**
 * The person a signed URL for `pageId` names, when its signature is ours and it has not expired (an expiry further
 * away than a signed URL ever lives is refused too). None for anything else.
 */
export const signedViewer = (pageId: string, query: URLSearchParams) =>
  Effect.gen(function*() {
    const userId = query.get("v")
    const exp = query.get("exp")
    const sig = query.get("sig")
    if (userId === null || exp === null || sig === null || !UUID.test(userId) || !/^\d{1,12}$/.test(exp)) {
      return Option.none<string>()
    }
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const expires = Number(exp)
    if (expires < now || expires > now + SIGNED_ARTIFACT_TTL_SECONDS) return Option.none<string>()
    const key = yield* HmacKey
    return sameToken(sig, signature(key, pageId.toLowerCase(), userId, expires))
      ? Option.some(userId)
      : Option.none<string>()
  })

/**
 * Who reads this artifact request: a signed URL's person (for `/artifacts/<pageId>`, when the query carries one:
 * a bad or expired one reads as nobody at all, so it is a 404 rather than the public page), else the session's
 * person, else the anonymous public. Either person reads only (`mcp:read`): an artifact route changes nothing.
 */
export const artifactReader = (
  config: ServerConfig,
  request: HttpServerRequest.HttpServerRequest,
  pageId: string | undefined
) =>
  Effect.gen(function*() {
    const query = new URL(request.url, config.baseUrl).searchParams
    if (pageId !== undefined && (query.has("sig") || query.has("v") || query.has("exp"))) {
      const userId = yield* signedViewer(pageId, query)
      if (Option.isNone(userId)) return Option.none<Principal>()
      const user = yield* Effect.flatMap(Accounts, (accounts) => accounts.findById(userId.value as UserId)).pipe(
        Effect.option
      )
      return Option.map(
        user,
        (user) => userPrincipal({ id: user.id, username: user.username }, { scopes: ["mcp:read"] })
      )
    }
    const signedIn = yield* sessionOfRequest(request, cookieNames(config))
    return Option.some(
      Option.match(signedIn, {
        onNone: () => anonymousPrincipal,
        onSome: ({ session }) =>
          userPrincipal({ id: session.userId, username: session.username }, { scopes: ["mcp:read"] })
      })
    )
  })
