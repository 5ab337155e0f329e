/**
 * `GET /s/<secret>`: a share link (issue 16, item 7) shows its page read-only to anyone who has the link, without
 * sign-in, while the link is live. Served exactly as /a/ serves artifacts (ArtifactPage.ts: the sandboxing CSP of
 * architecture §10 on every status, nosniff, `Referrer-Policy: no-referrer` so the secret in the URL never leaves
 * in a Referer), and besides never cached (`Cache-Control: no-store`: revocation holds on the next request, and no
 * shared cache keeps a private page) nor indexed (`X-Robots-Tag: noindex`). Unknown, malformed, revoked and expired
 * secrets are the same 404. No cookie is read or set. The secret is redacted from logs (Logging.ts).
 */
import { ShareLinks } from "@dock/domain"
import { HttpLayerRouter, HttpRouter, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { artifactPage, errorPage, notFoundPage } from "./ArtifactPage.ts"

const SHARE_HEADERS = { "cache-control": "no-store", "x-robots-tag": "noindex, nofollow" }

const withShareHeaders = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, SHARE_HEADERS)

const serveShared = (secret: string) =>
  Effect.flatMap(ShareLinks, (shareLinks) => shareLinks.open(secret)).pipe(
    Effect.map(artifactPage),
    Effect.catchTag("NotFound", () => Effect.succeed(notFoundPage)),
    Effect.catchAllCause((cause) => Effect.as(Effect.logError("Serving a share link failed", cause), errorPage)),
    Effect.map(withShareHeaders)
  )

export const shareRoutes = HttpLayerRouter.addAll([
  HttpLayerRouter.route(
    "GET",
    "/s/:secret",
    Effect.flatMap(HttpRouter.params, (params) => serveShared(params["secret"] ?? ""))
  ),
  // A bare /s/ names no link: the same 404, under the same headers.
  HttpLayerRouter.route("GET", "/s/", Effect.succeed(withShareHeaders(notFoundPage)))
])
