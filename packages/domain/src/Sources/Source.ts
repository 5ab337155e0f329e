/**
 * Sources: reference texts attached to a Dock (spec §2 "Source"), which pages cite in their front matter
 * (`sources: [source_id, …]`). Wire shapes of list_sources, read_source and the admin API; the limits on adding.
 */
import { Schema } from "effect"
import { DockId, SourceId } from "../Ids.ts"

/** The media types a source can be added as; the text is extracted from each (Content/SourceText.ts). */
export const SOURCE_MEDIA_TYPES = ["text/plain", "text/markdown", "text/html"] as const
export type SourceMediaType = (typeof SOURCE_MEDIA_TYPES)[number]

/** What one add may bring: 5 MiB of UTF-8 (the text is checked again, as stored, against the Dock's content). */
export const SOURCE_CONTENT_MAX_BYTES = 5 * 1024 * 1024
export const SOURCE_TITLE_MAX = 300
export const SOURCE_ORIGIN_MAX = 2048
/** Sources listed (not archived) in one Dock: list_sources has no paging, so this bounds its answer. */
export const SOURCES_PER_DOCK_MAX = 1000

/**
 * A source as list_sources lists it and the admin API answers it. `size_bytes` is the UTF-8 size of the
 * extracted text; `origin` is the file name or URL as it was given.
 */
export class Source extends Schema.Class<Source>("Source")({
  source_id: SourceId,
  bucket_id: DockId,
  title: Schema.String,
  origin: Schema.String,
  /** text/plain, text/markdown or text/html: what the source was added as (its text is plain text) */
  media_type: Schema.String,
  size_bytes: Schema.Int,
  archived: Schema.Boolean,
  created_at: Schema.String
}) {}

/** read_source: the source with its full extracted text. */
export class SourceWithText extends Source.extend<SourceWithText>("SourceWithText")({
  text: Schema.String
}) {}

/** POST /admin/sources: the Dock by id or `owner/slug`; `content` is the file's text (UTF-8). */
export const AddSourceRequest = Schema.Struct({
  dock: Schema.String,
  title: Schema.optionalWith(Schema.String, { exact: true }),
  origin: Schema.String,
  media_type: Schema.String,
  content: Schema.String
})
export type AddSourceRequest = typeof AddSourceRequest.Type
