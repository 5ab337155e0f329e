/**
 * Issue 18 over the wire, with real MCP clients: write preconditions (`base_version` on the page pushes,
 * restores and deletes, and on row updates and deletes, whose rows carry a `version`) and the version diffs
 * (diff_web_page_versions, diff_markdown_file_versions, and `added`/`removed` in list_*_versions). A stale
 * base_version is conflict (409) with details.current_version and the diff (a row's: the row as it is now), and
 * writes nothing; two writers racing with the same base_version: exactly one wins.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import type { AnyClient, Era } from "./support/McpClients.ts"
import {
  call,
  cast as castOf,
  connectPublic,
  createBucket,
  listedTool,
  ok,
  outputShapes,
  refused,
  toolError as error
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"
const cast = castOf("Precondition", MODERN)

/** A Markdown web page's source, kept verbatim (no sanitizing): what the diffs are of. */
const markdownPage = (client: AnyClient, bucket: string, slug: string, content: string, base?: number) =>
  call(client, "push_web_page", {
    bucket,
    page_slug: slug,
    content_type: "markdown",
    page_content: content,
    ...(base === undefined ? {} : { base_version: base })
  })

const versionsOf = (client: AnyClient, bucket: string, page: string) =>
  Effect.map(
    call(client, "list_web_page_versions", { bucket, web_page: page }),
    (result) => ok(result).versions as Array<{ version: number; added: number | null; removed: number | null }>
  )

const contentOf = (client: AnyClient, bucket: string, page: string) =>
  Effect.map(call(client, "get_web_page", { bucket, web_page: page }), (result) => ok(result).part)

interface ConflictDetails {
  readonly current_version: number
  readonly base_version: number
  readonly diff: { diff: string; added: number; removed: number; truncated: boolean } | null
}

const lines = (...text: Array<string>) => text.map((line) => `${line}\n`).join("")

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("write preconditions and diffs", (it) => {
  it.scoped("two writers racing on one page with the same base_version: exactly one wins, the other gets the diff", () =>
    Effect.gen(function*() {
      const { dock, editor, owner } = yield* cast
      const base = lines("# Plan", "one", "two", "three")
      expect(ok(yield* markdownPage(owner.client, dock.id, "plan", base)).part.version).toBe(1)
      const mine = lines("# Plan", "one", "two (owner)", "three")
      const theirs = lines("# Plan", "one", "two", "three", "four (editor)")
      const results = yield* Effect.all([
        markdownPage(owner.client, dock.id, "plan", mine, 1),
        markdownPage(editor.client, dock.id, "plan", theirs, 1)
      ], { concurrency: "unbounded" })
      const won = results.filter((result) => result.isError !== true)
      const lost = results.filter((result) => result.isError === true)
      expect(won).toHaveLength(1)
      expect(lost).toHaveLength(1)
      const winner = ok(won[0]!)
      expect(winner).toMatchObject({ action: "updated", part: { version: 2 } })
      const conflict = refused(lost[0]!).error
      expect(conflict).toMatchObject({ code: "conflict", status: 409 })
      const details = conflict.details as ConflictDetails
      expect(details).toMatchObject({ current_version: 2, base_version: 1 })
      const winnerContent = results[0] === won[0] ? mine : theirs
      // The diff is from base_version to the winner's version: what the loser missed.
      expect(details.diff!.diff).toContain("--- version 1\n+++ version 2\n@@ ")
      if (winnerContent === mine) {
        expect(details.diff).toMatchObject({ added: 1, removed: 1, truncated: false })
        expect(details.diff!.diff).toContain("-two\n+two (owner)\n")
      } else {
        expect(details.diff).toMatchObject({ added: 1, removed: 0, truncated: false })
        expect(details.diff!.diff).toContain("+four (editor)\n")
      }
      expect((yield* contentOf(owner.client, dock.id, "plan")).content).toBe(winnerContent)
      expect((yield* versionsOf(owner.client, dock.id, "plan")).map((v) => v.version)).toEqual([1, 2])
      // The loser reads again and retries with the version it now knows.
      const retried = ok(yield* markdownPage(owner.client, dock.id, "plan", lines("# Plan", "merged"), 2))
      expect(retried.part.version).toBe(3)
    }))

  it.scoped("a stale base_version changes nothing; the right one writes; a page that does not exist is version 0", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* markdownPage(owner.client, dock.id, "notes", lines("a"))
      ok(yield* markdownPage(owner.client, dock.id, "notes", lines("a", "b"), 1))
      const stale = refused(yield* markdownPage(owner.client, dock.id, "notes", lines("x"), 1)).error
      expect(stale).toMatchObject({ code: "conflict", status: 409 })
      expect(stale.details).toEqual({
        current_version: 2,
        base_version: 1,
        diff: {
          diff: "--- version 1\n+++ version 2\n@@ -1,1 +1,2 @@\n a\n+b\n",
          added: 1,
          removed: 0,
          truncated: false
        }
      })
      // A base_version past the current one: no stored version to diff from.
      const ahead = refused(yield* markdownPage(owner.client, dock.id, "notes", lines("x"), 7)).error
      expect(ahead.details).toEqual({ current_version: 2, base_version: 7, diff: null })
      expect((yield* contentOf(owner.client, dock.id, "notes")).content).toBe(lines("a", "b"))
      // Unchanged content with the current base_version is still "unchanged".
      expect(ok(yield* markdownPage(owner.client, dock.id, "notes", lines("a", "b"), 2)).action).toBe("unchanged")
      // A page that is not there: conflict with current_version 0, and nothing is created.
      const missing = refused(yield* markdownPage(owner.client, dock.id, "nowhere", lines("x"), 1)).error
      expect(missing).toMatchObject({ code: "conflict", details: { current_version: 0, base_version: 1, diff: null } })
      expect(yield* error(owner.client, "get_web_page", { bucket: dock.id, web_page: "nowhere" })).toMatchObject({
        code: "not_found"
      })
      // push_markdown_file and push_markdown (with a Dock) take it too; push_markdown without one refuses it.
      const file = "---\ntitle: Spec\n---\nbody\n"
      ok(yield* call(owner.client, "push_markdown_file", { bucket: dock.id, page_slug: "spec", page_content: file }))
      expect(
        yield* error(owner.client, "push_markdown_file", {
          bucket: dock.id,
          page_slug: "spec",
          page_content: `${file}more\n`,
          base_version: 3
        })
      ).toMatchObject({ code: "conflict", details: { current_version: 1, base_version: 3 } })
      const viaMarkdown = ok(
        yield* call(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "spec",
          page_content: `${file}more\n`,
          base_version: 1
        })
      )
      expect(viaMarkdown.part.version).toBe(2)
      expect(
        yield* error(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "spec",
          page_content: `${file}again\n`,
          base_version: 1
        })
      ).toMatchObject({ code: "conflict", details: { current_version: 2 } })
      expect(yield* error(owner.client, "push_markdown", { page_content: "# Alone\n", base_version: 1 })).toMatchObject(
        { code: "validation_error", details: { field: "base_version" } }
      )
    }))

  it.scoped("restore and delete with a stale base_version are refused and change nothing", () =>
    Effect.gen(function*() {
      const { dock, editor, owner } = yield* cast
      yield* markdownPage(owner.client, dock.id, "doc", lines("v1"))
      yield* markdownPage(owner.client, dock.id, "doc", lines("v2"))
      const restoreStale = yield* error(editor.client, "restore_web_page_version", {
        bucket: dock.id,
        web_page: "doc",
        version: 1,
        base_version: 1
      })
      expect(restoreStale).toMatchObject({ code: "conflict", status: 409, details: { current_version: 2 } })
      expect((restoreStale.details as ConflictDetails).diff!.diff).toContain("-v1\n+v2\n")
      expect((yield* versionsOf(owner.client, dock.id, "doc")).map((v) => v.version)).toEqual([1, 2])
      const restored = ok(
        yield* call(editor.client, "restore_web_page_version", {
          bucket: dock.id,
          web_page: "doc",
          version: 1,
          base_version: 2
        })
      )
      expect(restored.part.version).toBe(3)
      expect((yield* versionsOf(owner.client, dock.id, "doc")).at(-1)).toMatchObject({ added: 1, removed: 1 })

      const deleteStale = yield* error(owner.client, "delete_web_page", {
        bucket: dock.id,
        web_page: "doc",
        base_version: 2
      })
      expect(deleteStale).toMatchObject({ code: "conflict", details: { current_version: 3, base_version: 2 } })
      expect((yield* contentOf(owner.client, dock.id, "doc")).content).toBe(lines("v1"))
      ok(yield* call(owner.client, "delete_web_page", { bucket: dock.id, web_page: "doc", base_version: 3 }))
      expect(yield* error(owner.client, "get_web_page", { bucket: dock.id, web_page: "doc" })).toMatchObject({
        code: "not_found"
      })

      // The Markdown file family.
      const file = (body: string) => `---\ntitle: Guide\n---\n${body}\n`
      const bucket = dock.id
      ok(yield* call(owner.client, "push_markdown_file", { bucket, page_slug: "guide", page_content: file("one") }))
      ok(yield* call(owner.client, "push_markdown_file", { bucket, page_slug: "guide", page_content: file("two") }))
      expect(
        yield* error(owner.client, "restore_markdown_file_version", {
          bucket,
          markdown_file: "guide",
          version: 1,
          base_version: 1
        })
      ).toMatchObject({ code: "conflict", details: { current_version: 2 } })
      expect(
        yield* error(owner.client, "delete_markdown_file", { bucket, markdown_file: "guide", base_version: 1 })
      ).toMatchObject({ code: "conflict", details: { current_version: 2, base_version: 1 } })
      expect(ok(yield* call(owner.client, "get_markdown_file", { bucket, markdown_file: "guide" })).part.version).toBe(
        2
      )
      ok(yield* call(owner.client, "delete_markdown_file", { bucket, markdown_file: "guide", base_version: 2 }))
    }))

  it.scoped("rows carry a version; update and delete with a stale one are refused; racing updates: one wins", () =>
    Effect.gen(function*() {
      const { dock, editor, owner } = yield* cast
      const bucket = dock.id
      ok(
        yield* call(owner.client, "create_micro_db_table", {
          bucket,
          name: "Tasks",
          columns: [{ name: "Title", type: "text" }, { name: "Done", type: "boolean" }]
        })
      )
      const row = ok(yield* call(owner.client, "insert_micro_db_row", { bucket, table: "tasks", data: { title: "a" } }))
        .row
      expect(row.version).toBe(1)
      const many = ok(
        yield* call(owner.client, "insert_micro_db_rows", { bucket, table: "tasks", rows: [{ title: "b" }] })
      )
      expect(many.rows[0].version).toBe(1)
      const updated = ok(
        yield* call(owner.client, "update_micro_db_row", {
          bucket,
          table: "tasks",
          row_id: row.id,
          data: { done: true },
          base_version: 1
        })
      ).row
      expect(updated).toMatchObject({ id: row.id, version: 2, data: { title: "a", done: true } })
      const plain = ok(
        yield* call(owner.client, "update_micro_db_row", {
          bucket,
          table: "tasks",
          row_id: row.id,
          data: { title: "A" }
        })
      ).row
      expect(plain.version).toBe(3)
      expect(ok(yield* call(owner.client, "get_micro_db_row", { bucket, table: "tasks", row_id: row.id })).row)
        .toMatchObject({ version: 3 })
      const queried = ok(yield* call(owner.client, "query_micro_db_rows", { bucket, table: "tasks" })).rows
      expect(queried.map((entry: { version: number }) => entry.version)).toEqual([3, 1])

      const stale = yield* error(editor.client, "update_micro_db_row", {
        bucket,
        table: "tasks",
        row_id: row.id,
        data: { title: "stale" },
        base_version: 2
      })
      expect(stale).toMatchObject({
        code: "conflict",
        status: 409,
        details: { current_version: 3, base_version: 2, row: { id: row.id, version: 3, data: { title: "A" } } }
      })
      const staleDelete = yield* error(editor.client, "delete_micro_db_row", {
        bucket,
        table: "tasks",
        row_id: row.id,
        base_version: 1
      })
      expect(staleDelete).toMatchObject({ code: "conflict", details: { current_version: 3, base_version: 1 } })
      expect(ok(yield* call(owner.client, "get_micro_db_row", { bucket, table: "tasks", row_id: row.id })).row)
        .toMatchObject({ version: 3, data: { title: "A", done: true } })

      // Two writers, one base_version: exactly one update lands.
      const racing = yield* Effect.all(
        [owner, editor].map((who, index) =>
          call(who.client, "update_micro_db_row", {
            bucket,
            table: "tasks",
            row_id: row.id,
            data: { title: `racer ${index}` },
            base_version: 3
          })
        ),
        { concurrency: "unbounded" }
      )
      expect(racing.filter((result) => result.isError !== true)).toHaveLength(1)
      const loser = refused(racing.find((result) => result.isError === true)!).error
      expect(loser).toMatchObject({ code: "conflict", details: { current_version: 4, base_version: 3 } })
      const after = ok(yield* call(owner.client, "get_micro_db_row", { bucket, table: "tasks", row_id: row.id })).row
      expect(after.version).toBe(4)
      expect(after.data.title).toBe(ok(racing.find((result) => result.isError !== true)!).row.data.title)

      ok(yield* call(owner.client, "delete_micro_db_row", { bucket, table: "tasks", row_id: row.id, base_version: 4 }))
      expect(yield* error(owner.client, "get_micro_db_row", { bucket, table: "tasks", row_id: row.id })).toMatchObject({
        code: "not_found"
      })
    }))

  it.scoped("diff_web_page_versions: from/to, to_version defaults to the current one, unknown versions not_found", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer } = yield* cast
      const bucket = dock.id
      yield* markdownPage(owner.client, bucket, "story", lines("alpha", "beta", "gamma"))
      yield* markdownPage(owner.client, bucket, "story", lines("alpha", "BETA", "gamma", "delta"))
      yield* markdownPage(owner.client, bucket, "story", lines("gamma", "delta"))
      const oneToTwo = ok(
        yield* call(viewer.client, "diff_web_page_versions", {
          bucket,
          web_page: "story",
          from_version: 1,
          to_version: 2
        })
      )
      expect(oneToTwo).toEqual({
        from_version: 1,
        to_version: 2,
        diff: "--- version 1\n+++ version 2\n@@ -1,3 +1,4 @@\n alpha\n-beta\n+BETA\n gamma\n+delta\n",
        added: 2,
        removed: 1,
        truncated: false
      })
      const toCurrent = ok(
        yield* call(viewer.client, "diff_web_page_versions", { bucket, web_page: "story", from_version: 2 })
      )
      expect(toCurrent).toMatchObject({ from_version: 2, to_version: 3, added: 0, removed: 2, truncated: false })
      expect(toCurrent.diff).toBe("--- version 2\n+++ version 3\n@@ -1,4 +1,2 @@\n-alpha\n-BETA\n gamma\n delta\n")
      // Backwards works too; the same version is an empty diff.
      expect(
        ok(
          yield* call(viewer.client, "diff_web_page_versions", {
            bucket,
            web_page: "story",
            from_version: 3,
            to_version: 1
          })
        )
      ).toMatchObject({ added: 2, removed: 1 })
      expect(ok(yield* call(viewer.client, "diff_web_page_versions", { bucket, web_page: "story", from_version: 3 })))
        .toMatchObject({ diff: "", added: 0, removed: 0, truncated: false })
      for (const args of [{ from_version: 9 }, { from_version: 1, to_version: 4 }]) {
        expect(yield* error(viewer.client, "diff_web_page_versions", { bucket, web_page: "story", ...args }))
          .toMatchObject({ code: "not_found", status: 404 })
      }
      expect(yield* error(viewer.client, "diff_web_page_versions", { bucket, web_page: "nope", from_version: 1 }))
        .toMatchObject({ code: "not_found" })
      expect(yield* error(viewer.client, "diff_web_page_versions", { bucket, web_page: "story", from_version: 0 }))
        .toMatchObject({ code: "validation_error" })

      // list_web_page_versions: each version's lines against the one before; version 1 all added.
      expect((yield* versionsOf(viewer.client, bucket, "story")).map(({ added, removed, version }) => ({
        version,
        added,
        removed
      }))).toEqual([
        { version: 1, added: 3, removed: 0 },
        { version: 2, added: 2, removed: 1 },
        { version: 3, added: 0, removed: 2 }
      ])
    }))

  it.scoped("diff_markdown_file_versions and list_markdown_file_versions; public Docks' diffs on /mcp/public", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const bucket = dock.id
      const file = (body: string) => `---\ntitle: Notes\n---\n${body}`
      ok(yield* call(owner.client, "push_markdown_file", { bucket, page_slug: "notes", page_content: file("one\n") }))
      ok(
        yield* call(owner.client, "push_markdown_file", {
          bucket,
          page_slug: "notes",
          page_content: file("one\ntwo\n")
        })
      )
      expect(
        ok(
          yield* call(owner.client, "diff_markdown_file_versions", { bucket, markdown_file: "notes", from_version: 1 })
        )
      )
        .toEqual({
          from_version: 1,
          to_version: 2,
          diff: "--- version 1\n+++ version 2\n@@ -2,3 +2,4 @@\n title: Notes\n ---\n one\n+two\n",
          added: 1,
          removed: 0,
          truncated: false
        })
      const versions = ok(yield* call(owner.client, "list_markdown_file_versions", { bucket, markdown_file: "notes" }))
        .versions
      expect(versions.map((v: any) => [v.added, v.removed])).toEqual([[4, 0], [1, 0]])
      // A web page is not a Markdown file.
      yield* markdownPage(owner.client, bucket, "web", lines("x"))
      expect(
        yield* error(owner.client, "diff_markdown_file_versions", { bucket, markdown_file: "web", from_version: 1 })
      )
        .toMatchObject({ code: "not_found" })

      // Anyone reads a public Dock's diffs, as its versions.
      const open = yield* createBucket(owner.client, { title: "Open", slug: `open-${unique()}`, visibility: "public" })
      yield* markdownPage(owner.client, open.id, "page", lines("first"))
      yield* markdownPage(owner.client, open.id, "page", lines("second"))
      const anonymous = yield* connectPublic(MODERN)
      expect(
        ok(yield* call(anonymous, "diff_web_page_versions", { bucket: open.id, web_page: "page", from_version: 1 }))
      ).toMatchObject({ added: 1, removed: 1, to_version: 2 })

      // A fork's copy is version 1 of the new page: all its lines added.
      ok(
        yield* call(owner.client, "update_bucket_metadata", {
          bucket_path: `${owner.user.username}/${open.slug}`,
          allow_forks: true
        })
      )
      yield* markdownPage(owner.client, open.id, "long", lines("a", "b", "c") + "d")
      const fork = ok(
        yield* call(owner.client, "fork_bucket", {
          bucket_path: `${owner.user.username}/${open.slug}`,
          new_name: "Copy"
        })
      ).bucket
      expect((yield* versionsOf(owner.client, fork.id, "long")).map(({ added, removed }) => [added, removed])).toEqual([
        [4, 0]
      ])
      expect((yield* versionsOf(owner.client, fork.id, "page")).map(({ added, removed }) => [added, removed])).toEqual([
        [1, 0]
      ])
    }))

  it.scoped("tools/list shows the diff tools and base_version with complete schemas", () =>
    Effect.gen(function*() {
      const { owner } = yield* cast
      for (const name of ["diff_web_page_versions", "diff_markdown_file_versions"]) {
        const tool = (yield* listedTool(owner.client, name)) as any
        expect(tool, name).toBeDefined()
        const page = name === "diff_web_page_versions" ? "web_page" : "markdown_file"
        expect(Object.keys(tool.inputSchema.properties).sort()).toEqual(
          ["bucket", "from_version", page, "to_version"].sort()
        )
        expect([...tool.inputSchema.required].sort()).toEqual(["bucket", "from_version", page].sort())
        expect(tool.inputSchema.properties.from_version).toMatchObject({ type: "integer", minimum: 1 })
        expect(outputShapes(tool)).toContainEqual([
          "added",
          "diff",
          "from_version",
          "removed",
          "to_version",
          "truncated"
        ])
        expect(JSON.stringify(tool.inputSchema)).not.toContain("$ref")
        expect(tool.annotations).toMatchObject({ readOnlyHint: true })
        expect(tool.description).toContain("to_version")
      }
      for (
        const name of [
          "push_web_page",
          "push_markdown_file",
          "push_markdown",
          "restore_web_page_version",
          "restore_markdown_file_version",
          "delete_web_page",
          "delete_markdown_file",
          "update_micro_db_row",
          "delete_micro_db_row"
        ]
      ) {
        const tool = (yield* listedTool(owner.client, name)) as any
        expect(tool.inputSchema.properties.base_version, name).toMatchObject({ type: "integer", minimum: 1 })
        expect(tool.inputSchema.required ?? [], name).not.toContain("base_version")
        expect(tool.description, name).toContain("base_version")
        expect(tool.description, name).toContain("conflict")
      }
      const versions = (yield* listedTool(owner.client, "list_web_page_versions")) as any
      const listed = JSON.stringify(versions.outputSchema)
      expect(listed).toContain(`"added":`)
      expect(listed).toContain(`"removed":`)
      // Stored counts are what the tools show.
      const server = yield* TestServer
      const [columns] = yield* server.sql<{ n: number }>`select count(*)::int as n from information_schema.columns
        where table_name = 'part_versions' and column_name in ('lines_added', 'lines_removed')`
      expect(columns!.n).toBe(2)
    }))
})
