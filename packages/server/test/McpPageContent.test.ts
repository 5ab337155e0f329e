/**
 * Issue 18, item 6 (the rough edges of content), over the wire with real MCP clients: an untitled HTML push takes
 * its title from `<title>`, else its first `<h1>`, and its slug from that title; identical untitled content pushed
 * again is `unchanged`; HTML pages keep their sanitized CSS; wikilinks in HTML pages resolve as in Markdown; a
 * Markdown page that is raw HTML keeps its text; the Micro DB's /a/ page shows its live tables.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { fetchReply, unique } from "./support/Http.ts"
import { type AnyClient } from "./support/McpClients.ts"
import { actor, call, createBucket, ok, pushed } from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const owner = Effect.gen(function*() {
  const alice = yield* actor("v2 modern")
  const dock = yield* createBucket(alice.client, {
    title: "Content",
    slug: `content-${unique()}`,
    visibility: "public"
  })
  return { ...alice, dock }
})

const push = (client: AnyClient, bucket: string, args: Record<string, unknown>) =>
  pushed(client, "push_web_page", { bucket, ...args })

/** The /a/ page of a part, as a browser gets it. */
const artifact = (part: { readonly url: string }) =>
  Effect.flatMap(TestServer, (server) => fetchReply(`${server.url}${new URL(part.url).pathname}`))

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("page content over MCP", (it) => {
  it.scoped("an untitled HTML page takes its title from <title>, else its first <h1>, and its slug from that title; pushed again it is unchanged", () =>
    Effect.gen(function*() {
      const { client, dock } = yield* owner
      const titled =
        "<html><head><title>  Quarterly &amp; Annual\n Report </title></head><body><h1>Other</h1><p>x</p></body></html>"
      const first = yield* push(client, dock.id, { page_content: titled })
      expect(first.action).toBe("created")
      expect(first.part).toMatchObject({ title: "Quarterly & Annual Report", slug: "quarterly-annual-report" })
      expect((yield* push(client, dock.id, { page_content: titled })).action).toBe("unchanged")

      const headed = "<section><h2>Intro</h2><h1>The <em>Main</em>  Heading</h1><h1>Second</h1></section>"
      const second = yield* push(client, dock.id, { page_content: headed })
      expect(second.part).toMatchObject({ title: "The Main Heading", slug: "the-main-heading" })
      expect((yield* push(client, dock.id, { page_content: headed })).action).toBe("unchanged")

      // An explicit page_title still wins, and the <title> is bounded to the title limit.
      const named = yield* push(client, dock.id, { page_title: "Chosen", page_content: titled })
      expect(named.part).toMatchObject({ title: "Chosen", slug: "chosen" })
      const long = yield* push(client, dock.id, { page_content: `<title>${"word ".repeat(200)}</title><p>x</p>` })
      // 300 characters, the last a space that trimming removes.
      expect(long.part.title).toBe("word ".repeat(60).trim())
    }))

  it.scoped("HTML with neither a title nor an <h1> gets a slug from its content: the same content again is unchanged, other content a new page", () =>
    Effect.gen(function*() {
      const { client, dock } = yield* owner
      const content = `<p>No heading here ${unique()}.</p>`
      const first = yield* push(client, dock.id, { page_content: content })
      expect(first.action).toBe("created")
      expect(first.part.title).toBeNull()
      expect(first.part.slug).toMatch(/^untitled-[0-9a-f]{12}$/)
      const again = yield* push(client, dock.id, { page_content: content })
      expect(again).toMatchObject({ action: "unchanged", part: { id: first.part.id, version: 1 } })
      const other = yield* push(client, dock.id, { page_content: `<p>Something else ${unique()}.</p>` })
      expect(other.action).toBe("created")
      expect(other.part.id).not.toBe(first.part.id)
      // An empty <title> or <h1> suggests nothing.
      const blank = yield* push(client, dock.id, { page_content: `<title> </title><h1></h1><p>${unique()}</p>` })
      expect(blank.part.slug).toMatch(/^untitled-/)
    }))

  it.scoped("an HTML page keeps its sanitized CSS on get_web_page and /a/, says what it dropped, and its in-page anchors keep working", () =>
    Effect.gen(function*() {
      const { client, dock } = yield* owner
      const result = yield* push(client, dock.id, {
        page_content: [
          `<style>h1 { color: rgb(200, 0, 0) } .box { background: url(https://evil.example/t.png); padding: 4px }</style>`,
          `<h1>Styled</h1><p class="box" style="color: blue; width: expression(alert(1))">Box</p>`,
          `<nav><a href="#setup">Setup</a></nav><h2 id="setup">Setup</h2>`
        ].join("")
      })
      expect(result.part.title).toBe("Styled")
      expect(result.sanitization_warnings).toEqual([
        "removed CSS declaration (width with expression())",
        "removed CSS declaration (background with a url() that is not a data: PNG, JPEG, GIF or WebP image or a #fragment)"
      ])
      const expected = `<style>h1{color:rgb(200, 0, 0);}\n.box{padding:4px;}</style><h1>Styled</h1>` +
        `<p class="box" style="color:blue">Box</p><nav><a href="#user-content-setup" ` +
        `rel="noopener noreferrer nofollow ugc">Setup</a></nav><h2 id="user-content-setup">Setup</h2>`
      const got = ok(yield* call(client, "get_web_page", { bucket: dock.id, web_page: result.part.id }))
      expect(got.part.content).toBe(expected)
      const served = yield* artifact(result.part)
      expect(served.status).toBe(200)
      expect(served.text).toContain(expected)
      expect(served.headers["content-security-policy"]).toContain("style-src 'unsafe-inline'")
      expect(served.text).not.toContain("evil.example")
    }))

  it.scoped("wikilinks in an HTML page resolve as in Markdown: get_web_page_links, backlinks, and links on /a/", () =>
    Effect.gen(function*() {
      const { client, dock } = yield* owner
      const tides = yield* push(client, dock.id, {
        content_type: "markdown",
        page_slug: "tide-tables",
        page_content: "# Tide tables\n\nTwice a day."
      })
      const guide = yield* push(client, dock.id, {
        page_content: `<h1>Harbour guide</h1><p>Read [[Tide Tables]] and [[nowhere|the missing page]].</p>` +
          `<p><code>[[Not a link]]</code> <a href="https://e.example/">[[Inside a link]]</a></p>`
      })
      const links = ok(yield* call(client, "get_web_page_links", { bucket: dock.id, page_slug: "harbour-guide" }))
      expect(links.outbound.map((link: any) => [link.target, link.resolved, link.page?.id ?? null])).toEqual([
        ["Tide Tables", true, tides.part.id],
        ["nowhere", false, null]
      ])
      const back = ok(yield* call(client, "get_web_page_links", { bucket: dock.id, page_slug: "tide-tables" }))
      expect(back.inbound.map((link: any) => link.page.id)).toEqual([guide.part.id])

      const served = yield* artifact(guide.part)
      expect(served.text).toContain(
        `<a href="/a/${tides.part.public_slug}" class="wikilink" rel="noopener noreferrer nofollow ugc">Tide Tables</a>`
      )
      expect(served.text).toContain(`<span class="wikilink-unresolved">the missing page</span>`)
      expect(served.text).toContain(`<code>[[Not a link]]</code>`)
      expect(served.text).toContain(`>[[Inside a link]]</a>`)
      // The stored page keeps its source: a read and re-push round-trips.
      const got = ok(yield* call(client, "get_web_page", { bucket: dock.id, web_page: guide.part.id }))
      expect(got.part.content).toContain("Read [[Tide Tables]]")
      expect(got.grounding.links).toEqual(["Tide Tables", "nowhere"])
    }))

  it.scoped("a Markdown page that is raw HTML keeps its text and safe tags, through the one sanitizer", () =>
    Effect.gen(function*() {
      const { client, dock } = yield* owner
      const markdown = yield* push(client, dock.id, {
        content_type: "markdown",
        page_slug: "raw-html",
        page_content: `<div><p>Kept <strong>text</strong></p><script>alert(1)</script><p onclick="x()">More</p></div>`
      })
      expect(markdown.warnings).toEqual([])
      const text = ok(yield* call(client, "get_web_page", { bucket: dock.id, web_page: "raw-html", format: "text" }))
      expect(text.part.content).toBe("Kept text\n\nMore")
      const served = yield* artifact(markdown.part)
      expect(served.text).toContain(`<div><p>Kept <strong>text</strong></p><p>More</p></div>`)
      expect(served.text).not.toContain("alert")

      const document = yield* pushed(client, "push_markdown", {
        bucket: dock.id,
        page_content:
          `<html><head><title>Doc</title></head><body>\n<h1>A document</h1>\n<p>Body text.</p>\n</body></html>`
      })
      expect(document.part.title).toBe("Doc") // its <title>, as an HTML page's
      const page = yield* artifact(document.part)
      expect(page.text).toContain(`<h1>A document</h1>\n<p>Body text.</p>`)
    }))

  it.scoped("the Micro DB page at /a/ shows the live tables as HTML tables, escaped and bounded, and a private Micro DB stays a 404", () =>
    Effect.gen(function*() {
      const { client, dock } = yield* owner
      const shell = ok(
        yield* call(client, "push_micro_db", {
          bucket: dock.id,
          title: "Harbour data",
          summary: "Boats & berths."
        })
      ).part
      ok(
        yield* call(client, "create_micro_db_table", {
          bucket: dock.id,
          name: "Boats",
          description: "Who is moored where.",
          columns: [{ name: "Name", type: "text" }, { name: "Length (m)", type: "number" }, {
            name: "Meta",
            type: "json"
          }]
        })
      )
      ok(
        yield* call(client, "create_micro_db_table", {
          bucket: dock.id,
          name: "Berths",
          columns: [{ name: "Code", type: "text" }]
        })
      )
      ok(
        yield* call(client, "insert_micro_db_rows", {
          bucket: dock.id,
          table: "boats",
          rows: [
            { name: "Selkie", length_m: 9.5, meta: { crew: 2 } },
            { name: "<script>alert(1)</script>", length_m: 12 }
          ]
        })
      )
      for (const start of [0, 60]) {
        ok(
          yield* call(client, "insert_micro_db_rows", {
            bucket: dock.id,
            table: "berths",
            rows: Array.from({ length: 60 }, (_, i) => ({ code: `B-${start + i}` }))
          })
        )
      }

      const served = yield* artifact(shell)
      expect(served.status).toBe(200)
      const main = served.text.slice(served.text.indexOf("<main>"), served.text.indexOf("</main>"))
      expect(main).toContain("<h1>Harbour data</h1>")
      expect(main).toContain("<p>Boats &#38; berths.</p>")
      expect(main).toContain("<h2>Boats</h2>\n<p>Who is moored where.</p>")
      expect(main).toContain(
        `<thead><tr><th scope="col">Name</th><th scope="col">Length (m)</th><th scope="col">Meta</th></tr></thead>`
      )
      expect(main).toContain(`<tr><td>Selkie</td><td>9.5</td><td>{&#34;crew&#34;:2}</td></tr>`)
      expect(main).toContain(`<td>&#60;script&#62;alert(1)&#60;/script&#62;</td>`)
      expect(main).not.toContain("<script")
      expect(main).toContain("2 rows.")
      expect(main).toContain("<h2>Berths</h2>")
      expect(main).toContain("<td>B-99</td>")
      expect(main).not.toContain("<td>B-100</td>")
      expect(main).toContain("Showing the first 100 of 120 rows; query_micro_db_rows reads the rest.")
      // the live tables, not a snapshot's JSON
      expect(main).not.toContain("dock.micro_db.snapshot")

      // A new row shows at once (no snapshot needed).
      ok(yield* call(client, "insert_micro_db_rows", { bucket: dock.id, table: "boats", rows: [{ name: "Tern" }] }))
      expect((yield* artifact(shell)).text).toContain("<td>Tern</td>")

      // A private Micro DB is not the public's.
      ok(yield* call(client, "push_micro_db", { bucket: dock.id, visibility: "private" }))
      const hidden = yield* artifact(shell)
      expect(hidden.status).toBe(404)
      expect(hidden.text).not.toContain("Selkie")
    }))
})
