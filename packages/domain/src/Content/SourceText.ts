/**
 * The text a source keeps of what an operator adds (its fields are checked by Sources/SourceFields.ts): the size
 * bounded and the text extracted. Plain text is kept as is; Markdown loses its front matter and stays Markdown;
 * HTML goes through the one sanitizer and becomes text with its blocks on their own lines. Pure apart from failing.
 * Run in a content worker (ContentJobs.ts).
 */
import { Effect } from "effect"
import { type InvalidFrontMatter, ValidationError } from "../Errors.ts"
import { SOURCE_CONTENT_MAX_BYTES, type SourceMediaType } from "../Sources/Source.ts"
import { splitFrontMatter } from "./FrontMatter.ts"
import { htmlToText, sanitizeHtml } from "./HtmlSanitizer.ts"
import { noNul, utf8Bytes } from "./Text.ts"

export interface ExtractedText {
  readonly text: string
  /** A title the content itself gives (Markdown front matter `title`), if any. */
  readonly title: string | undefined
}

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
