/**
 * Issue 18's rough edges of the tools' interface, over the wire with a real MCP client: every Dock-naming field a
 * schema publishes works (fork_bucket, update_bucket_metadata, set_grounding_bucket, search_web_pages), page
 * slugs are looked up case-insensitively, error texts read as sentences, list_web_pages pages past 100, a type
 * change warns that the column's default was dropped, and a page is deleted by its UUID alone.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { fetchReply, unique } from "./support/Http.ts"
import type { Era } from "./support/McpClients.ts"
import {
  actor,
  call,
  createBucket,
  grant,
  listedTool,
  ok,
  pathOf,
  pushed,
  refused,
  seedPage
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"

type Named = { readonly id: string; readonly slug: string }

/** Every way `bucket` and `bucket_id` name a Dock, without the legacy `bucket_path`. */
const namings = (owner: { readonly username: string }, dock: Named) => [
  { bucket: dock.id },
  { bucket: pathOf(owner, dock) },
  { bucket: dock.slug },
  { bucket_id: dock.id }
]

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the MCP tools' rough edges", (it) => {
  it.scoped("fork_bucket, update_bucket_metadata and set_grounding_bucket take `bucket` and `bucket_id` alone", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const forker = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, {
        title: "Named",
        slug: `named-${unique()}`,
        visibility: "public"
      })
      const path = pathOf(owner.user, dock)

      for (const [index, naming] of namings(owner.user, dock).entries()) {
        const updated = ok(
          yield* call(owner.client, "update_bucket_metadata", { ...naming, name: `Named ${index}`, allow_forks: true })
        )
        expect(updated.bucket).toMatchObject({ id: dock.id, title: `Named ${index}`, allow_forks: true })

        expect(ok(yield* call(owner.client, "set_grounding_bucket", naming))).toEqual({ activeWorkspacePath: path })
      }

      // the forker names someone else's Dock: its UUID, owner/slug, a slug it can read, or bucket_id
      for (const [index, naming] of namings(owner.user, dock).entries()) {
        const fork = ok(yield* call(forker.client, "fork_bucket", { ...naming, new_name: `Fork ${index}` }))
        expect(fork.bucket).toMatchObject({ title: `Fork ${index}`, forked_from: { id: dock.id } })
      }

      // naming none is bad_request, and the schemas no longer require bucket_path
      for (const name of ["fork_bucket", "update_bucket_metadata", "set_grounding_bucket"]) {
        expect(refused(yield* call(owner.client, name, {})).error).toMatchObject({ code: "bad_request", status: 400 })
        const listed = yield* listedTool(owner.client, name)
        expect((listed!.inputSchema as { required?: Array<string> }).required ?? []).not.toContain("bucket_path")
      }
    }))

  it.scoped("search_web_pages takes `bucket` (UUID, owner/slug or slug) as the other read tools do", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const word = `edgesearch${unique()}`
      const one = yield* createBucket(owner.client, { title: "One", slug: `one-${unique()}` })
      const two = yield* createBucket(owner.client, { title: "Two", slug: `two-${unique()}` })
      for (const dock of [one, two]) {
        yield* pushed(owner.client, "push_web_page", {
          bucket: dock.id,
          page_title: `Page ${word}`,
          page_content: `<p>${word}</p>`
        })
      }
      const all = ok(yield* call(owner.client, "search_web_pages", { query: word })).pages as Array<any>
      expect(all).toHaveLength(2)
      for (const bucket of [one.id, pathOf(owner.user, one), one.slug]) {
        const hits = ok(yield* call(owner.client, "search_web_pages", { query: word, bucket })).pages as Array<any>
        expect(hits.map((hit) => hit.bucket.id)).toEqual([one.id])
      }
    }))

  it.scoped("a page's slug is found whatever its case, as wikilinks are", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Case", slug: `case-${unique()}` })
      const page = (yield* pushed(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "mixed-case",
        page_content: "<p>one</p>"
      })).part
      yield* pushed(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "mixed-case",
        page_content: "<p>2</p>"
      })
      const file = (yield* pushed(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_content: "---\ntitle: Notes\nslug: the-notes\n---\n# Notes\n"
      })).part

      const read = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "Mixed-Case" }))
      expect(read.part.id).toBe(page.id)
      expect(ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, page_slug: "MIXED-CASE" })).part.id)
        .toBe(page.id)
      expect(ok(yield* call(owner.client, "get_web_page_links", { bucket: dock.id, page_slug: "Mixed-Case" })))
        .toMatchObject({ outbound: [] })
      const versions = ok(
        yield* call(owner.client, "list_web_page_versions", { bucket: dock.id, web_page: "MIXED-case" })
      )
      expect(versions.versions).toHaveLength(2)
      expect(
        ok(yield* call(owner.client, "get_web_page_version", { bucket: dock.id, web_page: "Mixed-Case", version: 1 }))
      )
        .toMatchObject({ version: 1 })
      expect(
        ok(
          yield* call(owner.client, "restore_web_page_version", { bucket: dock.id, web_page: "Mixed-Case", version: 1 })
        )
          .part
      ).toMatchObject({ id: page.id, version: 3 })
      expect(ok(yield* call(owner.client, "set_cover_web_page", { bucket: dock.id, web_page: "Mixed-CASE" })).bucket)
        .toMatchObject({ cover_page_id: page.id })
      expect(
        ok(yield* call(owner.client, "get_markdown_file", { bucket: dock.id, markdown_file: "The-Notes" })).part.id
      )
        .toBe(file.id)
      expect(ok(yield* call(owner.client, "delete_markdown_file", { bucket: dock.id, markdown_file: "THE-NOTES" })))
        .toEqual({ ok: true })
      expect(ok(yield* call(owner.client, "delete_web_page", { bucket: dock.id, web_page: "Mixed-Case" })))
        .toEqual({ ok: true })
      expect(refused(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "mixed-case" })).error.code)
        .toBe("not_found")
    }))

  it.scoped("delete_web_page and delete_markdown_file take a page UUID alone; the caller must still write there", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const viewer = yield* actor(MODERN)
      const outsider = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Deletes", slug: `deletes-${unique()}` })
      yield* grant(dock.id, viewer.user, "viewer")
      const page = (yield* pushed(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "going",
        page_content: "<p>going</p>"
      })).part
      const file = (yield* pushed(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_content: "---\ntitle: Gone\n---\nGone\n"
      })).part
      const missing = "00000000-0000-4000-8000-000000000000"

      // an outsider cannot tell a page it may not see from one that does not exist; a viewer may not delete
      for (const id of [page.id, missing]) {
        expect(refused(yield* call(outsider.client, "delete_web_page", { web_page: id })).error).toEqual({
          code: "not_found",
          status: 404,
          message: `No page "${id}"`
        })
      }
      expect(refused(yield* call(viewer.client, "delete_web_page", { web_page: page.id })).error.code)
        .toBe("permission_denied")
      // a slug alone still needs its Dock
      expect(refused(yield* call(owner.client, "delete_web_page", { web_page: "going" })).error.code)
        .toBe("bad_request")

      expect(ok(yield* call(owner.client, "delete_web_page", { web_page: page.id }))).toEqual({ ok: true })
      expect(refused(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: page.id })).error.code)
        .toBe("not_found")
      // delete_markdown_file deletes only Markdown files, also by UUID alone
      const other = (yield* pushed(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "kept",
        page_content: "<p>kept</p>"
      })).part
      expect(refused(yield* call(owner.client, "delete_markdown_file", { markdown_file: other.id })).error.code)
        .toBe("not_found")
      expect(ok(yield* call(owner.client, "delete_markdown_file", { markdown_file: file.id }))).toEqual({ ok: true })
    }))

  it.scoped("list_web_pages and list_markdown_files page past 100 with next_cursor, in either sort", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Many", slug: `many-${unique()}` })
      const files = Array.from({ length: 105 }, (_, index) => `file-${String(index).padStart(3, "0")}`)
      const pages = Array.from({ length: 30 }, (_, index) => `Page-${String(index).padStart(3, "0")}`)
      for (const slug of files) {
        yield* seedPage(owner.user, dock.id, slug, {
          title: slug,
          contentType: "markdown",
          pageKind: "markdown_file",
          content: `# ${slug}`
        })
      }
      for (const title of pages) yield* seedPage(owner.user, dock.id, title.toLowerCase(), { title })
      // half the pages share one instant: the recent order breaks the tie by id, and the cursor must too
      yield* server.sql`update parts set updated_at = '2026-01-02T03:04:05.123456Z'
        where dock_id = ${dock.id} and slug like 'file-0%'`

      const walk = (tool: string, args: Record<string, unknown>) =>
        Effect.gen(function*() {
          const seen: Array<string> = []
          let cursor: string | undefined
          for (let round = 0; round < 20; round++) {
            const answer = ok(
              yield* call(owner.client, tool, { bucket: dock.id, ...args, ...(cursor ? { cursor } : {}) })
            )
            seen.push(...(answer.parts as Array<{ slug: string }>).map((part) => part.slug))
            expect(answer.has_more).toBe(answer.next_cursor !== null)
            if (!answer.has_more) return seen
            cursor = answer.next_cursor
          }
          throw new Error("the cursor never ended")
        })

      const all = [...files, ...pages.map((title) => title.toLowerCase())]
      const alphabetical = yield* walk("list_web_pages", { limit: 40 })
      expect(alphabetical).toEqual([...all].sort())
      const recent = yield* walk("list_web_pages", { limit: 33, sort: "recent" })
      expect(recent).toHaveLength(all.length)
      expect(new Set(recent)).toEqual(new Set(all))
      // newest first: the seeded pages (now) before the files moved back in time
      expect(recent.slice(0, 30).every((slug) => slug.startsWith("page-"))).toBe(true)
      expect(yield* walk("list_web_pages", {})).toEqual([...all].sort())
      expect(yield* walk("list_markdown_files", {})).toEqual(files)

      const first = ok(yield* call(owner.client, "list_web_pages", { bucket: dock.id, limit: 100 }))
      expect(first.parts).toHaveLength(100)
      expect(first).toMatchObject({ has_more: true, next_cursor: expect.any(String) })
      for (const args of [{ cursor: "nonsense" }, { cursor: first.next_cursor, sort: "recent" }]) {
        expect(refused(yield* call(owner.client, "list_web_pages", { bucket: dock.id, ...args })).error)
          .toMatchObject({ code: "validation_error", details: { field: "cursor" } })
      }
    }))

  it.scoped("update_micro_db_column: a type change says in warnings that it dropped the column's default", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Typed", slug: `typed-${unique()}` })
      ok(
        yield* call(owner.client, "create_micro_db_table", {
          bucket: dock.id,
          name: "Stock",
          columns: [
            { name: "Item", type: "text" },
            { name: "Count", type: "integer", default: 5 },
            { name: "Shelf", type: "integer", default: 1 }
          ]
        })
      )
      const change = (column: string, patch: Record<string, unknown>) =>
        Effect.map(
          call(owner.client, "update_micro_db_column", { bucket: dock.id, table: "stock", column, patch }),
          ok
        )

      const retyped = yield* change("count", { type: "text" })
      expect(retyped.column).toMatchObject({ type: "text", default: null })
      expect(retyped.warnings).toEqual([
        "The column's default (5) was dropped because its type changed from integer to text; set a new one with " +
        "patch.default"
      ])
      // a new default given with the type, or no type change, drops nothing
      expect((yield* change("shelf", { type: "text", default: "A" })).warnings).toEqual([])
      expect((yield* change("count", { name: "Amount" })).warnings).toEqual([])
      // a column without a default has nothing to drop
      expect((yield* change("item", { type: "url" })).warnings).toEqual([])
      const tool = yield* listedTool(owner.client, "update_micro_db_column")
      expect((tool as unknown as { description: string }).description).toContain("drops the column's default")
    }))

  it.scoped("push_markdown's description says plainly that a standalone artifact is readable by anyone with its link", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor(MODERN)
      const tool = yield* listedTool(owner.client, "push_markdown")
      expect((tool as unknown as { description: string }).description).toContain("anyone with its link can read it")
      // and it is so: the link alone, with no token, serves it
      const loose = (yield* pushed(owner.client, "push_markdown", { page_content: "# Loose\n\nOpen to all." })).part
      expect(loose.bucket_id).toBeNull()
      const reply = yield* fetchReply(`${server.url}/a/${loose.public_slug}`)
      expect(reply.status).toBe(200)
      expect(reply.text).toContain("Open to all.")
    }))

  it.scoped("error texts read as sentences: a bad row_id, a value that cannot become an integer, a missing field", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Words", slug: `words-${unique()}` })
      ok(
        yield* call(owner.client, "create_micro_db_table", {
          bucket: dock.id,
          name: "Notes",
          columns: [{ name: "Body", type: "text" }]
        })
      )
      const row =
        ok(yield* call(owner.client, "insert_micro_db_row", { bucket: dock.id, table: "notes", data: { body: "x" } }))
          .row
      const refusal = (name: string, args: Record<string, unknown>) =>
        Effect.map(call(owner.client, name, { bucket: dock.id, ...args }), (result) => refused(result).error)

      expect(yield* refusal("get_micro_db_row", { table: "notes", row_id: "abc" })).toMatchObject({
        code: "validation_error",
        message: `Invalid arguments: row_id must be a row's UUID, not "abc"`
      })
      expect(yield* refusal("get_micro_db_row", { table: "notes" })).toMatchObject({
        code: "validation_error",
        message: "Invalid arguments: row_id is required"
      })
      const converted = yield* refusal("update_micro_db_column", {
        table: "notes",
        column: "body",
        patch: { type: "integer" }
      })
      expect(converted.code).toBe("validation_error")
      expect(converted.message).toContain(`"x" cannot become an integer`)
      expect(converted.details).toMatchObject({ errors: [{ row_id: row.id, column: "body" }] })
      const byId = yield* refusal("query_micro_db_rows", {
        table: "notes",
        filter: [{ column: "id", op: "eq", value: "not-a-uuid" }]
      })
      expect(byId.message).toContain("an id must be a row's UUID")
    }))
})
