/**
 * Wikilinks between pages. A page stores its link targets as written (`Page`, `slug`, `owner/dock/page-slug`);
 * they are resolved when read, as the caller, so a link works as soon as its target appears and never reveals
 * a page the caller cannot read.
 *
 * Resolution of `[[text]]` within a Dock, first match wins: the page whose slug is the text (lowercased), then
 * the oldest page whose title equals it case-insensitively, then the page whose slug is the text slugified
 * (`[[Getting Started]]` → `getting-started`). `[[owner/dock/text]]` applies the same rules in that Dock.
 */
import { Effect, Option, Schema } from "effect"
import type { Dock } from "../Docks/Dock.ts"
import type { Docks } from "../Docks/Docks.ts"
import type { DockId } from "../Ids.ts"
import { type DockAccess, roleOf } from "../Policy.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { slugify } from "../Slug.ts"
import { wikilinkParts } from "./MarkdownDocument.ts"
import type { LinkCandidate, PagesRepo } from "./PagesRepo.ts"

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

/** The Dock a link is resolved in: its id, `owner/slug` path and whether the caller may see private pages. */
export interface LinkDock {
  readonly id: DockId
  readonly path: string
  readonly member: boolean
}

/** A Dock the caller reads, as links see it. */
export const linkDockOf = ({ access, dock }: { readonly dock: Dock; readonly access: DockAccess }) =>
  Effect.map(CurrentPrincipal, (principal): LinkDock => ({
    id: dock.id,
    path: `${dock.owner.username}/${dock.slug}`,
    member: roleOf(principal, access) !== null
  }))

/** The page a link text names among the candidates of one Dock (see the rules above), if the caller may see it. */
const pickPage = (candidates: ReadonlyArray<LinkCandidate>, text: string, member: boolean) => {
  const visible = candidates.filter((page) => member || page.visibility !== "private")
  const lower = text.trim().toLowerCase()
  return visible.find((page) => page.slug === lower) ??
    visible.find((page) => page.title?.trim().toLowerCase() === lower) ??
    visible.find((page) => page.slug === slugify(text))
}

export const makeLinks = (repo: PagesRepo, docks: Docks["Type"], baseUrl: string) => {
  const linkedPage = (page: { id: string; slug: string | null; title: string | null; public_slug: string }, path: string) => ({
    id: page.id,
    slug: page.slug,
    title: page.title,
    url: `${baseUrl}/a/${page.public_slug}`,
    bucket_path: path
  })

  /** A readable Dock at `owner/slug`, or undefined when it is missing or not readable by the caller. */
  const dockAt = (path: string) =>
    docks.resolve({ bucket: path }).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.succeed(undefined), onSome: linkDockOf })),
      Effect.catchTags({ NotFound: () => Effect.succeed(undefined), BadRequest: () => Effect.succeed(undefined) })
    )

  /** The pages that link texts name in one Dock, by text. */
  const resolveIn = (dock: LinkDock, texts: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const found = new Map<string, LinkedPage>()
      if (texts.length === 0) return found
      const lowered = texts.map((text) => text.trim().toLowerCase())
      const candidates = yield* repo.linkCandidates(dock.id, [...lowered, ...texts.map((text) => slugify(text))], lowered)
      for (const text of texts) {
        const page = pickPage(candidates, text, dock.member)
        if (page !== undefined) found.set(text, linkedPage(page, dock.path))
      }
      return found
    })

  /**
   * Resolves link targets written on a page of `source` (null: a standalone artifact, whose same-Dock links
   * name nothing). Answers the page each resolved target names.
   */
  const resolve = (source: LinkDock | null, targets: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const resolved = new Map<string, LinkedPage>()
      const local: Array<string> = []
      const remote = new Map<string, Array<{ target: string; page: string }>>()
      for (const target of targets) {
        const parts = wikilinkParts(target)
        if (!("owner" in parts)) {
          local.push(target)
          continue
        }
        const key = `${parts.owner.toLowerCase()}/${parts.dock.toLowerCase()}`
        remote.set(key, [...(remote.get(key) ?? []), { target, page: parts.page }])
      }
      if (source !== null) {
        for (const [text, page] of yield* resolveIn(source, local)) resolved.set(text, page)
      }
      for (const [path, links] of remote) {
        const dock = source !== null && source.path.toLowerCase() === path ? source : yield* dockAt(path)
        if (dock === undefined) continue
        const pages = yield* resolveIn(dock, links.map((link) => link.page))
        for (const link of links) {
          const page = pages.get(link.page)
          if (page !== undefined) resolved.set(link.target, page)
        }
      }
      return resolved
    })

  /** get_web_page_links' `outbound`: every target of the page, in order, resolved or not. */
  const outbound = (source: LinkDock | null, targets: ReadonlyArray<string>) =>
    Effect.map(resolve(source, targets), (resolved): ReadonlyArray<OutboundLink> =>
      targets.map((target) => {
        const page = resolved.get(target)
        return { target, resolved: page !== undefined, page: page ?? null }
      }))

  /**
   * get_web_page_links' `inbound`: readable pages with a link that resolves to `page` (itself excluded), each
   * link resolved exactly as outbound resolves it.
   */
  const inbound = (dock: LinkDock, pageId: string) =>
    Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      const prefix = `${dock.path}/`
      const candidates = yield* repo.backlinkCandidates(principal, dock.id, prefix, BACKLINK_CANDIDATES_MAX)
      // What each candidate's links say inside this Dock: a bare text from a page of this Dock, or the part
      // after owner/dock/ from anywhere.
      const namesIn = (candidate: (typeof candidates)[number]) =>
        candidate.links.flatMap((target) => {
          const parts = wikilinkParts(target)
          if (!("owner" in parts)) return candidate.dock_id === dock.id ? [{ target, text: target }] : []
          return `${parts.owner}/${parts.dock}/`.toLowerCase() === prefix.toLowerCase() ? [{ target, text: parts.page }] : []
        })
      const texts = [...new Set(candidates.flatMap((candidate) => namesIn(candidate).map((name) => name.text)))]
      const resolved = yield* resolveIn(dock, texts)
      const links: Array<InboundLink> = []
      for (const candidate of candidates) {
        if (candidate.id === pageId) continue
        const link = namesIn(candidate).find((name) => resolved.get(name.text)?.id === pageId)
        if (link !== undefined) {
          links.push({ target: link.target, page: linkedPage(candidate, `${candidate.owner_username}/${candidate.dock_slug}`) })
        }
      }
      return links
    })

  return { resolve, outbound, inbound }
}
