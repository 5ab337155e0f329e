/**
 * Issue 19, item 6: request ids in every log line. Each request gets an id (the client's `x-request-id` when it is
 * sane, else a fresh UUID), answered in `x-request-id`, and every line logged while it is handled carries it:
 * the request's own line, an unhandled failure's, and those of the MCP tool calls it made, which run on the
 * application's runtime rather than the request's fiber.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { bearer, fetchReply, postJson } from "./support/Http.ts"
import { UUID } from "./support/Identity.ts"
import { actor, createBucket, rawToolCall } from "./support/McpTools.ts"
import { type LogEntry, startTestServer, TestServer } from "./support/TestServer.ts"

// No background job runs during the tests: every line logged while a request is handled belongs to it.
const QuietServer = Layer.scoped(TestServer, startTestServer({ DOCK_JOB_INTERVAL: "1 hour" }))

/** The lines logged while `request` ran (the test makes one request at a time). */
const loggedDuring = <A, R>(request: Effect.Effect<A, never, R>) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const from = server.logs().length
    const result = yield* request
    // Less the sandbox and trash sweeps' lines: they run on their own fibers (at start, then every
    // DOCK_JOB_INTERVAL) and belong to no request; at start they may log while a request runs.
    const lines = (server.logs().slice(from) as ReadonlyArray<LogEntry>).filter((line) =>
      !String(line.message).startsWith("Sandbox sweep") && !String(line.message).startsWith("Trash sweep")
    )
    return { result, lines }
  })

/** A tool result out of a JSON or an SSE answer. */
const toolResult = (text: string) => {
  const data = text.startsWith("{") ? text : text.split("\n").find((line) => line.startsWith("data: "))!.slice(6)
  return JSON.parse(data).result as { isError?: boolean; structuredContent: any }
}

layer(QuietServer, { excludeTestServices: true, timeout: 60_000 })("request ids", (it) => {
  it.effect("a sane incoming x-request-id is kept, answered and carried by the request's log line", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (
        const id of ["trace-1234.abc:def", "01J9Z3YQ0M5W8XG2V7RZ4HKT6N", "Root=1-5759e988-bd862e3fe1be46a994272793"]
      ) {
        const { lines, result } = yield* loggedDuring(
          fetchReply(`${server.url}/healthz`, { headers: { "x-request-id": id } })
        )
        expect(result.headers["x-request-id"]).toBe(id)
        expect(lines.map((line) => line.message)).toEqual(["GET /healthz 200"])
        expect(lines.every((line) => line.annotations["request_id"] === id)).toBe(true)
      }
    }))

  it.effect("an absent or insane x-request-id is replaced with a fresh UUID", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const seen = new Set<string>()
      for (
        const headers of [{}, { "x-request-id": "" }, { "x-request-id": "has spaces" }, {
          "x-request-id": "x".repeat(129)
        }, { "x-request-id": "<script>" }]
      ) {
        const { lines, result } = yield* loggedDuring(fetchReply(`${server.url}/healthz`, { headers }))
        const id = result.headers["x-request-id"]!
        expect(id).toMatch(UUID)
        seen.add(id)
        expect(lines.length).toBe(1)
        expect(lines[0]!.annotations["request_id"]).toBe(id)
      }
      expect(seen.size).toBe(5)
    }))

  it.scoped("a tool call's log lines carry its HTTP request's id, and an internal error names it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { client, token } = yield* actor("v2 modern")
      const dock = yield* createBucket(client, { title: "Ids", slug: `ids-${crypto.randomUUID().slice(0, 8)}` })
      // Break what list_micro_db_tables reads (with the Dock, in the resolver's one statement), so the call
      // fails inside the tool and is logged there, naming that span.
      yield* server.sql`drop table micro_db_tables cascade`
      const id = `tool-call-${crypto.randomUUID()}`
      const { lines, result } = yield* loggedDuring(
        rawToolCall("/mcp", "list_micro_db_tables", { bucket: dock.id }, { ...bearer(token), "x-request-id": id })
      )
      expect(result.status).toBe(200)
      expect(result.headers["x-request-id"]).toBe(id)
      const answer = toolResult(result.text)
      expect(answer.isError).toBe(true)
      expect(answer.structuredContent.error).toEqual({
        code: "internal",
        status: 500,
        message: `Internal error (request id ${id})`,
        request_id: id
      })
      // The tool's error line is logged on the runtime's own fiber, forked as the answer is made: let it run.
      const failedLine = (line: LogEntry) =>
        line.level === "ERROR" && line.message.startsWith("Tool list_micro_db_tables")
      while (!server.logs().some(failedLine)) yield* Effect.yieldNow()
      const related = server.logs().filter((line) => line.annotations["request_id"] === id)
      expect(related.map((line) => [line.level, line.message]).sort()).toEqual([
        ["ERROR", `Tool list_micro_db_tables failed (request id ${id})`],
        ["INFO", "POST /mcp 200"]
      ])
      expect(related.find((line) => line.level === "ERROR")!.cause).toMatch(/SqlError[\s\S]*Docks\.namedAlong/)
      // Every line logged while it ran carries its id.
      expect(lines.every((line) => line.annotations["request_id"] === id)).toBe(true)
    }))

  it.effect("an unhandled failure's line carries the id the client sent", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.sql`drop table if exists users cascade`
      const id = "admin-call-42"
      const { lines, result } = yield* loggedDuring(
        postJson(`${server.url}/admin/users`, { email: "gone@example.com" }, {
          ...bearer(server.adminToken),
          "x-request-id": id
        })
      )
      expect(result.status).toBe(500)
      expect(result.json.error.request_id).toBe(id)
      expect(lines.map((line) => [line.level, line.message, line.annotations["request_id"]])).toEqual([
        ["ERROR", "Unhandled failure", id],
        ["INFO", "POST /admin/users 500", id]
      ])
    }))
})
