/**
 * The browser routes of spec §4.1: `/a/[public_slug]` and `/artifacts/[pageId]` serve one artifact as a
 * standalone HTML document. (`/b/...`, which lands on the web app's Dock views, is web/LandingRoutes.tsx.)
 *
 * Artifacts are untrusted content, so every answer from these routes — 200, 404 and 500 alike — is a
 * `text/html` page under the sandboxing CSP of architecture §10: no script runs, nothing loads but images,
 * no form submits, and only the app's origin may frame it. The body is rendered and sanitized when read (see
 * `Pages.view`), so what is stored, even content planted in the database, is never served as is. A Dock's Micro DB
 * page shows its live tables (MicroDbPage.ts).
 *
 * Public pages are served to anyone. A private page is served to a signed-in member of its Dock (issue 16, item 8):
 * by the session cookie, or, on a separate DOCK_ARTIFACT_ORIGIN where the cookie is not sent, by the short-lived
 * signed URL the page view puts in its frame (ArtifactAccess.ts). Anyone else gets the same 404 as for a page that
 * does not exist. Private pages, and every page a signed-in reader is shown, are sent with `Cache-Control: no-store`
 * (and, as every artifact, no referrer).
 */
import { CurrentPrincipal, Pages } from "@dock/domain"
import { HttpLayerRouter, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import type { ServerConfig } from "../Config.ts"
import { artifactReader, separateArtifactOrigin } from "./ArtifactAccess.ts"
import { artifactCsp, artifactPage, errorPage, notFoundPage } from "./ArtifactPage.ts"
import { microDbBody } from "./MicroDbPage.ts"

const serveArtifact = (config: ServerConfig, ref: { readonly publicSlug: string } | { readonly id: string }) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const reader = yield* artifactReader(config, request, "id" in ref ? ref.id : undefined)
    if (Option.isNone(reader)) return notFoundPage
    return yield* Effect.flatMap(Pages, (pages) => pages.view(ref)).pipe(
      // A Dock's Micro DB shows its live tables, not the JSON of its last snapshot.
      Effect.flatMap((view) =>
        view.part.page_kind === "micro_db" && view.part.bucket_id !== null
          ? Effect.map(microDbBody(view), (html) => ({ ...view, html }))
          : Effect.succeed(view)
      ),
      // A private page, or any page as a signed-in reader sees it (its wikilinks resolved for them), is theirs only.
      Effect.map((view) =>
        view.restricted || reader.value.userId !== null
          ? HttpServerResponse.setHeaders(artifactPage(view), {
            "cache-control": "no-store",
            "referrer-policy": "no-referrer"
          })
          : artifactPage(view)
      ),
      Effect.provideService(CurrentPrincipal, reader.value)
    )
  }).pipe(
    Effect.catchTag("NotFound", () => Effect.succeed(notFoundPage)),
    Effect.catchAllCause((cause) => Effect.as(Effect.logError("Serving an artifact failed", cause), errorPage)),
    // Artifacts on an origin of their own are framed by the app's pages (the page view), and by nothing else.
    // (X-Frame-Options stays SAMEORIGIN for browsers without CSP; browsers with it follow frame-ancestors.)
    Effect.map((response) =>
      Option.match(separateArtifactOrigin(config), {
        onNone: () => response,
        onSome: () =>
          HttpServerResponse.setHeader(
            response,
            "content-security-policy",
            artifactCsp(new URL(config.baseUrl).origin)
          )
      })
    )
  )

const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

export const artifactRoutes = (config: ServerConfig) =>
  HttpLayerRouter.addAll([
    HttpLayerRouter.route(
      "GET",
      "/a/:slug",
      Effect.flatMap(param("slug"), (publicSlug) => serveArtifact(config, { publicSlug }))
    ),
    HttpLayerRouter.route(
      "GET",
      "/artifacts/:pageId",
      Effect.flatMap(param("pageId"), (id) => serveArtifact(config, { id }))
    )
  ])
