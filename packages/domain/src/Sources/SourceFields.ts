/**
 * The fields of a source as an operator adds it, checked on the calling thread before its content goes to a
 * content worker (Content/SourceText.ts): the media type (from a label or a file's extension), the origin and
 * the title.
 */
import { Effect } from "effect"
import { noNul } from "../Content/Text.ts"
import { ValidationError } from "../Errors.ts"
import { SOURCE_MEDIA_TYPES, SOURCE_ORIGIN_MAX, SOURCE_TITLE_MAX, type SourceMediaType } from "./Source.ts"

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
