/**
 * The Pages port's rules: who may read and write which page, what a push prepares, and how stored content is
 * rendered for reading. Every write goes through Parts (the one writer of pages, versions and the caps); every
 * read statement is in PagesRepo.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { Activity } from "../Activity/Activity.ts"
import { ContentWorkers, refusalError } from "../Content/ContentWorkers.ts"
import { countChangedLines, diffLines } from "../Content/Diffs.ts"
import { escapeHtml } from "../Content/Text.ts"
import { transactional } from "../Database/Transactional.ts"
import { type DockTarget, targetRefs } from "../Docks/Dock.ts"
import { Docks, type ResolvedDock } from "../Docks/Docks.ts"
import { BadRequest, Conflict, NotFound, type Unavailable, ValidationError } from "../Errors.ts"
import { type DockId, isUuid, type PageId, type UserId } from "../Ids.ts"
import { authorOf, contentDock, partFields, type PartRow } from "../Parts/PartRow.ts"
import { Parts } from "../Parts/Parts.ts"
import { checkCreateDock, checkWrite, type DockAccess, roleOf } from "../Policy.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { slugify, validateSlug } from "../Slug.ts"
import { traced } from "../Spans.ts"
import { WriteRules } from "../WriteRules.ts"
import { type EditKind, type PageEdit, TEXT_EDIT_OPS } from "./Edit.ts"
import { linkDockOf, makeLinks, WIKILINKS_MAX } from "./Links.ts"
import { Pages, type ViewRef } from "./Pages.ts"
import { type ListKey, makePagesRepo } from "./PagesRepo.ts"
import {
  artifactBaseUrl,
  type ContentType,
  isPublicSlug,
  newPublicSlug,
  type PageContent,
  PageDiff,
  type PageKind,
  type PageNames,
  PageSearchResult,
  PartVersion,
  type PushKind,
  toPart
} from "./Part.ts"
import { type Prepared, prepareHtml, prepareMarkdown, type PushInput } from "./Prepare.ts"
import { makeFailureMemory, makeRenderCache } from "./RenderCache.ts"
import { fieldsOfVersion } from "./VersionFields.ts"

/** The Micro DB shell is changed only by the Micro DB tools: its versions are snapshots of its tables. */
const microDbShellRefused = (what: "restored" | "deleted") =>
  new ValidationError({
    message: what === "deleted"
      ? "This page is the Dock's Micro DB: delete its tables with delete_micro_db_table (it goes with the Dock)"
      : "This page is the Dock's Micro DB: its snapshots are read with get_web_page_version, not restored",
    details: { page_kind: "micro_db" }
  })

/** The slug of a page with neither slug nor title: `untitled-` and 12 hex digits of its content's SHA-256. */
const untitledSlug = (content: string) =>
  `untitled-${createHash("sha256").update(content, "utf8").digest("hex").slice(0, 12)}`

/** A page version shown without rendering (too complex to render): a notice, then its source as escaped text. */
const unrenderedBody = (row: { readonly content: string }, refusal: ValidationError) =>
  `<p><strong>${escapeHtml(refusal.message)}.</strong> Its source is shown as text.</p>\n<pre>${
    escapeHtml(row.content)
  }</pre>`

/** A list cursor: opaque to callers (base64url of the sort and the last row's key). */
const encodeListCursor = (sort: "alphabetical" | "recent", key: ListKey) =>
  Buffer.from(JSON.stringify([sort, key.a, key.b, key.id])).toString("base64url")

const decodeListCursor = (cursor: string, sort: "alphabetical" | "recent") => {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (
      Array.isArray(decoded) && decoded.length === 4 && decoded[0] === sort &&
      decoded.slice(1).every((part) => typeof part === "string") && isUuid(decoded[3] as string) &&
      (sort === "alphabetical" || /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/.test(decoded[1] as string))
    ) {
      return Effect.succeed<ListKey>({ a: decoded[1] as string, b: decoded[2] as string, id: decoded[3] as string })
    }
  } catch {
    // not base64url JSON: refused below
  }
  // Built only here: an error captures its stack, ~0.1 ms that every page of a list paid when it was built upfront.
  return Effect.fail(
    new ValidationError({
      message: "cursor must be the next_cursor of an earlier answer with the same sort",
      details: { field: "cursor" }
    })
  )
}

export const PagesLive = Layer.effect(
  Pages,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* makePagesRepo
    const docks = yield* Docks
    const activity = yield* Activity
    const writeRules = yield* WriteRules
    const parts = yield* Parts
    const baseUrl = yield* artifactBaseUrl
    const links = makeLinks(repo, docks, baseUrl)
    const workers = yield* ContentWorkers
    /** The lines `to` adds to and removes from `from`, a big diff counted in a content worker (Diffs.ts). */
    const lineCounts = (from: string, to: string) =>
      countChangedLines(from, to).pipe(Effect.provideService(ContentWorkers, workers))
    const rendered = makeRenderCache()
    const unrenderable = makeFailureMemory<ValidationError>()

    /**
     * Creates or updates the page with this slug in a Dock the caller resolved for writing (`unchanged` when
     * nothing differs). The answer is read inside the transaction that wrote: after commit a concurrent push (or
     * a delete) would already have changed the page, and the caller would be told another write's version.
     */
    const saveIn = (resolved: ResolvedDock, input: PageContent, baseVersion?: number) =>
      Effect.gen(function*() {
        const { access } = resolved
        const principal = yield* CurrentPrincipal
        yield* checkWrite(principal, access)
        yield* writeRules.admitWrite(principal)
        // No slug and no title: the slug names the content (`untitled-` and its hash), so pushing the same
        // untitled content again is `unchanged`, and other untitled content is another page (never an update of
        // some other untitled page).
        const slug = input.slug !== undefined
          ? yield* validateSlug("page_slug", input.slug)
          : slugify(input.title ?? "", 56) || untitledSlug(input.content)
        const fields = partFields(input, slug)
        const author = authorOf(principal)
        // The lines the new version adds and removes, diffed here against the page as read now, outside the Dock
        // lock; the transaction diffs again (and reads the content again) only when another write came in between
        // (its version differs).
        const before = yield* parts.findInDock(access.dockId, slug)
        const linesBefore = before === undefined ? undefined : {
          id: before.id,
          version: before.version,
          lines: yield* lineCounts(before.content, fields.content)
        }
        const { action, row } = yield* transactional(
          sql,
          Effect.gen(function*() {
            const now = new Date(yield* Clock.currentTimeMillis)
            // Writers of one Dock take turns, so two pushes of a new slug cannot both create it.
            yield* parts.lockDock(access.dockId)
            const existing = yield* parts.lockInDock(access.dockId, slug, before)
            if (existing !== undefined && existing.page_kind === "micro_db" && input.pageKind !== "micro_db") {
              return yield* new ValidationError({
                message: `"${slug}" is this Dock's Micro DB; give the page another slug`,
                details: { field: "page_slug", value: slug }
              })
            }
            if (baseVersion !== undefined && (existing?.version ?? 0) !== baseVersion) {
              return yield* staleBase(existing?.id, slug, baseVersion, existing?.version ?? 0)
            }
            if (existing === undefined) {
              const row = yield* parts.create(contentDock(resolved), {
                ownerId: principal.userId!,
                publicSlug: newPublicSlug(slug),
                fields,
                author,
                now
              })
              yield* activity.record({
                dockId: access.dockId,
                action: "page.created",
                subjectType: "page",
                subjectId: row.id,
                details: { slug }
              })
              return { action: "created" as const, row }
            }
            if (
              existing.content === fields.content && existing.title === fields.title &&
              existing.content_type === fields.contentType && existing.summary === fields.summary
            ) {
              return { action: "unchanged" as const, row: existing }
            }
            // History counts (docs/decisions.md): the old version stays stored, so the new one's bytes are all new.
            yield* parts.reserve(contentDock(resolved), { artifacts: 0, bytes: fields.sizeBytes })
            const version = existing.version + 1
            const lines = linesBefore?.id === existing.id && linesBefore.version === existing.version
              ? linesBefore.lines
              : yield* lineCounts(existing.content, fields.content)
            const row = yield* parts.newVersion(existing.id, version, fields, author, "updated", now, undefined, lines)
            yield* activity.record({
              dockId: access.dockId,
              action: "page.updated",
              subjectType: "page",
              subjectId: existing.id,
              details: { slug, version }
            })
            return { action: "updated" as const, row }
          })
        ).pipe(withConflictDiff)
        return { part: toPart(row, baseUrl), action }
      })

    /**
     * A failed write precondition: the page is at `current` (0: there is no such page), not at `base`. Raised
     * inside the write's transaction (which then writes nothing); withConflictDiff adds the diff after it ended.
     */
    const staleBase = (pageId: PageId | undefined, name: string, base: number, current: number) =>
      new Conflict({
        message: current === 0
          ? `Page "${name}" does not exist (any more): base_version ${base} is not its current version`
          : `Page "${name}" is at version ${current}, not base_version ${base}: someone changed it since you read ` +
            "it. Nothing was written; details.diff shows what changed (read the page again, then retry)",
        details: { current_version: current, base_version: base, ...(pageId === undefined ? {} : { page_id: pageId }) }
      })

    /**
     * A precondition's conflict completed once its transaction ended (no diff is computed under the Dock lock):
     * details.diff is the diff from base_version to the current version ({diff, added, removed, truncated}), or
     * null when either is not stored (the page is gone, or base_version is past the current version).
     */
    const withConflictDiff = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.catchIf(
        effect,
        (error): error is E & Conflict => error instanceof Conflict,
        (conflict) =>
          Effect.gen(function*() {
            const { base_version, current_version, page_id } = conflict.details as {
              readonly base_version: number
              readonly current_version: number
              readonly page_id?: PageId
            }
            const from = page_id === undefined ? undefined : yield* repo.versionContent(page_id, base_version)
            const to = page_id === undefined ? undefined : yield* repo.versionContent(page_id, current_version)
            const diff = from === undefined || to === undefined
              ? null
              : yield* compactDiff(from.content, to.content, base_version, current_version)
            return yield* new Conflict({ message: conflict.message, details: { current_version, base_version, diff } })
          })
      )

    /** The diff of two versions' sources as the answers show it (a big one made in a content worker). */
    const compactDiff = (from: string, to: string, fromVersion: number, toVersion: number) =>
      diffLines(from, to, { fromLabel: `version ${fromVersion}`, toLabel: `version ${toVersion}` }).pipe(
        Effect.map(({ added, diff, removed, truncated }) => ({ diff, added, removed, truncated })),
        Effect.provideService(ContentWorkers, workers)
      )

    const save = traced("Pages.save")(function*(dockId: DockId, input: PageContent) {
      return yield* saveIn(yield* docks.byId(dockId), input)
    })

    const push = traced("Pages.push")(function*(
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
      if (kind === "markdown" && targetRefs(target).length === 0) {
        return yield* pushStandalone(prepared, input.baseVersion)
      }
      const saved = yield* saveIn(yield* docks.forWrite(target), prepared.content, input.baseVersion)
      return {
        part: saved.part,
        action: saved.action,
        warnings: prepared.warnings,
        ...(prepared.sanitizationWarnings === undefined ? {} : { sanitization_warnings: prepared.sanitizationWarnings })
      }
    })

    /**
     * push_markdown without a Dock: an artifact owned by the caller, in no Dock, reachable at /a/ and /artifacts/.
     * Each such push is a new artifact. A sandbox token's lands in its sandbox instead; a token restricted to
     * some Docks cannot make one (a write not scoped to a Dock).
     */
    const pushStandalone = (prepared: Prepared, baseVersion: number | undefined) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        if (principal.sandbox) {
          const sandbox = principal.allowedBucketIds?.[0]
          if (sandbox === undefined) return yield* new NotFound({ message: "This sandbox token has no sandbox" })
          const saved = yield* saveIn(yield* docks.byId(sandbox), prepared.content, baseVersion)
          return { part: saved.part, action: saved.action, warnings: prepared.warnings }
        }
        if (baseVersion !== undefined) {
          return yield* new ValidationError({
            message: "base_version needs a Dock (`bucket`): push_markdown without one makes a new artifact each time",
            details: { field: "base_version" }
          })
        }
        yield* checkCreateDock(principal)
        yield* writeRules.admitWrite(principal)
        const fields = partFields(
          prepared.content,
          prepared.content.slug ?? (slugify(prepared.content.title ?? "", 56) || "untitled")
        )
        const row = yield* transactional(
          sql,
          Effect.gen(function*() {
            const now = new Date(yield* Clock.currentTimeMillis)
            const row = yield* parts.create(null, {
              ownerId: principal.userId as UserId,
              publicSlug: newPublicSlug(fields.slug),
              fields,
              author: authorOf(principal),
              now
            })
            yield* activity.record({ dockId: null, action: "page.created", subjectType: "page", subjectId: row.id })
            return row
          })
        )
        return { part: toPart(row, baseUrl), action: "created" as const, warnings: prepared.warnings }
      })

    /**
     * edit_markdown_file / edit_web_page: the page read with its version, the operations applied to its stored
     * source in a content worker (all or none), and the result written as a push of it would be (sanitized,
     * checked, capped, one new version or `unchanged`), over the version read: a write between the read and this
     * one makes the push a `conflict` rather than lose it. The slug never changes; the title stays unless it was
     * the document's own (front matter `title` or first heading), which the edited document then gives again.
     */
    const edit = traced("Pages.edit")(function*(
      kind: EditKind,
      target: DockTarget,
      page: string,
      operations: ReadonlyArray<PageEdit>,
      baseVersion: number | undefined
    ) {
      const principal = yield* CurrentPrincipal
      const resolved = yield* docks.named(target)
      const row = yield* pageIn(resolved.access, { web_page: page, kinds: [kind] }, parts.findInDock)
      yield* checkWrite(principal, resolved.access)
      // A stale base_version is refused before the operations run, with the diff the push's conflict carries.
      if (baseVersion !== undefined && baseVersion !== row.version) {
        return yield* Effect.fail(staleBase(row.id, row.slug ?? row.id, baseVersion, row.version)).pipe(
          withConflictDiff
        )
      }
      const markdown = row.content_type === "markdown"
      const textOnly = operations.findIndex((operation) => !TEXT_EDIT_OPS.includes(operation.op))
      if (kind === "web_page" && textOnly !== -1) {
        return yield* new ValidationError({
          message: `operations[${textOnly}] (${operations[textOnly]!.op}): a web page takes replace_text and ` +
            "insert_text only",
          details: { operation: textOnly, op: operations[textOnly]!.op }
        })
      }
      // Stored HTML as get_web_page shows it (sanitized again, once per version): what the caller's text matches.
      const source = markdown ? row.content : yield* sanitizedHtml(row)
      const outcome = yield* workers.run("pageEdits", {
        content: source,
        operations,
        format: markdown ? "markdown" : "html"
      })
      if (outcome._tag === "Refused") return yield* refusalError(outcome.refusal)
      const title = markdown && row.title === outcome.sourceTitle ? undefined : row.title
      // A Markdown file keeps needing front matter once it has it; one without (push_markdown) does not.
      const pushKind: PushKind = kind === "web_page"
        ? "web_page"
        : outcome.hadFrontMatter
        ? "markdown_file"
        : "markdown"
      return yield* push(pushKind, target, {
        title,
        slug: row.slug,
        content: outcome.content,
        contentType: markdown ? "markdown" : "html",
        baseVersion: baseVersion ?? row.version
      })
    })

    /** The names a call gives its page: one string, or `web_page` and/or `page_slug`. */
    const pageRefs = (page: string | PageNames) =>
      typeof page === "string"
        ? [page]
        : [page.web_page, page.page_slug].filter((ref): ref is string => ref !== undefined)

    /** The row found for `ref`, when the caller may read it (private pages for members only) and it is of the kind asked. */
    const readableRow = <Row extends PartRow>(
      access: DockAccess,
      page: string | PageNames,
      ref: string,
      row: Row | undefined
    ) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const kinds = typeof page === "string" ? undefined : page.kinds
        if (
          row === undefined || (row.visibility === "private" && roleOf(principal, access) === null) ||
          (kinds !== undefined && !kinds.includes(row.page_kind))
        ) {
          const what = kinds?.length === 1 && kinds[0] === "markdown_file" ? "Markdown file" : "page"
          return yield* new NotFound({ message: `No ${what} "${ref}" in this Dock` })
        }
        return row
      })

    /**
     * A page of a Dock the caller reads (private pages for members only). Named twice, it must be one page.
     * `find` reads it (with its record fields for get_web_page).
     */
    const pageIn = <Row extends PartRow>(
      access: DockAccess,
      page: string | PageNames,
      find: (dockId: DockId, ref: string) => Effect.Effect<Row | undefined>
    ) =>
      Effect.gen(function*() {
        const refs = pageRefs(page)
        if (refs.length === 0) return yield* new BadRequest({ message: "Name the page with `web_page` or `page_slug`" })
        const rows = yield* Effect.forEach(refs, (ref) =>
          Effect.flatMap(find(access.dockId, ref), (row) => readableRow(access, page, ref, row)))
        if (
          new Set(rows.map((row) =>
            row.id
          )).size > 1
        ) {
          return yield* new BadRequest({ message: "web_page and page_slug name different pages" })
        }
        return rows[0]!
      })

    /** A readable page of the Dock the target names, else the grounding or default Dock. */
    const readablePage = (target: DockTarget, page: string | PageNames) =>
      Effect.gen(function*() {
        const resolved = yield* docks.forRead(target)
        return { row: yield* pageIn(resolved.access, page, parts.findInDock), resolved, access: resolved.access }
      })

    /**
     * The page of `read` with its record fields. Named once (the usual call), it is read beside its Dock in the
     * resolver's statement: the Dock and the page in one round trip, the page's row read once.
     */
    const pageWithRecord = (target: DockTarget, page: string | PageNames) => {
      const refs = pageRefs(page)
      if (refs.length !== 1) {
        return Effect.flatMap(docks.forRead(target), ({ access }) => pageIn(access, page, repo.findWithRecord))
      }
      const ref = refs[0]!
      return Effect.flatMap(
        docks.forReadAlong(target, repo.withRecordAlong(ref)),
        ({ along, dock }) => readableRow(dock.access, page, ref, along)
      )
    }

    const read = traced("Pages.read")(function*(target: DockTarget, page: string | PageNames) {
      const { record, ...row } = yield* pageWithRecord(target, page)
      // Native reads sanitize stored HTML again: a stricter configuration applies to old content too.
      const content = row.content_type === "html" ? yield* sanitizedHtml(row) : row.content
      return { part: toPart({ ...row, content } as PartRow, baseUrl, true), record }
    })

    const list = traced("Pages.list")(function*(
      target: DockTarget,
      options: {
        readonly limit: number
        readonly sort: "alphabetical" | "recent"
        readonly kinds: ReadonlyArray<PageKind>
        readonly cursor?: string | undefined
        readonly authors?: boolean | undefined
      }
    ) {
      const principal = yield* CurrentPrincipal
      const after = options.cursor === undefined ? undefined : yield* decodeListCursor(options.cursor, options.sort)
      const { access } = yield* docks.forRead(target)
      // One row more than asked says whether another page follows.
      const rows = yield* repo.listInDock(access.dockId, {
        limit: options.limit + 1,
        sort: options.sort,
        kinds: options.kinds,
        includePrivate: roleOf(principal, access) !== null,
        after
      })
      const page = rows.slice(0, options.limit)
      const last = page.at(-1)
      const authors = options.authors === true
        ? new Map(
          (yield* repo.currentAuthors(page.map(({ part }) => part.id))).map((row) =>
            [row.part_id, { username: row.username, agent_label: row.agent_label }] as const
          )
        )
        : undefined
      return {
        parts: page.map(({ part }) => toPart(part, baseUrl)),
        ...(authors === undefined ? {} : { authors }),
        nextCursor: rows.length > options.limit && last !== undefined
          ? encodeListCursor(options.sort, last.key)
          : null
      }
    })

    const versions = traced("Pages.versions")(function*(target: DockTarget, page: string | PageNames) {
      const { access, row } = yield* readablePage(target, page)
      const rows = yield* repo.versions(row.id)
      // Members see which token wrote each version (to name an agent to revert_agent_changes); outsiders do not.
      const member = roleOf(yield* CurrentPrincipal, access) !== null
      // Built without validating again (`true`, as toPart): the answer's schema checks it when it is encoded.
      return rows.map((version) =>
        new PartVersion({
          version: version.version,
          title: version.title,
          summary: version.summary,
          content_type: version.content_type as ContentType,
          size_bytes: version.size_bytes,
          reason: version.reason,
          restored_from: version.restored_from,
          added: version.lines_added,
          removed: version.lines_removed,
          author: {
            user_id: version.user_id,
            username: version.username,
            agent_label: version.agent_label,
            ...(member ? { token_id: version.token_id } : {})
          },
          created_at: version.created_at.toISOString()
        }, true)
      )
    })

    const version = traced("Pages.version")(function*(target: DockTarget, page: string | PageNames, number: number) {
      const { row } = yield* readablePage(target, page)
      const found = yield* repo.versionContent(row.id, number)
      if (found === undefined) {
        return yield* new NotFound({ message: `Page "${row.slug ?? row.id}" has no version ${number}` })
      }
      const content = found.content_type === "html"
        ? yield* sanitizedHtml({ id: row.id, version: number, content: found.content })
        : found.content
      return { version: number, content }
    })

    const diff = traced("Pages.diff")(function*(
      target: DockTarget,
      page: string | PageNames,
      fromVersion: number,
      toVersion?: number
    ) {
      const { row } = yield* readablePage(target, page)
      const to = toVersion ?? row.version
      const stored = (number: number) =>
        Effect.flatMap(repo.versionContent(row.id, number), (found) =>
          found === undefined
            ? new NotFound({
              message: `Page "${row.slug ?? row.id}" has no version ${number} (its current version is ${row.version})`,
              details: { version: number, current_version: row.version }
            })
            : Effect.succeed(found.content))
      const fromContent = yield* stored(fromVersion)
      const toContent = to === row.version ? row.content : yield* stored(to)
      return new PageDiff({
        from_version: fromVersion,
        to_version: to,
        ...(yield* compactDiff(fromContent, toContent, fromVersion, to))
      })
    })

    const restore = traced("Pages.restore")(function*(
      target: DockTarget,
      page: string | PageNames,
      number: number,
      baseVersion?: number
    ) {
      const principal = yield* CurrentPrincipal
      const { access, resolved, row } = yield* readablePage(target, page)
      yield* checkWrite(principal, access)
      if (row.page_kind === "micro_db") return yield* microDbShellRefused("restored")
      yield* writeRules.admitWrite(principal)
      const old = yield* repo.versionContent(row.id, number)
      if (old === undefined) {
        return yield* new NotFound({ message: `Page "${row.slug ?? row.id}" has no version ${number}` })
      }
      const current = yield* parts.fieldsOf(row.id)
      const fields = yield* fieldsOfVersion(old, current).pipe(Effect.provideService(ContentWorkers, workers))
      const author = authorOf(principal)
      // Diffed against the current content read above (outside the Dock lock); again inside only after a race.
      const linesBefore = { version: row.version, lines: yield* lineCounts(current.content, fields.content) }
      const restored = yield* transactional(
        sql,
        Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          const current = yield* parts.lockInDock(access.dockId, row.id, row)
          if (current === undefined) {
            return yield* new NotFound({ message: `No page "${row.slug ?? row.id}" in this Dock` })
          }
          if (baseVersion !== undefined && current.version !== baseVersion) {
            return yield* staleBase(row.id, row.slug ?? row.id, baseVersion, current.version)
          }
          const next = current.version + 1
          yield* parts.reserve(contentDock(resolved), { artifacts: 0, bytes: fields.sizeBytes })
          const lines = linesBefore.version === current.version
            ? linesBefore.lines
            : yield* lineCounts(current.content, fields.content)
          const restored = yield* parts.newVersion(row.id, next, fields, author, "restored", now, number, lines)
          yield* activity.record({
            dockId: access.dockId,
            action: "page.restored",
            subjectType: "page",
            subjectId: row.id,
            details: { version: next, restored_from: number }
          })
          return restored
        })
      ).pipe(withConflictDiff)
      return toPart(restored, baseUrl)
    })

    /**
     * The Dock a delete means: the one named, else (issue 18) the Dock of the page a UUID names, since a UUID names
     * one page. A page the caller cannot see there answers as a page that does not exist.
     */
    const deleteDock = (target: DockTarget, page: string | PageNames) =>
      Effect.gen(function*() {
        const id = pageRefs(page).map((ref) => ref.trim().toLowerCase()).find(isUuid)
        if (targetRefs(target).length > 0 || id === undefined) return yield* docks.named(target)
        const kinds = typeof page === "string" ? undefined : page.kinds
        const what = kinds?.length === 1 && kinds[0] === "markdown_file" ? "Markdown file" : "page"
        const missing = () => new NotFound({ message: `No ${what} "${id}"` })
        const found = yield* parts.findById(id as PageId)
        if (found?.dock_id == null) return yield* missing()
        return yield* docks.byId(found.dock_id).pipe(Effect.catchTag("NotFound", () => Effect.fail(missing())))
      })

    const remove = traced("Pages.remove")(function*(
      target: DockTarget,
      page: string | PageNames,
      baseVersion?: number
    ) {
      const principal = yield* CurrentPrincipal
      const resolved = yield* deleteDock(target, page)
      const access = resolved.access
      const row = yield* pageIn(access, page, parts.findInDock)
      yield* checkWrite(principal, access)
      if (row.page_kind === "micro_db") return yield* microDbShellRefused("deleted")
      yield* writeRules.admitWrite(principal)
      yield* transactional(
        sql,
        Effect.gen(function*() {
          // The page's row locked: a delete and a concurrent write of it take turns (base_version is checked
          // against the version that is current now, and a page deleted meanwhile is not released twice).
          const current = yield* parts.lockInDock(access.dockId, row.id, row)
          if (current === undefined) {
            return yield* new NotFound({ message: `No page "${row.slug ?? row.id}" in this Dock` })
          }
          if (baseVersion !== undefined && current.version !== baseVersion) {
            return yield* staleBase(row.id, row.slug ?? row.id, baseVersion, current.version)
          }
          // The page goes with its versions: every stored version's bytes are released.
          // It waits in the trash (for revert_agent_changes) until the trash sweep purges it.
          yield* parts.remove(contentDock(resolved), row.id, {
            author: authorOf(principal),
            now: new Date(yield* Clock.currentTimeMillis)
          })
          yield* activity.record({
            dockId: access.dockId,
            action: "page.deleted",
            subjectType: "page",
            subjectId: row.id,
            details: { slug: row.slug }
          })
        })
      ).pipe(withConflictDiff)
    })

    const search = traced("Pages.search")(function*(
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
        ? yield* docks.find(options.target).pipe(Effect.catchTag("NotFound", () => Effect.succeed(Option.none())))
        : Option.none()
      if (named && Option.isNone(dock)) return []
      const hits = yield* repo.search(principal, text, {
        dockId: Option.getOrUndefined(dock)?.dock.id,
        ownerUsername: named ? undefined : options.target.owner_username?.trim(),
        limit: options.limit
      })
      // Built without validating again (`true`, as toPart): the answer's schema checks it when it is encoded.
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
        }, true)
      )
    })

    const pageLinks = traced("Pages.links")(function*(target: DockTarget, page: string) {
      const resolved = yield* docks.forRead(target)
      const row = yield* pageIn(resolved.access, page, parts.findInDock)
      const source = yield* linkDockOf(resolved)
      const targets = yield* repo.linksOf(row.id)
      return { outbound: yield* links.outbound(source, targets), inbound: yield* links.inbound(source, row) }
    })

    const view = traced("Pages.view")(function*(ref: ViewRef) {
      // Built only when it is the answer (an error captures its stack): most views find their page.
      const missing = () => new NotFound({ message: "No such artifact, or it is not public" })
      if (
        "sharedPageId" in ref
          ? !isUuid(ref.sharedPageId)
          : "id" in ref
          ? !isUuid(ref.id)
          : !isPublicSlug(ref.publicSlug)
      ) {
        return yield* missing()
      }
      const byRef = "id" in ref ? { id: ref.id.toLowerCase() } : ref
      const publicRow = yield* repo.findViewable(
        "sharedPageId" in byRef ? { sharedId: byRef.sharedPageId.toLowerCase() } : byRef
      )
      // Not public: a signed-in reader (issue 16, item 8) sees the private pages of the Docks they are a member of.
      const row = publicRow ?? ("sharedPageId" in byRef ? undefined : yield* memberViewable(byRef))
      if (row === undefined) return yield* missing()
      const author = yield* repo.versionAuthor(row.id, row.version)
      return {
        part: toPart(row, baseUrl),
        restricted: publicRow === undefined || "sharedPageId" in ref,
        html: yield* renderBody(row).pipe(
          Effect.catchTag(
            "ValidationError",
            (refusal) =>
              Effect.succeed(
                rendered.getOrRender(`unrendered:${row.id}:${row.version}`, () => unrenderedBody(row, refusal))
              )
          )
        ),
        author: {
          username: author?.username ?? null,
          agentLabel: author?.agent_label ?? null,
          at: author?.created_at ?? row.updated_at
        }
      }
    })

    /** A page the caller may read as a member of its Dock (owner, editor or viewer), whatever its visibility. */
    const memberViewable = (by: { readonly publicSlug: string } | { readonly id: string }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        if (principal.userId === null) return undefined
        const row = yield* repo.findViewable({ memberPage: by })
        if (row === undefined || row.dock_id === null) return undefined
        const dock = yield* docks.byId(row.dock_id).pipe(Effect.option)
        return Option.isSome(dock) && roleOf(principal, dock.value.access) !== null ? row : undefined
      })

    /**
     * A stored page as HTML, made safe now whatever is stored: HTML through the sanitizer (with its wikilinks
     * resolved for the caller, when it has any); Markdown rendered with its wikilinks resolved, then sanitized;
     * JSON (a Micro DB snapshot) as preformatted text.
     */
    const renderBody = (row: PartRow) =>
      Effect.gen(function*() {
        const version = `${row.id}:${row.version}`
        // HTML without a wikilink needs no link lookups.
        if (row.content_type === "html" && !row.content.includes("[[")) return yield* sanitizedHtml(row)
        if (row.content_type === "json") {
          return yield* renderOnce(
            `json:${version}`,
            version,
            Effect.map(
              workers.run("sanitizeHtml", { html: `<pre>${escapeHtml(row.content)}</pre>` }),
              (out) => out.html
            )
          )
        }
        const source = row.dock_id === null ? null : yield* docks.byId(row.dock_id).pipe(
          Effect.flatMap(linkDockOf),
          Effect.orElseSucceed(() => null)
        )
        const resolved = yield* links.resolve(source, yield* repo.linksOf(row.id, WIKILINKS_MAX))
        // Same-origin paths: the page links work wherever the artifact is served from.
        const hrefs = [...resolved]
          .map(([target, page]) => [target, new URL(page.url).pathname] as const)
          .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
        if (row.content_type === "html") {
          const key = `html-links:${version}:${JSON.stringify(hrefs)}`
          return yield* renderOnce(key, version, workers.run("renderHtml", { html: row.content, links: hrefs }))
        }
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
                  Effect.annotateLogs({
                    page_version: version,
                    reason: String((error.details as { reason?: unknown })?.reason)
                  })
                )
              )
              : Effect.void
          )
        )
      })

    return { save, push, edit, read, list, search, links: pageLinks, view, versions, version, diff, restore, remove }
  })
)
