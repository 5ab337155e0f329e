/**
 * Images (spec §2 "Image", §4.3 push_image): the wire shape of a pushed image and the pure rules around it — the
 * base64 payload and its limits, the Markdown snippet that cannot be broken out of, and the filename a download
 * is offered under.
 */
import { Effect, Schema } from "effect"
import { ValidationError } from "../Errors.ts"
import { DockId, ImageId } from "../Ids.ts"

/** What the decoder may find; nothing else is stored. */
export const ImageFormat = Schema.Literal("jpeg", "png", "webp")
export type ImageFormat = typeof ImageFormat.Type

/** The spec's "15 MB", exactly: decoded bytes of `image_base64`. */
export const MAX_IMAGE_BYTES = 15_000_000
/**
 * The schema's bound on `image_base64` in characters: the base64 of 15,000,000 bytes is 20,000,000 characters; the
 * rest leaves room for a data-URL prefix and line breaks (76-character lines with CRLF need 20,526,316).
 */
export const MAX_IMAGE_BASE64_CHARS = 20_971_520
/** The pixel cap (width × height, read from the header before anything is decoded). */
export const MAX_IMAGE_PIXELS = 40_000_000
export const FILENAME_MAX = 255
export const ALT_TEXT_MAX = 1_000
export const CAPTION_MAX = 2_000

export const EXTENSION: Record<ImageFormat, string> = { jpeg: "jpg", png: "png", webp: "webp" }
export const CONTENT_TYPE: Record<ImageFormat, string> = { jpeg: "image/jpeg", png: "image/png", webp: "image/webp" }
/** Extensions a filename may already carry for each format (kept as given in Content-Disposition). */
const KNOWN_EXTENSIONS: Record<ImageFormat, ReadonlyArray<string>> = {
  jpeg: ["jpg", "jpeg", "jpe", "jfif"],
  png: ["png"],
  webp: ["webp"]
}

/** push_image's result. Every field is a string except `width` and `height` (pixels, after orientation). */
export class PushedImage extends Schema.Class<PushedImage>("PushedImage")({
  /** the Dock's id (UUID) */
  workspace_id: DockId,
  /** the image's id (UUID) */
  image_id: ImageId,
  /** `<artifact base>/images/<image_id>.<ext>`: what to embed */
  public_url: Schema.String,
  /** where to fetch the image: the same address as public_url */
  url: Schema.String,
  /** the ObjectStore key of the stored bytes: `docks/<workspace_id>/images/<image_id>.<ext>` */
  storage_path: Schema.String,
  format: ImageFormat,
  width: Schema.Int,
  height: Schema.Int,
  /** `![alt](public_url "caption")`, alt text and caption escaped */
  markdown: Schema.String
}) {}

const invalid = (message: string, details: Record<string, unknown>) =>
  new ValidationError({ message, details: { field: "image_base64", ...details } })

/** `data:image/png;base64,` or any other data-URL header: the decoder decides the format, not the label. */
const DATA_URL = /^\s*data:[^,]{0,200};base64,/i
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * The bytes of `image_base64`: an optional data-URL prefix and any whitespace (line breaks included) are dropped;
 * what remains must be standard base64 (padding optional) of at most MAX_IMAGE_BYTES bytes. The size is known
 * from the length before anything is decoded.
 */
export const decodeImageBase64 = (text: string): Effect.Effect<Uint8Array, ValidationError> =>
  Effect.suspend(() => {
    const body = text.replace(DATA_URL, "").replace(/\s+/g, "")
    if (body.length === 0) return Effect.fail(invalid("image_base64 is empty", {}))
    if (!BASE64.test(body) || body.length % 4 === 1 || (body.includes("=") && body.length % 4 !== 0)) {
      return Effect.fail(invalid("image_base64 is not valid base64 (A-Z, a-z, 0-9, +, / and = padding)", {}))
    }
    const padding = body.endsWith("==") ? 2 : body.endsWith("=") ? 1 : 0
    const bytes = Math.floor(((body.length - padding) * 3) / 4)
    if (bytes > MAX_IMAGE_BYTES) {
      return Effect.fail(
        invalid(`The image is ${bytes} bytes; push_image takes at most ${MAX_IMAGE_BYTES} bytes (15 MB)`, {
          bytes,
          max_bytes: MAX_IMAGE_BYTES
        })
      )
    }
    const buffer = Buffer.from(body, "base64")
    return Effect.succeed(new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength))
  })

/** Line breaks and other separators become one space; control characters go (they have no place in one line). */
const oneLine = (text: string) =>
  text
    .replace(/[\s\u0085\u2028\u2029]+/g, " ")
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, "")
    .trim()

/**
 * Link text (the alt text): every character that could open or close Markdown syntax is backslash-escaped — any
 * ASCII punctuation may be, per CommonMark — so brackets cannot end the text, `<` cannot start raw HTML or an
 * autolink, `&` cannot start an entity, backticks cannot open a code span, `|` cannot split a table cell, and
 * emphasis markers stay literal.
 */
const escapeLinkText = (text: string) => oneLine(text).replace(/[\\`*_[\]()<>&!~|"{}#^$=+]/g, "\\$&")

/** A link title in double quotes: only `\`, `"` and `&` (entities) mean anything there. */
const escapeTitle = (text: string) => oneLine(text).replace(/[\\"&]/g, "\\$&")

/** `![alt](url "caption")`, or `![alt](url)` without a caption: safe to paste into any Markdown page. */
export const markdownSnippet = (altText: string, url: string, caption: string | null | undefined) => {
  const title = caption === null || caption === undefined || oneLine(caption) === "" ? "" : ` "${escapeTitle(caption)}"`
  return `![${escapeLinkText(altText)}](${url}${title})`
}

/** Bidirectional controls would let a name read differently from what it is ("gpj.exe" shown as "exe.jpg"). */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * The name an image is offered under: the last path segment of the uploader's filename without quotes, control
 * or bidirectional characters and separators, ending in an extension of the stored format.
 */
export const downloadName = (filename: string, format: ImageFormat): string => {
  const base = oneLine(filename).replace(BIDI, "").split(/[/\\]/).pop()!.replace(/["';:*?<>|]/g, "").trim()
  const dot = base.lastIndexOf(".")
  const stem = (dot > 0 ? base.slice(0, dot) : base).replace(/^\.+/, "").slice(0, 150).trim()
  const extension = dot > 0 ? base.slice(dot + 1).toLowerCase() : ""
  const kept = KNOWN_EXTENSIONS[format].includes(extension) ? extension : EXTENSION[format]
  return `${stem === "" ? "image" : stem}.${kept}`
}

/** RFC 5987 attr-chars stay; everything else is percent-encoded UTF-8. */
const encodeRfc5987 = (text: string) =>
  encodeURIComponent(text).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/**
 * `Content-Disposition: inline; filename="…"` (ASCII only, other characters as `_`), plus RFC 6266 `filename*` with
 * the UTF-8 name when it is not plain ASCII.
 */
export const contentDisposition = (filename: string, format: ImageFormat): string => {
  const name = downloadName(filename, format)
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/%/g, "_")
  return ascii === name
    ? `inline; filename="${name}"`
    : `inline; filename="${ascii}"; filename*=UTF-8''${encodeRfc5987(name)}`
}

/** The path of an image under the service (or artifact) origin. */
export const imagePath = (id: string, format: ImageFormat) => `/images/${id}.${EXTENSION[format]}`

/** The ObjectStore key: by Dock first, so a store without cascades can drop a Dock's objects by prefix. */
export const imageKey = (dockId: string, id: string, format: ImageFormat) =>
  `docks/${dockId}/images/${id}.${EXTENSION[format]}`
