/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * A page of a Dock in the web app (issue 16, item 3; docs/web.md, "Pages in the app"):
 *
 * - `GET /app/buckets/{slug}/{pageSlug}?owner=`: the page in a sandboxed frame, its metadata, backlinks and
 *   versions (a Micro DB answers 303 to its tables view);
 * - `GET …/{pageSlug}/-/diff?owner=&from=&to=`: the line diff between two versions;
 * - `GET …/{pageSlug}/-/source?owner=`: the stored source, escaped;
 * - `POST …/{pageSlug}/-/restore?owner=` `{csrf, version, base_version}`: restores a version (writers), `303` back.
 *
 * Everything goes through the Pages domain service as the signed-in person, or (the three GET views) as the
 * anonymous public without a session: a page they may not read is the same 404 page as one that does not exist
 * (for the public, the same redirect to /login). The frame loads `/artifacts/{id}` from this origin (the session cookie goes
 * along), or, with DOCK_ARTIFACT_ORIGIN on another origin, a signed URL for this person (ArtifactAccess.ts); the
 * page's CSP allows frames from exactly that origin.
 */
import { CurrentPrincipal, type Dock, type DockTarget, type PageNames, Pages, Policy } from "@dock/domain"
import { HttpLayerRouter, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { separateArtifactOrigin, signedArtifactQuery } from "../http/ArtifactAccess.ts"
import { PageDiffView, PageOverview, type PageOverviewProps, pagePath, PageSourceView } from "./PageViews.tsx"
import { dockPath } from "./Paths.ts"
import { ErrorView } from "./Views.tsx"
import { field, htmlPage, seeOther, type SignedInRequest, type WebKit } from "./WebKit.tsx"

export const pageRoutes = (kit: WebKit) => {
  const { checkedForm, config, forbiddenPage, hiddenFrom, withOptionalSession, withSession } = kit
  const artifactOrigin = separateArtifactOrigin(config)
  /** The page view frames artifacts from exactly one origin: this one, or the separate artifact origin. */
  const frameOptions = { frameSrc: Option.getOrElse(artifactOrigin, () => "'self'") }

  /** A version number from the query or a form: a positive whole number, else undefined. */
  const versionNumber = (text: string | null | undefined) =>
    text !== null && text !== undefined && /^\d{1,9}$/.test(text) && Number(text) > 0 ? Number(text) : undefined

  /** The Dock and the page a `/app/buckets/:slug/:pageSlug…` route names, as the signed-in person reads them. */
  const pageOf = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const resolved = yield* kit.dockOf(request)
      const params = yield* HttpRouter.params
      const pageSlug = params["pageSlug"] ?? ""
      const target: DockTarget = { bucket_id: resolved.dock.id }
      const names: PageNames = { page_slug: pageSlug }
      const { part } = yield* Effect.flatMap(Pages, (pages) => pages.read(target, names))
      return { resolved, dock: resolved.dock, pageSlug, target, names, part }
    })

  type Found = Effect.Effect.Success<ReturnType<typeof pageOf>>

  /**
   * Where the frame loads the artifact: this origin (the cookie goes along), or a signed URL on the other one. The
   * anonymous public reads only public pages, so its frame is the plain public artifact URL.
   */
  const frameSrcOf = (found: Found, signed: SignedInRequest | undefined) =>
    Option.match(artifactOrigin, {
      onNone: () => Effect.succeed(`/artifacts/${found.part.id}`),
      onSome: (origin) =>
        signed === undefined
          ? Effect.succeed(`${origin}/artifacts/${found.part.id}`)
          : Effect.map(
            signedArtifactQuery(found.part.id, signed.session.userId),
            (query) => `${origin}/artifacts/${found.part.id}?${query}`
          )
    })

  const overview = (
    found: Found,
    signed: SignedInRequest | undefined,
    notice?: PageOverviewProps["notice"],
    status = 200,
    restoredFrom?: number
  ) =>
    Effect.gen(function*() {
      const pages = yield* Pages
      const versions = yield* pages.versions(found.target, found.names)
      // After a restore (`&restored=N`), said only when the current version is that restore.
      const current = versions.find((version) => version.version === found.part.version)
      const restoredNotice = restoredFrom !== undefined && current?.reason === "restored" &&
          current.restored_from === restoredFrom
        ? { kind: "ok" as const, text: `Version ${restoredFrom} was restored: it is now version ${current.version}.` }
        : undefined
      const links = yield* pages.links(found.target, found.part.id)
      // Who may restore is the domain's rule (Policy), asked here only to offer the buttons.
      const canWrite = yield* Effect.isSuccess(Policy.checkWrite(yield* CurrentPrincipal, found.resolved.access))
      return htmlPage(
        status,
        <PageOverview
          viewer={signed?.viewer}
          dock={found.dock}
          part={found.part}
          frameSrc={yield* frameSrcOf(found, signed)}
          versions={versions}
          backlinks={links.inbound}
          canWrite={canWrite}
          canShare={signed !== undefined && found.resolved.role === "owner"}
          notice={notice ?? restoredNotice}
        />,
        frameOptions
      )
    })

  /** A Micro DB is shown by its tables view, not here. */
  const tablesOf = (dock: Dock, pageSlug: string) =>
    seeOther(dockPath(dock, "/-/tables/" + encodeURIComponent(pageSlug)))

  /**
   * What the viewer may not see, or what is not there, is one answer: the 404 page signed in, /login for the
   * anonymous public (kit.hiddenFrom).
   */
  const orNotFound = (request: HttpServerRequest.HttpServerRequest, signed: SignedInRequest | undefined) =>
    Effect.catchTags({
      NotFound: () => Effect.succeed(hiddenFrom(request, signed)),
      BadRequest: () => Effect.succeed(hiddenFrom(request, signed)),
      // The content workers could not prepare the page right now (busy, or a version too complex to sanitize).
      Unavailable: () => Effect.succeed(cannotShow(signed)),
      ValidationError: () => Effect.succeed(cannotShow(signed))
    })

  const cannotShow = (signed: SignedInRequest | undefined) =>
    htmlPage(
      503,
      <ErrorView
        viewer={signed?.viewer}
        title="This page cannot be shown right now"
        message="Its content could not be prepared. Try again in a moment."
      />
    )

  const query = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, config.baseUrl).searchParams

  const view = withOptionalSession((request, signed) =>
    Effect.gen(function*() {
      const found = yield* pageOf(request)
      if (found.part.page_kind === "micro_db") return tablesOf(found.dock, found.pageSlug)
      return yield* overview(found, signed, undefined, 200, versionNumber(query(request).get("restored")))
    }).pipe(orNotFound(request, signed))
  )

  const diff = withOptionalSession((request, signed) =>
    Effect.gen(function*() {
      const found = yield* pageOf(request)
      if (found.part.page_kind === "micro_db") return tablesOf(found.dock, found.pageSlug)
      const params = query(request)
      const from = versionNumber(params.get("from"))
      const to = versionNumber(params.get("to")) ?? found.part.version
      if (from === undefined) {
        return htmlPage(
          400,
          <ErrorView
            viewer={signed?.viewer}
            title="Choose two versions"
            message="Pick the versions to compare on the page's Versions list."
          />
        )
      }
      const pages = yield* Pages
      const changes = yield* pages.diff(found.target, found.names, from, to)
      const versions = yield* pages.versions(found.target, found.names)
      return htmlPage(
        200,
        <PageDiffView viewer={signed?.viewer} dock={found.dock} part={found.part} versions={versions} diff={changes} />
      )
    }).pipe(orNotFound(request, signed))
  )

  const source = withOptionalSession((request, signed) =>
    Effect.gen(function*() {
      const found = yield* pageOf(request)
      if (found.part.page_kind === "micro_db") return tablesOf(found.dock, found.pageSlug)
      return htmlPage(
        200,
        <PageSourceView
          viewer={signed?.viewer}
          dock={found.dock}
          part={found.part}
          content={found.part.content ?? ""}
        />
      )
    }).pipe(orNotFound(request, signed))
  )

  const restore = withSession((request, signed) =>
    Effect.gen(function*() {
      const checked = yield* checkedForm(request, signed.secret)
      if (Option.isNone(checked)) return forbiddenPage(signed.viewer)
      const found = yield* pageOf(request)
      const version = versionNumber(field(checked.value, "version"))
      const base = versionNumber(field(checked.value, "base_version"))
      if (version === undefined) {
        return yield* overview(found, signed, { kind: "error", text: "Choose a version to restore." }, 400)
      }
      return yield* Effect.flatMap(Pages, (pages) => pages.restore(found.target, found.names, version, base)).pipe(
        Effect.map(() =>
          seeOther(
            `${pagePath(found.dock, found.pageSlug)}&restored=${version}`
          ) as HttpServerResponse.HttpServerResponse
        ),
        Effect.catchAll((error) => {
          const text = error._tag === "Conflict"
            ? `This page changed since you opened it (it is now at version ${found.part.version}): nothing was ` +
              "restored. Look at its versions again and choose once more."
            : error.message
          return overview(found, signed, { kind: "error", text }, error.status)
        })
      )
    }).pipe(orNotFound(request, signed))
  )

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/app/buckets/:slug/:pageSlug", view),
    HttpLayerRouter.route("GET", "/app/buckets/:slug/:pageSlug/-/diff", diff),
    HttpLayerRouter.route("GET", "/app/buckets/:slug/:pageSlug/-/source", source),
    HttpLayerRouter.route("POST", "/app/buckets/:slug/:pageSlug/-/restore", restore)
  ])
}
