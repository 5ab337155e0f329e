// GFM task lists and footnotes through the whole Markdown pipeline: renderMarkdown (mdast → hast → HTML), then the
// one HTML sanitizer, as Prepare and the reads run it. The checkboxes and the footnote anchors, links and
// attributes must come out whole and without sanitization warnings; the same allowances must not let any other
// form control, id or attribute through, whether it arrives as raw HTML inside Markdown or as a pushed HTML page.
import { describe, expect, it } from "@effect/vitest"
import { sanitizeHtml } from "../src/Content/HtmlSanitizer.ts"
import { renderMarkdown } from "../src/Content/MarkdownRender.ts"

const REL = `rel="noopener noreferrer nofollow ugc"`

/** Renders and sanitizes, checking on the way that sanitizing the result again changes nothing. */
const pipeline = (markdown: string) => {
  const rendered = renderMarkdown(markdown, { resolveWikilink: () => undefined })
  const sanitized = sanitizeHtml(rendered.html)
  const again = sanitizeHtml(sanitized.html)
  expect(again.html).toBe(sanitized.html)
  expect(again.warnings).toEqual([])
  return { html: sanitized.html, renderWarnings: rendered.warnings, warnings: sanitized.warnings }
}

describe("GFM task lists", () => {
  it("keep their disabled checkboxes, checked and unchecked, and their classes", () => {
    const result = pipeline("- [ ] todo\n- [x] done\n- [X] also done\n- plain item\n")
    expect(result.html).toBe(
      [
        `<ul class="contains-task-list">`,
        `<li class="task-list-item"><input type="checkbox" disabled /> todo</li>`,
        `<li class="task-list-item"><input type="checkbox" checked disabled /> done</li>`,
        `<li class="task-list-item"><input type="checkbox" checked disabled /> also done</li>`,
        `<li>plain item</li>`,
        `</ul>`
      ].join("\n")
    )
    expect(result.warnings).toEqual([])
    expect(result.renderWarnings).toEqual([])
  })

  it("nested and ordered task lists keep theirs too", () => {
    const result = pipeline("1. [x] first\n   - [ ] nested\n")
    expect(result.html).toBe(
      [
        `<ol class="contains-task-list">`,
        `<li class="task-list-item"><input type="checkbox" checked disabled /> first`,
        `<ul class="contains-task-list">`,
        `<li class="task-list-item"><input type="checkbox" disabled /> nested</li>`,
        `</ul>`,
        `</li>`,
        `</ol>`
      ].join("\n")
    )
    expect(result.warnings).toEqual([])
  })
})

describe("GFM footnotes", () => {
  it("keep their anchors, fragment links, data-footnote and aria attributes", () => {
    const result = pipeline("Text[^1] and more[^note].\n\n[^1]: First.\n[^note]: Second with *em*.\n")
    expect(result.html).toBe(
      [
        `<p>Text<sup><a href="#user-content-fn-1" id="user-content-fnref-1" data-footnote-ref ` +
        `aria-describedby="footnote-label" ${REL}>1</a></sup> and more<sup><a href="#user-content-fn-note" ` +
        `id="user-content-fnref-note" data-footnote-ref aria-describedby="footnote-label" ${REL}>2</a></sup>.</p>`,
        `<section data-footnotes class="footnotes"><h2 class="sr-only" id="footnote-label">Footnotes</h2>`,
        `<ol>`,
        `<li id="user-content-fn-1">`,
        `<p>First. <a href="#user-content-fnref-1" data-footnote-backref aria-label="Back to reference 1" ` +
        `class="data-footnote-backref" ${REL}>↩</a></p>`,
        `</li>`,
        `<li id="user-content-fn-note">`,
        `<p>Second with <em>em</em>. <a href="#user-content-fnref-note" data-footnote-backref ` +
        `aria-label="Back to reference 2" class="data-footnote-backref" ${REL}>↩</a></p>`,
        `</li>`,
        `</ol>`,
        `</section>`
      ].join("\n")
    )
    expect(result.warnings).toEqual([])
    expect(result.renderWarnings).toEqual([])
  })

  it("every reference still finds its note, and every note its reference, for labels of any characters", () => {
    const result = pipeline(
      "a[^é] b[^1.2] c[^x:y] d[^a'b] e[^<q>] f[^1] g[^1]\n\n" +
        "[^é]: E\n[^1.2]: N\n[^x:y]: X\n[^a'b]: Z\n[^<q>]: Q\n[^1]: O\n"
    )
    expect(result.warnings).toEqual([])
    const ids = new Set([...result.html.matchAll(/ id="([^"]*)"/g)].map(([, id]) => id))
    const targets = [...result.html.matchAll(/ href="#([^"]*)"/g)].map(([, target]) => target)
    expect(targets.length).toBe(14) // 7 references, 7 back-references
    for (const target of targets) expect(ids).toContain(target)
  })
})

// What Markdown cannot produce and a page cannot keep. Raw HTML inside Markdown meets the same sanitizer as a pushed
// HTML page (a line that is only a tag is an HTML block; a tag followed by text is inline HTML, inside a paragraph),
// which keeps only what it keeps of any page.
interface Hostile {
  readonly name: string
  readonly html: string
  /** Whether Markdown reads the HTML as inline HTML (inside a paragraph) rather than as an HTML block. */
  readonly inline?: boolean
  readonly sanitized: string
  readonly warnings: ReadonlyArray<string>
}

const hostile: ReadonlyArray<Hostile> = [
  {
    name: "a text field",
    html: `<p>Name: <input type=text name=user value=admin></p>`,
    sanitized: `<p>Name: </p>`,
    warnings: ["removed <input> element (only disabled checkboxes, as in task lists, are kept)"]
  },
  {
    name: "a checkbox that is not disabled",
    html: `<ul><li><input type=checkbox checked> agree</li></ul>`,
    sanitized: `<ul><li> agree</li></ul>`,
    warnings: ["removed <input> element (only disabled checkboxes, as in task lists, are kept)"]
  },
  {
    name: "a disabled checkbox with an event handler",
    html: `<ul><li><input type=checkbox disabled onclick="alert(1)"> x</li></ul>`,
    sanitized: `<ul><li><input type="checkbox" disabled /> x</li></ul>`,
    warnings: ["removed event handler attribute onclick"]
  },
  {
    name: "an id that could clobber a global (prefixed, so it cannot)",
    html: `<div id="login">x</div>`,
    sanitized: `<div id="user-content-login">x</div>`,
    warnings: []
  },
  {
    name: "a link with a plain id and a name",
    html: `<a id="x" name="y" href="#user-content-fn-1">x</a>`,
    inline: true,
    sanitized: `<a id="user-content-x" href="#user-content-fn-1" ${REL}>x</a>`,
    warnings: ["removed attribute name from <a>"]
  }
]

describe("what is not allowed is stripped", () => {
  for (const { html, inline, name, sanitized, warnings } of hostile) {
    it(`${name}: raw HTML in Markdown meets the same sanitizer`, () => {
      const result = pipeline(`Before\n\n${html}\n\nAfter\n`)
      expect(result.html).toBe(`<p>Before</p>\n${inline === true ? `<p>${sanitized}</p>` : sanitized}\n<p>After</p>`)
      expect(result.renderWarnings).toEqual([])
      expect(result.warnings).toEqual(warnings)
    })

    it(`${name}: as HTML, the sanitizer removes it and says so`, () => {
      const result = sanitizeHtml(html)
      expect(result.html).toBe(sanitized)
      expect(result.warnings).toEqual(warnings)
      expect(sanitizeHtml(result.html)).toEqual({ html: sanitized, warnings: [] })
    })
  }

  it("inline raw HTML among task items and footnotes meets the sanitizer too", () => {
    const result = pipeline(
      `- [ ] a <input type=text> b\n\nx[^1] <span id="login">y</span>\n\n[^1]: n <a id=x name=y>z</a>\n`
    )
    expect(result.html).not.toMatch(/type="text"| id="login"| id="x"|name=/)
    expect(result.html).toContain(`<input type="checkbox" disabled /> a  b`)
    expect(result.html).toContain(`<span id="user-content-login">y</span>`)
    expect(result.renderWarnings).toEqual([])
    expect(result.warnings).toEqual([
      "removed <input> element (only disabled checkboxes, as in task lists, are kept)",
      "removed attribute name from <a>"
    ])
  })
})
