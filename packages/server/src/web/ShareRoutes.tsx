/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * Share links in the app (issue 16, item 7; docs/web.md): `GET /app/buckets/<slug>/<page>/-/share?owner=` lists
 * the page's links with a form to make one, `POST` there makes one (its URL shown once, in the answer), and
 * `POST …/-/share/revoke` revokes one. Every POST passes `checkedForm` (Origin + CSRF) before anything changes.
 * Who may share is the domain's rule (ShareLinks: the Dock's owner, never an unclaimed sandbox): its refusal is a
 * 403 page, a Dock or page the viewer cannot see the 404 page.
 */
import { Pages, type ResolvedDock, ShareLinks } from "@dock/domain"
import { HttpLayerRouter, HttpRouter, type HttpServerRequest } from "@effect/platform"
import { Clock, Duration, Effect, Option } from "effect"
import type { Viewer } from "./Layout.tsx"
import { SHARE_EXPIRY_CHOICES, SharePage, sharePath } from "./ShareViews.tsx"
import { ErrorView } from "./Views.tsx"
import { field, htmlPage, seeOther, type SignedInRequest, type WebKit } from "./WebKit.tsx"

type Created = { readonly url: string; readonly expiresAt: string | null }

export const shareLinkRoutes = (kit: WebKit) => {
  const refusedPage = (viewer: Viewer, message: string) =>
    htmlPage(403, <ErrorView viewer={viewer} title="Only the owner can share this page" message={message} />)

  /** The Dock and page the route names, as the signed-in viewer may see them. */
  const target = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const resolved = yield* kit.dockOf(request)
      const pageSlug = (yield* HttpRouter.params)["pageSlug"] ?? ""
      return { resolved, pageSlug }
    })

  /** The share page for a page: its links (the domain checks the caller may share it), after what just happened. */
  const page = (
    signed: SignedInRequest,
    resolved: ResolvedDock,
    pageSlug: string,
    status: number,
    created?: Created,
    error?: string
  ) =>
    Effect.gen(function*() {
      const links = yield* Effect.flatMap(ShareLinks, (shareLinks) => shareLinks.list(resolved, pageSlug))
      // The links carry the page's title; with none yet, the title is read from the page itself.
      const title = links[0]?.page_title ?? (yield* pageTitle(resolved, pageSlug))
      return htmlPage(
        status,
        <SharePage
          viewer={signed.viewer}
          dock={resolved.dock}
          pageSlug={pageSlug}
          pageTitle={title ?? pageSlug}
          links={links}
          created={created}
          error={error}
        />
      )
    })

  const pageTitle = (resolved: ResolvedDock, pageSlug: string) =>
    Effect.map(
      Effect.flatMap(Pages, (pages) => pages.read({ bucket_id: resolved.dock.id }, pageSlug)),
      ({ part }) => part.title
    )

  /** The domain's refusals as pages: not allowed is 403, not visible (or missing) is 404, the same as elsewhere. */
  const answered = <A, R>(
    signed: SignedInRequest,
    effect: Effect.Effect<A, { readonly _tag: string; readonly message: string }, R>
  ) =>
    effect.pipe(
      Effect.catchAll((error) =>
        Effect.succeed(
          error._tag === "PermissionDenied" || error._tag === "Unauthorized"
            ? refusedPage(signed.viewer, error.message)
            : kit.notFound(signed.viewer)
        )
      )
    )

  const show = kit.withSession((request, signed) =>
    answered(
      signed,
      Effect.gen(function*() {
        const { pageSlug, resolved } = yield* target(request)
        return yield* page(signed, resolved, pageSlug, 200)
      })
    )
  )

  const create = kit.withSession((request, signed) =>
    Effect.gen(function*() {
      const checked = yield* kit.checkedForm(request, signed.secret)
      if (Option.isNone(checked)) return kit.forbiddenPage(signed.viewer)
      return yield* answered(
        signed,
        Effect.gen(function*() {
          const { pageSlug, resolved } = yield* target(request)
          const choice = field(checked.value, "expires") ?? "never"
          if (!SHARE_EXPIRY_CHOICES.some((known) => known.value === choice)) {
            return yield* page(signed, resolved, pageSlug, 400, undefined, "Choose how long the link lives.")
          }
          const now = yield* Clock.currentTimeMillis
          const expiresAt = choice === "never" ? null : new Date(now + Duration.toMillis(Duration.days(Number(choice))))
          const made = yield* Effect.flatMap(
            ShareLinks,
            (shareLinks) => shareLinks.create(resolved, pageSlug, expiresAt)
          )
          return yield* page(signed, resolved, pageSlug, 200, { url: made.url, expiresAt: made.expires_at })
        })
      )
    })
  )

  const revoke = kit.withSession((request, signed) =>
    Effect.gen(function*() {
      const checked = yield* kit.checkedForm(request, signed.secret)
      if (Option.isNone(checked)) return kit.forbiddenPage(signed.viewer)
      return yield* answered(
        signed,
        Effect.gen(function*() {
          const { pageSlug, resolved } = yield* target(request)
          const id = field(checked.value, "link") ?? ""
          // Only a link of this page: the list the form came from (the domain checks the caller may share).
          const links = yield* Effect.flatMap(ShareLinks, (shareLinks) => shareLinks.list(resolved, pageSlug))
          if (!links.some((link) => link.id === id.toLowerCase())) return kit.notFound(signed.viewer)
          yield* Effect.flatMap(ShareLinks, (shareLinks) => shareLinks.revoke(id))
          return seeOther(sharePath(resolved.dock, pageSlug))
        })
      )
    })
  )

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/app/buckets/:slug/:pageSlug/-/share", show),
    HttpLayerRouter.route("POST", "/app/buckets/:slug/:pageSlug/-/share", create),
    HttpLayerRouter.route("POST", "/app/buckets/:slug/:pageSlug/-/share/revoke", revoke)
  ])
}
