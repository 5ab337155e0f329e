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
  const dock = yield* createBucket(alice.client, { title: "Content", slug: `content-${unique()}`, visibility: "public" })
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
      const titled = "<html><head><title>  Quarterly &amp; Annual\n Report </title></head><body><h1>Other</h1><p>x</p></body></html>"
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
})
