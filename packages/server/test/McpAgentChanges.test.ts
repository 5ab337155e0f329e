/**
 * Undo an agent over the wire (issue 18, docs/undo.md): an owner A and an editor B (an agent invited to A's Dock,
 * writing with its own token). B creates a page, edits a page A wrote, deletes another, inserts rows, updates a
 * row A inserted and deletes another. The owner finds B's token id in get_bucket's recent_activity, lists B's
 * changes, dry-runs the revert (the plan, and nothing changes), then reverts: the edited page is back to A's
 * version as a new version, the created page is gone, the deleted page is back with its history, and the rows are
 * as A left them. A non-owner is refused; a bad token_id or since is a validation_error.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { AnyClient } from "./support/McpClients.ts"
import { call, cast, ok, refused } from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

interface Step {
  readonly subject: string
  readonly action: string
  readonly slug?: string | null
  readonly row_id?: string
  readonly from_version?: number
  readonly to_version?: number
  readonly new_version?: number
  readonly note?: string
}

const page = (client: AnyClient, bucket: string, web_page: string) => call(client, "get_web_page", { bucket, web_page })
const push = (client: AnyClient, bucket: string, slug: string, html: string) =>
  Effect.map(
    call(client, "push_web_page", { bucket, page_slug: slug, page_title: slug, page_content: html }),
    (result) => ok(result).part as { id: string; version: number }
  )
const rowsOf = (client: AnyClient, bucket: string) =>
  Effect.map(
    call(client, "query_micro_db_rows", { bucket, table: "tasks", limit: 100 }),
    (result) => (ok(result).rows as Array<{ id: string; data: Record<string, unknown> }>)
  )
const dataOf = (rows: ReadonlyArray<{ id: string; data: Record<string, unknown> }>) =>
  Object.fromEntries(rows.map((row) => [row.id, row.data]))

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("undo an agent", (it) => {
  it.scoped("the owner lists, dry-runs and reverts an invited agent's pages and rows; others are refused", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { dock, editor, outsider, owner } = yield* cast("Undo")
      const bucket = dock.id
      const a = owner.client
      const b = editor.client

      // A's work: two pages and a table with two rows.
      const alpha = yield* push(a, bucket, "alpha", "<p>A wrote alpha</p>")
      const beta = yield* push(a, bucket, "beta", "<p>A wrote beta</p>")
      ok(
        yield* call(a, "create_micro_db_table", {
          bucket,
          name: "Tasks",
          slug: "tasks",
          columns: [{ name: "Title", type: "text" }, { name: "Done", type: "boolean" }]
        })
      )
      const [r1, r2] = ok(
        yield* call(a, "insert_micro_db_rows", {
          bucket,
          table: "tasks",
          rows: [{ title: "first", done: false }, { title: "second", done: false }]
        })
      ).rows as Array<{ id: string }>
      const before = dataOf(yield* rowsOf(a, bucket))
      const [{ now }] = yield* server.sql<{ now: Date }>`select clock_timestamp() as now`
      const since = now.toISOString()

      // B's work, with B's own token.
      const gamma = yield* push(b, bucket, "gamma", "<p>B made gamma</p>")
      yield* push(b, bucket, "alpha", "<p>B rewrote alpha</p>")
      ok(yield* call(b, "delete_web_page", { bucket, web_page: "beta" }))
      const inserted = ok(
        yield* call(b, "insert_micro_db_rows", {
          bucket,
          table: "tasks",
          rows: [{ title: "third", done: true }, { title: "fourth", done: true }]
        })
      ).rows as Array<{ id: string }>
      ok(yield* call(b, "update_micro_db_row", { bucket, table: "tasks", row_id: r1!.id, data: { done: true } }))
      ok(yield* call(b, "delete_micro_db_row", { bucket, table: "tasks", row_id: r2!.id }))

      // The owner finds B's token id in the Dock's recent activity.
      const activity = ok(yield* call(a, "get_bucket", { bucket })).bucket.recent_activity as Array<
        { actor: { username: string }; token_id?: string }
      >
      const tokenId = activity.find((entry) => entry.actor.username === editor.user.username)?.token_id
      expect(tokenId).toMatch(/^[0-9a-f-]{36}$/)
      const args = { bucket, token_id: tokenId!, since }
      // list_web_page_versions names the token of each version to members too.
      const alphaVersions = ok(yield* call(a, "list_web_page_versions", { bucket, web_page: "alpha" })).versions
      expect(alphaVersions[1].author.token_id).toBe(tokenId)

      // The list: pages with versions, the deletion, the row changes.
      const listed = ok(yield* call(a, "list_agent_changes", args))
      expect(listed.buckets).toHaveLength(1)
      const changes = listed.buckets[0]
      expect(changes).toMatchObject({ bucket_id: bucket, truncated: false, schema_changes: [] })
      const pages = Object.fromEntries((changes.pages as Array<any>).map((p) => [p.slug, p]))
      expect(Object.keys(pages).sort()).toEqual(["alpha", "gamma"])
      expect(pages.alpha).toMatchObject({ page_id: alpha.id, version: 2, created: false })
      expect(pages.alpha.versions.map((v: any) => v.version)).toEqual([2])
      expect(pages.gamma).toMatchObject({ page_id: gamma.id, version: 1, created: true })
      expect(changes.deleted_pages).toEqual([
        expect.objectContaining({ page_id: beta.id, slug: "beta", version: 1 })
      ])
      expect((changes.row_changes as Array<any>).map((c) => [c.row_id, c.op, c.table])).toEqual([
        [inserted[0]!.id, "insert", "tasks"],
        [inserted[1]!.id, "insert", "tasks"],
        [r1!.id, "update", "tasks"],
        [r2!.id, "delete", "tasks"]
      ])
      // Without a Dock named: every Dock the owner owns that B changed (this one).
      const everywhere = ok(yield* call(a, "list_agent_changes", { token_id: tokenId!, since }))
      expect(everywhere.buckets.map((x: any) => x.bucket_id)).toEqual([bucket])

      // The dry run: the plan, and nothing changes.
      const plan = ok(yield* call(a, "revert_agent_changes", { ...args, dry_run: true }))
      expect(plan.dry_run).toBe(true)
      const planned = plan.buckets[0].steps as Array<Step>
      expect(planned).toEqual(expect.arrayContaining([
        expect.objectContaining({ subject: "page", action: "undelete_page", slug: "beta", from_version: 1 }),
        expect.objectContaining({
          subject: "page",
          action: "restore_version",
          slug: "alpha",
          from_version: 2,
          to_version: 1
        }),
        expect.objectContaining({ subject: "page", action: "delete_page", slug: "gamma", from_version: 1 }),
        expect.objectContaining({ subject: "row", action: "delete_row", row_id: inserted[0]!.id }),
        expect.objectContaining({ subject: "row", action: "delete_row", row_id: inserted[1]!.id }),
        expect.objectContaining({ subject: "row", action: "restore_row", row_id: r1!.id }),
        expect.objectContaining({ subject: "row", action: "reinsert_row", row_id: r2!.id })
      ]))
      expect(planned).toHaveLength(7)
      expect(plan.buckets[0].counts).toEqual({
        undelete_page: 1,
        restore_version: 1,
        delete_page: 1,
        delete_row: 2,
        restore_row: 1,
        reinsert_row: 1
      })
      expect(ok(yield* page(a, bucket, "alpha")).part.version).toBe(2)
      expect(ok(yield* page(a, bucket, "gamma")).part.id).toBe(gamma.id)
      expect(refused(yield* page(a, bucket, "beta")).error.code).toBe("not_found")
      expect((yield* rowsOf(a, bucket)).length).toBe(3)

      // B may not revert itself in A's Dock, nor list; an outsider is not even told the Dock exists.
      expect(refused(yield* call(b, "list_agent_changes", args)).error.code).toBe("permission_denied")
      expect(refused(yield* call(b, "revert_agent_changes", args)).error.code).toBe("permission_denied")
      expect(refused(yield* call(outsider.client, "revert_agent_changes", args)).error.code).toBe("not_found")
      // Without a Dock named, B owns no Dock B changed: nothing listed.
      expect(ok(yield* call(b, "list_agent_changes", { token_id: tokenId!, since })).buckets).toEqual([])

      // The real run.
      const done = ok(yield* call(a, "revert_agent_changes", args))
      expect(done.dry_run).toBe(false)
      const steps = done.buckets[0].steps as Array<Step>
      expect(steps.find((step) => step.slug === "alpha")).toMatchObject({
        action: "restore_version",
        from_version: 2,
        to_version: 1,
        new_version: 3
      })
      const alphaNow = ok(yield* page(a, bucket, "alpha")).part
      expect(alphaNow.version).toBe(3)
      expect(alphaNow.content).toContain("A wrote alpha")
      const versions = ok(yield* call(a, "list_web_page_versions", { bucket, web_page: "alpha" })).versions
      expect(versions.map((v: any) => [v.version, v.reason, v.author.username])).toEqual([
        [1, "created", owner.user.username],
        [2, "updated", editor.user.username],
        [3, "reverted", owner.user.username]
      ])
      expect(refused(yield* page(a, bucket, "gamma")).error.code).toBe("not_found")
      const betaNow = ok(yield* page(a, bucket, "beta")).part
      expect(betaNow).toMatchObject({ id: beta.id, version: 1 })
      expect(betaNow.content).toContain("A wrote beta")
      const betaVersions = ok(yield* call(a, "list_web_page_versions", { bucket, web_page: "beta" })).versions
      expect(betaVersions.map((v: any) => [v.version, v.author.username])).toEqual([[1, owner.user.username]])
      const after = yield* rowsOf(a, bucket)
      expect(dataOf(after)).toEqual(before)
      expect(ok(yield* call(a, "list_micro_db_tables", { bucket })).tables[0].row_count).toBe(2)
      // The activity log has the revert.
      const [logged] = yield* server.sql<{ details: any }>`select details from activity
        where dock_id = ${bucket} and action = 'agent.reverted'`
      expect(logged!.details).toMatchObject({ token_id: tokenId })
      // The usage counter matches what is stored (history and rows included).
      const [usage] = yield* server.sql<{ counted: string; stored: string }>`select
          (select bytes from dock_usage where dock_id = ${bucket})::text as counted,
          ((select coalesce(sum(v.size_bytes), 0) from part_versions v join parts p on p.id = v.part_id
            where p.dock_id = ${bucket}) +
           (select coalesce(sum(r.size_bytes), 0) from micro_db_rows r join micro_db_tables t on t.id = r.table_id
            where t.dock_id = ${bucket}))::text as stored`
      expect(Number(usage!.counted)).toBe(Number(usage!.stored))

      // A second revert finds the pages as someone else (the owner) left them: nothing is overwritten.
      const again = ok(yield* call(a, "revert_agent_changes", { ...args, dry_run: true }))
      const againSteps = again.buckets[0].steps as Array<Step>
      expect(againSteps.find((step) => step.slug === "alpha")).toMatchObject({ action: "skip" })
      expect(againSteps.filter((step) => step.action !== "skip")).toEqual([])
    }))

  it.scoped("what someone else changed after the agent is left as they left it (skip, with a note)", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { dock, editor, owner } = yield* cast("UndoLater")
      const bucket = dock.id
      const a = owner.client
      const b = editor.client
      yield* push(a, bucket, "shared", "<p>A first</p>")
      ok(
        yield* call(a, "create_micro_db_table", {
          bucket,
          name: "Tasks",
          slug: "tasks",
          columns: [{ name: "Title", type: "text", unique: true }]
        })
      )
      const [mine] = ok(yield* call(a, "insert_micro_db_rows", { bucket, table: "tasks", rows: [{ title: "a" }] }))
        .rows as Array<{ id: string }>
      const [{ now }] = yield* server.sql<{ now: Date }>`select clock_timestamp() as now`
      const since = now.toISOString()

      // B edits the page and the row and inserts a row; A changes all three afterwards.
      yield* push(b, bucket, "shared", "<p>B second</p>")
      ok(yield* call(b, "update_micro_db_row", { bucket, table: "tasks", row_id: mine!.id, data: { title: "b" } }))
      const [theirs] = ok(yield* call(b, "insert_micro_db_rows", { bucket, table: "tasks", rows: [{ title: "x" }] }))
        .rows as Array<{ id: string }>
      ok(yield* call(b, "add_micro_db_column", { bucket, table: "tasks", column_def: { name: "Note", type: "text" } }))
      yield* push(a, bucket, "shared", "<p>A third, on top of B</p>")
      ok(yield* call(a, "update_micro_db_row", { bucket, table: "tasks", row_id: mine!.id, data: { title: "c" } }))
      ok(yield* call(a, "update_micro_db_row", { bucket, table: "tasks", row_id: theirs!.id, data: { title: "y" } }))

      const [{ token_id }] = yield* server.sql<{ token_id: string }>`select token_id::text from part_versions v
        join parts p on p.id = v.part_id where p.dock_id = ${bucket} and v.version = 2`
      const done = ok(yield* call(a, "revert_agent_changes", { bucket, token_id, since }))
      const steps = done.buckets[0].steps as Array<Step>
      expect(steps.map((step) => [step.subject, step.action])).toEqual([
        ["page", "skip"],
        ["row", "skip"],
        ["row", "skip"],
        ["schema", "not_reverted"]
      ])
      for (const step of steps.slice(0, 3)) expect(step.note).toContain("someone else changed")
      expect(steps[3]).toMatchObject({ change: "micro_db.column.added" })
      const listed = ok(yield* call(a, "list_agent_changes", { bucket, token_id, since })).buckets[0]
      expect(listed.schema_changes).toEqual([expect.objectContaining({ action: "micro_db.column.added" })])
      expect(ok(yield* page(a, bucket, "shared")).part.version).toBe(3)
      expect(Object.values(dataOf(yield* rowsOf(a, bucket))).map((data) => data.title).sort()).toEqual(["c", "y"])
    }))

  it.scoped("a bad token_id or since is a validation_error that says what is wrong", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast("UndoBad")
      const token_id = crypto.randomUUID()
      const bad = (args: Record<string, unknown>) =>
        Effect.map(call(owner.client, "revert_agent_changes", { bucket: dock.id, dry_run: true, ...args }), refused)
      const notUuid = yield* bad({ token_id: "agent-7", since: "2026-01-01T00:00:00Z" })
      expect(notUuid.error).toMatchObject({ code: "validation_error", details: { field: "token_id" } })
      expect(notUuid.error.message).toContain("UUID")
      const notTime = yield* bad({ token_id, since: "yesterday" })
      expect(notTime.error).toMatchObject({ code: "validation_error", details: { field: "since" } })
      expect(notTime.error.message).toContain("ISO 8601")
      const future = yield* bad({ token_id, since: new Date(Date.now() + 3_600_000).toISOString() })
      expect(future.error).toMatchObject({ code: "validation_error", details: { field: "since" } })
      expect(future.error.message).toContain("future")
      const listed = refused(
        yield* call(owner.client, "list_agent_changes", { bucket: dock.id, token_id: "x", since: "2026-01-01" })
      )
      expect(listed.error.code).toBe("validation_error")
      // A well-formed query of a token that changed nothing: an empty plan.
      const empty = ok(
        yield* call(owner.client, "revert_agent_changes", {
          bucket: dock.id,
          token_id,
          since: "2026-01-01T00:00:00Z",
          dry_run: true
        })
      )
      expect(empty.buckets[0]).toMatchObject({ steps: [], counts: {}, truncated: false })
    }))
})
