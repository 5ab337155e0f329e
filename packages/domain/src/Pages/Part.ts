/**
 * Pages (`part` in results): web pages, Markdown files and the Micro DB shell. Wire shape per architecture §14.
 *
 * page_kind values:
 * - `web_page`: pushed with push_web_page (HTML, or Markdown with content_type "markdown")
 * - `markdown_file`: pushed with push_markdown_file / push_markdown (a Markdown document with front matter)
 * - `micro_db`: the Dock's one Micro DB shell; its versions are snapshots (JSON)
 */
import { Effect, Option, Schema } from "effect"
import type {
  BadRequest,
  Conflict,
  InvalidFrontMatter,
  InvalidSlug,
  NotFound,
  PermissionDenied,
  RateLimited,
  TierLimitExceeded,
  Unauthorized,
  Unavailable,
  ValidationError
} from "../Errors.ts"
import type { PartRow } from "../Parts/PartRow.ts"
import { ArtifactBaseUrl, PublicBaseUrl } from "../Settings.ts"

export const PageKind = Schema.Literal("web_page", "markdown_file", "micro_db")
export type PageKind = typeof PageKind.Type

export const ContentType = Schema.Literal("markdown", "html", "json")
export type ContentType = typeof ContentType.Type

export class Part extends Schema.Class<Part>("Part")({
  id: Schema.UUID,
  bucket_id: Schema.NullOr(Schema.UUID),
  slug: Schema.NullOr(Schema.String),
  public_slug: Schema.String,
  url: Schema.String,
  title: Schema.NullOr(Schema.String),
  summary: Schema.String,
  content_type: ContentType,
  page_kind: PageKind,
  version: Schema.Int,
  last_updated: Schema.String,
  claim_count: Schema.Int,
  content: Schema.optionalWith(Schema.String, { exact: true })
}) {}

/**
 * One page's prepared content, as a push produces it after sanitizing and parsing: what the store keeps.
 * `bodyText` is the text-readable content (search, format "text"); the derived lists feed get_bucket.
 */
export interface PageContent {
  readonly slug?: string | undefined
  readonly title?: string | null | undefined
  readonly summary: string
  readonly contentType: ContentType
  readonly pageKind: PageKind
  readonly content: string
  readonly bodyText: string
  readonly frontMatter?: Record<string, unknown> | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  /** front matter `entities` and wikilink targets */
  readonly entities?: ReadonlyArray<string> | undefined
  /** front matter `concepts` */
  readonly concepts?: ReadonlyArray<string> | undefined
  readonly sourceIds?: ReadonlyArray<string> | undefined
  /** wikilink targets as written */
  readonly links?: ReadonlyArray<string> | undefined
  readonly claimCount?: number | undefined
}

/**
 * How a tool names a page: `web_page` (UUID or slug) and/or `page_slug`; naming both, they must agree. `kinds`
 * limits which pages count (the Markdown file tools see only `markdown_file` pages; any other is not found).
 */
export interface PageNames {
  readonly web_page?: string | undefined
  readonly page_slug?: string | undefined
  readonly kinds?: ReadonlyArray<PageKind> | undefined
}

/** Sizes are counted in UTF-8 bytes (the 1 MiB page limit, the content caps). */

export type SaveAction = "created" | "updated" | "unchanged"

export type PushKind = "web_page" | "markdown_file" | "markdown"

/** How a write of a page's content can fail once the content is prepared (save, restore). */
export type PageWriteError =
  | Conflict
  | NotFound
  | BadRequest
  | Unauthorized
  | PermissionDenied
  | ValidationError
  | TierLimitExceeded
  | RateLimited

/** How a push can fail: the write's failures and the content's own (front matter, slug, the workers' bound). */
export type PushError = PageWriteError | InvalidFrontMatter | InvalidSlug | Unavailable

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
  /** Not public: shown to the Dock's members (or through a share link) only, so never cached nor referred. */
  readonly restricted: boolean
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
  /** Lines added against the version before (version 1: all its lines); null when not recorded. */
  added: Schema.NullOr(Schema.Int),
  /** Lines removed against the version before; null when not recorded. */
  removed: Schema.NullOr(Schema.Int),
  author: Schema.Struct({
    user_id: Schema.NullOr(Schema.String),
    username: Schema.NullOr(Schema.String),
    agent_label: Schema.NullOr(Schema.String),
    /** the token that wrote the version: shown to the Dock's members only (revert_agent_changes names it) */
    token_id: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
  }),
  created_at: Schema.String
}) {}

/**
 * What changed between two versions of a page (diff_web_page_versions, diff_markdown_file_versions, and a
 * base_version conflict's details.diff without the version numbers): a unified line diff of the source.
 */
export class PageDiff extends Schema.Class<PageDiff>("PageDiff")({
  from_version: Schema.Int,
  to_version: Schema.Int,
  diff: Schema.String.annotations({
    description: "Unified line diff of the source (`@@ -a,b +c,d @@` hunks, 3 lines of context), at most 64 KiB"
  }),
  added: Schema.Int.annotations({ description: "Lines added" }),
  removed: Schema.Int.annotations({ description: "Lines removed" }),
  truncated: Schema.Boolean.annotations({
    description: "The diff was cut at 64 KiB, or (pages that differ almost everywhere) shows the whole changed " +
      "region removed then added instead of a line-by-line diff, its counts then upper bounds"
  })
}) {}

/**
 * A stored page as results show it; its content only when asked for. Built without validating again (`true`), as
 * `toDock` is: the row was decoded by its schema, and answers are encoded by theirs.
 */
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
  }, true)

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
