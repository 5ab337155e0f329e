/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * `/b/<slug>` and `/b/<slug>/<pageSlug>` (spec §4.1; issue 16, item 4): every Dock's `url` lands in the web app.
 * With `?owner=` (as every Dock `url` carries) the Dock is named exactly: a 308 to `/app/buckets/<slug>[/<page>]
 * ?owner=`. A bare slug is resolved for the viewer (the session's principal, else the anonymous public) as the one
 * resolver resolves `bucket: <slug>` (`Docks.candidates`): one Dock, a 308 to it; several, a chooser page; none
 * readable, what the app's views answer (`kit.hiddenFrom`): the 404 page to a signed-in viewer, and to the anonymous
 * public a 303 to /login and back, since it may be their own private Dock (an owner following their Dock's url
 * while signed out). Missing and unreadable answer alike, so existence is never revealed. Only the Dock is looked
 * up: the page view answers for the page.
 */
import { anonymousPrincipal, CurrentPrincipal, type Dock, Docks } from "@dock/domain"
import { HttpLayerRouter, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { ChooserPage } from "./LandingViews.tsx"
import { dockPath } from "./Paths.ts"
import { htmlPage, sessionPrincipal, type WebKit } from "./WebKit.tsx"

const permanentRedirect = (location: string) =>
  HttpServerResponse.empty({ status: 308, headers: { location, "cache-control": "no-store" } })

export const landingRoutes = (kit: WebKit) => {
  const land = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* HttpRouter.params
    const slug = params["slug"] ?? ""
    const pageSlug = params["pageSlug"]
    const owner = new URL(request.url, kit.config.baseUrl).searchParams.get("owner")
    const signed = yield* kit.signedIn(request)
    const viewer = Option.getOrUndefined(Option.map(signed, (s) => s.viewer))
    const principal = Option.match(signed, {
      onNone: () => anonymousPrincipal,
      onSome: (s) => sessionPrincipal(s.session)
    })
    // Each path segment is encoded again, so an encoded slash in it stays one segment.
    const appPath = (dock: Dock) => dockPath(dock, pageSlug === undefined ? "" : `/${encodeURIComponent(pageSlug)}`)
    const docks = yield* Docks
    const found = yield* (owner === null
      ? docks.candidates(slug)
      : docks.named({ bucket_slug: slug, owner_username: owner }).pipe(
        Effect.map((resolved) => [resolved]),
        Effect.orElseSucceed(() => [])
      )).pipe(Effect.provideService(CurrentPrincipal, principal))
    if (found.length === 0) return kit.hiddenFrom(request, Option.getOrUndefined(signed))
    if (found.length === 1) return permanentRedirect(appPath(found[0]!.dock))
    return htmlPage(
      200,
      <ChooserPage
        viewer={viewer}
        slug={slug}
        pageSlug={pageSlug}
        here={request.url}
        choices={found.map(({ dock }) => ({ dock, href: appPath(dock) }))}
      />
    )
  })

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/b/:slug", land),
    HttpLayerRouter.route("GET", "/b/:slug/:pageSlug", land)
  ])
}
