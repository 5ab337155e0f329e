// The pure rules of images: the base64 payload and its exact size bound, the Markdown snippet that nothing can
// break out of (rendered through the same Markdown renderer and sanitizer pages use), the filename a download is
// offered under, and the signatures that alone reach the decoder.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck } from "effect"
import { sanitizeHtml } from "../src/Content/HtmlSanitizer.ts"
import { renderMarkdown } from "../src/Content/MarkdownRender.ts"
import {
  contentDisposition,
  decodeImageBase64,
  downloadName,
  markdownSnippet,
  MAX_IMAGE_BYTES
} from "../src/Images/Image.ts"
import { sniffFormat } from "../src/Images/ImageProcessor.ts"

const URL = "https://dock.example/images/0b8d2c4e-6a43-4c7e-9a51-4b0c1d2e3f40.png"

/** The bytes, or the validation_error's message and details. */
const decode = (text: string) => {
  const exit = Effect.runSyncExit(decodeImageBase64(text))
  if (Exit.isSuccess(exit)) return { bytes: exit.value }
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  return { error: failure }
}

describe("decodeImageBase64", () => {
  it("decodes standard base64, with or without padding", () => {
    expect(decode(Buffer.from("hello").toString("base64")).bytes).toEqual(new Uint8Array(Buffer.from("hello")))
    expect(decode("aGVsbG8").bytes).toEqual(new Uint8Array(Buffer.from("hello")))
  })

  it("drops a data-URL prefix (whatever type it names) and every kind of whitespace", () => {
    const body = Buffer.from("a longer payload that wraps over lines").toString("base64")
    const wrapped = body.match(/.{1,8}/g)!.join("\r\n") + "\n"
    for (
      const text of [
        `data:image/png;base64,${body}`,
        `DATA:image/gif;base64,${wrapped}`,
        ` \t${wrapped}  `,
        `data:;base64,${body}`
      ]
    ) {
      expect(Buffer.from(decode(text).bytes!).toString()).toBe("a longer payload that wraps over lines")
    }
  })

  it("refuses what is not base64 with validation_error", () => {
    for (
      const text of [
        "",
        "   ",
        "data:image/png;base64,",
        "not base64!",
        "abcde",
        "ab=c",
        "a===",
        "-_-_",
        "abc==",
        "%%%%"
      ]
    ) {
      expect(decode(text).error?._tag, text).toBe("ValidationError")
    }
  })

  it("takes exactly 15,000,000 decoded bytes and refuses one more, before decoding", () => {
    const exact = "A".repeat((MAX_IMAGE_BYTES / 3) * 4)
    expect(decode(exact).bytes?.byteLength).toBe(MAX_IMAGE_BYTES)
    const over = "A".repeat((MAX_IMAGE_BYTES / 3) * 4 + 2) + "=="
    const refused = decode(over).error!
    expect(refused._tag).toBe("ValidationError")
    expect(refused.details).toEqual({ field: "image_base64", bytes: MAX_IMAGE_BYTES + 1, max_bytes: MAX_IMAGE_BYTES })
  })
})

/** The Markdown as a page would render it: renderer (every wikilink resolving, so one would show), then the sanitizer. */
const rendered = (markdown: string) =>
  sanitizeHtml(
    renderMarkdown(`Before.\n\n${markdown}\n\nAfter.`, { resolveWikilink: () => ({ href: "/a/linked" }) }).html
  ).html

const decodeEntities = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, entity: string) =>
    entity[0] === "#"
      ? String.fromCodePoint(
        entity[1] === "x" || entity[1] === "X" ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10)
      )
      : ({ amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" } as Record<string, string>)[entity.toLowerCase()]!)

/** The one <img> of the rendered snippet, its attributes decoded; the rest of the document must be the two paragraphs. */
const imageOf = (markdown: string) => {
  const html = rendered(markdown)
  const tags = [...html.matchAll(/<([a-z0-9]+)/gi)].map((match) => match[1]!.toLowerCase())
  expect(tags, html).toEqual(["p", "p", "img", "p"])
  const tag = /<img((?:\s+[a-z-]+="[^"]*")*)\s*\/?>/i.exec(html)
  expect(tag, html).not.toBeNull()
  const attributes = Object.fromEntries(
    [...tag![1]!.matchAll(/([a-z-]+)="([^"]*)"/gi)].map(([, name, value]) => [name, decodeEntities(value!)])
  )
  return { html, attributes }
}

describe("markdownSnippet", () => {
  it("is ![alt](url \"caption\"), or ![alt](url) without a caption", () => {
    expect(markdownSnippet("A red square", URL, "Figure 1")).toBe(`![A red square](${URL} "Figure 1")`)
    expect(markdownSnippet("A red square", URL, null)).toBe(`![A red square](${URL})`)
    expect(markdownSnippet("", URL, "  ")).toBe(`![](${URL})`)
  })

  const hostile = [
    "](javascript:alert(1)) ![x](https://evil.example/x.png",
    "x\"><script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "a\n\n# heading\n\n<script>alert(1)</script>",
    "[[Wiki link]] [ref][1] [^note]\n\n[1]: javascript:alert(1)",
    "`code ]( span`",
    "*em* _em_ ~~del~~ **strong**",
    "&lt;script&gt; &#x3C;b&#x3E; &amp;",
    "back\\slash\\](x) and \\",
    "| cell | cell |",
    "https://autolink.example www.example.com a@b.example",
    "line\rbreak\u2028sep\u0085nel\u0000nul\u001bescape",
    "\"quotes\" 'single' (parens)"
  ]

  it.each(hostile)("renders %j as one image whose alt is the text, nothing more", (text) => {
    const { attributes } = imageOf(markdownSnippet(text, URL, text))
    const expected = text.replace(/[\s\u0085\u2028\u2029]+/g, " ").replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim()
    expect(attributes).toEqual({ src: URL, alt: expected, title: expected })
  })

  it("holds for generated text: one image, the text as alt and title, no other element", () => {
    const characters = FastCheck.constantFrom(..."[]()<>\"'`*_~!&#;:\\/|{}^=+-. \n\tabc<script>javascript:".split(""))
    FastCheck.assert(
      FastCheck.property(FastCheck.array(characters, { maxLength: 40 }).map((chars) => chars.join("")), (text) => {
        const { attributes } = imageOf(markdownSnippet(text, URL, text))
        const expected = text.replace(/\s+/g, " ").trim()
        expect(attributes["src"]).toBe(URL)
        expect(attributes["alt"]).toBe(expected)
        expect(attributes["title"]).toBe(expected === "" ? undefined : expected)
      }),
      { numRuns: 500 }
    )
  })
})

describe("downloadName and contentDisposition", () => {
  it.each(
    [
      ["photo.jpg", "jpeg", "photo.jpg"],
      ["photo.JPEG", "jpeg", "photo.jpeg"],
      ["holiday.png", "jpeg", "holiday.jpg"],
      ["evil.html", "png", "evil.png"],
      ["no-extension", "webp", "no-extension.webp"],
      ["../../etc/passwd", "png", "passwd.png"],
      ["C:\\Users\\ada\\cat.webp", "webp", "cat.webp"],
      ["a\"b\r\nContent-Type: text-html;.png", "png", "ab Content-Type text-html.png"],
      [".hidden", "png", "hidden.png"],
      ["\u202egpj.exe", "jpeg", "gpj.jpg"],
      ["", "png", "image.png"],
      ["///", "png", "image.png"]
    ] as const
  )("%j as %s → %j", (filename, format, expected) => {
    expect(downloadName(filename, format)).toBe(expected)
  })

  it("is inline with a quoted ASCII name, plus filename* (RFC 6266) for any other character", () => {
    expect(contentDisposition("cat.png", "png")).toBe(`inline; filename="cat.png"`)
    expect(contentDisposition("Crème brûlée 🍮.jpg", "jpeg")).toBe(
      `inline; filename="Cr_me br_l_e __.jpg"; filename*=UTF-8''Cr%C3%A8me%20br%C3%BBl%C3%A9e%20%F0%9F%8D%AE.jpg`
    )
    expect(contentDisposition("100% (final)*.png", "png")).toBe(
      `inline; filename="100_ (final).png"; filename*=UTF-8''100%25%20%28final%29.png`
    )
  })
})

describe("sniffFormat", () => {
  it("knows the JPEG, PNG and WebP signatures and nothing else", () => {
    const bytes = (text: string) => new Uint8Array(Buffer.from(text, "latin1"))
    expect(sniffFormat(bytes("\xff\xd8\xff\xe0rest"))).toBe("jpeg")
    expect(sniffFormat(bytes("\x89PNG\r\n\x1a\nrest"))).toBe("png")
    expect(sniffFormat(bytes("RIFF\x10\x00\x00\x00WEBPVP8 "))).toBe("webp")
    for (
      const other of [
        "GIF89a......",
        "<svg xmlns=...>",
        "<!doctype html>",
        "II*\x00tiff....",
        "\x00\x00\x00\x1cftypavif",
        "RIFF....WAVEfmt ",
        ""
      ]
    ) {
      expect(sniffFormat(bytes(other)), other).toBeUndefined()
    }
  })
})
