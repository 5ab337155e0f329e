/**
 * Pages (`part` in results): web pages, Markdown files and the Micro DB shell. Wire shape per architecture §14.
 *
 * page_kind values:
 * - `web_page`: pushed with push_web_page (HTML, or Markdown with content_type "markdown")
 * - `markdown_file`: pushed with push_markdown_file / push_markdown (a Markdown document with front matter)
 * - `micro_db`: the Dock's one Micro DB shell; its versions are snapshots (JSON)
 */
import { Schema } from "effect"

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
export const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength

export type SaveAction = "created" | "updated" | "unchanged"
