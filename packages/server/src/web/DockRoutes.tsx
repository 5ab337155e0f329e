/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * The Dock's routes in the web app (docs/web.md, "The Dock view, settings and members"):
 *
 * - `GET /app/buckets/:slug` the Dock view (`?cursor=` pages through older pages), `POST …/-/fork`;
 * - `GET /app/buckets/:slug/-/tables/:table` one Micro DB table, live (`?cursor=` is the row offset);
 * - `GET|POST …/-/settings`, `POST …/-/delete` (the slug typed as confirmation) for the owner;
 * - `GET|POST …/-/members`, `POST …/-/members/revoke` for the owner.
 *
 * Everything runs in the domain as the signed-in person; the domain decides (a Dock they may not read is the
 * 404 page, an owner's action refused to someone else the 403 page). Every POST passes `checkedForm` first.
 */
import {
  type DockError,
  Docks,
  Images,
  Members,
  MicroDb,
  type MicroDbTable,
  Pages,
  type ResolvedDock,
  type Role,
  Sources
} from "@dock/domain"
import { HttpLayerRouter, HttpRouter, type HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import {
  DockPage,
  type DockViewData,
  MembersPage,
  type SettingsForm,
  settingsFormOf,
  SettingsPage,
  TablePage
} from "./DockViews.tsx"
import type { Viewer } from "./Layout.tsx"
import { dockPath } from "./Paths.ts"
import { ErrorView } from "./Views.tsx"
import { field, htmlPage, seeOther, type SignedInRequest, type WebKit } from "./WebKit.tsx"

/** Pages per screen of the Dock view; rows per screen of a table; images and sources listed. */
const PAGES_PER_SCREEN = 25
const ROWS_PER_SCREEN = 50
const IMAGES_LISTED = 24
const SOURCES_LISTED = 50

export const dockRoutes = (kit: WebKit) => {
  const { withSession, withOptionalSession, hiddenFrom, checkedForm, forbiddenPage, notFound, dockOf } = kit

  const queryOf = (request: HttpServerRequest.HttpServerRequest) =>
    new URL(request.url, kit.config.baseUrl).searchParams

  /** What the domain refused, as a page: what the viewer may not see is the 404 page; other refusals say why. */
  const refusal = (viewer: Viewer, error: DockError) =>
    error._tag === "NotFound" || error._tag === "BadRequest"
      ? notFound(viewer)
      : htmlPage(
        error.status,
        <ErrorView
          viewer={viewer}
          title={error._tag === "ValidationError" ? "That request was not valid" : "You cannot do this here"}
          message={error.message}
        />
      )

  /**
   * A refusal in a view anyone may open (a public Dock's): what the viewer may not see is the 404 page signed in,
   * or /login for the anonymous public (kit.hiddenFrom); other refusals say why.
   */
  const viewRefusal = (
    request: HttpServerRequest.HttpServerRequest,
    signed: SignedInRequest | undefined,
    error: DockError
  ) =>
    error._tag === "NotFound" || error._tag === "BadRequest"
      ? hiddenFrom(request, signed)
      : htmlPage(
        error.status,
        <ErrorView viewer={signed?.viewer} title="You cannot do this here" message={error.message} />
      )

  /** Everything the Dock view shows, read as the signed-in person. */
  const dockViewData = (
    request: HttpServerRequest.HttpServerRequest,
    resolved: ResolvedDock,
    messages: { readonly notice?: string; readonly error?: string } = {}
  ) =>
    Effect.gen(function*() {
      const { dock } = resolved
      const target = { bucket_id: dock.id }
      const cursor = queryOf(request).get("cursor") ?? undefined
      const listed = yield* Effect.flatMap(Pages, (pages) =>
        pages.list(target, {
          limit: PAGES_PER_SCREEN,
          sort: "recent",
          kinds: ["web_page", "markdown_file", "micro_db"],
          cursor,
          authors: true
        }))
      const details = yield* Effect.flatMap(Docks, (docks) => docks.details(target))
      const tables = yield* Effect.flatMap(MicroDb, (microDb) => microDb.tables(target)).pipe(
        Effect.orElseSucceed((): ReadonlyArray<MicroDbTable> => [])
      )
      const { sources } = yield* Effect.flatMap(Sources, (sources) => sources.list(target))
      const images = yield* Effect.flatMap(Images, (images) => images.list(resolved, IMAGES_LISTED))
      return {
        dock,
        owner: resolved.role === "owner",
        // Offered to anyone who does not own it (the public: a sign-in link); the domain decides when it is pressed.
        canFork: dock.visibility === "public" && dock.allow_forks && resolved.role !== "owner",
        pages: listed.parts,
        authors: listed.authors ?? new Map(),
        olderPages: listed.nextCursor,
        firstPage: cursor === undefined,
        tables,
        sources: sources.slice(0, SOURCES_LISTED),
        images,
        // The image route serves a private Dock's images to a session that reads the Dock too (ImageHttp.ts), and
        // whoever sees this view reads the Dock.
        thumbnails: true,
        activity: details.recent_activity,
        ...messages
      } satisfies DockViewData
    })

  const dockView = withOptionalSession((request, signed) =>
    Effect.gen(function*() {
      const resolved = yield* dockOf(request)
      return htmlPage(200, <DockPage viewer={signed?.viewer} data={yield* dockViewData(request, resolved)} />)
    }).pipe(Effect.catchAll((error) => Effect.succeed(viewRefusal(request, signed, error))))
  )

  const fork = withSession((request, signed) =>
    Effect.gen(function*() {
      const checked = yield* checkedForm(request, signed.secret)
      if (Option.isNone(checked)) return forbiddenPage(signed.viewer)
      const resolved = yield* dockOf(request)
      return yield* Effect.flatMap(Docks, (docks) => docks.fork({ bucket_id: resolved.dock.id }, {})).pipe(
        Effect.map((forked) => seeOther(dockPath(forked))),
        Effect.catchAll((error) =>
          Effect.map(
            dockViewData(request, resolved, { error: error.message }),
            (data) => htmlPage(error.status, <DockPage viewer={signed.viewer} data={data} />)
          )
        )
      )
    }).pipe(Effect.catchAll((error) => Effect.succeed(refusal(signed.viewer, error))))
  )

  const table = withOptionalSession((request, signed) =>
    Effect.gen(function*() {
      const resolved = yield* dockOf(request)
      const target = { bucket_id: resolved.dock.id }
      const name = (yield* HttpRouter.params)["table"] ?? ""
      const cursor = queryOf(request).get("cursor") ?? "0"
      const offset = /^\d{1,9}$/.test(cursor) ? Number(cursor) : 0
      const microDb = yield* MicroDb
      const found = yield* microDb.table(target, name)
      const { rows } = yield* microDb.query(target, found.id, {
        limit: ROWS_PER_SCREEN,
        offset,
        sort: [{ column: "created_at", direction: "desc" }, { column: "id", direction: "asc" }]
      })
      const next = rows.length === ROWS_PER_SCREEN && offset + ROWS_PER_SCREEN < found.row_count
        ? offset + ROWS_PER_SCREEN
        : null
      return htmlPage(
        200,
        <TablePage viewer={signed?.viewer} dock={resolved.dock} table={found} rows={rows} offset={offset} next={next} />
      )
    }).pipe(Effect.catchAll((error) => Effect.succeed(viewRefusal(request, signed, error))))
  )

  const settingsPage = (
    viewer: Viewer,
    resolved: ResolvedDock,
    status: number,
    extra: {
      readonly form?: SettingsForm
      readonly notice?: string
      readonly error?: string
      readonly deleteError?: string
    } = {}
  ) =>
    htmlPage(
      status,
      <SettingsPage
        viewer={viewer}
        dock={resolved.dock}
        form={extra.form ?? settingsFormOf(resolved.dock)}
        notice={extra.notice}
        error={extra.error}
        deleteError={extra.deleteError}
      />
    )

  const notOwnerPage = (viewer: Viewer) =>
    htmlPage(
      403,
      <ErrorView viewer={viewer} title="Only the owner can do this" message="Only the Dock's owner can do this." />
    )

  const settings = withSession((request, signed) =>
    Effect.gen(function*() {
      const resolved = yield* dockOf(request)
      // The role is the one resolver's (Policy.roleOf); every change below is checked again by the domain.
      if (resolved.role !== "owner") return notOwnerPage(signed.viewer)
      const saved = queryOf(request).get("saved") === "1"
      return settingsPage(signed.viewer, resolved, 200, saved ? { notice: "Settings saved." } : {})
    }).pipe(Effect.catchAll((error) => Effect.succeed(refusal(signed.viewer, error))))
  )

  const saveSettings = withSession((request, signed) =>
    Effect.gen(function*() {
      const checked = yield* checkedForm(request, signed.secret)
      if (Option.isNone(checked)) return forbiddenPage(signed.viewer)
      const form = checked.value
      const resolved = yield* dockOf(request)
      const input: SettingsForm = {
        title: (field(form, "title") ?? "").trim(),
        description: (field(form, "description") ?? "").trim(),
        visibility: field(form, "visibility") === "public" ? "public" : "private",
        discoverable: field(form, "discoverable") === "on",
        allowForks: field(form, "allow_forks") === "on"
      }
      return yield* Effect.flatMap(Docks, (docks) =>
        docks.updateMetadata(resolved, {
          name: input.title,
          description: input.description === "" ? null : input.description,
          visibility: input.visibility,
          discoverable: input.discoverable,
          allowForks: input.allowForks
        })).pipe(
          Effect.map((dock) => seeOther(dockPath(dock, "/-/settings").replace("?", "?saved=1&"))),
          Effect.catchAll((error) =>
            Effect.succeed(
              error._tag === "ValidationError" || error._tag === "RateLimited"
                ? settingsPage(signed.viewer, resolved, error.status, { form: input, error: error.message })
                : refusal(signed.viewer, error)
            )
          )
        )
    }).pipe(Effect.catchAll((error) => Effect.succeed(refusal(signed.viewer, error))))
  )

  const deleteDock = withSession((request, signed) =>
    Effect.gen(function*() {
      const checked = yield* checkedForm(request, signed.secret)
      if (Option.isNone(checked)) return forbiddenPage(signed.viewer)
      const resolved = yield* dockOf(request)
      if (resolved.role !== "owner") return notOwnerPage(signed.viewer)
      if ((field(checked.value, "confirm") ?? "").trim() !== resolved.dock.slug) {
        return settingsPage(signed.viewer, resolved, 400, {
          deleteError: `Nothing was deleted: type ${resolved.dock.slug} exactly to confirm.`
        })
      }
      yield* Effect.flatMap(Docks, (docks) => docks.remove(resolved))
      return seeOther(`/app?deleted=${encodeURIComponent(`${resolved.dock.owner.username}/${resolved.dock.slug}`)}`)
    }).pipe(Effect.catchAll((error) => Effect.succeed(refusal(signed.viewer, error))))
  )

  const membersPage = (
    viewer: Viewer,
    resolved: ResolvedDock,
    status: number,
    extra: { readonly notice?: string; readonly error?: string; readonly user?: string; readonly role?: string } = {}
  ) =>
    Effect.map(
      Effect.flatMap(Members, (members) => members.members(resolved)),
      (members) =>
        htmlPage(
          status,
          <MembersPage
            viewer={viewer}
            dock={resolved.dock}
            members={members}
            notice={extra.notice}
            error={extra.error}
            user={extra.user}
            role={extra.role}
          />
        )
    )

  const members = withSession((request, signed) =>
    Effect.gen(function*() {
      const resolved = yield* dockOf(request)
      const done = queryOf(request).get("done")
      return yield* membersPage(signed.viewer, resolved, 200, {
        ...(done === "granted"
          ? { notice: "Access granted." }
          : done === "revoked"
          ? { notice: "Access revoked." }
          : {})
      })
    }).pipe(Effect.catchAll((error) => Effect.succeed(refusal(signed.viewer, error))))
  )

  /** A grant or revocation: the domain's refusal of the person or role is shown above the form. */
  const changeMembers = (change: "grant" | "revoke") =>
    withSession((request, signed) =>
      Effect.gen(function*() {
        const checked = yield* checkedForm(request, signed.secret)
        if (Option.isNone(checked)) return forbiddenPage(signed.viewer)
        const form = checked.value
        const resolved = yield* dockOf(request)
        const user = (field(form, "user") ?? "").trim()
        const role = field(form, "role") ?? ""
        const service = yield* Members
        // The role goes to the domain as sent: it grants editor or viewer and refuses anything else (`owner`).
        const changed = change === "grant"
          ? service.grant(resolved, user, role as Role)
          : service.revoke(resolved, user)
        return yield* changed.pipe(
          Effect.as(seeOther(dockPath(resolved.dock, "/-/members").replace("?", `?done=${change}ed&`))),
          Effect.catchAll((error) =>
            // Unknown person, no such grant, a refused role: said above the form (to the owner only: the page
            // lists the members, which the domain refuses to anyone else).
            error._tag === "ValidationError" || error._tag === "NotFound"
              ? membersPage(signed.viewer, resolved, error.status, { error: error.message, user, role })
              : Effect.fail(error)
          )
        )
      }).pipe(Effect.catchAll((error) => Effect.succeed(refusal(signed.viewer, error))))
    )

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/app/buckets/:slug", dockView),
    HttpLayerRouter.route("POST", "/app/buckets/:slug/-/fork", fork),
    HttpLayerRouter.route("GET", "/app/buckets/:slug/-/tables/:table", table),
    HttpLayerRouter.route("GET", "/app/buckets/:slug/-/settings", settings),
    HttpLayerRouter.route("POST", "/app/buckets/:slug/-/settings", saveSettings),
    HttpLayerRouter.route("POST", "/app/buckets/:slug/-/delete", deleteDock),
    HttpLayerRouter.route("GET", "/app/buckets/:slug/-/members", members),
    HttpLayerRouter.route("POST", "/app/buckets/:slug/-/members", changeMembers("grant")),
    HttpLayerRouter.route("POST", "/app/buckets/:slug/-/members/revoke", changeMembers("revoke"))
  ])
}
