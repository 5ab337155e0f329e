/**
 * The browser routes of spec §4.1: `/a/[public_slug]` and `/artifacts/[pageId]` serve one artifact as a
 * standalone HTML document. (`/b/...`, which lands on the web app's Dock views, is web/LandingRoutes.tsx.)
 *
 * Artifacts are untrusted content, so every answer from these routes — 200, 404 and 500 alike — is a
 * `text/html` page under the sandboxing CSP of architecture §10: no script runs, nothing loads but images,
 * no form submits, and only this origin may frame it. The body is rendered and sanitized when read (see
 * `Pages.view`), so what is stored, even content planted in the database, is never served as is. A Dock's Micro DB
 * page shows its live tables (MicroDbPage.ts).
 *
 * Until the web app brings sessions, these routes read as the anonymous public: private content is 404.
 */
import { anonymousPrincipal, CurrentPrincipal, Pages } from "@dock/domain"
import { HttpLayerRouter, HttpRouter } from "@effect/platform"
import { Effect } from "effect"
import { artifactPage, errorPage, notFoundPage } from "./ArtifactPage.ts"
import { microDbBody } from "./MicroDbPage.ts"

const serveArtifact = (ref: { readonly publicSlug: string } | { readonly id: string }) =>
  Effect.flatMap(Pages, (pages) => pages.view(ref)).pipe(
    // A Dock's Micro DB shows its live tables, not the JSON of its last snapshot.
    Effect.flatMap((view) =>
      view.part.page_kind === "micro_db" && view.part.bucket_id !== null
        ? Effect.map(microDbBody(view), (html) => ({ ...view, html }))
        : Effect.succeed(view)
    ),
    Effect.map(artifactPage),
    Effect.provideService(CurrentPrincipal, anonymousPrincipal),
    Effect.catchTag("NotFound", () => Effect.succeed(notFoundPage)),
    Effect.catchAllCause((cause) => Effect.as(Effect.logError("Serving an artifact failed", cause), errorPage))
  )

const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

export const artifactRoutes = HttpLayerRouter.addAll([
  HttpLayerRouter.route(
    "GET",
    "/a/:slug",
    Effect.flatMap(param("slug"), (publicSlug) => serveArtifact({ publicSlug }))
  ),
  HttpLayerRouter.route("GET", "/artifacts/:pageId", Effect.flatMap(param("pageId"), (id) => serveArtifact({ id })))
])
