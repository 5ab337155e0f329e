// Markdown documents: YAML front matter as inert, bounded data (no other languages, no alias bombs, no
// prototype pollution), the known page fields, and the rendered body (GFM, wikilinks, no raw HTML, no
// script-capable URLs), plus the plain text and summary derived from it.
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { FRONT_MATTER_MAX_BYTES, splitFrontMatter } from "../src/Content/FrontMatter.ts"
import { sanitizeHtml } from "../src/Content/HtmlSanitizer.ts"
import { isSafeUrl, renderMarkdown } from "../src/Content/MarkdownRender.ts"
import { FIELD_ITEM_MAX_CHARS, FIELD_LIST_MAX_ITEMS, pageFields } from "../src/Content/PageFields.ts"
import { collapseWhitespace, deriveSummary } from "../src/Content/Text.ts"
import { wikilinkParts } from "../src/Pages/Links.ts"

const split = (source: string, required = true) => splitFrontMatter(source, { required })
const splitError = (source: string, required = true) => Effect.flip(split(source, required))
const fieldsOf = (yaml: string) =>
  Effect.flatMap(split(`---\n${yaml}\n---\nbody`), ({ frontMatter }) => pageFields(frontMatter))
const fieldsError = (yaml: string) => Effect.flip(fieldsOf(yaml))

const pages: Record<string, string> = {
  Known: "/a/known",
  "known-slug": "/a/known-slug",
  "alice/notes/plan": "/a/alice-notes-plan"
}
const render = (body: string) => renderMarkdown(body, { resolveWikilink: (target) => pageHref(target) })
const pageHref = (target: string) => {
  const href = pages[target]
  return href === undefined ? undefined : { href }
}

/** Every href/src value in the HTML, with character references decoded the way a browser would. */
const urlAttributes = (html: string): Array<string> =>
  [...html.matchAll(/\s(?:href|src)="([^"]*)"/gi)].map(([, value]) =>
    value!
      .replace(/&#x([0-9a-f]+);?/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
      .replace(/&#(\d+);?/g, (_, dec: string) => String.fromCodePoint(parseInt(dec, 10)))
      .replace(/&amp;/g, "&")
  )
const scriptCapable = (url: string) =>
  /^(?:javascript|vbscript|data):/i.test(url.replace(/[\u0000-\u0020\u007f-\u009f]/g, "")) &&
  !/^data:image\/(?:png|jpeg|gif|webp)/i.test(url)
/** Attribute names of every tag once quoted values are removed: what a browser would see as attributes. */
const attributeNames = (html: string): Array<string> =>
  [...html.replace(/"[^"]*"/g, "\"\"").matchAll(/<[a-z0-9]+((?:\s+[^\s=>]+(?:="")?)*)\s*\/?>/gi)].flatMap((
    [, attributes]
  ) => [...(attributes ?? "").matchAll(/([^\s=]+)(?:="")?/g)].map(([, name]) => name!.toLowerCase()))

describe("splitFrontMatter", () => {
  it.effect("splits YAML front matter from the body", () =>
    Effect.gen(function*() {
      const result = yield* split("---\ntitle: Hello\ntags: [a, b]\n---\n# Body\n\ntext\n")
      expect(result.frontMatter).toEqual({ title: "Hello", tags: ["a", "b"] })
      expect(result.body).toBe("# Body\n\ntext\n")
    }))

  it.effect("accepts a BOM, CRLF line endings and `...` as the closing line", () =>
    Effect.gen(function*() {
      const result = yield* split("\uFEFF---\r\ntitle: Hello\r\n...\r\nbody")
      expect(result.frontMatter).toEqual({ title: "Hello" })
      expect(result.body).toBe("body")
      expect((yield* split("---\ntitle: x\n---")).body).toBe("")
    }))

  it.effect("treats empty, comment-only and null front matter as no fields", () =>
    Effect.gen(function*() {
      expect((yield* split("---\n---\nbody")).frontMatter).toEqual({})
      expect((yield* split("---\n# just a comment\n---\nbody")).frontMatter).toEqual({})
      expect((yield* split("---\n~\n---\nbody")).frontMatter).toEqual({})
    }))

  it.effect("optional front matter: a document without it is all body", () =>
    Effect.gen(function*() {
      const source = "# Title\n\n---\n\ntext"
      expect(yield* split(source, false)).toEqual({ frontMatter: {}, body: source })
      // Front matter must open the document: a blank line first makes `---` a thematic break.
      expect(yield* split("\n---\ntitle: x\n---\n", false)).toEqual({
        frontMatter: {},
        body: "\n---\ntitle: x\n---\n"
      })
    }))

  it.effect("required front matter: a document without it is invalid_front_matter", () =>
    Effect.gen(function*() {
      for (const source of ["# Title\n\ntext", "", "\n---\ntitle: x\n---\n", " ---\ntitle: x\n---\n"]) {
        const error = yield* splitError(source)
        expect(error._tag).toBe("InvalidFrontMatter")
        expect(error.code).toBe("invalid_front_matter")
      }
    }))

  it.effect("rejects front matter in another language, required or not", () =>
    Effect.gen(function*() {
      for (const fence of ["---js", "---json", "---toml", "--- yaml", "---javascript", "+++"]) {
        for (const required of [true, false]) {
          const error = yield* splitError(
            `${fence}\n{ "title": "x" }\n${fence === "+++" ? "+++" : "---"}\nbody`,
            required
          )
          expect(error.code).toBe("invalid_front_matter")
          expect(error.message).toContain("must be YAML")
        }
      }
    }))

  it.effect("rejects front matter that is never closed", () =>
    Effect.gen(function*() {
      const error = yield* splitError("---\ntitle: x\n\n# Body")
      expect(error.code).toBe("invalid_front_matter")
      expect(error.message).toContain("not closed")
    }))

  it.effect("reports malformed YAML with its line in the document", () =>
    Effect.gen(function*() {
      const error = yield* splitError("---\ntitle: ok\nbad: [1, 2\nnext: 3\n---\nbody")
      expect(error.code).toBe("invalid_front_matter")
      expect(error.details).toMatchObject({ line: 4 })
      expect(error.message).toMatch(/line 4/)
      const indent = yield* splitError("---\na: 1\n  b: 2\n---\n")
      expect(indent.code).toBe("invalid_front_matter")
      expect((indent.details as { line: number }).line).toBeGreaterThanOrEqual(2)
    }))

  it.effect("rejects duplicate keys, custom tags and directives", () =>
    Effect.gen(function*() {
      const duplicate = yield* splitError("---\ntitle: a\ntitle: b\n---\n")
      expect(duplicate.code).toBe("invalid_front_matter")
      expect(duplicate.details).toMatchObject({ key: "title", line: 3 })
      const tags = [
        "run: !!js/function 'function() {}'",
        "x: !custom value",
        "d: !!timestamp 2024-01-01",
        "b: !!binary aGVsbG8=",
        "s: !!set {a, b}",
        "o: !!omap [a: 1]"
      ]
      for (const yaml of tags) {
        expect((yield* splitError(`---\n${yaml}\n---\n`)).code).toBe("invalid_front_matter")
      }
      expect((yield* splitError("---\n%YAML 1.1\n---\nbody")).code).toBe("invalid_front_matter")
    }))

  it.effect("rejects collection keys", () =>
    Effect.gen(function*() {
      expect((yield* splitError("---\n? [a, b]\n: c\n---\n")).code).toBe("invalid_front_matter")
      expect((yield* splitError("---\n{a: 1}: x\n---\n")).code).toBe("invalid_front_matter")
    }))

  it.effect("caps front matter at 64 KiB of UTF-8", () =>
    Effect.gen(function*() {
      const line = (i: number) => `key${i}: ${"v".repeat(50)}\n`
      let fits = ""
      for (let i = 0; (fits + line(i)).length <= FRONT_MATTER_MAX_BYTES; i++) fits += line(i)
      expect((yield* split(`---\n${fits}---\nbody`)).body).toBe("body")

      const tooBig = yield* splitError(`---\n${fits}${"x: 1\n".repeat(20)}---\nbody`)
      expect(tooBig.code).toBe("invalid_front_matter")
      expect(tooBig.message).toContain(`${FRONT_MATTER_MAX_BYTES} bytes`)
      // Counted in bytes: 40,000 two-byte characters are 80,000 bytes.
      const wide = yield* splitError(`---\ntitle: "${"é".repeat(40_000)}"\n---\n`)
      expect(wide.code).toBe("invalid_front_matter")
      // Unclosed and huge: refused as too large without scanning the whole document.
      expect((yield* splitError(`---\n${"a: b\n".repeat(200_000)}`)).message).toContain("bytes")
    }))

  it.effect("rejects an alias bomb quickly", () =>
    Effect.gen(function*() {
      const levels = "bcdefghi".split("")
      let yaml = `a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n`
      let previous = "a"
      for (const name of levels) {
        yaml += `${name}: &${name} [${Array(9).fill(`*${previous}`).join(", ")}]\n`
        previous = name
      }
      const started = performance.now()
      const error = yield* splitError(`---\n${yaml}---\nbody`)
      expect(performance.now() - started).toBeLessThan(1_000)
      expect(error.code).toBe("invalid_front_matter")
      expect(error.message).toContain("alias")
      // Ordinary anchors and aliases still work.
      expect((yield* split("---\nbase: &b {x: 1}\ncopy: *b\n---\n")).frontMatter).toEqual({
        base: { x: 1 },
        copy: { x: 1 }
      })
    }))

  it.effect("rejects a self-referencing alias and pathological nesting quickly", () =>
    Effect.gen(function*() {
      expect((yield* splitError("---\na: &a [*a]\n---\n")).code).toBe("invalid_front_matter")
      for (
        const yaml of [
          `a: ${"[".repeat(60_000)}`,
          `a: ${"{".repeat(60_000)}`,
          `a: ${"[{".repeat(30_000)}`,
          "- ".repeat(30_000) + "x",
          "? ".repeat(30_000) + "x",
          Array.from({ length: 100 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n")
        ]
      ) {
        const started = performance.now()
        const error = yield* splitError(`---\n${yaml}\n---\n`)
        expect(performance.now() - started).toBeLessThan(2_000)
        expect(error.code).toBe("invalid_front_matter")
      }
    }))

  it.effect("cannot pollute prototypes: __proto__, constructor and prototype keys are refused anywhere", () =>
    Effect.gen(function*() {
      const attempts = [
        "__proto__: {polluted: true}",
        "\"__proto__\": {polluted: true}",
        "a:\n  __proto__:\n    polluted: true",
        "list:\n  - __proto__: {polluted: true}",
        "constructor: {prototype: {polluted: true}}",
        "x: {prototype: {polluted: true}}",
        "base: &b {polluted: true}\n__proto__: *b"
      ]
      for (const yaml of attempts) {
        const error = yield* splitError(`---\n${yaml}\n---\nbody`)
        expect(error.code).toBe("invalid_front_matter")
        expect(error.details).toHaveProperty("key")
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(Object.prototype).not.toHaveProperty("polluted")
      expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted")
    }))

  it.effect("refuses an unpaired surrogate escape in a value or key, naming where (no UTF-8 text can hold it)", () =>
    Effect.gen(function*() {
      for (
        const [yaml, path, line] of [
          ["title: \"\\ud800\"", "title", 2],
          ["summary: ok\ntags: [a, \"b\\udc00c\"]", "tags[1]", 3],
          ["meta:\n  note: \"x\\udbff\"", "meta.note", 3],
          ["\"k\\ud800\": 1", "k\uFFFD", 2]
        ] as const
      ) {
        const error = yield* splitError(`---\n${yaml}\n---\nbody`)
        expect(error.code, yaml).toBe("invalid_front_matter")
        expect(error.details, yaml).toEqual({ path, line })
        expect(error.message).toContain("not valid Unicode")
      }
      // an escaped pair is one character, and fine
      expect((yield* split("---\ntitle: \"\\ud83d\\ude80\"\n---\nbody")).frontMatter).toEqual({ title: "\u{1F680}" })
    }))

  it.effect("requires a mapping at the top level", () =>
    Effect.gen(function*() {
      for (const yaml of ["- a\n- b", "just a string", "42", "[1, 2]"]) {
        const error = yield* splitError(`---\n${yaml}\n---\nbody`)
        expect(error.code).toBe("invalid_front_matter")
        expect(error.message).toContain("mapping")
      }
    }))

  it.effect("returns plain JSON-safe data: core schema only, dates stay strings, no special numbers", () =>
    Effect.gen(function*() {
      const { frontMatter } = yield* split(
        "---\ndate: 2024-01-01\nwhen: 2024-01-01T10:00:00Z\nyes: yes\non: true\noctal: 0o17\n" +
          "inf: .inf\nnan: .nan\nnested: {list: [1, 2.5, null, ~, \"s\"]}\n---\n"
      )
      expect(frontMatter).toEqual({
        date: "2024-01-01",
        when: "2024-01-01T10:00:00Z",
        yes: "yes",
        on: true,
        octal: 15,
        inf: null,
        nan: null,
        nested: { list: [1, 2.5, null, null, "s"] }
      })
      expect(JSON.parse(JSON.stringify(frontMatter))).toEqual(frontMatter)
      expect(Object.getPrototypeOf(frontMatter)).toBe(Object.prototype)
      expect(Object.getPrototypeOf(frontMatter.nested)).toBe(Object.prototype)
    }))

  it.effect("YAML that tries to break out of <title> or attributes is just data", () =>
    Effect.gen(function*() {
      const title = "</title><script>alert(1)</script>"
      const summary = "\" onmouseover=\"alert(1)\" x=\""
      const source = `---\ntitle: '${title}'\nsummary: '${summary}'\n---\nBody text`
      const { body, frontMatter } = yield* split(source)
      const fields = yield* pageFields(frontMatter)
      expect(fields.title).toBe(title)
      expect(fields.summary).toBe(summary)
      // Front matter never reaches the rendered body.
      const rendered = render(body)
      expect(rendered.html).toBe("<p>Body text</p>")
      expect(rendered.html).not.toContain("script")
    }))
})

describe("pageFields", () => {
  it.effect("extracts the known fields and keeps everything else as data", () =>
    Effect.gen(function*() {
      const fields = yield* fieldsOf(
        [
          "title: '  Quarterly plan  '",
          "summary: What we will do",
          "slug: quarterly-plan",
          "tags: [plans, ' q3 ', plans, '']",
          "entities: Acme Corp",
          "concepts:\n  - roadmap\n  - budget",
          "claims:\n  - Revenue grows\n  - {text: Costs fall, source: src-1}",
          "sources: [src-1, src-2, src-1]",
          "author: Alice",
          "extra: {nested: true}"
        ].join("\n")
      )
      expect(fields).toEqual({
        title: "Quarterly plan",
        summary: "What we will do",
        slug: "quarterly-plan",
        tags: ["plans", "q3"],
        entities: ["Acme Corp"],
        concepts: ["roadmap", "budget"],
        claims: ["Revenue grows", { text: "Costs fall", source: "src-1" }],
        claimCount: 2,
        sources: ["src-1", "src-2"],
        data: { author: "Alice", extra: { nested: true } }
      })
    }))

  it.effect("gives defaults for missing, null and blank fields", () =>
    Effect.gen(function*() {
      const empty = {
        title: undefined,
        summary: undefined,
        slug: undefined,
        tags: [],
        entities: [],
        concepts: [],
        claims: [],
        claimCount: 0,
        sources: [],
        data: {}
      }
      expect(yield* pageFields({})).toEqual(empty)
      expect(yield* fieldsOf("title:\nsummary: '   '\nslug: ~\ntags:\nclaims: null\nsources: []")).toEqual(empty)
    }))

  it.effect("keeps visibility, owner and target keys only as inert data", () =>
    Effect.gen(function*() {
      const fields = yield* fieldsOf(
        "visibility: public\nowner: mallory\nbucket: someone-else/docs\ndock: other\npublic: true"
      )
      expect(fields.data).toEqual({
        visibility: "public",
        owner: "mallory",
        bucket: "someone-else/docs",
        dock: "other",
        public: true
      })
      expect(Object.keys(fields).sort()).toEqual(
        ["claimCount", "claims", "concepts", "data", "entities", "slug", "sources", "summary", "tags", "title"]
      )
    }))

  it.effect("names the field when a type is wrong", () =>
    Effect.gen(function*() {
      const cases: Array<[string, string]> = [
        ["title: 42", "title"],
        ["title: [a]", "title"],
        ["summary: {a: 1}", "summary"],
        ["slug: 2024", "slug"],
        ["tags: {a: 1}", "tags"],
        ["tags: [ok, 3]", "tags"],
        ["entities: true", "entities"],
        ["concepts: [[nested]]", "concepts"],
        ["claims: just one claim", "claims"],
        ["claims: [fine, 7]", "claims"],
        ["claims: [[a]]", "claims"],
        ["sources: 5", "sources"]
      ]
      for (const [yaml, field] of cases) {
        const error = yield* fieldsError(yaml)
        expect(error._tag, yaml).toBe("InvalidFrontMatter")
        expect(error.code).toBe("invalid_front_matter")
        expect(error.message).toContain(`"${field}"`)
        expect(error.details).toMatchObject({ field })
      }
    }))

  it.effect("caps lists at 64 items of at most 200 characters, after trimming and de-duplication", () =>
    Effect.gen(function*() {
      const list = (n: number) => `[${Array.from({ length: n }, (_, i) => `t${i}`).join(", ")}]`
      expect((yield* fieldsOf(`tags: ${list(FIELD_LIST_MAX_ITEMS)}`)).tags).toHaveLength(FIELD_LIST_MAX_ITEMS)
      const tooMany = yield* fieldsError(`concepts: ${list(FIELD_LIST_MAX_ITEMS + 1)}`)
      expect(tooMany.code).toBe("invalid_front_matter")
      expect(tooMany.details).toMatchObject({ field: "concepts", count: FIELD_LIST_MAX_ITEMS + 1 })
      // Duplicates do not count toward the cap.
      expect((yield* fieldsOf(`tags: [${Array(100).fill("same").join(", ")}]`)).tags).toEqual(["same"])

      expect((yield* fieldsOf(`entities: ['${"e".repeat(FIELD_ITEM_MAX_CHARS)}  ']`)).entities).toEqual([
        "e".repeat(FIELD_ITEM_MAX_CHARS)
      ])
      const tooLong = yield* fieldsError(`entities: ['${"e".repeat(FIELD_ITEM_MAX_CHARS + 1)}']`)
      expect(tooLong.code).toBe("invalid_front_matter")
      expect(tooLong.details).toMatchObject({ field: "entities", index: 0 })
    }))

  it.effect("validates the slug: a bad one is invalid_slug", () =>
    Effect.gen(function*() {
      expect((yield* fieldsOf("slug: a-valid-slug-2")).slug).toBe("a-valid-slug-2")
      expect((yield* fieldsOf("slug: '2024'")).slug).toBe("2024")
      for (const slug of ["Not A Slug", "under_score", "-leading", "trailing-", "a--b", "''", `'${"x".repeat(65)}'`]) {
        const error = yield* fieldsError(`slug: ${slug}`)
        expect(error._tag, slug).toBe("InvalidSlug")
        expect(error.code).toBe("invalid_slug")
        expect(error.details).toMatchObject({ field: "slug" })
      }
    }))

  it.effect("counts claims given as strings or mappings", () =>
    Effect.gen(function*() {
      const fields = yield* fieldsOf("claims:\n  - a\n  - b\n  - {claim: c, confidence: 0.9}")
      expect(fields.claimCount).toBe(3)
      expect(fields.claims[2]).toEqual({ claim: "c", confidence: 0.9 })
    }))
})

describe("renderMarkdown: GitHub-flavoured Markdown", () => {
  it("renders tables", () => {
    const { html, text } = render("| Name | Value |\n|:-----|------:|\n| a | 1 |\n| b | 2 |")
    expect(html).toContain("<table>")
    expect(html).toMatch(/<th align="left">Name<\/th>/)
    expect(html).toMatch(/<td align="right">2<\/td>/)
    expect(text).toContain("b 2")
  })

  it("renders task lists with checkboxes", () => {
    const { html } = render("- [ ] todo\n- [x] done")
    expect(html).toContain(`<li class="task-list-item"><input type="checkbox" disabled> todo</li>`)
    expect(html).toContain(`<li class="task-list-item"><input type="checkbox" checked disabled> done</li>`)
  })

  it("renders strikethrough", () => {
    expect(render("~~gone~~ kept").html).toBe("<p><del>gone</del> kept</p>")
  })

  it("renders autolinks, literal and angle-bracketed", () => {
    const { html } = render("See www.example.com, https://example.org/x and <https://example.net>.")
    expect(html).toContain(`<a href="http://www.example.com">www.example.com</a>`)
    expect(html).toContain(`<a href="https://example.org/x">https://example.org/x</a>`)
    expect(html).toContain(`<a href="https://example.net">https://example.net</a>`)
  })

  it("renders footnotes", () => {
    const { html, text } = render("A claim.[^1]\n\n[^1]: The source.")
    expect(html).toMatch(/<sup><a href="#user-content-fn-1"[^>]*>1<\/a><\/sup>/)
    expect(html).toContain("<section data-footnotes")
    expect(html).toContain(`<li id="user-content-fn-1">`)
    expect(text).toContain("The source.")
  })
})

describe("renderMarkdown: wikilinks", () => {
  it("links [[Page]], [[slug|label]] and [[owner/dock/page-slug]] when they resolve", () => {
    const { html, wikilinks } = render("See [[Known]], [[known-slug|the label]] and [[alice/notes/plan]].")
    expect(html).toBe(
      `<p>See <a href="/a/known" class="wikilink">Known</a>, ` +
        `<a href="/a/known-slug" class="wikilink">the label</a> and ` +
        `<a href="/a/alice-notes-plan" class="wikilink">alice/notes/plan</a>.</p>`
    )
    expect(wikilinks).toEqual([
      { target: "Known", label: undefined },
      { target: "known-slug", label: "the label" },
      { target: "alice/notes/plan", label: undefined }
    ])
  })

  it("renders unresolved wikilinks as a marked span with the label or target", () => {
    const { html, wikilinks } = render("[[Missing]] [[gone-slug|Gone]] [[bob/private/secret]]")
    expect(html).toBe(
      `<p><span class="wikilink-unresolved">Missing</span> <span class="wikilink-unresolved">Gone</span> ` +
        `<span class="wikilink-unresolved">bob/private/secret</span></p>`
    )
    expect(wikilinks.map((link) => link.target)).toEqual(["Missing", "gone-slug", "bob/private/secret"])
  })

  it("trims targets and labels, lists each distinct link once, and ignores empty ones", () => {
    const { wikilinks, html } = render("[[ Known ]] and [[Known]] and [[Known|Alias]] and [[ ]] and [[|x]]")
    expect(wikilinks).toEqual([{ target: "Known", label: undefined }, { target: "Known", label: "Alias" }])
    expect(html).toContain("[[ ]]")
  })

  it("leaves wikilinks in code, code blocks and link text alone", () => {
    const { html, wikilinks } = render(
      "Inline `[[Known]]` code.\n\n```\n[[Known]]\n```\n\n    [[Known]]\n\n[text [[Known]]](https://example.org)"
    )
    expect(wikilinks).toEqual([])
    expect(html).toContain("<code>[[Known]]</code>")
    expect(html).toContain("<pre><code>[[Known]]\n</code></pre>")
    expect(html).toContain(`<a href="https://example.org">text [[Known]]</a>`)
    expect(html).not.toContain("wikilink")
  })

  it("links wikilinks in headings, lists, tables and emphasis", () => {
    const { wikilinks, firstHeading } = render(
      "# About [[Known]]\n\n- item [[known-slug]]\n\n| a |\n|---|\n| [[alice/notes/plan\\|Plan]] |\n\n*[[Other]]*"
    )
    expect(firstHeading).toBe("About Known")
    expect(wikilinks.map((link) => link.target)).toEqual(["Known", "known-slug", "alice/notes/plan", "Other"])
    expect(wikilinks[2]!.label).toBe("Plan")
  })

  it("treats a resolver href with an unsafe scheme as unresolved", () => {
    const { html } = renderMarkdown("[[Known]]", { resolveWikilink: () => ({ href: "javascript:alert(1)" }) })
    expect(html).toBe(`<p><span class="wikilink-unresolved">Known</span></p>`)
  })

  it("splits targets into same-Dock and cross-Dock forms", () => {
    expect(wikilinkParts("Page Title")).toEqual({ page: "Page Title" })
    expect(wikilinkParts("alice/notes/plan")).toEqual({ owner: "alice", dock: "notes", page: "plan" })
    expect(wikilinkParts("a/b")).toEqual({ page: "a/b" })
    expect(wikilinkParts("a//b")).toEqual({ page: "a//b" })
  })
})

describe("renderMarkdown: untrusted content", () => {
  it("hands raw HTML, block and inline, to the one sanitizer, which keeps what it keeps of any page", () => {
    const { html, text, warnings } = render(
      "<script>alert(1)</script>\n\n<iframe src=\"https://evil\"></iframe>\n\n" +
        "Hello <img src=x onerror=alert(1)> <b onclick=\"alert(1)\">bold</b> <!-- comment --> world\n\n" +
        "<div><p>kept <em>text</em></p></div>"
    )
    expect(sanitizeHtml(html)).toEqual({
      html: `\n\n<p>Hello <img src="x" /> <b>bold</b>  world</p>\n<div><p>kept <em>text</em></p></div>`,
      warnings: [
        "removed <script> element and its content",
        "removed <iframe> element and its content",
        "removed event handler attribute onerror",
        "removed event handler attribute onclick",
        "removed comment"
      ]
    })
    expect(text).toBe("Hello bold world\n\nkept text")
    expect(warnings).toEqual([])
  })

  it("neutralises script-capable schemes in links, autolinks, reference definitions and images", () => {
    const markdown = [
      "[plain](javascript:alert(1))",
      "[upper](JaVaScRiPt:alert(1))",
      "[entity](&#106;avascript:alert(1))",
      "[named](javascript&colon;alert(1))",
      "[tab](java&#x09;script:alert(1))",
      "[newline](java&#10;script:alert(1))",
      "[leading](&#x01;javascript:alert(1))",
      "[vb](vbscript:msgbox(1))",
      "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
      "<javascript:alert(1)>",
      "<vbscript:msgbox(1)>",
      "[ref][evil] [collapsed][] [evil]",
      "![image](javascript:alert(1))",
      "![svg](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)",
      "![image ref][evil]",
      "",
      "[evil]: javascript:alert(1) \"title\"",
      "[collapsed]: vbscript:msgbox(1)"
    ].join("\n")
    const { html, warnings } = render(markdown)
    const urls = urlAttributes(html)
    expect(urls.filter(scriptCapable)).toEqual([])
    expect(html).not.toMatch(/(?:href|src)="(?:javascript|vbscript|data:text)/i)
    // The link text stays readable.
    for (const word of ["plain", "upper", "entity", "tab", "vb", "data", "ref", "collapsed", "image ref"]) {
      expect(html).toContain(word)
    }
    expect(warnings.join(" ")).toContain("URL schemes")
  })

  it("keeps safe links and images: http(s), mailto, relative, fragments and raster data images", () => {
    const { html } = render(
      "[a](https://example.org) [b](http://example.org) [c](mailto:me@example.org) [d](/a/page) [e](#top) " +
        "[f](other-page) ![g](https://example.org/i.png) ![h](data:image/png;base64,iVBORw0KGgo=)"
    )
    expect(urlAttributes(html)).toEqual([
      "https://example.org",
      "http://example.org",
      "mailto:me@example.org",
      "/a/page",
      "#top",
      "other-page",
      "https://example.org/i.png",
      "data:image/png;base64,iVBORw0KGgo="
    ])
  })

  it("escapes titles and alt text instead of letting them open attributes or tags", () => {
    const { html } = render(
      "![alt\" onerror=\"alert(1)](https://example.org/i.png \"t\\\" onerror=\\\"alert(1)\")\n\n" +
        "[link](https://example.org \"x\\\" onmouseover=\\\"alert(1)\") ![<script>](https://example.org/j.png)"
    )
    expect(attributeNames(html).filter((name) => name.startsWith("on"))).toEqual([])
    // `<script>` survives only inside a quoted attribute value, where it is inert.
    expect(html.replace(/"[^"]*"/g, "\"\"")).not.toContain("<script")
    expect(html).toContain("&#x22; onerror=")
  })

  it.prop(
    "never emits a script-capable URL, however the scheme is disguised",
    [
      FastCheck.constantFrom("javascript", "vbscript", "data"),
      FastCheck.array(FastCheck.constantFrom("", "&#x09;", "&#10;", "&#13;", "&Tab;", "&NewLine;", "\\"), {
        minLength: 9,
        maxLength: 9
      }),
      FastCheck.boolean(),
      FastCheck.constantFrom("link", "autolink", "image", "reference")
    ],
    ([scheme, noise, upper, form]) => {
      const letters = (upper ? scheme.toUpperCase() : scheme).split("")
      const disguised = letters.map((letter, i) => `${noise[i] ?? ""}${letter}`).join("") + ":alert(1)"
      const markdown = form === "link"
        ? `[x](${disguised})`
        : form === "autolink"
        ? `<${disguised}>`
        : form === "image"
        ? `![x](${disguised})`
        : `[x][r]\n\n[r]: ${disguised}`
      const { html } = render(markdown)
      expect(urlAttributes(html).filter(scriptCapable)).toEqual([])
    }
  )

  it("shows pathologically nested Markdown as plain text, quickly", () => {
    for (const markdown of [">".repeat(200_000), "- ".repeat(100_000), `${" ".repeat(500)}- deep`]) {
      const started = performance.now()
      const rendered = render(markdown)
      expect(performance.now() - started).toBeLessThan(1_000)
      expect(rendered.html.startsWith("<pre>")).toBe(true)
      expect(rendered.warnings.join(" ")).toContain("plain text")
    }
    expect(render("> > > nested a little\n\n- a\n  - b\n    - c").html).toContain("<blockquote>")
  })
})

describe("renderMarkdown: text", () => {
  it("gives the plain text for search, the first heading and the first paragraph", () => {
    const rendered = render(
      "# The *Title*\n\nFirst **paragraph** with [a link](https://example.org) and `code`.\n\n" +
        "## Second\n\n```ts\nconst x = 1\n```\n\n- one\n- two\n\n<div>raw</div>\n\n![alt text](https://example.org/i.png)"
    )
    expect(rendered.firstHeading).toBe("The Title")
    expect(rendered.lead).toBe("First paragraph with a link and code.")
    expect(rendered.text).toBe(
      "The Title\n\nFirst paragraph with a link and code.\n\nSecond\n\nconst x = 1\n\none\n\ntwo\n\nraw\n\nalt text"
    )
  })

  it("has no first heading or lead when the document has none", () => {
    const rendered = render("```\ncode only\n```")
    expect(rendered.firstHeading).toBeUndefined()
    expect(rendered.lead).toBeUndefined()
    expect(rendered.text).toBe("code only")
  })
})

describe("isSafeUrl", () => {
  it.each(
    [
      ["https://example.org", "link", true],
      ["mailto:a@b.c", "link", true],
      ["/relative", "link", true],
      ["#frag", "link", true],
      ["?q=1", "link", true],
      ["path/with:colon", "link", true],
      ["javascript:alert(1)", "link", false],
      [" \u0001javascript:alert(1)", "link", false],
      ["java\tscript:alert(1)", "link", false],
      ["tel:123", "link", false],
      ["data:image/png;base64,AAAA", "link", false],
      ["data:image/png;base64,AAAA", "image", true],
      ["data:image/svg+xml,<svg/>", "image", false],
      ["mailto:a@b.c", "image", false]
    ] as const
  )("%j as %s → %s", (url, kind, safe) => {
    expect(isSafeUrl(url, kind)).toBe(safe)
  })
})

describe("collapseWhitespace", () => {
  // Every character JavaScript's \s matches, a few that it does not, and words.
  const pieces = FastCheck.constantFrom(
    ..." \t\n\v\f\r\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\u200b\u180ex".split(""),
    "word",
    "  ",
    "\r\n"
  )

  it("gives what replacing every run of \\s by one space gives", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(pieces, { maxLength: 24 }), (parts) => {
        const text = parts.join("")
        expect(collapseWhitespace(text)).toBe(text.replace(/\s+/g, " "))
      }),
      { numRuns: 5000 }
    )
    expect(collapseWhitespace(" a  b\n\tc\u00a0d ")).toBe(" a b c d ")
    expect(collapseWhitespace("one two")).toBe("one two")
  })
})

describe("deriveSummary", () => {
  it("returns the first paragraph with whitespace collapsed", () => {
    expect(deriveSummary("  First   line\nsame paragraph.  \n\nSecond paragraph.")).toBe(
      "First line same paragraph."
    )
    expect(deriveSummary("\n\n  \n\nAfter blanks")).toBe("After blanks")
    expect(deriveSummary("")).toBe("")
  })

  it("cuts at a word boundary and adds an ellipsis", () => {
    const text = "alpha beta gamma delta epsilon zeta eta theta"
    expect(deriveSummary(text, 20)).toBe("alpha beta gamma…")
    expect(deriveSummary(text, 20).length).toBeLessThanOrEqual(20)
    expect(deriveSummary("one, two, three, four", 12)).toBe("one, two…")
    expect(deriveSummary("x".repeat(300))).toBe(`${"x".repeat(279)}…`)
    expect(deriveSummary("word ".repeat(100)).length).toBeLessThanOrEqual(280)
    expect(deriveSummary(text, text.length)).toBe(text)
  })

  it.prop(
    "is never longer than max and is a prefix of the text when cut",
    [FastCheck.string({ unit: "grapheme", maxLength: 600 }), FastCheck.integer({ min: 2, max: 300 })],
    ([text, max]) => {
      const summary = deriveSummary(text, max)
      expect(summary.length).toBeLessThanOrEqual(max)
      if (summary.endsWith("…")) {
        const collapsed = text.replace(/\s+/g, " ").trim()
        expect(collapsed.startsWith(summary.slice(0, -1))).toBe(true)
      }
    }
  )
})
