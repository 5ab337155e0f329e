/**
 * search_web_pages (spec §4.3, "Web pages") over the wire with real MCP clients: the result shape (`part`
 * without content, `bucket`, `snippet` with `**` around matches, `rank`), ranking (title over summary over
 * text), freshness (found as soon as a push returns, changed by updates, deletes and restores), tenancy (only
 * pages the caller can read: own, collaborations, public discoverable Docks; private pages for members only;
 * sandbox tokens their sandbox; anonymous /mcp/public public discoverable Docks; never standalone artifacts),
 * the Dock and owner filters, `limit`, query validation and websearch syntax, and what tools/list advertises.
 *
 * Every test searches for words made for it alone (random letters), so cross-Dock results are exact lists even
 * though the tests share one database.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { type AnyClient, type Era, ERAS } from "./support/McpClients.ts"
import {
  actor,
  call,
  connect,
  connectPublic,
  createBucket,
  grant,
  listedTool,
  makePrivate,
  ok,
  outputShapes,
  PART_KEYS,
  pathOf,
  pushedPart as push,
  seedPage,
  toolError as error
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"
interface Hit {
  readonly part: any
  readonly bucket: { id: string; slug: string; title: string; path: string }
  readonly snippet: string
  readonly rank: number
}

/** A word no other test uses: random lowercase letters (a plain word to the English text search configuration). */
const word = () =>
  `zq${
    Array.from(crypto.getRandomValues(new Uint8Array(10)), (byte) => String.fromCharCode(97 + (byte % 26))).join("")
  }`

/** search_web_pages' hits. */
const search = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(call(client, "search_web_pages", args), (result) => ok(result).pages as Array<Hit>)

/** The ids of the hits, in order. */
const found = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(search(client, args), (hits) => hits.map((hit) => hit.part.id as string))

/** The ids of the hits, sorted (when the order is not what is being checked). */
const foundSet = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(found(client, args), (ids) => [...ids].sort())

/** An HTML page whose text is `text`. */
const htmlPage = (client: AnyClient, bucket: string, slug: string, text: string) =>
  push(client, "push_web_page", { bucket, page_slug: slug, page_content: `<p>${text}</p>` })

/** A Markdown file with exactly this title, summary and body (the summary is not derived from the body). */
const markdownFile = (
  client: AnyClient,
  bucket: string,
  slug: string,
  fields: { readonly title: string; readonly summary: string; readonly body: string }
) =>
  push(client, "push_markdown_file", {
    bucket,
    page_slug: slug,
    page_content: `---\ntitle: ${fields.title}\nsummary: ${fields.summary}\n---\n${fields.body}\n`
  })

const sorted = (ids: ReadonlyArray<string>) => [...ids].sort()

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("search_web_pages over MCP", (it) => {
  // ---------------------------------------------------------------------------------------------------------
  // shape, snippet, ranking

  it.scoped("a hit is { part (no content), bucket { id, slug, title, path }, snippet with **matches**, rank }", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Field notes", slug: `notes-${unique()}` })
      const w = word()
      const part = yield* htmlPage(
        owner.client,
        dock.id,
        "dawn",
        `The boats leave at dawn when the ${w} rises over the harbour.`
      )

      const result = ok(yield* call(owner.client, "search_web_pages", { query: w }))
      expect(Object.keys(result)).toEqual(["pages"])
      expect(result.pages).toHaveLength(1)
      const hit = result.pages[0] as Hit
      expect(Object.keys(hit).sort()).toEqual(["bucket", "part", "rank", "snippet"])
      expect(Object.keys(hit.part).sort()).toEqual(PART_KEYS)
      // the part is the same object list_web_pages shows
      const listed = ok(yield* call(owner.client, "list_web_pages", { bucket: dock.id })).parts
      expect(hit.part).toEqual(listed[0])
      expect(hit.part).toEqual(part)
      expect(hit.bucket).toEqual({ id: dock.id, slug: dock.slug, title: "Field notes", path: pathOf(owner.user, dock) })
      expect(hit.snippet).toContain(`**${w}**`)
      expect(hit.snippet).toContain("boats leave at dawn")
      expect(hit.snippet.match(/\*\*/g)).toHaveLength(2)
      expect(typeof hit.rank).toBe("number")
      expect(hit.rank).toBeGreaterThan(0)
    }))

  it.scoped("ranking: a title match outranks a summary match, which outranks a text match; hits come by rank", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Ranked", slug: `ranked-${unique()}` })
      const w = word()
      // pushed title first and text last: were the ranks equal, the most recently updated would come first
      const inTitle = yield* markdownFile(owner.client, dock.id, "in-title", {
        title: `All about ${w}`,
        summary: "Nothing to see",
        body: "Plain words only."
      })
      const inSummary = yield* markdownFile(owner.client, dock.id, "in-summary", {
        title: "Second page",
        summary: `A note on ${w}`,
        body: "Plain words only."
      })
      const inText = yield* markdownFile(owner.client, dock.id, "in-text", {
        title: "Third page",
        summary: "Nothing to see",
        body: `Somewhere in here is ${w}, once.`
      })
      const hits = yield* search(owner.client, { query: w })
      expect(hits.map((hit) => hit.part.id)).toEqual([inTitle.id, inSummary.id, inText.id])
      expect(hits[0]!.rank).toBeGreaterThan(hits[1]!.rank)
      expect(hits[1]!.rank).toBeGreaterThan(hits[2]!.rank)
      // the snippet is drawn from the text: only the text match is marked
      expect(hits[2]!.snippet).toContain(`**${w}**`)
      expect(hits[0]!.snippet).not.toContain("**")
      expect(hits[1]!.snippet).not.toContain("**")
    }))

  for (const era of ERAS) {
    it.scoped(`${era}: a page is found as soon as its push returns`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const w = word()
        const part = yield* htmlPage(owner.client, owner.user.default_bucket_id, "fresh", `fresh ${w}`)
        const hits = yield* search(owner.client, { query: w })
        expect(hits.map((hit) => hit.part.id)).toEqual([part.id])
        expect(hits[0]!.bucket.id).toBe(owner.user.default_bucket_id)
      }))
  }

  // ---------------------------------------------------------------------------------------------------------
  // freshness

  it.scoped("an update changes what matches, a restored version's words come back, a deleted page is gone", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Changing", slug: `changing-${unique()}` })
      const [first, second] = [word(), word()]
      const v1 = yield* htmlPage(owner.client, dock.id, "tide", `The tide brings ${first}.`)
      expect(yield* found(owner.client, { query: first })).toEqual([v1.id])
      expect(yield* found(owner.client, { query: second })).toEqual([])

      const v2 = yield* htmlPage(owner.client, dock.id, "tide", `The tide brings ${second}.`)
      expect(v2).toMatchObject({ id: v1.id, version: 2 })
      expect(yield* found(owner.client, { query: first })).toEqual([])
      const hits = yield* search(owner.client, { query: second })
      expect(hits.map((hit) => [hit.part.id, hit.part.version])).toEqual([[v1.id, 2]])

      ok(yield* call(owner.client, "restore_web_page_version", { bucket: dock.id, web_page: "tide", version: 1 }))
      const restored = yield* search(owner.client, { query: first })
      expect(restored.map((hit) => [hit.part.id, hit.part.version])).toEqual([[v1.id, 3]])
      expect(restored[0]!.snippet).toContain(`**${first}**`)
      expect(yield* found(owner.client, { query: second })).toEqual([])

      ok(yield* call(owner.client, "delete_web_page", { bucket: dock.id, web_page: "tide" }))
      expect(yield* found(owner.client, { query: first })).toEqual([])
      expect(yield* found(owner.client, { query: second })).toEqual([])
    }))

  // ---------------------------------------------------------------------------------------------------------
  // tenancy

  it.scoped("tenancy: another user's private Dock is never searched; collaborations (viewer, editor) are", () =>
    Effect.gen(function*() {
      const alice = yield* actor(MODERN)
      const bob = yield* actor(MODERN)
      const viewer = yield* actor(MODERN)
      const editor = yield* actor(MODERN)
      const w = word()
      const closed = yield* createBucket(alice.client, { title: "Closed", slug: `closed-${unique()}` })
      const secret = yield* htmlPage(alice.client, closed.id, "secret", `secret ${w}`)
      const bobs = yield* htmlPage(bob.client, bob.user.default_bucket_id, "own", `bob's own ${w}`)

      expect(yield* found(alice.client, { query: w })).toEqual([secret.id])
      expect(yield* found(bob.client, { query: w })).toEqual([bobs.id])
      // naming the Dock does not help: a Dock the caller cannot read gives no results, not an error
      expect(yield* found(bob.client, { query: w, bucket_slug: closed.slug, owner_username: alice.user.username }))
        .toEqual([])
      expect(yield* found(bob.client, { query: w, owner_username: alice.user.username })).toEqual([])

      yield* grant(closed.id, viewer.user, "viewer")
      yield* grant(closed.id, editor.user, "editor")
      expect(yield* found(viewer.client, { query: w })).toEqual([secret.id])
      expect(yield* found(editor.client, { query: w })).toEqual([secret.id])
      expect(yield* found(viewer.client, { query: w, bucket_slug: closed.slug, owner_username: alice.user.username }))
        .toEqual([secret.id])
      expect(yield* found(editor.client, { query: w, owner_username: alice.user.username })).toEqual([secret.id])
      // still nothing for bob
      expect(yield* found(bob.client, { query: w })).toEqual([bobs.id])
      // and nothing anonymously
      expect(yield* found(yield* connectPublic(MODERN), { query: w })).toEqual([])
    }))

  it.scoped("tenancy: public discoverable Docks are searched by everyone, anonymous too; a private page only by members", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const viewer = yield* actor(MODERN)
      const editor = yield* actor(MODERN)
      const outsider = yield* actor(MODERN)
      const anonymous = yield* connectPublic(MODERN)
      const open = yield* createBucket(owner.client, {
        title: "Open",
        slug: `open-${unique()}`,
        visibility: "public",
        discoverable: true
      })
      yield* grant(open.id, viewer.user, "viewer")
      yield* grant(open.id, editor.user, "editor")
      const w = word()
      const shown = yield* htmlPage(owner.client, open.id, "shown", `shown ${w}`)
      const hidden = yield* htmlPage(owner.client, open.id, "hidden", `hidden ${w}`)
      yield* makePrivate(hidden.id)

      const both = sorted([shown.id, hidden.id])
      for (const member of [owner, viewer, editor]) {
        expect(yield* foundSet(member.client, { query: w })).toEqual(both)
        expect(
          yield* foundSet(member.client, { query: w, bucket_slug: open.slug, owner_username: owner.user.username })
        )
          .toEqual(both)
      }
      for (const client of [outsider.client, anonymous]) {
        expect(yield* found(client, { query: w })).toEqual([shown.id])
        expect(yield* found(client, { query: w, bucket_slug: open.slug, owner_username: owner.user.username })).toEqual(
          [
            shown.id
          ]
        )
        expect(yield* found(client, { query: w, owner_username: owner.user.username })).toEqual([shown.id])
        // the private page's own words find nothing either
        expect(yield* found(client, { query: `hidden ${w}` })).toEqual([])
      }
      expect(yield* found(owner.client, { query: `hidden ${w}` })).toEqual([hidden.id])
    }))

  it.scoped("tenancy: a public Dock that is not discoverable is not searched across Docks by others, only when named", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const outsider = yield* actor(MODERN)
      const anonymous = yield* connectPublic(MODERN)
      const quiet = yield* createBucket(owner.client, {
        title: "Quiet",
        slug: `quiet-${unique()}`,
        visibility: "public"
      })
      const w = word()
      const page = yield* htmlPage(owner.client, quiet.id, "quiet", `quiet ${w}`)
      const named = { query: w, bucket_slug: quiet.slug, owner_username: owner.user.username }

      // the owner finds it across Docks: it is theirs
      expect(yield* found(owner.client, { query: w })).toEqual([page.id])
      for (const client of [outsider.client, anonymous]) {
        expect(yield* found(client, { query: w })).toEqual([])
        expect(yield* found(client, { query: w, owner_username: owner.user.username })).toEqual([])
        expect(yield* found(client, named)).toEqual([page.id])
      }
      // made discoverable, it is found across Docks too
      ok(
        yield* call(owner.client, "update_bucket_metadata", {
          bucket_path: pathOf(owner.user, quiet),
          discoverable: true
        })
      )
      expect(yield* found(outsider.client, { query: w })).toEqual([page.id])
      expect(yield* found(anonymous, { query: w })).toEqual([page.id])
    }))

  it.scoped("tenancy: a sandbox token finds only its sandbox's pages; standalone artifacts are never found", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor(MODERN)
      const w = word()
      const open = yield* createBucket(owner.client, {
        title: "Open",
        slug: `open-${unique()}`,
        visibility: "public",
        discoverable: true
      })
      const public_ = yield* htmlPage(owner.client, open.id, "public", `public ${w}`)
      // push_markdown without a Dock: a standalone artifact, in no Dock
      const standalone = yield* push(owner.client, "push_markdown", { page_content: `# Loose\n\nloose ${w}` })
      expect(standalone.bucket_id).toBeNull()
      expect(yield* found(owner.client, { query: w })).toEqual([public_.id])
      expect(yield* found(owner.client, { query: `loose ${w}` })).toEqual([])

      const registration = yield* register(server.url)
      expect(registration.status, registration.text).toBe(201)
      const sandboxId = registration.json.sandbox_bucket.id as string
      const sandbox = yield* connect(registration.json.credential as string, MODERN)
      const mine = yield* htmlPage(sandbox, sandboxId, "mine", `mine ${w}`)
      expect(mine.bucket_id).toBe(sandboxId)
      // a sandbox token's push_markdown without a Dock lands in its sandbox, so that one is found
      const inSandbox = yield* push(sandbox, "push_markdown", { page_content: `# Loose\n\nsandboxed ${w}` })
      expect(inSandbox.bucket_id).toBe(sandboxId)

      expect(yield* foundSet(sandbox, { query: w })).toEqual(sorted([mine.id, inSandbox.id]))
      expect(yield* found(sandbox, { query: w, bucket_slug: open.slug, owner_username: owner.user.username })).toEqual(
        []
      )
      expect(yield* found(sandbox, { query: w, owner_username: owner.user.username })).toEqual([])
      // and the sandbox is nobody else's to search
      expect(yield* found(owner.client, { query: w })).toEqual([public_.id])
      expect(yield* found(yield* connectPublic(MODERN), { query: w })).toEqual([public_.id])
    }))

  // ---------------------------------------------------------------------------------------------------------
  // filters and limit

  it.scoped("bucket_slug (+ owner_username) limits the search to one Dock; a missing Dock gives no results; owner_username alone that owner's Docks", () =>
    Effect.gen(function*() {
      const alice = yield* actor(MODERN)
      const bob = yield* actor(MODERN)
      const w = word()
      const first = yield* createBucket(alice.client, { title: "First", slug: `first-${unique()}` })
      const second = yield* createBucket(alice.client, { title: "Second", slug: `second-${unique()}` })
      const bobsOpen = yield* createBucket(bob.client, {
        title: "Bob's",
        slug: `bobs-${unique()}`,
        visibility: "public",
        discoverable: true
      })
      const a1 = yield* htmlPage(alice.client, first.id, "one", `one ${w}`)
      const a2 = yield* htmlPage(alice.client, second.id, "two", `two ${w}`)
      const b1 = yield* htmlPage(bob.client, bobsOpen.id, "three", `three ${w}`)

      expect(yield* foundSet(alice.client, { query: w })).toEqual(sorted([a1.id, a2.id, b1.id]))
      const inFirst = yield* search(alice.client, { query: w, bucket_slug: first.slug })
      expect(inFirst.map((hit) => hit.part.id)).toEqual([a1.id])
      expect(inFirst[0]!.bucket).toEqual({
        id: first.id,
        slug: first.slug,
        title: "First",
        path: pathOf(alice.user, first)
      })
      expect(yield* found(alice.client, { query: w, bucket_slug: second.slug, owner_username: alice.user.username }))
        .toEqual([
          a2.id
        ])
      expect(yield* found(alice.client, { query: w, bucket_slug: bobsOpen.slug, owner_username: bob.user.username }))
        .toEqual([
          b1.id
        ])
      // a missing Dock: no results, not an error
      expect(yield* found(alice.client, { query: w, bucket_slug: `missing-${unique()}` })).toEqual([])
      expect(yield* found(alice.client, { query: w, bucket_slug: first.slug, owner_username: bob.user.username }))
        .toEqual([])
      // owner_username alone
      expect(yield* foundSet(alice.client, { query: w, owner_username: alice.user.username })).toEqual(
        sorted([a1.id, a2.id])
      )
      expect(yield* found(alice.client, { query: w, owner_username: bob.user.username })).toEqual([b1.id])
      expect(yield* found(alice.client, { query: w, owner_username: `nobody${unique()}` })).toEqual([])
      // bob sees his own page and nothing of alice's private Docks
      expect(yield* found(bob.client, { query: w })).toEqual([b1.id])
    }))

  it.scoped("limit: 1-50 (0, 51, 1.5 and -1 are validation_error); limit 2 gives two hits; the default is 20", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Many", slug: `many-${unique()}` })
      const w = word()
      for (let i = 0; i < 25; i++) {
        yield* seedPage(owner.user, dock.id, `page-${i}`, {
          bodyText: `page ${i} ${w}`,
          content: `<p>page ${i} ${w}</p>`
        })
      }
      for (const limit of [0, 51, 1.5, -1]) {
        expect(yield* error(owner.client, "search_web_pages", { query: w, limit })).toMatchObject({
          code: "validation_error",
          status: 400
        })
      }
      expect(yield* found(owner.client, { query: w, limit: 2 })).toHaveLength(2)
      expect(yield* found(owner.client, { query: w, limit: 1 })).toHaveLength(1)
      const byDefault = yield* found(owner.client, { query: w })
      expect(byDefault).toHaveLength(20)
      expect(new Set(byDefault).size).toBe(20)
      const all = yield* found(owner.client, { query: w, limit: 50 })
      expect(all).toHaveLength(25)
      // the default and the small limits are the top of the same order
      expect(byDefault).toEqual(all.slice(0, 20))
      expect(yield* found(owner.client, { query: w, limit: 2 })).toEqual(all.slice(0, 2))
      expect(yield* found(owner.client, { query: w, bucket_slug: dock.slug, limit: 50 })).toEqual(all)
    }))

  // ---------------------------------------------------------------------------------------------------------
  // the query

  it.scoped("query: empty, whitespace-only or longer than 500 characters is validation_error; only stop words find nothing", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      yield* htmlPage(owner.client, owner.user.default_bucket_id, "stop", "the and of a page with the and words")
      for (const query of ["", "   ", "x".repeat(501)]) {
        expect(yield* error(owner.client, "search_web_pages", { query })).toMatchObject({
          code: "validation_error",
          status: 400
        })
      }
      expect(yield* error(owner.client, "search_web_pages", {})).toMatchObject({
        code: "validation_error",
        status: 400
      })
      expect(yield* error(owner.client, "search_web_pages", { query: 7 })).toMatchObject({ code: "validation_error" })
      expect(ok(yield* call(owner.client, "search_web_pages", { query: "the and" }))).toEqual({ pages: [] })
      // 500 characters is accepted
      expect(ok(yield* call(owner.client, "search_web_pages", { query: "y".repeat(500) }))).toEqual({ pages: [] })
    }))

  it.scoped("query: websearch syntax (\"quoted phrase\", -excluded, OR); plain words must all match", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Syntax", slug: `syntax-${unique()}` })
      const [a, b, c, d] = [word(), word(), word(), word()]
      const together = yield* htmlPage(owner.client, dock.id, "together", `${a} ${b} close together`)
      // both words, but never next to each other (not even across the summary/text boundary: the summary is
      // derived from this text, and the two are indexed one after the other)
      const apart = yield* htmlPage(owner.client, dock.id, "apart", `lorem ${b} ipsum dolor ${a} sit`)
      const withC = yield* htmlPage(owner.client, dock.id, "with-c", `${a} and ${c}`)
      const onlyD = yield* htmlPage(owner.client, dock.id, "only-d", `just ${d}`)

      expect(yield* foundSet(owner.client, { query: a })).toEqual(sorted([together.id, apart.id, withC.id]))
      expect(yield* found(owner.client, { query: `"${a} ${b}"` })).toEqual([together.id])
      expect(yield* foundSet(owner.client, { query: `${a} ${b}` })).toEqual(sorted([together.id, apart.id]))
      expect(yield* foundSet(owner.client, { query: `${a} -${c}` })).toEqual(sorted([together.id, apart.id]))
      expect(yield* foundSet(owner.client, { query: `${c} OR ${d}` })).toEqual(sorted([withC.id, onlyD.id]))
      expect(yield* found(owner.client, { query: `${c} ${d}` })).toEqual([])
      // case does not matter
      expect(yield* found(owner.client, { query: d.toUpperCase() })).toEqual([onlyD.id])
      // the phrase is marked in the snippet
      const [phrase] = yield* search(owner.client, { query: `"${a} ${b}"` })
      expect(phrase!.snippet).toContain(`**${a}**`)
      expect(phrase!.snippet).toContain(`**${b}**`)
    }))

  // ---------------------------------------------------------------------------------------------------------
  // tools/list

  it.scoped("tools/list: search_web_pages needs only query, bounds limit at 50, is read-only, and is served on /mcp/public", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const tool = (yield* listedTool(owner.client, "search_web_pages"))!
      expect(tool).toBeDefined()
      expect(tool.inputSchema.required).toEqual(["query"])
      expect(Object.keys(tool.inputSchema.properties ?? {}).sort()).toEqual([
        "bucket",
        "bucket_slug",
        "limit",
        "owner_username",
        "query"
      ])
      expect(tool.inputSchema.properties).toMatchObject({
        query: { type: "string", minLength: 1, maxLength: 500 },
        limit: { type: "integer", minimum: 1, maximum: 50 }
      })
      expect(tool.annotations).toMatchObject({ readOnlyHint: true })
      // the output schema: the success shape (beside the error body of a refused call)
      expect(outputShapes(tool)).toContainEqual(["pages"])

      const anonymous = yield* connectPublic(MODERN)
      const served = yield* listedTool(anonymous, "search_web_pages")
      expect(served?.inputSchema).toEqual(tool.inputSchema)
      expect(ok(yield* call(anonymous, "search_web_pages", { query: word() }))).toEqual({ pages: [] })
    }))
})
