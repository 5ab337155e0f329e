// What a source keeps of what the operator adds: plain text as is, Markdown without its front matter, HTML
// through the one sanitizer as text with its block structure on separate lines (never script or style content),
// the supported media types, the size bound, titles and origins, and the extension table of `dock sources add`.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { extractSourceText } from "../src/Content/SourceText.ts"
import { SOURCE_CONTENT_MAX_BYTES, SOURCE_TITLE_MAX } from "../src/Sources/Source.ts"
import {
  fileNameOf,
  mediaTypeForFileName,
  sourceMediaType,
  sourceOrigin,
  sourceTitle
} from "../src/Sources/SourceFields.ts"

const text = (mediaType: "text/plain" | "text/markdown" | "text/html", content: string) =>
  Effect.map(extractSourceText(mediaType, content), (extracted) => extracted.text)

/** The failure's code, message and details. */
const failure = <A, E extends { code: string; message: string; details?: unknown }>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    if (Exit.isSuccess(exit)) return expect.fail(`expected a failure, got ${JSON.stringify(exit.value)}`)
    const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    if (error === undefined) return expect.fail(`expected a failure, got ${String(exit.cause)}`)
    return { code: error.code, message: error.message, details: error.details }
  })

describe("source text: HTML", () => {
  it.effect("block structure becomes line breaks: headings and paragraphs apart, list items and rows on their own lines", () =>
    Effect.gen(function*() {
      const html = [
        "<!doctype html><html><head><title>Ignored title</title></head><body>",
        "<h1>Tide tables</h1>",
        "<p>The tide   turns\n twice a <em>day</em>.</p>",
        "<ul><li>High water</li><li>Low water</li></ul>",
        "<div>First line<br>Second line</div>",
        "<table><tr><th>Port</th><th>Time</th></tr><tr><td>Dover</td><td>06:10</td></tr></table>",
        "<pre>keep   this\n  spacing</pre>",
        "</body></html>"
      ].join("")
      expect(yield* text("text/html", html)).toBe(
        [
          "Tide tables",
          "",
          "The tide turns twice a day.",
          "",
          "High water",
          "Low water",
          "",
          "First line",
          "Second line",
          "",
          "Port\tTime",
          "Dover\t06:10",
          "",
          "keep   this",
          "  spacing"
        ].join("\n")
      )
    }))

  it.effect("script, style and other non-text content never reach the text, in any casing or nesting", () =>
    Effect.gen(function*() {
      const html = [
        "<p>Before</p>",
        "<script>alert('SCRIPT-1')</script>",
        "<SCRIPT type=module>fetch('SCRIPT-2')</SCRIPT>",
        "<style>body { color: red } /* STYLE-1 */</style>",
        "<div><style>.x{}/* STYLE-2 */</style>Inside</div>",
        "<noscript>NOSCRIPT</noscript><template>TEMPLATE</template><textarea>TEXTAREA</textarea>",
        "<svg><script>SVG-SCRIPT</script><text>SVG-TEXT</text></svg>",
        "<iframe srcdoc=\"<p>FRAME</p>\">IFRAME</iframe>",
        "<p onclick=\"EVENT-HANDLER\">After <a href=\"javascript:alert(1)\">link</a></p>"
      ].join("\n")
      const extracted = yield* text("text/html", html)
      expect(extracted).toBe("Before\n\nInside\n\nAfter link")
      for (
        const marker of [
          "SCRIPT",
          "STYLE",
          "NOSCRIPT",
          "TEMPLATE",
          "TEXTAREA",
          "SVG",
          "FRAME",
          "EVENT",
          "alert",
          "javascript"
        ]
      ) {
        expect(extracted).not.toContain(marker)
      }
    }))

  it.effect("entities are decoded into text; the text is not HTML any more", () =>
    Effect.gen(function*() {
      expect(yield* text("text/html", "<p>Fish &amp; chips &lt;b&gt; &quot;fresh&quot; &#8212; caf&eacute;</p>"))
        .toBe(`Fish & chips <b> "fresh" — café`)
    }))

  it.effect("HTML that is all script or style has no text and is refused", () =>
    Effect.gen(function*() {
      expect(yield* failure(extractSourceText("text/html", "<script>x()</script><style>p{}</style>"))).toMatchObject({
        code: "validation_error",
        details: { field: "content" }
      })
    }))
})

describe("source text: Markdown", () => {
  it.effect("front matter is dropped and the Markdown is kept as written; its title is offered", () =>
    Effect.gen(function*() {
      const markdown =
        "---\ntitle: Harbour guide\nsecret_key: FRONT-MATTER-ONLY\ntags: [a]\n---\n\n# Harbour\n\nBoats *leave* at dawn.\n"
      const extracted = yield* extractSourceText("text/markdown", markdown)
      expect(extracted.text).toBe("# Harbour\n\nBoats *leave* at dawn.\n")
      expect(extracted.text).not.toContain("FRONT-MATTER-ONLY")
      expect(extracted.title).toBe("Harbour guide")
    }))

  it.effect("Markdown without front matter is kept whole; a byte-order mark is dropped", () =>
    Effect.gen(function*() {
      expect(yield* extractSourceText("text/markdown", "\uFEFF# Notes\n\n- one\n- two\n")).toEqual({
        text: "# Notes\n\n- one\n- two\n",
        title: undefined
      })
    }))

  it.effect("bad front matter is invalid_front_matter, as for pages; a document of front matter only has no text", () =>
    Effect.gen(function*() {
      expect((yield* failure(extractSourceText("text/markdown", "---\ntitle: [unclosed\n---\nBody\n"))).code)
        .toBe("invalid_front_matter")
      expect((yield* failure(extractSourceText("text/markdown", "---js\nmodule.exports = {}\n---\nBody\n"))).code)
        .toBe("invalid_front_matter")
      expect(yield* failure(extractSourceText("text/markdown", "---\ntitle: Only\n---\n\n"))).toMatchObject({
        code: "validation_error",
        message: "content has no text"
      })
    }))
})

describe("source text: plain text", () => {
  it.effect("is kept exactly as given (line endings and spacing included)", () =>
    Effect.gen(function*() {
      const plain = "  Line one\r\nLine two\t<b>not markup</b>\n\n---\ntitle: not front matter\n---\n"
      expect(yield* text("text/plain", plain)).toBe(plain)
    }))

  it.effect("empty or blank text, and text with a NUL character, are refused", () =>
    Effect.gen(function*() {
      expect((yield* failure(extractSourceText("text/plain", ""))).message).toBe("content has no text")
      expect((yield* failure(extractSourceText("text/plain", " \n\t "))).code).toBe("validation_error")
      expect(yield* failure(extractSourceText("text/plain", "a\u0000b"))).toMatchObject({
        code: "validation_error",
        details: { field: "content" }
      })
    }))

  it.effect("5 MiB of UTF-8 is accepted; one byte more is refused naming the limit", () =>
    Effect.gen(function*() {
      const exact = "é".repeat(SOURCE_CONTENT_MAX_BYTES / 2)
      expect((yield* text("text/plain", exact)).length).toBe(SOURCE_CONTENT_MAX_BYTES / 2)
      expect(yield* failure(extractSourceText("text/plain", `${exact}x`))).toEqual({
        code: "validation_error",
        message: `content is ${
          SOURCE_CONTENT_MAX_BYTES + 1
        } bytes of UTF-8; a source is at most ${SOURCE_CONTENT_MAX_BYTES} (5 MiB)`,
        details: { field: "content", bytes: SOURCE_CONTENT_MAX_BYTES + 1, limit: SOURCE_CONTENT_MAX_BYTES }
      })
    }))
})

describe("source media types", () => {
  it.effect("the three types, in any case, with parameters, and the Markdown aliases", () =>
    Effect.gen(function*() {
      expect(yield* sourceMediaType("text/plain")).toBe("text/plain")
      expect(yield* sourceMediaType("Text/HTML; charset=UTF-8")).toBe("text/html")
      expect(yield* sourceMediaType(" text/markdown ")).toBe("text/markdown")
      expect(yield* sourceMediaType("text/x-markdown")).toBe("text/markdown")
    }))

  it.effect("anything else is validation_error naming the supported types", () =>
    Effect.gen(function*() {
      for (const given of ["application/pdf", "image/png", "text/csv", "application/xhtml+xml", ""]) {
        expect(yield* failure(sourceMediaType(given))).toEqual({
          code: "validation_error",
          message: `media_type "${given}" is not supported: a source is text/plain, text/markdown or text/html`,
          details: { field: "media_type", value: given, supported: ["text/plain", "text/markdown", "text/html"] }
        })
      }
    }))

  it("the extension table of `dock sources add`", () => {
    expect(mediaTypeForFileName("notes.txt")).toBe("text/plain")
    expect(mediaTypeForFileName("README.TEXT")).toBe("text/plain")
    expect(mediaTypeForFileName("guide.md")).toBe("text/markdown")
    expect(mediaTypeForFileName("guide.Markdown")).toBe("text/markdown")
    expect(mediaTypeForFileName("page.html")).toBe("text/html")
    expect(mediaTypeForFileName("page.htm")).toBe("text/html")
    expect(mediaTypeForFileName("paper.pdf")).toBeUndefined()
    expect(mediaTypeForFileName("Makefile")).toBeUndefined()
    expect(mediaTypeForFileName(".md")).toBeUndefined()
  })
})

describe("source titles and origins", () => {
  it.effect("the title given wins, then the content's own, then the file name the origin ends with", () =>
    Effect.gen(function*() {
      expect(yield* sourceTitle("  Given  ", "From front matter", "a.md")).toBe("Given")
      expect(yield* sourceTitle(undefined, "From front matter", "a.md")).toBe("From front matter")
      expect(yield* sourceTitle("   ", undefined, "reports/q3.md")).toBe("q3.md")
      expect(yield* sourceTitle(undefined, undefined, "https://example.com/docs/Tide%20Guide.html?x=1#top")).toBe(
        "Tide Guide.html"
      )
      expect(yield* sourceTitle(undefined, undefined, "https://example.com/")).toBe("example.com")
      expect(yield* sourceTitle(undefined, undefined, "C:\\notes\\harbour.txt")).toBe("harbour.txt")
      expect((yield* sourceTitle(undefined, undefined, `${"x".repeat(400)}.txt`)).length).toBe(SOURCE_TITLE_MAX)
    }))

  it.effect("a given title over 300 characters or with a NUL is refused", () =>
    Effect.gen(function*() {
      expect(yield* sourceTitle("t".repeat(SOURCE_TITLE_MAX), undefined, "a.txt")).toHaveLength(SOURCE_TITLE_MAX)
      expect(yield* failure(sourceTitle("t".repeat(SOURCE_TITLE_MAX + 1), undefined, "a.txt"))).toMatchObject({
        code: "validation_error",
        details: { field: "title", limit: SOURCE_TITLE_MAX }
      })
      expect((yield* failure(sourceTitle("a\u0000b", undefined, "a.txt"))).code).toBe("validation_error")
    }))

  it.effect("an origin is kept as given (trimmed), 1-2048 characters", () =>
    Effect.gen(function*() {
      expect(yield* sourceOrigin("  https://example.com/a?b=c  ")).toBe("https://example.com/a?b=c")
      for (const bad of ["", "   ", "o".repeat(2049), "a\u0000"]) {
        expect((yield* failure(sourceOrigin(bad))).details).toMatchObject({ field: "origin" })
      }
      expect(fileNameOf("mailto:someone@example.com")).toBe("mailto:someone@example.com")
    }))
})
