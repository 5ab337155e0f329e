/**
 * Idempotent retries (issue 18, item 2) over the wire: every write tool takes an optional `idempotency_key`; a
 * retry with the same key and arguments answers the first answer without writing again (pages, Micro DB rows,
 * Docks), also when the calls race and (on PostgreSQL) when the retry goes to another server process; the same key
 * with other arguments or for another tool is `conflict` and writes nothing; keys are per token; a failed call
 * keeps nothing; an expired key (24 hours) or the claim of a call that died (a minute) can be used again; the
 * sweep drops expired keys. Read tools do not take the key.
 */
import { fingerprintOf, Idempotency } from "@dock/domain"
import { catalogue } from "@dock/mcp"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { bearer, jsonRpcAnswer, postJson, rawToolCall as rawCall, type Reply, unique } from "./support/Http.ts"
import type { AnyClient } from "./support/McpClients.ts"
import { actor, call, createBucket, ok, pathOf, refused, type ToolResult } from "./support/McpTools.ts"
import { spawnTwoServersOnOneDatabase } from "./support/ServerProcess.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN = "v2 modern" as const

/** A Dock of the client's user with a table `notes` (a text column `note`); answers its path. */
const dockWithTable = (client: AnyClient, user: { readonly username: string }) =>
  Effect.gen(function*() {
    const dock = yield* createBucket(client, { title: `Retries ${unique()}` })
    const bucket = pathOf(user, dock)
    ok(
      yield* call(client, "create_micro_db_table", { bucket, name: "notes", columns: [{ name: "note", type: "text" }] })
    )
    return bucket
  })

const rowsOf = (client: AnyClient, bucket: string) =>
  Effect.map(
    call(client, "query_micro_db_rows", { bucket, table: "notes" }),
    (result) => ok(result).rows as Array<{ id: string; data: { note: string } }>
  )

/** The versions of a page, straight from the database. */
const versionCount = (partId: string) =>
  Effect.flatMap(TestServer, (server) =>
    Effect.map(
      Effect.orDie(server.sql<{ n: number }>`select count(*)::int as n from part_versions where part_id = ${partId}`),
      (rows) => rows[0]!.n
    ))

/** The first answer and a retry's are the same result, byte for byte in the text content. */
const expectSameAnswer = (first: ToolResult, retry: ToolResult) => {
  expect(retry.isError).not.toBe(true)
  expect(retry.structuredContent).toEqual(first.structuredContent)
  expect(retry.content[0]!.text).toBe(first.content[0]!.text)
}

const WRITE_TOOLS = catalogue.filter((entry) => entry.scope === "mcp:write").map((entry) => entry.name)
const READ_TOOLS = catalogue.filter((entry) => entry.scope === "mcp:read").map((entry) => entry.name)

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("idempotent retries", (it) => {
  it.scoped("tools/list: every mcp:write tool takes an optional idempotency_key of at most 200 characters; no read tool does", () =>
    Effect.gen(function*() {
      const { client } = yield* actor(MODERN)
      const { tools } = yield* Effect.promise(() => client.listTools())
      const byName = new Map(tools.map((entry) => [entry.name, entry as any]))
      expect(WRITE_TOOLS.length).toBeGreaterThan(20)
      for (const name of WRITE_TOOLS) {
        const schema = byName.get(name)!.inputSchema
        expect(schema.properties.idempotency_key, name).toMatchObject({ type: "string", minLength: 1, maxLength: 200 })
        expect(schema.properties.idempotency_key.description, name).toContain("retried safely")
        expect(schema.required ?? [], name).not.toContain("idempotency_key")
      }
      for (const name of READ_TOOLS) {
        expect(JSON.stringify(byName.get(name)!.inputSchema), name).not.toContain("idempotency_key")
      }
    }))

  it.scoped("push_web_page retried with its key writes once and answers the first answer (created, not unchanged)", () =>
    Effect.gen(function*() {
      const { client, user } = yield* actor(MODERN)
      const dock = yield* createBucket(client, { title: `Retries ${unique()}` })
      const args = {
        bucket: pathOf(user, dock),
        page_title: "Tides",
        page_content: "<p>Twice a day.</p>",
        idempotency_key: `push-${unique()}`
      }
      const first = yield* call(client, "push_web_page", args)
      expect(ok(first).action).toBe("created")
      const retry = yield* call(client, "push_web_page", args)
      expectSameAnswer(first, retry)
      // The same arguments in another key order are the same call.
      const reordered = Object.fromEntries(Object.entries(args).reverse())
      expectSameAnswer(first, yield* call(client, "push_web_page", reordered))
      expect(yield* versionCount(ok(first).part.id)).toBe(1)
      // An update keyed anew is one new version, retried or not.
      const update = { ...args, page_content: "<p>Four times a day.</p>", idempotency_key: `push-${unique()}` }
      const updated = yield* call(client, "push_web_page", update)
      expect(ok(updated).action).toBe("updated")
      expectSameAnswer(updated, yield* call(client, "push_web_page", update))
      expect(yield* versionCount(ok(first).part.id)).toBe(2)
    }))

  it.scoped("insert_micro_db_rows and create_bucket retried with their keys insert once", () =>
    Effect.gen(function*() {
      const { client, user } = yield* actor(MODERN)
      const bucket = yield* dockWithTable(client, user)
      const insert = {
        bucket,
        table: "notes",
        rows: [{ note: "one" }, { note: "two" }],
        idempotency_key: `rows-${unique()}`
      }
      const first = yield* call(client, "insert_micro_db_rows", insert)
      expect(ok(first).rows).toHaveLength(2)
      expectSameAnswer(first, yield* call(client, "insert_micro_db_rows", insert))
      expect((yield* rowsOf(client, bucket)).map((row) => row.data.note).sort()).toEqual(["one", "two"])

      const listMine = Effect.map(call(client, "list_my_buckets", {}), (result) => ok(result).buckets.length as number)
      const before = yield* listMine
      const create = { title: `Once ${unique()}`, idempotency_key: `dock-${unique()}` }
      const made = yield* call(client, "create_bucket", create)
      const again = yield* call(client, "create_bucket", create)
      expectSameAnswer(made, again)
      expect(yield* listMine).toBe(before + 1)
    }))

  it.scoped("the same key with other arguments, or for another tool, is conflict and writes nothing; another token's same key is its own", () =>
    Effect.gen(function*() {
      const { client, user } = yield* actor(MODERN)
      const bucket = yield* dockWithTable(client, user)
      const key = `shared-${unique()}`
      ok(
        yield* call(client, "insert_micro_db_row", {
          bucket,
          table: "notes",
          data: { note: "first" },
          idempotency_key: key
        })
      )

      const other = refused(
        yield* call(client, "insert_micro_db_row", {
          bucket,
          table: "notes",
          data: { note: "second" },
          idempotency_key: key
        })
      )
      expect(other.error).toMatchObject({ code: "conflict", status: 409 })
      expect(other.error.message).toContain("other arguments")
      const otherTool = refused(
        yield* call(client, "insert_micro_db_rows", {
          bucket,
          table: "notes",
          rows: [{ note: "x" }],
          idempotency_key: key
        })
      )
      expect(otherTool.error).toMatchObject({ code: "conflict", status: 409 })
      expect(otherTool.error.message).toContain("insert_micro_db_row")
      expect((yield* rowsOf(client, bucket)).map((row) => row.data.note)).toEqual(["first"])

      // Another user's token with the very same key and arguments writes into its own Dock.
      const stranger = yield* actor(MODERN)
      const theirs = yield* dockWithTable(stranger.client, stranger.user)
      ok(
        yield* call(stranger.client, "insert_micro_db_row", {
          bucket: theirs,
          table: "notes",
          data: { note: "first" },
          idempotency_key: key
        })
      )
      expect((yield* rowsOf(stranger.client, theirs)).map((row) => row.data.note)).toEqual(["first"])
    }))

  it.scoped("concurrent calls with one key write once: each answer is the first answer or conflict (in progress)", () =>
    Effect.gen(function*() {
      const { client, user } = yield* actor(MODERN)
      const bucket = yield* dockWithTable(client, user)
      const args = { bucket, table: "notes", rows: [{ note: "raced" }], idempotency_key: `race-${unique()}` }
      const results = yield* Effect.all(
        Array.from({ length: 6 }, () => call(client, "insert_micro_db_rows", args)),
        { concurrency: "unbounded" }
      )
      const answers = results.filter((result) => result.isError !== true)
      expect(answers.length).toBeGreaterThanOrEqual(1)
      for (const answer of answers) expect(answer.structuredContent).toEqual(answers[0]!.structuredContent)
      for (const result of results.filter((result) => result.isError === true)) {
        expect(refused(result).error).toMatchObject({ code: "conflict", details: { in_progress: true } })
      }
      expect((yield* rowsOf(client, bucket)).map((row) => row.data.note)).toEqual(["raced"])
      // Once the first call is done, a retry answers its answer.
      expectSameAnswer(answers[0]!, yield* call(client, "insert_micro_db_rows", args))
    }))

  it.scoped("a key of more than 200 characters, or empty, is validation_error and writes nothing", () =>
    Effect.gen(function*() {
      const { client, user } = yield* actor(MODERN)
      const bucket = yield* dockWithTable(client, user)
      for (const key of ["k".repeat(201), "", 42]) {
        const error = refused(
          yield* call(client, "insert_micro_db_row", {
            bucket,
            table: "notes",
            data: { note: "no" },
            idempotency_key: key
          })
        ).error
        expect(error.code).toBe("validation_error")
        expect(error.message).toContain("idempotency_key")
      }
      expect(yield* rowsOf(client, bucket)).toEqual([])
      // 200 characters is fine.
      ok(
        yield* call(client, "insert_micro_db_row", {
          bucket,
          table: "notes",
          data: { note: "yes" },
          idempotency_key: "k".repeat(200)
        })
      )
      // A read tool does not take one.
      expect(refused(yield* call(client, "list_micro_db_tables", { bucket, idempotency_key: "read" })).error.code)
        .toBe("validation_error")
    }))

  it.scoped("a failed call keeps nothing: its retry with the key runs again", () =>
    Effect.gen(function*() {
      const { client, user } = yield* actor(MODERN)
      const dock = yield* createBucket(client, { title: `Retries ${unique()}` })
      const bucket = pathOf(user, dock)
      const args = { bucket, table: "notes", data: { note: "late" }, idempotency_key: `fail-${unique()}` }
      expect(refused(yield* call(client, "insert_micro_db_row", args)).error.code).toBe("not_found")
      ok(
        yield* call(client, "create_micro_db_table", {
          bucket,
          name: "notes",
          columns: [{ name: "note", type: "text" }]
        })
      )
      const inserted = yield* call(client, "insert_micro_db_row", args)
      expect(ok(inserted).row.data).toEqual({ note: "late" })
      expectSameAnswer(inserted, yield* call(client, "insert_micro_db_row", args))
      expect(yield* rowsOf(client, bucket)).toHaveLength(1)
    }))

  it.scoped("an expired key (24 hours) and the claim of a call that died (a minute) are used again; the sweep drops expired keys", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { client, user } = yield* actor(MODERN)
      const bucket = yield* dockWithTable(client, user)
      const args = { bucket, table: "notes", data: { note: "again" }, idempotency_key: `old-${unique()}` }
      ok(yield* call(client, "insert_micro_db_row", args))
      yield* Effect.orDie(
        server.sql`update idempotency_keys set created_at = now() - interval '25 hours'
          where key = ${args.idempotency_key}`
      )
      ok(yield* call(client, "insert_micro_db_row", args))
      expect(yield* rowsOf(client, bucket)).toHaveLength(2)

      // A call that claimed a key and died (a pending claim two minutes old): the key is claimed anew.
      const { idempotency_key: _key, ...rest } = args
      const dead = `dead-${unique()}`
      const token = yield* Effect.orDie(
        server.sql<{ owner: string }>`select owner from idempotency_keys where key = ${args.idempotency_key}`
      )
      const owner = token[0]!.owner
      yield* Effect.orDie(
        server.sql`insert into idempotency_keys (owner, key, tool, fingerprint, claim, state, created_at, claimed_at)
          values (${owner}, ${dead}, 'insert_micro_db_row', ${fingerprintOf(rest)}, ${crypto.randomUUID()},
            'pending', now() - interval '2 minutes', now() - interval '2 minutes')`
      )
      ok(yield* call(client, "insert_micro_db_row", { ...rest, idempotency_key: dead }))
      expect(yield* rowsOf(client, bucket)).toHaveLength(3)

      // A live claim (another call still running): the retry waits, then answers conflict, writing nothing.
      const live = `live-${unique()}`
      yield* Effect.orDie(
        server.sql`insert into idempotency_keys (owner, key, tool, fingerprint, claim, state)
          values (${owner}, ${live}, 'insert_micro_db_row', ${fingerprintOf(rest)}, ${crypto.randomUUID()}, 'pending')`
      )
      const waiting = refused(yield* call(client, "insert_micro_db_row", { ...rest, idempotency_key: live })).error
      expect(waiting).toMatchObject({ code: "conflict", details: { in_progress: true } })
      expect(waiting.message).toContain("still in progress")
      expect(yield* rowsOf(client, bucket)).toHaveLength(3)

      // The sweep drops what is older than the time to live, and only that.
      yield* Effect.orDie(
        server.sql`update idempotency_keys set created_at = now() - interval '25 hours' where key = ${dead}`
      )
      const swept = yield* server.domain(Effect.flatMap(Idempotency, (idempotency) => idempotency.sweep()))
      expect(swept).toBeGreaterThanOrEqual(1)
      const left = yield* Effect.orDie(
        server.sql<{ key: string }>`select key from idempotency_keys where owner = ${owner} order by key`
      )
      expect(left.map((row) => row.key).sort()).toEqual([args.idempotency_key, live].sort())
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// Two server processes on one PostgreSQL database

const ADMIN = "dock_admin_idempotency"

class Pair extends Context.Tag("test/IdempotencyPair")<Pair, {
  readonly a: { readonly url: string }
  readonly b: { readonly url: string }
}>() {}

const PairLive = Layer.scoped(
  Pair,
  Effect.map(
    spawnTwoServersOnOneDatabase({
      DOCK_ADMIN_TOKEN: ADMIN,
      DOCK_SECRET: "idempotency-secret",
      DOCK_TOKEN_REQUESTS_PER_MINUTE: "10000",
      DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER: "100"
    }),
    ({ servers: [a, b] }) => ({ a, b })
  )
)

const answered = (reply: Reply) => {
  expect(reply.status, reply.text.slice(0, 300)).toBe(200)
  return jsonRpcAnswer(reply).result as ToolResult
}

describe.runIf(process.env["DOCK_TEST_DATABASE_URL"] !== undefined)("idempotent retries across instances", () => {
  layer(PairLive, { excludeTestServices: true, timeout: 180_000 })("two processes", (it) => {
    it.effect("a write retried through the other process with its key writes nothing and answers the first answer", () =>
      Effect.gen(function*() {
        const { a, b } = yield* Pair
        const user = yield* postJson(`${a.url}/admin/users`, { email: `idem-${unique()}@example.com` }, bearer(ADMIN))
        expect(user.status, user.text).toBe(201)
        const made = yield* postJson(
          `${a.url}/admin/tokens`,
          { user: user.json.email, scopes: ["mcp:write"] },
          bearer(ADMIN)
        )
        expect(made.status, made.text).toBe(201)
        const token = made.json.token as string
        const dock = ok(answered(yield* rawCall(a.url, token, "create_bucket", { title: `Idem ${unique()}` }))).bucket
        const bucket = `${dock.owner.username}/${dock.slug}`
        ok(
          answered(
            yield* rawCall(a.url, token, "create_micro_db_table", {
              bucket,
              name: "notes",
              columns: [{ name: "note", type: "text" }]
            })
          )
        )
        const args = { bucket, table: "notes", rows: [{ note: "once" }], idempotency_key: `across-${unique()}` }
        const first = answered(yield* rawCall(a.url, token, "insert_micro_db_rows", args))
        ok(first)
        expectSameAnswer(first, answered(yield* rawCall(b.url, token, "insert_micro_db_rows", args)))
        // Racing on both processes with a new key: one write.
        const raced = { ...args, rows: [{ note: "raced" }], idempotency_key: `across-${unique()}` }
        const results = yield* Effect.all(
          [a.url, b.url, a.url, b.url].map((url) =>
            Effect.map(rawCall(url, token, "insert_micro_db_rows", raced), answered)
          ),
          { concurrency: "unbounded" }
        )
        for (const result of results) {
          if (result.isError === true) expect(result.structuredContent.error.code).toBe("conflict")
        }
        const rows = ok(answered(yield* rawCall(b.url, token, "query_micro_db_rows", { bucket, table: "notes" }))).rows
        expect(rows.map((row: { data: { note: string } }) => row.data.note).sort()).toEqual(["once", "raced"])
      }))
  })
})
