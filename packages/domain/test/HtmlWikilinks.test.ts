// Wikilinks in HTML pages (issue 18, item 6): found in text as Markdown finds them, never inside links, code,
// preformatted text or stylesheets; made links where they resolve, labelled spans where they do not; and what comes
// out goes through the sanitizer like everything else.
import { describe, expect, it } from "@effect/vitest"
import { contentJobs } from "../src/Content/ContentJobs.ts"
import { sanitizeHtml } from "../src/Content/HtmlSanitizer.ts"
import { htmlWikilinks, linkWikilinks } from "../src/Content/HtmlWikilinks.ts"

const REL = `rel="noopener noreferrer nofollow ugc"`

describe("htmlWikilinks", () => {
  it("finds [[Page]] and [[Page|label]] in text, in order, each pair once, entities decoded", () => {
    const html = sanitizeHtml(
      `<h1>See [[Tide tables]]</h1><p>and [[harbour-guide|the guide]], [[A &amp; B]] and [[Tide tables]] again.</p>` +
        `<ul><li><em>[[  Nested  ]]</em></li></ul>`
    ).html
    expect(htmlWikilinks(html)).toEqual([
      { target: "Tide tables", label: undefined },
      { target: "harbour-guide", label: "the guide" },
      { target: "A & B", label: undefined },
      { target: "Nested", label: undefined }
    ])
  })

  it("skips links, code, preformatted text, stylesheets and attribute values", () => {
    const html = sanitizeHtml(
      `<a href="https://e.example">[[In link]]</a><code>[[In code]]</code><pre>x [[In pre]]</pre>` +
        `<style>p::after{content:"[[In style]]"}</style><p title="[[In title]]">[[Real]]</p><p>[[]] [[ ]] [[a[b]]</p>`
    ).html
    expect(htmlWikilinks(html)).toEqual([{ target: "Real", label: undefined }])
  })
})

describe("linkWikilinks, then the sanitizer (the renderHtml job)", () => {
  it("makes resolved wikilinks links and the others labelled spans, as Markdown renders them", () => {
    const html = `<p>Read [[Tide tables]], [[Missing|the missing one]] and <code>[[Tide tables]]</code>.</p>`
    const out = contentJobs.renderHtml({ html, links: [["Tide tables", "/a/tides-1234"]] })
    expect(out).toBe(
      `<p>Read <a href="/a/tides-1234" class="wikilink" ${REL}>Tide tables</a>, ` +
        `<span class="wikilink-unresolved">the missing one</span> and <code>[[Tide tables]]</code>.</p>`
    )
  })

  it("labels and targets stay text: markup in them is escaped, hrefs go through the sanitizer's URL check", () => {
    const html = sanitizeHtml(`<p>[[x|&lt;img src=x onerror=alert(1)&gt;]] [[evil]]</p>`).html
    const out = contentJobs.renderHtml({ html, links: [["evil", "javascript:alert(1)"]] })
    expect(out).toBe(
      `<p><span class="wikilink-unresolved">&lt;img src=x onerror=alert(1)&gt;</span> ` +
        `<a class="wikilink" ${REL}>evil</a></p>`
    )
    expect(sanitizeHtml(out).html).toBe(out)
  })

  it("leaves HTML without wikilinks as it is", () => {
    const html = `<p>No links.</p>`
    expect(linkWikilinks(html, new Map())).toBe(html)
  })
})
