// Markdown rendering stays bounded on hostile input (the parser is quadratic or worse on some of it): 1 MiB of
// each hostile family renders, with a warning saying what is shown as plain text and the text kept; ordinary
// Markdown renders exactly as one parse of the whole body does. Times are measured by bench/markdown.ts, not here.
import { describe, expect, it } from "@effect/vitest"
import { toHtml } from "hast-util-to-html"
import { fromMarkdown } from "mdast-util-from-markdown"
import { gfmFromMarkdown } from "mdast-util-gfm"
import { toHast } from "mdast-util-to-hast"
import { gfm } from "micromark-extension-gfm"
import { MARKDOWN_CHUNK_CHARS, MARKDOWN_MAX_PARAGRAPH_WEIGHT, scanMarkdown } from "../src/Content/MarkdownChunks.ts"
import { renderMarkdown } from "../src/Content/MarkdownRender.ts"
import { ordinary } from "../src/Content/MarkdownSamples.ts"

const MiB = 1024 * 1024
const render = (body: string) =>
  renderMarkdown(body, { resolveWikilink: (target) => (target === "Known" ? { href: "/a/known" } : undefined) })

const fill = (unit: string, size = MiB) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size)
const numbered = (line: (i: number) => string, size = MiB) => {
  let text = ""
  for (let i = 0; text.length < size; i++) text += line(i)
  return text.slice(0, size)
}

/** What one parse of the whole body gives, for Markdown without wikilinks, raw HTML or unsafe URLs. */
const wholeParse = (body: string) =>
  toHtml(
    toHast(fromMarkdown(body, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }), {
      allowDangerousHtml: true
    }),
    { allowDangerousHtml: true }
  )

describe("renderMarkdown: hostile Markdown", () => {
  const crowded: Record<string, string> = {
    "nested emphasis": fill("*a **a ", MiB / 2) + fill(" a** a*", MiB / 2),
    "unmatched closers": fill("a* "),
    "mismatched openers and closers": fill("*a_ "),
    "rule-of-three closers": "a**b" + fill("c* ").slice(4),
    "nested strikethrough": fill("~~a ~a ", MiB / 2) + fill(" a~ a~~", MiB / 2),
    "a [ flood": fill("["),
    "a] closers": fill("a]"),
    "nested brackets": fill("[", MiB / 2) + fill("]", MiB / 2),
    "[ (]( links": fill("[ (]("),
    "wikilinks in one paragraph": fill("[[x]] "),
    "wikilinks on lines of one paragraph": fill("[[x]]\n"),
    "backtick runs": numbered((i) => "e" + "`".repeat((i % 64) + 1)),
    "unclosed HTML comments": "</" + fill("<!--").slice(2),
    "escapes and entities": fill("\\&amp;&"),
    "footnote references": fill("x[^a] "),
    "one paragraph of many lines": fill("a|b|c\n"),
    "setext headings": fill("a\n=\n"),
    "mixed markers": fill("*a [b _c `d ~e <f ![g [[h &i; \\j |k [^l **m __n ~~o ")
  }

  it.each(Object.entries(crowded))("shows %s as plain text, keeping the text", (_, body) => {
    const rendered = render(body)
    const lines = body.trimEnd().split("\n").length
    expect(rendered.warnings).toEqual([
      `the paragraph at line 1 is too long or has too many emphasis, link or code markers to render (more than ` +
      `${MARKDOWN_MAX_PARAGRAPH_WEIGHT}, counting each marker and each line); ` +
      `${lines === 1 ? "line 1 is" : `lines 1-${lines} are`} shown as plain text`
    ])
    expect(rendered.html.startsWith("<pre><code>")).toBe(true)
    expect(rendered.text).toBe(body.trim())
    expect(rendered.wikilinks).toEqual([])
  })

  const costly: Record<string, { readonly body: string; readonly starts: string }> = {
    "wikilinks in many paragraphs": { body: fill("[[Known]]\n\n"), starts: `<p><a href="/a/known" class="wikilink">` },
    "quotes between blank lines": { body: fill("> a\n\n"), starts: "<blockquote>" },
    "one-letter paragraphs": { body: fill("a\n\n"), starts: "<p>a</p>" },
    "a list of a quarter of a million items": { body: fill("- a\n"), starts: "<pre><code>" },
    "quotes in one long list": { body: fill("- > a\n\n"), starts: "<pre><code>" },
    "a table of 100,000 rows": {
      body: "| a | b |\n|---|---|\n" + fill("| x | y |\n").slice(20),
      starts: "<pre><code>"
    },
    "autolink literals": { body: fill("www.a.b "), starts: "<pre><code>" },
    "footnote definitions": { body: numbered((i) => `[^f${i}]: note\n\n`), starts: "" },
    "lists nested 60 deep": { body: fill("- ".repeat(60) + "a\n"), starts: "<pre><code>" }
  }

  it.each(Object.entries(costly))("renders the start of %s and the rest as plain text", (_, { body, starts }) => {
    const rendered = render(body)
    expect(rendered.warnings).toHaveLength(1)
    expect(rendered.warnings[0]).toMatch(
      /^the Markdown is too long or too complex to render in full; from line \d+ of the body on, it is shown as plain /
    )
    expect(rendered.html.startsWith(starts)).toBe(true)
    expect(rendered.html).toContain("<pre><code>")
    expect(rendered.text.endsWith(body.trim().slice(-1000))).toBe(true)
  })

  it("still shows Markdown nested deeper than the container prefix allows as plain text", () => {
    const rendered = render(fill(">"))
    expect(rendered.warnings).toEqual(["the Markdown is nested too deeply to render; it is shown as plain text"])
    expect(rendered.html.startsWith("<pre>")).toBe(true)
  })

  it("shows only the chunks with a crowded paragraph as plain text", () => {
    const filler = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} with *emphasis*.`).join("\n\n")
    const hostile = "*a ".repeat(MARKDOWN_MAX_PARAGRAPH_WEIGHT)
    const rendered = render(`${filler}\n\n${hostile}\n\n${filler}\n\n${hostile}\n\n${filler}`)
    expect(rendered.html).toContain("<p>Paragraph 0 with <em>emphasis</em>.</p>")
    expect(rendered.html.match(/<pre><code>/g)).toHaveLength(2)
    expect(rendered.html).toContain(`</p>\n<pre><code>${hostile}\n</code></pre>\n<p>Paragraph 0 with`)
    expect(rendered.html.endsWith("<p>Paragraph 39 with <em>emphasis</em>.</p>")).toBe(true)
    expect(rendered.warnings).toHaveLength(1)
    expect(rendered.warnings[0]).toMatch(/^2 paragraphs \(the first at line 81\) are each too long/)
  })
})

describe("renderMarkdown: ordinary Markdown is unaffected", () => {
  it("renders a paragraph at the weight limit, and shows one marker heavier as plain text", () => {
    const atLimit = "a* ".repeat(MARKDOWN_MAX_PARAGRAPH_WEIGHT - 1).trim()
    expect(render(atLimit)).toMatchObject({ html: `<p>${atLimit}</p>`, warnings: [] })
    const over = `${atLimit} a*`
    expect(render(over).html).toBe(`<pre><code>${over}\n</code></pre>`)
  })

  it("links every wikilink of an index paragraph", () => {
    const index = Array.from({ length: 400 }, (_, i) => `[[Known|page ${i}]]`).join(" ")
    const { html, warnings } = render(index)
    expect(warnings).toEqual([])
    expect(html.match(/class="wikilink"/g)).toHaveLength(400)
  })

  it("renders a long document exactly as one parse of the whole body", () => {
    const body = ordinary(256 * 1024, false)
    const rendered = render(body)
    expect(rendered.warnings).toEqual([])
    expect(rendered.html).toBe(wholeParse(body))
  })

  it("resolves references and footnotes to definitions many chunks away", () => {
    const filler = Array.from({ length: 3 * MARKDOWN_CHUNK_CHARS / 64 }, (_, i) => `Filler paragraph number ${i}.`)
    const body = [
      "See [the spec][Spec] and [[Known]], a note[^n] and [undefined] and [spec].",
      ...filler,
      "> [Quoted]: https://example.com/quoted",
      ...filler,
      "Then [quoted] and [[spec]] and [^n].",
      ...filler,
      "[spec]: https://example.com/spec \"The spec\"",
      "[^n]: The note."
    ].join("\n\n")
    const { html, warnings, wikilinks } = render(body)
    expect(warnings).toEqual([])
    expect(html).toContain(
      `<p>See <a href="https://example.com/spec" title="The spec">the spec</a> and ` +
        `<a href="/a/known" class="wikilink">Known</a>, a note<sup><a href="#user-content-fn-n" ` +
        `id="user-content-fnref-n" data-footnote-ref aria-describedby="footnote-label">1</a></sup> and ` +
        `[undefined] and <a href="https://example.com/spec" title="The spec">spec</a>.</p>`
    )
    // A definition wins over a wikilink with the same label, as in one parse.
    expect(html).toContain(
      `<p>Then <a href="https://example.com/quoted">quoted</a> and [<a href="https://example.com/spec" ` +
        `title="The spec">spec</a>] and <sup><a href="#user-content-fn-n" id="user-content-fnref-n-2" ` +
        `data-footnote-ref aria-describedby="footnote-label">1</a></sup>.</p>`
    )
    expect(html).toContain(`<li id="user-content-fn-n">`)
    expect(wikilinks).toEqual([{ target: "Known", label: undefined }])
    const plain = body.replace("[[Known]]", "Known")
    expect(render(plain).html).toBe(wholeParse(plain))
  })

  it("keeps fenced code, HTML blocks and lists whole where they run over blank lines", () => {
    const filler = Array.from({ length: MARKDOWN_CHUNK_CHARS / 16 }, () => "text\n\nx").join("\n\n")
    const body = [
      "```",
      filler,
      "```",
      "",
      "- item",
      "",
      "  ```",
      "  code in the item",
      "",
      filler,
      "",
      "```",
      filler,
      "```",
      "",
      "<!--",
      filler,
      "-->",
      "",
      "after"
    ].join("\n")
    const { html } = render(body)
    expect(html).toBe(wholeParse(body))
    expect(html.endsWith("<p>after</p>")).toBe(true)
  })

  it("cuts no chunk inside an HTML block or fenced code whose lines start with letters", () => {
    // The chunk size is reached inside each block, at a blank line followed by a line of letters (the lines the scan
    // reads fastest): a cut there would parse the rest of the block as paragraphs.
    const paragraphs: Array<string> = []
    while (paragraphs.join("\n\n").length < MARKDOWN_CHUNK_CHARS - 100) paragraphs.push(`Filler ${paragraphs.length}.`)
    const filler = paragraphs.join("\n\n")
    const inside = Array.from({ length: 20 }, (_, i) => `letters ${i} of the block`).join("\n\n")
    for (const [open, close] of [["<!--", "-->"], ["<pre>", "</pre>"], ["```", "```"]] as const) {
      const body = [filler, "", open, inside, close, "", "after"].join("\n")
      const start = body.indexOf(`\n${open}\n`)
      const end = body.indexOf(`\n${close}\n`, start + open.length + 2)
      expect(scanMarkdown(body).chunks.filter((chunk) => chunk.start > start && chunk.start <= end)).toEqual([])
      expect(render(body).html).toBe(wholeParse(body))
    }
  })

  it("renders 1 MiB of ordinary Markdown in full", () => {
    const body = ordinary(MiB)
    const rendered = render(body)
    expect(rendered.warnings).toEqual([])
    expect(rendered.html).not.toContain("<pre><code>text")
    expect(rendered.text.endsWith("Note two.")).toBe(true)
    expect(rendered.wikilinks.length).toBeGreaterThan(10)
  })
})
