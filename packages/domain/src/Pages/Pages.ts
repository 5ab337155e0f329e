/**
 * The Pages port: web pages and Markdown files of a Dock (and standalone artifacts), pushed, read, listed,
 * searched, versioned, restored and deleted. A push prepares the content (sanitized HTML, parsed Markdown), then
 * saves it through the Parts port: a new version for every change, with attribution, the content caps and the
 * activity log, all in one transaction. Schemas in Part.ts; rules in PagesLive.ts; reads in PagesRepo.ts.
 */
import { Context, type Effect } from "effect"
import type { DockTarget } from "../Docks/Dock.ts"
import type {
  BadRequest,
  Conflict,
  NotFound,
  PermissionDenied,
  RateLimited,
  Unauthorized,
  Unavailable,
  ValidationError
} from "../Errors.ts"
import type { DockId } from "../Ids.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { EditKind, PageEdit } from "./Edit.ts"
import type { InboundLink, OutboundLink } from "./Links.ts"
import type {
  PageContent,
  PageDiff,
  PageKind,
  PageNames,
  PageRecord,
  PageSearchResult,
  PageView,
  PageWriteError,
  Part,
  PartVersion,
  PushError,
  PushKind,
  PushResult,
  SaveAction
} from "./Part.ts"
import type { PushInput } from "./Prepare.ts"

/**
 * Which page a browser route shows: by public slug (/a/) or id (/artifacts/), public pages (and private ones to
 * the members of their Dock); or, for a live
 * share link that ShareLinks.open has found (and only for it), the linked page by id whatever its visibility.
 */
export type ViewRef =
  | { readonly publicSlug: string }
  | { readonly id: string }
  | { readonly sharedPageId: string }

/** Who wrote a page version: the person (null once deleted) and the agent label of their token, if any. */
export interface PageAuthor {
  readonly username: string | null
  readonly agent_label: string | null
}

export class Pages extends Context.Tag("@dock/domain/Pages")<Pages, {
  /** Creates the page with this slug in the Dock, or updates it (`unchanged` when nothing differs). */
  readonly save: (
    dockId: DockId,
    content: PageContent
  ) => Effect.Effect<
    { readonly part: Part; readonly action: SaveAction },
    PageWriteError,
    CurrentPrincipal
  >
  /**
   * push_web_page / push_markdown_file / push_markdown: prepares the content, then saves it into the named Dock,
   * or with none named into the caller's default Dock (a sandbox token's sandbox). With `input.baseVersion`, the
   * page must be at that version (checked under the Dock lock), else Conflict with the diff and nothing written.
   */
  readonly push: (
    kind: PushKind,
    target: DockTarget,
    input: PushInput & { readonly contentType?: "markdown" | "html" | undefined }
  ) => Effect.Effect<PushResult, PushError, CurrentPrincipal>
  /**
   * edit_markdown_file / edit_web_page: patch operations on a page's stored source, applied in order, all or
   * none, then saved as a push of the result (one new version, or `unchanged`). `baseVersion` (else the version
   * read) must be the page's current version: otherwise `conflict` with `details.current_version`.
   */
  readonly edit: (
    kind: EditKind,
    target: DockTarget,
    page: string,
    operations: ReadonlyArray<PageEdit>,
    baseVersion: number | undefined
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
    options: {
      readonly limit: number
      readonly sort: "alphabetical" | "recent"
      readonly kinds: ReadonlyArray<PageKind>
      /** The `nextCursor` of an earlier answer with the same sort: the page after it. */
      readonly cursor?: string | undefined
      /** Also who wrote each listed page's current version (`authors`, by page id): the web app's Dock view. */
      readonly authors?: boolean | undefined
    }
  ) => Effect.Effect<
    {
      readonly parts: ReadonlyArray<Part>
      readonly nextCursor: string | null
      readonly authors?: ReadonlyMap<string, PageAuthor>
    },
    NotFound | BadRequest | ValidationError,
    CurrentPrincipal
  >
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
  /**
   * diff_web_page_versions / diff_markdown_file_versions: the line diff from one stored version to another (by
   * default the current one). A version the page does not have is not_found.
   */
  readonly diff: (
    target: DockTarget,
    page: string | PageNames,
    fromVersion: number,
    toVersion?: number
  ) => Effect.Effect<PageDiff, NotFound | BadRequest, CurrentPrincipal>
  /**
   * A new version equal to an old one (history is never rewritten); HTML is sanitized again. With `baseVersion`
   * the page must be at that version, else Conflict (details.current_version, base_version, diff).
   */
  readonly restore: (
    target: DockTarget,
    page: string | PageNames,
    version: number,
    baseVersion?: number
  ) => Effect.Effect<
    Part,
    PageWriteError | Unavailable,
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
   * The browser routes (/a/, /artifacts/): a page the caller may view (a public one, or, for a signed-in member
   * of its Dock, a private one: `restricted`), rendered now (Markdown with its wikilinks resolved for the caller)
   * and sanitized, with who wrote its current version. What the caller may not read is not_found.
   * A version too complex to render within the content workers' bound is shown as its escaped source.
   */
  readonly view: (
    ref: ViewRef
  ) => Effect.Effect<PageView, NotFound | Unavailable, CurrentPrincipal>
  /**
   * Needs a named Dock: a delete never falls back to the grounding or default Dock. With `baseVersion` the page
   * must be at that version, else Conflict (with the diff) and nothing deleted.
   */
  readonly remove: (
    target: DockTarget,
    page: string | PageNames,
    baseVersion?: number
  ) => Effect.Effect<
    void,
    Conflict | NotFound | BadRequest | Unauthorized | PermissionDenied | ValidationError | RateLimited,
    CurrentPrincipal
  >
}>() {}
