/**
 * The Pages port: the store every page write goes through once its content is prepared (sanitized HTML,
 * parsed Markdown, a Micro DB snapshot). Creates or updates one page by slug, with a new version for every
 * change of content, attribution, the content caps and the activity log, all in one transaction.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { Activity } from "../Activity/Activity.ts"
import { Docks } from "../Docks/Docks.ts"
import { type DockTarget, targetRefs } from "../Docks/Dock.ts"
import {
  BadRequest,
  type InvalidFrontMatter,
  type InvalidSlug,
  NotFound,
  type PermissionDenied,
  type RateLimited,
  TierLimitExceeded,
  type Unauthorized,
  type Unavailable,
  ValidationError
} from "../Errors.ts"
import { type DockId, isUuid, type UserId } from "../Ids.ts"
import { Limits } from "../Limits.ts"
import { ArtifactBaseUrl, PublicBaseUrl } from "../Settings.ts"
import { checkCreateDock, checkWrite, type DockAccess, roleOf } from "../Policy.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { WriteRules } from "../WriteRules.ts"
import { slugify, validateSlug } from "../Slug.ts"
import { authorOf, makePagesRepo, partFields, type PartRow } from "./PagesRepo.ts"
import { ContentType, type PageContent, type PageKind, type PageNames, Part, type SaveAction } from "./Part.ts"
import { type Prepared, prepareHtml, prepareMarkdown, type PushInput } from "../Content/Prepare.ts"
import { ContentWorkers } from "../Content/ContentWorkers.ts"
import { escapeHtml } from "../Content/HtmlText.ts"
import { makeFailureMemory, makeRenderCache } from "./RenderCache.ts"
import { type InboundLink, linkDockOf, makeLinks, type OutboundLink, WIKILINKS_MAX } from "./Links.ts"

export class Pages extends Context.Tag("@dock/domain/Pages")<Pages, {
  /** Creates the page with this slug in the Dock, or updates it (`unchanged` when nothing differs). */
  readonly save: (
    dockId: DockId,
    content: PageContent
  ) => Effect.Effect<
    { readonly part: Part; readonly action: SaveAction },
    NotFound | BadRequest | Unauthorized | PermissionDenied | ValidationError | TierLimitExceeded | RateLimited,
    CurrentPrincipal
  >
  /**
   * push_web_page / push_markdown_file / push_markdown: prepares the content, then saves it into the named Dock,
   * or with none named into the caller's default Dock (a sandbox token's sandbox).
   */
  readonly push: (
    kind: PushKind,
    target: DockTarget,
    input: PushInput & { readonly contentType?: "markdown" | "html" | undefined }
  ) => Effect.Effect<PushResult, PushError, CurrentPrincipal>
  /** One page with its content; the Dock named or, with none, the grounding or default Dock. */
  readonly read: (
    target: DockTarget,
    page: string | PageNames
  ) => Effect.Effect<
    { readonly part: Part; readonly record: PageRecord },
    NotFound | BadRequest | ValidationError | Unavailable,
    CurrentPrincipal
  >
  readonly list: (
    target: DockTarget,
    options: { readonly limit: number; readonly sort: "alphabetical" | "recent"; readonly kinds: ReadonlyArray<PageKind> }
  ) => Effect.Effect<ReadonlyArray<Part>, NotFound | BadRequest, CurrentPrincipal>
  readonly versions: (
    target: DockTarget,
    page: string | PageNames
  ) => Effect.Effect<ReadonlyArray<PartVersion>, NotFound | BadRequest, CurrentPrincipal>
  readonly version: (
    target: DockTarget,
    page: string | PageNames,
    version: number
  ) => Effect.Effect<
    { readonly version: number; readonly content: string },
    NotFound | BadRequest | ValidationError | Unavailable,
    CurrentPrincipal
  >
  /** A new version equal to an old one (history is never rewritten); HTML is sanitized again. */
  readonly restore: (
    target: DockTarget,
    page: string | PageNames,
    version: number
  ) => Effect.Effect<
    Part,
    NotFound | BadRequest | Unauthorized | PermissionDenied | ValidationError | TierLimitExceeded | RateLimited | Unavailable,
    CurrentPrincipal
  >
  /**
   * search_web_pages: readable pages matching the query, best first, with snippets. A named Dock limits the
   * search to it (a Dock the caller cannot read gives no results); otherwise every Dock the caller owns, works
   * in, or finds public (discoverable), optionally only those of `owner_username`.
   */
  readonly search: (
    query: string,
    options: { readonly target: DockTarget; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<PageSearchResult>, ValidationError | BadRequest, CurrentPrincipal>
  /** get_web_page_links: the page's wikilinks, resolved now, and the readable pages that link to it. */
  readonly links: (
    target: DockTarget,
    page: string
  ) => Effect.Effect<
    { readonly outbound: ReadonlyArray<OutboundLink>; readonly inbound: ReadonlyArray<InboundLink> },
    NotFound | BadRequest,
    CurrentPrincipal
  >
  /**
   * The browser routes (/a/, /artifacts/): a page anyone may view, rendered now (Markdown with its wikilinks
   * resolved for the caller) and sanitized, with who wrote its current version. Private content is not_found.
   * A version too complex to render within the content workers' bound is shown as its escaped source.
   */
  readonly view: (
    ref: { readonly publicSlug: string } | { readonly id: string }
  ) => Effect.Effect<PageView, NotFound | Unavailable, CurrentPrincipal>
  /** Needs a named Dock: a delete never falls back to the grounding or default Dock. */
  readonly remove: (
    target: DockTarget,
    page: string | PageNames
  ) => Effect.Effect<
    void,
    NotFound | BadRequest | Unauthorized | PermissionDenied | ValidationError | RateLimited,
    CurrentPrincipal
  >
}>() {}

export type PushKind = "web_page" | "markdown_file" | "markdown"

export type PushError =
  | NotFound
  | BadRequest
  | Unauthorized
  | PermissionDenied
  | ValidationError
  | TierLimitExceeded
  | RateLimited
  | InvalidFrontMatter
  | InvalidSlug
  | Unavailable

export interface PushResult {
  readonly part: Part
  readonly action: SaveAction
  readonly warnings: ReadonlyArray<string>
  readonly sanitization_warnings?: ReadonlyArray<string>
}

/** The stored record behind a page, beyond the `part` fields: what get_web_page's grounding fields show. */
export interface PageRecord {
  readonly text: string
  readonly frontMatter: Record<string, unknown>
  readonly tags: ReadonlyArray<string>
  readonly entities: ReadonlyArray<string>
  readonly concepts: ReadonlyArray<string>
  readonly sourceIds: ReadonlyArray<string>
  readonly links: ReadonlyArray<string>
}

/** One search_web_pages hit (`McpPageSearchResult`): the page, its Dock, a snippet (`**` marks matches), rank. */
export class PageSearchResult extends Schema.Class<PageSearchResult>("PageSearchResult")({
  part: Part,
  bucket: Schema.Struct({ id: Schema.UUID, slug: Schema.String, title: Schema.String, path: Schema.String }),
  snippet: Schema.String,
  /** PostgreSQL ts_rank_cd: higher is better; comparable within one result list only */
  rank: Schema.Number
}) {}

/** A page as the browser routes show it. */
export interface PageView {
  readonly part: Part
  /** the rendered, sanitized body */
  readonly html: string
  /** who wrote the current version, and when */
  readonly author: { readonly username: string | null; readonly agentLabel: string | null; readonly at: Date }
}

/** One saved version of a page (list_web_page_versions, list_markdown_file_versions). */
export class PartVersion extends Schema.Class<PartVersion>("PartVersion")({
  version: Schema.Int,
  title: Schema.NullOr(Schema.String),
  summary: Schema.String,
  content_type: ContentType,
  size_bytes: Schema.Int,
  /** created, updated, restored, forked or snapshot */
  reason: Schema.String,
  restored_from: Schema.NullOr(Schema.Int),
  author: Schema.Struct({
    user_id: Schema.NullOr(Schema.String),
    username: Schema.NullOr(Schema.String),
    agent_label: Schema.NullOr(Schema.String)
  }),
  created_at: Schema.String
}) {}

export const toPart = (row: PartRow, baseUrl: string, withContent = false): Part =>
  new Part({
    id: row.id,
    bucket_id: row.dock_id,
    slug: row.slug,
    public_slug: row.public_slug,
    url: `${baseUrl}/a/${row.public_slug}`,
    title: row.title,
    summary: row.summary,
    content_type: row.content_type,
    page_kind: row.page_kind,
    version: row.version,
    last_updated: row.updated_at.toISOString(),
    claim_count: row.claim_count,
    ...(withContent ? { content: row.content } : {})
  })

/** The Micro DB shell is changed only by the Micro DB tools: its versions are snapshots of its tables. */
const microDbShellRefused = (what: "restored" | "deleted") =>
  new ValidationError({
    message: what === "deleted"
      ? "This page is the Dock's Micro DB: delete its tables with delete_micro_db_table (it goes with the Dock)"
      : "This page is the Dock's Micro DB: its snapshots are read with get_web_page_version, not restored",
    details: { page_kind: "micro_db" }
  })

/** A page version shown without rendering (too complex to render): a notice, then its source as escaped text. */
const unrenderedBody = (row: { readonly content: string }, refusal: ValidationError) =>
  `<p><strong>${escapeHtml(refusal.message)}.</strong> Its source is shown as text.</p>\n<pre>${escapeHtml(row.content)}</pre>`

/** What a public slug can look like; anything else (a NUL byte, say) names no page and is never looked up. */
export const isPublicSlug = (text: string) => /^[a-z0-9-]{1,128}$/.test(text)

/** A public slug: the page slug plus a random suffix, unique across the service and never changed. */
export const newPublicSlug = (slug: string) =>
  `${slug.slice(0, 48)}-${crypto.getRandomValues(new Uint32Array(2)).reduce((text, n) => text + n.toString(36), "")}`

/** Where pages' `url` points: DOCK_ARTIFACT_ORIGIN when set (artifacts served there), else the base URL. */
export const artifactBaseUrl = Effect.gen(function*() {
  const publicBaseUrl = yield* PublicBaseUrl
  return Option.getOrElse(yield* Effect.serviceOption(ArtifactBaseUrl), () => publicBaseUrl)
})

export const PagesLive = Layer.effect(
  Pages,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* makePagesRepo
    const docks = yield* Docks
    const activity = yield* Activity
    const writeRules = yield* WriteRules
    const limits = yield* Limits
    const baseUrl = yield* artifactBaseUrl
    const links = makeLinks(repo, docks, baseUrl)
    const workers = yield* ContentWorkers
    const rendered = makeRenderCache()
    const unrenderable = makeFailureMemory<ValidationError>()

    /** A page as the caller's transaction just wrote it (it holds the row's lock, so nothing else changed it). */
    const written = (id: string) => Effect.map(repo.findById(id), (row) => row!)

    const save = Effect.fn("Pages.save")(function*(dockId: DockId, input: PageContent) {
      const principal = yield* CurrentPrincipal
      const access = yield* docks.access({ _tag: "ById", id: dockId })
      yield* checkWrite(principal, access)
      yield* writeRules.admitWrite(principal)
      // No slug and no title: a new page each time (never an update of some other untitled page).
      const slug = input.slug !== undefined
        ? yield* validateSlug("page_slug", input.slug)
        : slugify(input.title ?? "", 56) || `untitled-${crypto.randomUUID().slice(0, 8)}`
      const fields = partFields(input, slug)
      const author = authorOf(principal)
      // The answer is read inside the transaction that wrote: after commit a concurrent push (or a delete) would
      // already have changed the page, and the caller would be told another write's version.
      const { action, row } = yield* sql.withTransaction(Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        // Writers of one Dock take turns, so two pushes of a new slug cannot both create it.
        yield* sql`select id from docks where id = ${dockId} for no key update`.pipe(Effect.orDie)
        const existing = yield* repo.findInDock(dockId, slug, true)
        if (existing !== undefined && existing.page_kind === "micro_db" && input.pageKind !== "micro_db") {
          return yield* new ValidationError({
            message: `"${slug}" is this Dock's Micro DB; give the page another slug`,
            details: { field: "page_slug", value: slug }
          })
        }
        if (existing === undefined) {
          yield* writeRules.reserveContent(dockId, { artifacts: 1, bytes: fields.sizeBytes })
          const id = yield* repo.insert(dockId, principal.userId!, newPublicSlug(slug), fields, now)
          yield* repo.insertVersion(id, 1, fields, author, "created", now)
          yield* activity.record({ dockId, action: "page.created", subjectType: "page", subjectId: id, details: { slug } })
          return { action: "created" as const, row: yield* written(id) }
        }
        if (
          existing.content === fields.content && existing.title === fields.title &&
          existing.content_type === fields.contentType && existing.summary === fields.summary
        ) {
          return { action: "unchanged" as const, row: existing }
        }
        // History counts (docs/decisions.md): the old version stays stored, so the new one's bytes are all new.
        yield* writeRules.reserveContent(dockId, { artifacts: 0, bytes: fields.sizeBytes })
        const version = existing.version + 1
        yield* repo.update(existing.id, version, fields, now)
        yield* repo.insertVersion(existing.id, version, fields, author, "updated", now)
        yield* activity.record({
          dockId,
          action: "page.updated",
          subjectType: "page",
          subjectId: existing.id,
          details: { slug, version }
        })
        return { action: "updated" as const, row: yield* written(existing.id) }
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      return { part: toPart(row, baseUrl), action }
    })

    const push = Effect.fn("Pages.push")(function*(
      kind: PushKind,
      target: DockTarget,
      input: PushInput & { readonly contentType?: "markdown" | "html" | undefined }
    ) {
      const prepared: Prepared = yield* (kind === "web_page" && (input.contentType ?? "html") === "html"
        ? prepareHtml(input)
        : prepareMarkdown(input, {
          frontMatterRequired: kind === "markdown_file",
          pageKind: kind === "web_page" ? "web_page" : "markdown_file"
        })).pipe(Effect.provideService(ContentWorkers, workers))
      if (kind === "markdown" && targetRefs(target).length === 0) return yield* pushStandalone(prepared)
      const { dock } = yield* docks.resolveWrite(target)
      const saved = yield* save(dock.id, prepared.content)
      return {
        part: saved.part,
        action: saved.action,
        warnings: prepared.warnings,
        ...(prepared.sanitizationWarnings === undefined ? {} : { sanitization_warnings: prepared.sanitizationWarnings })
      }
    })

    /**
     * A user's standalone artifacts count as one Dock for the plan caps (artifacts and bytes). The user's row
     * lock makes concurrent pushes take turns, so the caps are exact under bursts.
     */
    const reserveStandalone = (userId: UserId, bytes: number) =>
      Effect.gen(function*() {
        yield* sql`select id from users where id = ${userId} for no key update`
        const [usage] = yield* sql<{ artifacts: number; bytes: number }>`select count(*)::int as artifacts,
            coalesce(sum(size_bytes), 0)::bigint as bytes
          from parts where dock_id is null and owner_id = ${userId}`
        const used = { artifacts: usage!.artifacts, bytes: Number(usage!.bytes) }
        if (used.artifacts + 1 > limits.planMaxArtifactsPerDock || used.bytes + bytes > limits.planMaxDockBytes) {
          return yield* new TierLimitExceeded({
            message: `Standalone artifacts on the free plan are limited to ${limits.planMaxArtifactsPerDock} artifacts ` +
              `and ${limits.planMaxDockBytes} bytes per user`,
            details: { max_artifacts: limits.planMaxArtifactsPerDock, max_bytes: limits.planMaxDockBytes, used }
          })
        }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * push_markdown without a Dock: an artifact owned by the caller, in no Dock, reachable at /a/ and /artifacts/.
     * Each such push is a new artifact. A sandbox token's lands in its sandbox instead; a token restricted to
     * some Docks cannot make one (a write not scoped to a Dock).
     */
    const pushStandalone = (prepared: Prepared) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        if (principal.sandbox) {
          const sandbox = principal.allowedBucketIds?.[0]
          if (sandbox === undefined) return yield* new NotFound({ message: "This sandbox token has no sandbox" })
          const saved = yield* save(sandbox, prepared.content)
          return { part: saved.part, action: saved.action, warnings: prepared.warnings }
        }
        yield* checkCreateDock(principal)
        yield* writeRules.admitWrite(principal)
        const fields = partFields(prepared.content, prepared.content.slug ?? (slugify(prepared.content.title ?? "", 56) || "untitled"))
        const author = authorOf(principal)
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          yield* reserveStandalone(principal.userId as UserId, fields.sizeBytes)
          const id = yield* repo.insert(null, principal.userId as UserId, newPublicSlug(fields.slug), fields, now)
          yield* repo.insertVersion(id, 1, fields, author, "created", now)
          yield* activity.record({ dockId: null, action: "page.created", subjectType: "page", subjectId: id })
          return yield* written(id)
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        return { part: toPart(row, baseUrl), action: "created" as const, warnings: prepared.warnings }
      })

    /** A page of a Dock the caller reads (private pages for members only). Named twice, it must be one page. */
    const pageIn = (access: DockAccess, page: string | PageNames) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const refs = typeof page === "string"
          ? [page]
          : [page.web_page, page.page_slug].filter((ref): ref is string => ref !== undefined)
        if (refs.length === 0) return yield* new BadRequest({ message: "Name the page with `web_page` or `page_slug`" })
        const rows = yield* Effect.forEach(refs, (ref) =>
          Effect.gen(function*() {
            const row = yield* repo.findInDock(access.dockId, ref)
            const kinds = typeof page === "string" ? undefined : page.kinds
            if (
              row === undefined || (row.visibility === "private" && roleOf(principal, access) === null) ||
              (kinds !== undefined && !kinds.includes(row.page_kind))
            ) {
              const what = kinds?.length === 1 && kinds[0] === "markdown_file" ? "Markdown file" : "page"
              return yield* new NotFound({ message: `No ${what} "${ref}" in this Dock` })
            }
            return row
          }))
        if (new Set(rows.map((row) => row.id)).size > 1) {
          return yield* new BadRequest({ message: "web_page and page_slug name different pages" })
        }
        return rows[0]!
      })

    /** A readable page of the Dock the target names or, for reads, the grounding or default Dock. */
    const readablePage = (target: DockTarget, page: string | PageNames, dock: "read" | "named" = "read") =>
      Effect.gen(function*() {
        const access = dock === "read"
          ? (yield* docks.resolveRead(target)).access
          : yield* docks.access(yield* docks.named(target))
        return { row: yield* pageIn(access, page), access }
      })

    const read = Effect.fn("Pages.read")(function*(target: DockTarget, page: string | PageNames) {
      const { row } = yield* readablePage(target, page)
      const record = yield* repo.recordOf(row.id)
      // Native reads sanitize stored HTML again: a stricter configuration applies to old content too.
      const content = row.content_type === "html" ? yield* sanitizedHtml(row) : row.content
      return { part: toPart({ ...row, content } as PartRow, baseUrl, true), record }
    })

    const list = Effect.fn("Pages.list")(function*(
      target: DockTarget,
      options: { readonly limit: number; readonly sort: "alphabetical" | "recent"; readonly kinds: ReadonlyArray<PageKind> }
    ) {
      const principal = yield* CurrentPrincipal
      const { access } = yield* docks.resolveRead(target)
      const rows = yield* repo.listInDock(access.dockId, {
        ...options,
        includePrivate: roleOf(principal, access) !== null
      })
      return rows.map((row) => toPart(row, baseUrl))
    })

    const versions = Effect.fn("Pages.versions")(function*(target: DockTarget, page: string | PageNames) {
      const { row } = yield* readablePage(target, page)
      const rows = yield* repo.versions(row.id)
      return rows.map((version) =>
        new PartVersion({
          version: version.version,
          title: version.title,
          summary: version.summary,
          content_type: version.content_type as ContentType,
          size_bytes: version.size_bytes,
          reason: version.reason,
          restored_from: version.restored_from,
          author: { user_id: version.user_id, username: version.username, agent_label: version.agent_label },
          created_at: version.created_at.toISOString()
        })
      )
    })

    const version = Effect.fn("Pages.version")(function*(target: DockTarget, page: string | PageNames, number: number) {
      const { row } = yield* readablePage(target, page)
      const found = yield* repo.versionContent(row.id, number)
      if (found === undefined) return yield* new NotFound({ message: `Page "${row.slug ?? row.id}" has no version ${number}` })
      const content = found.content_type === "html"
        ? yield* sanitizedHtml({ id: row.id, version: number, content: found.content })
        : found.content
      return { version: number, content }
    })

    const restore = Effect.fn("Pages.restore")(function*(target: DockTarget, page: string | PageNames, number: number) {
      const principal = yield* CurrentPrincipal
      const { access, row } = yield* readablePage(target, page)
      yield* checkWrite(principal, access)
      if (row.page_kind === "micro_db") return yield* microDbShellRefused("restored")
      yield* writeRules.admitWrite(principal)
      const old = yield* repo.versionContent(row.id, number)
      if (old === undefined) return yield* new NotFound({ message: `Page "${row.slug ?? row.id}" has no version ${number}` })
      // Everything derived from the content is derived again from the old content, so the restored version is
      // wholly the old one (text for search, front matter fields, wikilinks, claim count). It was accepted once:
      // only the content workers' bound (or their being busy) can refuse it now.
      const current = yield* repo.fieldsOf(row.id)
      const accepted = <A, R>(
        prepare: Effect.Effect<A, ValidationError | Unavailable | InvalidSlug | InvalidFrontMatter, R>
      ) =>
        prepare.pipe(
          Effect.catchTags({ InvalidSlug: Effect.die, InvalidFrontMatter: Effect.die }),
          Effect.provideService(ContentWorkers, workers)
        )
      const derived: PageContent = old.content_type === "html"
        ? { ...(yield* accepted(prepareHtml({ title: old.title, content: old.content }))).content, pageKind: current.pageKind }
        : old.content_type === "markdown"
        ? (yield* accepted(prepareMarkdown({ title: old.title, content: old.content }, {
          frontMatterRequired: false,
          pageKind: current.pageKind
          // A version stored before a limit (the wikilink cap) is refused as a push of it would be.
        }))).content
        : { ...current, content: old.content, contentType: old.content_type as ContentType }
      const fields = partFields({ ...derived, title: old.title, summary: old.summary }, current.slug)
      const author = authorOf(principal)
      const restored = yield* sql.withTransaction(Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const current = yield* repo.findInDock(access.dockId, row.id, true)
        if (current === undefined) return yield* new NotFound({ message: `No page "${row.slug ?? row.id}" in this Dock` })
        const next = current.version + 1
        yield* writeRules.reserveContent(access.dockId, { artifacts: 0, bytes: fields.sizeBytes })
        yield* repo.update(row.id, next, fields, now)
        yield* repo.insertVersion(row.id, next, fields, author, "restored", now, number)
        yield* activity.record({
          dockId: access.dockId,
          action: "page.restored",
          subjectType: "page",
          subjectId: row.id,
          details: { version: next, restored_from: number }
        })
        return yield* written(row.id)
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      return toPart(restored, baseUrl)
    })

    const remove = Effect.fn("Pages.remove")(function*(target: DockTarget, page: string | PageNames) {
      const principal = yield* CurrentPrincipal
      const { access, row } = yield* readablePage(target, page, "named")
      yield* checkWrite(principal, access)
      if (row.page_kind === "micro_db") return yield* microDbShellRefused("deleted")
      yield* writeRules.admitWrite(principal)
      yield* sql.withTransaction(Effect.gen(function*() {
        // The page goes with its versions: every stored version's bytes are released.
        const stored = yield* repo.storedBytes(row.id)
        yield* sql`delete from parts where id = ${row.id}`.pipe(Effect.orDie)
        yield* writeRules.reserveContent(access.dockId, { artifacts: -1, bytes: -stored })
        yield* activity.record({
          dockId: access.dockId,
          action: "page.deleted",
          subjectType: "page",
          subjectId: row.id,
          details: { slug: row.slug }
        })
      })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.catchTag("TierLimitExceeded", Effect.die))
    })

    const search = Effect.fn("Pages.search")(function*(
      query: string,
      options: { readonly target: DockTarget; readonly limit: number }
    ) {
      const principal = yield* CurrentPrincipal
      const text = query.trim()
      if (text.length === 0) {
        return yield* new ValidationError({ message: "query must not be empty", details: { field: "query" } })
      }
      // owner_username alone names no Dock here: it limits the search to that owner's Docks.
      const named = targetRefs(options.target).length > 0
      const dock = named
        ? yield* docks.resolve(options.target).pipe(Effect.catchTag("NotFound", () => Effect.succeed(Option.none())))
        : Option.none()
      if (named && Option.isNone(dock)) return []
      const hits = yield* repo.search(principal, text, {
        dockId: Option.getOrUndefined(dock)?.dock.id,
        ownerUsername: named ? undefined : options.target.owner_username?.trim(),
        limit: options.limit
      })
      return hits.map((hit) =>
        new PageSearchResult({
          part: toPart(hit.part, baseUrl),
          bucket: {
            id: hit.part.dock_id!,
            slug: hit.dock.slug,
            title: hit.dock.title,
            path: `${hit.dock.owner}/${hit.dock.slug}`
          },
          snippet: hit.snippet,
          rank: hit.rank
        })
      )
    })

    const pageLinks = Effect.fn("Pages.links")(function*(target: DockTarget, page: string) {
      const resolved = yield* docks.resolveRead(target)
      const row = yield* pageIn(resolved.access, page)
      const source = yield* linkDockOf(resolved)
      const targets = yield* repo.linksOf(row.id)
      return { outbound: yield* links.outbound(source, targets), inbound: yield* links.inbound(source, row) }
    })

    const view = Effect.fn("Pages.view")(function*(ref: { readonly publicSlug: string } | { readonly id: string }) {
      const missing = new NotFound({ message: "No such artifact, or it is not public" })
      if ("id" in ref ? !isUuid(ref.id) : !isPublicSlug(ref.publicSlug)) return yield* missing
      const row = yield* repo.findViewable("id" in ref ? { id: ref.id.toLowerCase() } : ref)
      if (row === undefined) return yield* missing
      const author = yield* repo.versionAuthor(row.id, row.version)
      return {
        part: toPart(row, baseUrl),
        html: yield* renderBody(row).pipe(
          Effect.catchTag("ValidationError", (refusal) =>
            Effect.succeed(rendered.getOrRender(`unrendered:${row.id}:${row.version}`, () => unrenderedBody(row, refusal))))
        ),
        author: { username: author?.username ?? null, agentLabel: author?.agent_label ?? null, at: author?.created_at ?? row.updated_at }
      }
    })

    /**
     * A stored page as HTML, made safe now whatever is stored: HTML through the sanitizer; Markdown rendered with
     * its wikilinks resolved for the caller, then sanitized; JSON (a Micro DB snapshot) as preformatted text.
     */
    const renderBody = (row: PartRow) =>
      Effect.gen(function*() {
        const version = `${row.id}:${row.version}`
        if (row.content_type === "html") return yield* sanitizedHtml(row)
        if (row.content_type === "json") {
          return yield* renderOnce(
            `json:${version}`,
            version,
            Effect.map(workers.run("sanitizeHtml", { html: `<pre>${escapeHtml(row.content)}</pre>` }), (out) => out.html)
          )
        }
        const source = row.dock_id === null ? null : yield* docks.resolve({ bucket: row.dock_id }).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.succeed(null), onSome: linkDockOf })),
          Effect.orElseSucceed(() => null)
        )
        const resolved = yield* links.resolve(source, yield* repo.linksOf(row.id, WIKILINKS_MAX))
        // Same-origin paths: the page links work wherever the artifact is served from.
        const hrefs = [...resolved]
          .map(([target, page]) => [target, new URL(page.url).pathname] as const)
          .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
        const key = `markdown:${version}:${JSON.stringify(hrefs)}`
        return yield* renderOnce(key, version, workers.run("renderMarkdown", { content: row.content, links: hrefs }))
      })

    /** Stored HTML sanitized again (native reads, the browser routes): once per version of a page. */
    const sanitizedHtml = (row: { readonly id: string; readonly version: number; readonly content: string }) =>
      renderOnce(
        `html:${row.id}:${row.version}`,
        `${row.id}:${row.version}`,
        Effect.map(workers.run("sanitizeHtml", { html: row.content }), (out) => out.html)
      )

    /**
     * What is cached under `key`, or what `render` (a content worker's job) gives, remembered. A page version
     * that was refused (too complex to render) is remembered too, by version alone (where its links point would
     * not make it simpler), and refused again at once: never rendered twice.
     */
    const renderOnce = (key: string, version: string, render: Effect.Effect<string, ValidationError | Unavailable>) =>
      Effect.suspend(() => {
        const cached = rendered.get(key)
        if (cached !== undefined) return Effect.succeed(cached)
        const refused = unrenderable.get(version)
        if (refused !== undefined) return Effect.fail(refused)
        return render.pipe(
          Effect.tap((html) => rendered.set(key, html)),
          Effect.tapError((error) =>
            error._tag === "ValidationError"
              ? Effect.zipRight(
                Effect.sync(() => unrenderable.set(version, error)),
                Effect.logWarning("A page version could not be rendered; it is shown as text from now on").pipe(
                  Effect.annotateLogs({ page_version: version, reason: String((error.details as { reason?: unknown })?.reason) })
                )
              )
              : Effect.void
          )
        )
      })

    return { save, push, read, list, search, links: pageLinks, view, versions, version, restore, remove }
  })
)
