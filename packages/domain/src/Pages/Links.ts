/**
 * Wikilinks between pages. A page stores its link targets as written (`Page`, `slug`, `owner/dock/page-slug`);
 * they are resolved when read, as the caller, so a link works as soon as its target appears and never reveals
 * a page the caller cannot read.
 *
 * Resolution of `[[text]]` within a Dock, first match wins: the page whose slug is the text (lowercased), then
 * the oldest page whose title equals it case-insensitively, then the page whose slug is the text slugified
 * (`[[Getting Started]]` → `getting-started`). `[[owner/dock/text]]` applies the same rules in that Dock.
 */
import { Effect, Schema } from "effect"
import type { Dock } from "../Docks/Dock.ts"
import type { Docks } from "../Docks/Docks.ts"
import { ValidationError } from "../Errors.ts"
import type { DockId } from "../Ids.ts"
import { type DockAccess, roleOf } from "../Policy.ts"
import { CurrentPrincipal, type Principal } from "../Principal.ts"
import { slugify } from "../Slug.ts"
import type { LinkCandidate, PagesRepo } from "./PagesRepo.ts"

/** `[[owner/dock/page-slug]]` points into another Dock; anything else names a page in the same Dock. */
export const wikilinkParts = (
  target: string
): { readonly page: string } | { readonly owner: string; readonly dock: string; readonly page: string } => {
  const parts = target.split("/")
  return parts.length === 3 && parts.every((part) => part.trim() !== "")
    ? { owner: parts[0]!.trim(), dock: parts[1]!.trim(), page: parts[2]!.trim() }
    : { page: target }
}

/** A page at one end of a link: enough to name it, open it, or read it with get_web_page. */
export const LinkedPage = Schema.Struct({
  id: Schema.UUID,
  slug: Schema.NullOr(Schema.String),
  title: Schema.NullOr(Schema.String),
  url: Schema.String,
  /** the Dock as `owner_username/dock_slug` */
  bucket_path: Schema.String
})
export type LinkedPage = typeof LinkedPage.Type

export const OutboundLink = Schema.Struct({
  /** the wikilink target as written */
  target: Schema.String,
  resolved: Schema.Boolean,
  page: Schema.NullOr(LinkedPage)
})
export type OutboundLink = typeof OutboundLink.Type

export const InboundLink = Schema.Struct({
  /** how the linking page wrote the link */
  target: Schema.String,
  page: LinkedPage
})
export type InboundLink = typeof InboundLink.Type

/** Backlinks are looked for among at most this many linking pages. */
export const BACKLINK_CANDIDATES_MAX = 1_000

/**
 * A page may name at most this many distinct wikilink targets: a push with more is a `validation_error`. Reads
 * resolve at most this many of a page's targets too (pages stored before the cap may have more; the rest are
 * answered unresolved), so the work of a read is bounded whatever is stored.
 */
export const WIKILINKS_MAX = 1_000

/** The cap above, checked once at push time on the targets a page writes. */
export const checkWikilinkCount = (targets: ReadonlyArray<string>): Effect.Effect<void, ValidationError> => {
  const count = new Set(targets).size
  return count <= WIKILINKS_MAX ? Effect.void : Effect.fail(
    new ValidationError({
      message: `A page may link to at most ${WIKILINKS_MAX} distinct [[wikilink]] targets; this one names ${count}`,
      details: { field: "page_content", limit: WIKILINKS_MAX, count }
    })
  )
}

/** The Dock a link is resolved in: its id, `owner/slug` path and whether the caller may see private pages. */
export interface LinkDock {
  readonly id: DockId
  readonly path: string
  readonly member: boolean
}

const linkDock = (
  principal: Principal,
  { access, dock }: { readonly dock: Dock; readonly access: DockAccess }
): LinkDock => ({
  id: dock.id,
  path: `${dock.owner.username}/${dock.slug}`,
  member: roleOf(principal, access) !== null
})

/** A Dock the caller reads, as links see it. */
export const linkDockOf = (found: { readonly dock: Dock; readonly access: DockAccess }) =>
  Effect.map(CurrentPrincipal, (principal) => linkDock(principal, found))

/**
 * The page a link text names among the candidates of one Dock (oldest first; see the rules above), if the
 * caller may see it: slug equal to the lowercased text, then title equal to it, then slug equal to the text
 * slugified. Maps built once, so a thousand texts cost a thousand lookups.
 */
const pickerOf = (candidates: ReadonlyArray<LinkCandidate>, member: boolean) => {
  const bySlug = new Map<string, LinkCandidate>()
  const byTitle = new Map<string, LinkCandidate>()
  for (const page of candidates) {
    if (!member && page.visibility === "private") continue
    if (page.slug !== null && !bySlug.has(page.slug)) bySlug.set(page.slug, page)
    const title = page.title?.trim().toLowerCase()
    if (title !== undefined && !byTitle.has(title)) byTitle.set(title, page)
  }
  return (text: string) => {
    const lower = text.trim().toLowerCase()
    return bySlug.get(lower) ?? byTitle.get(lower) ?? bySlug.get(slugify(text))
  }
}

/** What a link text is looked up by: its lowercased and slugified forms. */
const keysOf = (texts: ReadonlyArray<string>) => texts.flatMap((text) => [text.trim().toLowerCase(), slugify(text)])

/** The distinct targets a read resolves: the first WIKILINKS_MAX, in order. */
const boundedTargets = (targets: ReadonlyArray<string>) => [...new Set(targets)].slice(0, WIKILINKS_MAX)

export const makeLinks = (repo: PagesRepo, docks: Docks["Type"], baseUrl: string) => {
  const linkedPage = (
    page: { id: string; slug: string | null; title: string | null; public_slug: string },
    path: string
  ) => ({
    id: page.id,
    slug: page.slug,
    title: page.title,
    url: `${baseUrl}/a/${page.public_slug}`,
    bucket_path: path
  })

  /**
   * For each Dock, the pages its link texts name, by text: the candidates of every Dock in one query, so a page
   * naming many Docks costs no more statements than one naming a single Dock.
   */
  const resolveIn = (wanted: ReadonlyArray<{ readonly dock: LinkDock; readonly texts: ReadonlyArray<string> }>) =>
    Effect.gen(function*() {
      const found = new Map<DockId, Map<string, LinkedPage>>()
      const asked = wanted.filter(({ texts }) => texts.length > 0)
      if (asked.length === 0) return found
      const candidates = yield* repo.linkCandidates(
        asked.map(({ dock, texts }) => ({ dockId: dock.id, keys: keysOf(texts) }))
      )
      const byDock = new Map<string, Array<LinkCandidate>>()
      for (const candidate of candidates) {
        const list = byDock.get(candidate.dock_id)
        if (list === undefined) byDock.set(candidate.dock_id, [candidate])
        else list.push(candidate)
      }
      for (const { dock, texts } of asked) {
        const pick = pickerOf(byDock.get(dock.id) ?? [], dock.member)
        const pages = new Map<string, LinkedPage>()
        for (const text of texts) {
          const page = pick(text)
          if (page !== undefined) pages.set(text, linkedPage(page, dock.path))
        }
        found.set(dock.id, pages)
      }
      return found
    })

  /**
   * Resolves link targets written on a page of `source` (null: a standalone artifact, whose same-Dock links
   * name nothing), the first WIKILINKS_MAX of them. Answers the page each resolved target names. At most two
   * statements however many Docks the targets name: the named Docks, then the candidate pages of all of them.
   */
  const resolve = (source: LinkDock | null, targets: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      const resolved = new Map<string, LinkedPage>()
      // Links by the Dock they are resolved in: "" for the source Dock, else the lowercased owner/dock path.
      const byPath = new Map<string, Array<{ readonly target: string; readonly text: string }>>()
      const sourcePath = source?.path.toLowerCase()
      for (const target of boundedTargets(targets)) {
        const parts = wikilinkParts(target)
        const path = "owner" in parts ? `${parts.owner}/${parts.dock}`.toLowerCase() : ""
        const key = path === sourcePath ? "" : path
        const text = "owner" in parts ? parts.page : target
        const list = byPath.get(key)
        if (list === undefined) byPath.set(key, [{ target, text }])
        else list.push({ target, text })
      }
      const remote = [...byPath.keys()].filter((path) => path !== "")
      const readable = remote.length === 0 ? new Map() : yield* docks.readableAt(remote)
      const wanted: Array<
        { dock: LinkDock; links: ReadonlyArray<{ readonly target: string; readonly text: string }> }
      > = []
      for (const [path, links] of byPath) {
        const found = path === "" ? source : readable.get(path)
        if (found === undefined || found === null) continue
        wanted.push({ dock: path === "" ? source! : linkDock(principal, found), links })
      }
      const pages = yield* resolveIn(wanted.map(({ dock, links }) => ({ dock, texts: links.map((link) => link.text) })))
      for (const { dock, links } of wanted) {
        for (const link of links) {
          const page = pages.get(dock.id)?.get(link.text)
          if (page !== undefined) resolved.set(link.target, page)
        }
      }
      return resolved
    })

  /**
   * get_web_page_links' `outbound`: every target of the page, in order, resolved or not (past WIKILINKS_MAX,
   * on a page stored before the cap, not resolved).
   */
  const outbound = (source: LinkDock | null, targets: ReadonlyArray<string>) =>
    Effect.map(resolve(source, targets), (resolved): ReadonlyArray<OutboundLink> =>
      targets.map((target) => {
        const page = resolved.get(target)
        return { target, resolved: page !== undefined, page: page ?? null }
      }))

  /**
   * get_web_page_links' `inbound`: readable pages with a link that resolves to `page` (itself excluded), each
   * link resolved exactly as outbound resolves it. Two statements: the linking pages, then the pages their
   * texts could name (only texts that could name `page` at all are looked up).
   */
  const inbound = (
    dock: LinkDock,
    page: { readonly id: string; readonly slug: string | null; readonly title: string | null }
  ) =>
    Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      const prefix = `${dock.path}/`
      const candidates = yield* repo.backlinkCandidates(
        principal,
        dock.id,
        prefix,
        BACKLINK_CANDIDATES_MAX,
        WIKILINKS_MAX
      )
      // What each candidate's links say inside this Dock: a bare text from a page of this Dock, or the part
      // after owner/dock/ from anywhere.
      const namesIn = (candidate: (typeof candidates)[number]) =>
        candidate.links.flatMap((target) => {
          const parts = wikilinkParts(target)
          if (!("owner" in parts)) return candidate.dock_id === dock.id ? [{ target, text: target }] : []
          return `${parts.owner}/${parts.dock}/`.toLowerCase() === prefix.toLowerCase()
            ? [{ target, text: parts.page }]
            : []
        })
      // A text names this page only if one of its forms equals the page's slug or title (the rules above).
      const title = page.title?.trim().toLowerCase()
      const couldName = (text: string) => {
        const lower = text.trim().toLowerCase()
        return lower === page.slug || lower === title || slugify(text) === page.slug
      }
      const texts = [...new Set(candidates.flatMap((candidate) => namesIn(candidate).map((name) => name.text)))].filter(
        couldName
      )
      const resolved = (yield* resolveIn([{ dock, texts }])).get(dock.id) ?? new Map<string, LinkedPage>()
      const links: Array<InboundLink> = []
      for (const candidate of candidates) {
        if (candidate.id === page.id) continue
        const link = namesIn(candidate).find((name) => resolved.get(name.text)?.id === page.id)
        if (link !== undefined) {
          links.push({
            target: link.target,
            page: linkedPage(candidate, `${candidate.owner_username}/${candidate.dock_slug}`)
          })
        }
      }
      return links
    })

  return { resolve, outbound, inbound }
}
