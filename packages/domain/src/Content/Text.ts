/** Small text helpers every kind of content uses, light enough for the calling thread (no parser loaded). */
import { Effect } from "effect"
import { ValidationError } from "../Errors.ts"

/** Text placed into HTML (element content or a quoted attribute value) so that it stays text. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

/** The size of text as stored (UTF-8 bytes): what content caps count. */
export const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength

/** `page_content` limit: 1 MiB counted in UTF-8 bytes (architecture §14). */
export const PAGE_CONTENT_MAX_BYTES = 1_048_576

/** A page's content over the limit: a push of it, or an edit that would make it. */
export const contentTooLarge = (bytes: number, details?: Record<string, unknown>) =>
  new ValidationError({
    message: `page_content is ${bytes} bytes of UTF-8; the limit is ${PAGE_CONTENT_MAX_BYTES} (1 MiB)`,
    details: { field: "page_content", bytes, limit: PAGE_CONTENT_MAX_BYTES, ...details }
  })

const WHITESPACE_RUNS = /\s{2,}|[^\S ]/g

/**
 * Every run of whitespace (JavaScript's `\s`) as one space: what `text.replace(/\s+/g, " ")` gives. Only runs of
 * two or more and single whitespace characters other than a space are replaced: a single space, between most
 * words of prose, is left where it is instead of being replaced by itself, which makes this ~4× faster on prose.
 */
export const collapseWhitespace = (text: string): string => text.replace(WHITESPACE_RUNS, " ")

/** Keys that could reach an object's prototype if anything downstream merged user-given keys naively. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"])

/**
 * A summary from plain text: the first paragraph (text up to the first blank line), whitespace collapsed,
 * cut at a word boundary to at most `max` characters with "…" when it is longer.
 */
export const deriveSummary = (text: string, max = 280): string => {
  const paragraph = text
    .split(/\n[ \t]*\n/)
    .map((block) => collapseWhitespace(block).trim())
    .find((block) => block !== "") ?? ""
  if (paragraph.length <= max) return paragraph
  let cut = paragraph.slice(0, Math.max(0, max - 1))
  const space = cut.lastIndexOf(" ")
  // Cut at the last word boundary unless that throws away more than half (one very long word).
  if (space > max / 2) cut = cut.slice(0, space)
  // Never end on half a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1)
  return `${cut.replace(/[\s,;:.\-–—]+$/, "")}…`
}

/** Refuses a value with the NUL character in it (`field` names it): that is not text. */
export const noNul = (field: string, value: string): Effect.Effect<void, ValidationError> =>
  value.includes("\u0000")
    ? Effect.fail(
      new ValidationError({
        message: `${field} contains the NUL character (U+0000): it is not text`,
        details: { field }
      })
    )
    : Effect.void
