/**
 * From what an operator adds to what a source keeps: the media type checked, the size bounded, and the text
 * extracted. Plain text is kept as is; Markdown loses its front matter and stays Markdown; HTML goes through the
 * one sanitizer and becomes text with its blocks on their own lines. Pure apart from failing.
 */
import { Effect } from "effect"
import { type InvalidFrontMatter, ValidationError } from "../Errors.ts"
import {
  SOURCE_CONTENT_MAX_BYTES,
  SOURCE_MEDIA_TYPES,
  SOURCE_ORIGIN_MAX,
  SOURCE_TITLE_MAX,
  type SourceMediaType
} from "../Sources/Source.ts"
import { splitFrontMatter } from "./FrontMatter.ts"
import { htmlToText, sanitizeHtml } from "./HtmlSanitizer.ts"
import { utf8Bytes } from "./Text.ts"

/** Other names of the supported types, as files and servers label them. */
const ALIASES: Record<string, SourceMediaType> = {
  "text/x-markdown": "text/markdown",
  "text/md": "text/markdown"
}

/**
 * The supported media type a label names: parameters (`; charset=utf-8`) and letter case are ignored, since the
 * content arrives as text. Anything else is validation_error naming the supported types.
 */
export const sourceMediaType = (given: string): Effect.Effect<SourceMediaType, ValidationError> => {
  const essence = given.split(";")[0]!.trim().toLowerCase()
  const known = (SOURCE_MEDIA_TYPES as ReadonlyArray<string>).includes(essence)
    ? essence as SourceMediaType
    : ALIASES[essence]
  return known !== undefined ? Effect.succeed(known) : Effect.fail(
    new ValidationError({
      message: `media_type "${
        given.slice(0, 100)
      }" is not supported: a source is text/plain, text/markdown or text/html`,
      details: { field: "media_type", value: given.slice(0, 100), supported: SOURCE_MEDIA_TYPES }
    })
  )
}

export interface ExtractedText {
  readonly text: string
  /** A title the content itself gives (Markdown front matter `title`), if any. */
  readonly title: string | undefined
}

const noNul = (field: string, value: string): Effect.Effect<void, ValidationError> =>
  value.includes("\u0000")
    ? Effect.fail(
      new ValidationError({
        message: `${field} contains the NUL character (U+0000): it is not text`,
        details: { field }
      })
    )
    : Effect.void

/**
 * The text of a source's content. At most SOURCE_CONTENT_MAX_BYTES of UTF-8 go in; a leading byte-order mark is
 * dropped; content with no text left (an empty file, HTML that is all script) is refused.
 */
export const extractSourceText = (
  mediaType: SourceMediaType,
  content: string
): Effect.Effect<ExtractedText, ValidationError | InvalidFrontMatter> =>
  Effect.gen(function*() {
    const bytes = utf8Bytes(content)
    if (bytes > SOURCE_CONTENT_MAX_BYTES) {
      return yield* new ValidationError({
        message: `content is ${bytes} bytes of UTF-8; a source is at most ${SOURCE_CONTENT_MAX_BYTES} (5 MiB)`,
        details: { field: "content", bytes, limit: SOURCE_CONTENT_MAX_BYTES }
      })
    }
    yield* noNul("content", content)
    const body = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content
    const extracted: ExtractedText = mediaType === "text/html"
      ? { text: htmlToText(sanitizeHtml(body).html), title: undefined }
      : mediaType === "text/markdown"
      ? yield* markdownText(body)
      : { text: body, title: undefined }
    if (extracted.text.trim() === "") {
      return yield* new ValidationError({
        message: mediaType === "text/html"
          ? "content has no text once sanitized (scripts, styles and markup are not text)"
          : "content has no text",
        details: { field: "content" }
      })
    }
    return extracted
  })

/** Markdown without its front matter (bad front matter is invalid_front_matter, as for pages); its `title` kept. */
const markdownText = (markdown: string) =>
  Effect.map(splitFrontMatter(markdown, { required: false }), (document): ExtractedText => {
    const title = document.frontMatter["title"]
    return {
      // The blank lines between the closing fence and the first block are not part of the text.
      text: document.body.replace(/^(?:[ \t]*\r?\n)+/, ""),
      title: typeof title === "string" && title.trim() !== "" ? title.trim() : undefined
    }
  })

/**
 * A source's title: the one given, else the content's own (Markdown front matter), else the file name the origin
 * ends with (a URL's last path segment, or its host). At most SOURCE_TITLE_MAX characters when given; a derived
 * title is cut to fit.
 */
export const sourceTitle = (
  given: string | undefined,
  fromContent: string | undefined,
  origin: string
): Effect.Effect<string, ValidationError> =>
  Effect.gen(function*() {
    const title = given?.trim()
    if (title !== undefined && title !== "") {
      yield* noNul("title", title)
      if ([...title].length > SOURCE_TITLE_MAX) {
        return yield* new ValidationError({
          message: `title is longer than ${SOURCE_TITLE_MAX} characters`,
          details: { field: "title", limit: SOURCE_TITLE_MAX }
        })
      }
      return title
    }
    return [...(fromContent ?? fileNameOf(origin))].slice(0, SOURCE_TITLE_MAX).join("")
  })

/** The origin as given (trimmed): a file name or a URL, 1-2048 characters. */
export const sourceOrigin = (given: string): Effect.Effect<string, ValidationError> =>
  Effect.gen(function*() {
    const origin = given.trim()
    yield* noNul("origin", origin)
    if (origin === "" || [...origin].length > SOURCE_ORIGIN_MAX) {
      return yield* new ValidationError({
        message: `origin (the file name or URL the source came from) must be 1-${SOURCE_ORIGIN_MAX} characters`,
        details: { field: "origin", limit: SOURCE_ORIGIN_MAX }
      })
    }
    return origin
  })

/** `https://example.com/docs/guide.html?x=1` → `guide.html`; `reports/q3.md` → `q3.md`; `https://example.com/` → `example.com`. */
export const fileNameOf = (origin: string): string => {
  const url = URL.canParse(origin) ? new URL(origin) : undefined
  if (url !== undefined && (url.protocol === "http:" || url.protocol === "https:")) {
    const segment = url.pathname.split("/").filter((part) => part !== "").at(-1)
    if (segment === undefined) return url.hostname
    try {
      return decodeURIComponent(segment)
    } catch {
      return segment
    }
  }
  return origin.split(/[/\\]/).filter((part) => part !== "").at(-1) ?? origin
}

const EXTENSIONS: Record<string, SourceMediaType> = {
  txt: "text/plain",
  text: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  html: "text/html",
  htm: "text/html"
}

/** The media type a file's extension names (`dock sources add`), or undefined for any other extension. */
export const mediaTypeForFileName = (name: string): SourceMediaType | undefined => {
  const dot = name.lastIndexOf(".")
  return dot <= 0 ? undefined : EXTENSIONS[name.slice(dot + 1).toLowerCase()]
}
