/**
 * Bounded argument decoding and fair limits over the wire (issue 13, findings 2, 4 and 8): oversized arguments
 * are refused quickly with a small body, unstorable text is validation_error naming where, every JSON-RPC message
 * counts against the caller's rate (a batch of N costs N), /mcp/public is limited per client address, and every
 * connection carries the statement timeout.
 */
import { Database, isStatementTimeout, statementTimeoutError } from "@dock/domain"
import { testServerUrl } from "@dock/domain/testing"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Clock, Duration, Effect, Exit, Layer, Option } from "effect"
import { bearer, fetchReply, type Reply, unique } from "./support/Http.ts"
import { actor, call, createBucket, newUser, ok, refused, tokenFor } from "./support/McpTools.ts"
import { startTestServer, TestServer, TestServerLive } from "./support/TestServer.ts"

const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25"
}

/** POST raw JSON-RPC text (one message or a batch) to `path` of the server. */
const postRpc = (url: string, path: string, body: string, headers: Record<string, string> = {}) =>
  fetchReply(`${url}${path}`, { method: "POST", headers: { ...MCP_HEADERS, ...headers }, body })

const toolCall = (id: number, name: string, args: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${args}}}`

/** `{"bucket":"…","k0":1,"k1":1,…}`: `count` unknown keys. */
const unknownKeys = (count: number) => {
  const parts = ["\"bucket\":\"nobody/nothing\""]
  for (let index = 0; index < count; index++) parts.push(`"k${index}":1`)
  return `{${parts.join(",")}}`
}

/** The JSON-RPC answers in a reply, whether sent as JSON or as an SSE stream of `data:` events. */
const answers = (reply: Reply): Array<any> => {
  if (reply.json !== undefined) return Array.isArray(reply.json) ? reply.json : [reply.json]
  return reply.text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)))
}

/** The tool result inside a single JSON-RPC answer. */
const toolResult = (reply: Reply) => {
  expect(reply.status, reply.text.slice(0, 500)).toBe(200)
  return answers(reply)[0].result as { isError?: boolean; structuredContent: any }
}

const elapsed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const value = yield* effect
    return { value, ms: (yield* Clock.currentTimeMillis) - started }
  })

layer(TestServerLive, { excludeTestServices: true })("MCP arguments are bounded", (it) => {
  it.effect("1.8 M unknown keys (21 MiB) on /mcp/public: a small validation_error, refused before parsing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { value: reply } = yield* elapsed(
        postRpc(server.url, "/mcp/public", toolCall(1, "get_bucket", unknownKeys(1_800_000)))
      )
      expect(reply.status).toBe(400)
      // The object's 1.8 M keys pass the bound of one container's entries (10,000) long before the body's values.
      expect(reply.json.error).toMatchObject({ code: "validation_error", details: { limit: 10_000 } })
      expect(reply.text.length).toBeLessThan(4096)
    }))

  it.effect("20,000 unknown keys (under the value bound): refused before parsing for the object's size, a small body", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* postRpc(server.url, "/mcp/public", toolCall(1, "get_bucket", unknownKeys(20_000)))
      expect(reply.status).toBe(400)
      expect(reply.json.error).toMatchObject({ code: "validation_error", details: { limit: 10_000 } })
      expect(reply.json.error.message).toMatch(/more than 10000 entries/)
      expect(reply.text.length).toBeLessThan(4096)
    }))

  it.effect("unknown keys: a small call lists its first 10 issues with their count, a large one its first issue", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const small = yield* postRpc(server.url, "/mcp/public", toolCall(1, "get_bucket", unknownKeys(500)))
      const listed = toolResult(small).structuredContent.error
      expect(listed.code).toBe("validation_error")
      expect(listed.details.issues).toHaveLength(10)
      expect(listed.details.issue_count).toBe(500)
      expect(small.text.length).toBeLessThan(8192)
      const large = yield* postRpc(server.url, "/mcp/public", toolCall(1, "get_bucket", unknownKeys(5_000)))
      const first = toolResult(large).structuredContent.error
      expect(first.details.issues).toEqual([{ path: ["k0"], message: expect.any(String) }])
      expect(large.text.length).toBeLessThan(4096)
    }))

  it.scoped("a 2 M-element array and 20,000 tags are refused before parsing; nothing is stored", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token } = yield* actor("v2 modern")
      const huge = yield* postRpc(
        server.url,
        "/mcp",
        toolCall(1, "create_bucket", `{"title":"t","tags":[${new Array(2_000_000).fill("\"x\"").join(",")}]}`),
        bearer(token)
      )
      expect(huge.status).toBe(400)
      expect(huge.json.error.code).toBe("validation_error")
      expect(huge.text.length).toBeLessThan(4096)
      const many = yield* postRpc(
        server.url,
        "/mcp",
        toolCall(1, "create_bucket", `{"title":"Tagged","tags":[${new Array(20_000).fill("\"x\"").join(",")}]}`),
        bearer(token)
      )
      expect(many.status).toBe(400)
      expect(many.json.error).toMatchObject({ code: "validation_error", details: { limit: 10_000 } })
      const rows = yield* server.sql`select id from docks where title = 'Tagged'`
      expect(rows).toEqual([])
    }))

  it.effect("a NUL deep inside nested arrays is found in one pass and named by its full path; 3 M strings are refused unwalked", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      // 270,000 strings in arrays of 9,000 nested 30 deep, a NUL in the last one: the body's pre-check counts the
      // values and refuses it before any walk.
      let strings = `[${new Array(9_000).fill("\"a\"").join(",")}]`
      for (let depth = 0; depth < 30; depth++) strings = `[${strings},["b"]]`
      const huge = `{"bucket":"nobody/nothing","x":[${new Array(30).fill(strings).join(",")},"\\u0000"]}`
      const refusedUnwalked = yield* postRpc(server.url, "/mcp/public", toolCall(1, "get_bucket", huge))
      expect(refusedUnwalked.status).toBe(400)
      expect(refusedUnwalked.json.error).toMatchObject({ code: "validation_error", details: { limit: 200_000 } })
      let nested: unknown = ["a", "b\u0000"]
      for (let depth = 0; depth < 40; depth++) nested = ["x", nested]
      const args = JSON.stringify({ bucket: "nobody/nothing", deep: nested })
      const result = toolResult(yield* postRpc(server.url, "/mcp/public", toolCall(1, "get_bucket", args)))
      expect(result.structuredContent.error).toMatchObject({
        code: "validation_error",
        details: {
          issues: [{ path: ["deep", ...new Array(40).fill("1"), "1"], message: expect.stringContaining("U+0000") }]
        }
      })
    }))

  it.scoped("a lone surrogate in a Micro DB value, a JSON value's key, a title or a key is validation_error, nothing stored", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor("v2 modern")
      const dock = yield* createBucket(owner.client, { title: "Surrogates", slug: `surrogates-${unique()}` })
      ok(
        yield* call(owner.client, "create_micro_db_table", {
          bucket: dock.id,
          name: "Notes",
          columns: [{ name: "Body", type: "text" }, { name: "Doc", type: "json" }]
        })
      )
      const refusedAt = (tool: string, args: Record<string, unknown>, path: ReadonlyArray<string>) =>
        Effect.map(
          call(owner.client, tool, args),
          (result) =>
            expect(refused(result).error, JSON.stringify(args)).toMatchObject({
              code: "validation_error",
              details: { issues: [{ path, message: expect.stringContaining("lone UTF-16 surrogate") }] }
            })
        )
      yield* refusedAt("insert_micro_db_row", { bucket: dock.id, table: "notes", data: { body: "a\ud800b" } }, [
        "data",
        "body"
      ])
      yield* refusedAt("insert_micro_db_row", { bucket: dock.id, table: "notes", data: { body: "\udc00" } }, [
        "data",
        "body"
      ])
      yield* refusedAt("insert_micro_db_row", { bucket: dock.id, table: "notes", data: { doc: { "k\ud800": 1 } } }, [
        "data",
        "doc"
      ])
      yield* refusedAt(
        "insert_micro_db_row",
        { bucket: dock.id, table: "notes", data: { doc: { list: ["\ud83d"] } } },
        [
          "data",
          "doc",
          "list",
          "0"
        ]
      )
      yield* refusedAt("create_bucket", { title: "Bad \udbff title" }, ["title"])
      const rows = yield* server.sql`select r.id from micro_db_rows r join micro_db_tables t on t.id = r.table_id
        where t.dock_id = ${dock.id}`
      expect(rows).toEqual([])
      // A well-formed pair (an emoji) is ordinary text.
      ok(
        yield* call(owner.client, "insert_micro_db_row", {
          bucket: dock.id,
          table: "notes",
          data: { body: "\ud83d\ude00" }
        })
      )
    }))

  it.effect("every connection carries the statement timeout", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const rows = yield* server.sql<{ statement_timeout: string }>`show statement_timeout`
      expect(rows[0]?.statement_timeout).toBe("10s")
    }))
})

/** The same server with small limits and DOCK_TRUST_PROXY (client addresses from X-Forwarded-For). */
const LimitedServerLive = Layer.scoped(
  TestServer,
  startTestServer({
    DOCK_TOKEN_REQUESTS_PER_MINUTE: "5",
    DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE: "10",
    DOCK_TRUST_PROXY: "true"
  })
)

/** Waits out the end of a minute when less than `seconds` of it are left, so a burst falls in one window. */
const inOneWindow = (seconds: number) =>
  Effect.gen(function*() {
    const left = 60_000 - ((yield* Clock.currentTimeMillis) % 60_000)
    if (left < seconds * 1000) yield* Effect.sleep(Duration.millis(left + 50))
  })

layer(LimitedServerLive, { excludeTestServices: true })("MCP fair limits", (it) => {
  it.effect("a batch of N tool calls counts N against the token's rate, in one counter row", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const user = yield* newUser
      const token = yield* tokenFor(user)
      yield* inOneWindow(5)
      const batch = (ids: ReadonlyArray<number>) => `[${ids.map((id) => toolCall(id, "list_buckets", "{}")).join(",")}]`
      const three = yield* postRpc(server.url, "/mcp", batch([1, 2, 3]), bearer(token))
      expect(three.status, three.text).toBe(200)
      expect(answers(three)).toHaveLength(3)
      const counted = yield* server.sql<{ count: number }>`select sum(count)::int as count from request_counters
        where key like 'token-requests:%'`
      expect(counted[0]?.count).toBe(3)
      // 3 + 3 > 5: the whole second batch is refused, as three separate requests would partly be.
      const again = yield* postRpc(server.url, "/mcp", batch([4, 5, 6]), bearer(token))
      expect(again.status).toBe(429)
      expect(again.json.error.code).toBe("rate_limited")
      expect(Number(again.headers["retry-after"])).toBeGreaterThanOrEqual(1)
      // A batch larger than the whole limit never passes.
      const fresh = yield* tokenFor(user)
      const six = yield* postRpc(server.url, "/mcp", batch([1, 2, 3, 4, 5, 6]), bearer(fresh))
      expect(six.status).toBe(429)
    }))

  it.effect("/mcp/public answers exactly the limit per client address, then 429 rate_limited with Retry-After", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* inOneWindow(10)
      const from = (address: string) =>
        postRpc(server.url, "/mcp/public", toolCall(1, "get_bucket", `{"bucket":"nobody/nothing"}`), {
          "x-forwarded-for": address
        })
      const replies = yield* Effect.all(Array.from({ length: 16 }, () => from("203.0.113.7")), {
        concurrency: "unbounded"
      })
      const statuses = replies.map((reply) => reply.status)
      expect(statuses.filter((status) => status === 200)).toHaveLength(10)
      expect(statuses.filter((status) => status === 429)).toHaveLength(6)
      const limited = replies.find((reply) => reply.status === 429)!
      expect(limited.json.error).toMatchObject({ code: "rate_limited", details: { limit: 10 } })
      expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1)
      // Another address has its own budget.
      expect((yield* from("203.0.113.8")).status).toBe(200)
    }))
})

layer(Layer.empty)("the statement timeout", (it) => {
  it.effect("PostgreSQL cancels a statement that runs past it, and a request answers unavailable (PGlite cannot enforce it)", () =>
    Effect.gen(function*() {
      const url = yield* testServerUrl
      if (Option.isNone(url)) return
      const exit = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`select pg_sleep(5)`
      }).pipe(
        Effect.provide(
          Database.layer({ _tag: "Postgres", url: url.value, poolSize: 1 }, { statementTimeout: Duration.millis(200) })
        ),
        Effect.orDie,
        Effect.exit
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.defects(exit.cause).pipe((defects) => [...defects].some(isStatementTimeout))).toBe(true)
        expect(statementTimeoutError(exit.cause)).toMatchObject({ code: "unavailable", status: 503 })
      }
    }))
})
