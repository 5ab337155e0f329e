/**
 * Graceful drain (issue 19): the real server process, on SIGTERM with MCP calls in flight, refuses new connections
 * at once, answers every call it had accepted in full (no reset, `Connection: close`), closes idle keep-alive
 * connections cleanly, ends open MCP streams, closes the database and exits 0 well within DOCK_SHUTDOWN_GRACE; a
 * call still running when the grace ends is cut and the process exits 0 anyway. A call counts as accepted when the
 * server has answered its `Expect: 100-continue` (Node does so as it hands the request to the handler).
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Option } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { bearer, unique } from "./support/Http.ts"
import { connectMcp } from "./support/McpClients.ts"
import { ADMIN_TOKEN, processDatabase, userWithTokens } from "./support/ProcessMcp.ts"
import { accepts, openAccepted, pollUntil, ProcessFailed, spawnServer } from "./support/ServerProcess.ts"

const DRAIN_TEST_TIMEOUT = 110_000

/** The JSON-RPC message of an answer, sent as JSON or as one SSE event. */
const rpcMessage = (text: string) => {
  const data = text.split("\n").find((line) => line.startsWith("data: "))
  return JSON.parse(data === undefined ? text : data.slice(6))
}

/**
 * A tools/call POST to /mcp on a keep-alive connection of `agent`, opened with `Expect: 100-continue`; returns once
 * the server has accepted it, with the body still the caller's to send.
 */
const acceptedCall = (
  port: number,
  agent: Http.Agent,
  token: string,
  name: string,
  args: Record<string, unknown>
) =>
  Effect.gen(function*() {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })
    const { answered, request } = yield* openAccepted(port, {
      path: "/mcp",
      headers: {
        ...bearer(token),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25"
      },
      contentLength: Buffer.byteLength(body),
      agent,
      within: "30 seconds"
    })
    return {
      /** Sends the body; `part` of 1 sends all of it, less leaves the call waiting for the rest. */
      send: (part = 1) =>
        Effect.sync(() => {
          const cut = Math.floor(body.length * part)
          if (part >= 1) request.end(body)
          else request.write(body.slice(0, cut))
        }),
      rest: (part: number) => Effect.sync(() => request.end(body.slice(Math.floor(body.length * part)))),
      answer: Deferred.await(answered).pipe(Effect.timeoutFail({
        duration: "60 seconds",
        onTimeout: () => new ProcessFailed({ message: `The ${name} call was never answered` })
      })),
      answered
    }
  })

/**
 * A keep-alive connection that has served one request and sits idle: how it ended (a clean close from the server
 * is an end of stream without error).
 */
const idleKeepAlive = (port: number) =>
  Effect.gen(function*() {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
    yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
    const socket = yield* Effect.async<Net.Socket, Error>((resume) => {
      const request = Http.get({ host: "127.0.0.1", port, path: "/healthz", agent }, (response) => {
        response.resume()
        response.on("end", () => resume(Effect.succeed(request.socket!)))
      })
      request.on("error", (error) => resume(Effect.fail(error)))
    })
    const ended = yield* Deferred.make<{ readonly error: string | undefined }>()
    let error: string | undefined
    socket.on("error", (cause) => (error = String(cause)))
    socket.on("close", () => Deferred.unsafeDone(ended, Exit.succeed({ error })))
    return { ended }
  })

/** A Markdown page of about `kib` KiB: slow-ish to parse, render and store. */
const largeMarkdown = (label: string, kib: number) =>
  [`# ${label}`, ""].concat(
    Array.from(
      { length: Math.ceil(kib * 1024 / 120) },
      (_, n) => `Paragraph ${n} of ${label}: *emphasis*, **strong**, \`code\` and a [link](https://example.com/${n}).\n`
    )
  ).join("\n")

const socketDirsOf = (pid: number) =>
  Fs.readdirSync(Os.tmpdir()).filter((name) => name.startsWith("dock-pg-")).map((name) => Path.join(Os.tmpdir(), name))
    .filter((dir) => {
      try {
        return Fs.readFileSync(Path.join(dir, "owner.pid"), "utf8").trim() === String(pid)
      } catch {
        return false
      }
    })

describe("graceful drain", () => {
  it.live(
    "SIGTERM with 8 MCP calls in flight: new connections refused, every accepted call answered in full, exit 0",
    () =>
      Effect.gen(function*() {
        const database = yield* processDatabase
        const server = yield* spawnServer({
          ...database.env,
          DOCK_ADMIN_TOKEN: ADMIN_TOKEN,
          DOCK_SHUTDOWN_GRACE: "40 seconds",
          // A loaded machine must not turn a slow render into a refusal: this test is about the drain.
          DOCK_RENDER_DEADLINE: "60 seconds",
          DOCK_TOKEN_WRITES_PER_MINUTE: "0",
          DOCK_TOKEN_REQUESTS_PER_MINUTE: "0"
        }, { within: "60 seconds" })
        const user = yield* userWithTokens(server.url, 8)
        const run = unique()
        const agent = new Http.Agent({ keepAlive: true })
        yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))

        // Real MCP clients of every era, connected and idle (a client may hold a GET stream open).
        for (const era of ["v2 modern", "v2 legacy", "v1"] as const) yield* connectMcp(server.url, user.tokens[0]!, era)
        const idle = yield* Effect.all([idleKeepAlive(server.port), idleKeepAlive(server.port)])

        // Eight pushes of large Markdown, each accepted by the server: four with their whole body sent (running
        // when the signal comes), four with half of it (waiting for the rest, sent after the signal).
        const contents = Array.from({ length: 8 }, (_, n) => largeMarkdown(`drain ${run} call ${n}`, 128))
        const calls = yield* Effect.all(
          contents.map((content, n) =>
            acceptedCall(server.port, agent, user.tokens[n]!, "push_markdown", {
              bucket: user.bucket,
              page_slug: `drain-${run}-${n}`,
              page_content: content
            })
          ),
          { concurrency: "unbounded" }
        )
        for (const [n, call] of calls.entries()) yield* call.send(n < 4 ? 1 : 0.5)

        const stopping = Date.now()
        yield* server.signal("SIGTERM")
        // Calls answered before the signal reached the server may keep their connection; count them as such.
        const runningAtSignal = yield* Effect.forEach(calls, (call) =>
          Effect.map(Deferred.poll(call.answered), Option.isNone))
        yield* pollUntil(
          "new connections refused",
          Effect.map(accepts(server.port), (open) =>
            !open),
          {
            within: "20 seconds",
            every: "25 millis"
          }
        )
        const refusedAfter = Date.now() - stopping
        // The half-sent calls cannot have been answered yet: they are still in flight, and the server waits.
        for (const call of calls.slice(4)) expect(Option.isNone(yield* Deferred.poll(call.answered))).toBe(true)
        // The idle keep-alive connections are closed by the server now, while it waits for those calls (so not by its
        // exit), and cleanly: an end of stream, no reset.
        for (const connection of idle) {
          yield* pollUntil(
            "idle keep-alive connection closed",
            Effect.map(Deferred.poll(connection.ended), Option.isSome),
            {
              within: "10 seconds"
            }
          )
          expect(yield* Deferred.await(connection.ended)).toEqual({ error: undefined })
        }
        for (const call of calls.slice(4)) yield* call.rest(0.5)

        const answers = yield* Effect.all(calls.map((call) => call.answer), { concurrency: "unbounded" })
        const answeredAfter = Date.now() - stopping
        for (const [n, answer] of answers.entries()) {
          expect(answer.status).toBe(200)
          // The connection is not kept for another request: the server is going away.
          if (runningAtSignal[n]) expect(answer.connection).toBe("close")
          const message = rpcMessage(answer.text)
          expect(message.result.isError, answer.text.slice(0, 500)).not.toBe(true)
          expect(message.result.structuredContent.part).toMatchObject({ slug: `drain-${run}-${n}`, version: 1 })
          expect(message.result.structuredContent.action).toBe("created")
        }

        const exit = yield* server.exit("45 seconds")
        const exitedAfter = Date.now() - stopping
        expect(exit).toEqual({ code: 0, signal: null })
        expect(server.stdout()).toContain("Shutting down: finishing in-flight requests")
        expect(server.stdout()).not.toContain("closing them")
        // The database pool (and the embedded database) closed after the last call, before the exit.
        const log = server.stdout()
        expect(log.indexOf("Database closed")).toBeGreaterThan(log.indexOf("Shutting down: finishing in-flight"))
        // Well within the grace: nothing (not an idle client's stream) held the drain until it ran out.
        expect(exitedAfter).toBeLessThan(30_000)
        // The embedded database was closed in order: its socket folder went with it.
        if (database.label === "embedded PGlite") expect(socketDirsOf(server.pid)).toEqual([])
        console.log(
          `Drain on ${database.label}: new connections refused ${refusedAfter} ms after SIGTERM; ` +
            `${answers.length} accepted calls answered in full (${runningAtSignal.filter(Boolean).length} of them ` +
            `still running at the signal) by ${answeredAfter} ms; exit 0 ${exitedAfter} ms after SIGTERM`
        )
      }).pipe(Effect.scoped),
    DRAIN_TEST_TIMEOUT
  )

  it.live(
    "a call still running when DOCK_SHUTDOWN_GRACE ends is cut, and the process exits 0 anyway",
    () =>
      Effect.gen(function*() {
        const database = yield* processDatabase
        const server = yield* spawnServer({
          ...database.env,
          DOCK_ADMIN_TOKEN: ADMIN_TOKEN,
          DOCK_SHUTDOWN_GRACE: "5 seconds"
        }, { within: "60 seconds" })
        const user = yield* userWithTokens(server.url, 2)
        const agent = new Http.Agent({ keepAlive: true })
        yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
        const args = (n: number) => ({ bucket: user.bucket, page_slug: `cut-${unique()}-${n}`, page_content: "# Cut" })
        // A first push starts the render workers, so that the call meant to finish in the grace is a quick one.
        const warm = yield* acceptedCall(server.port, agent, user.tokens[0]!, "push_markdown", args(2))
        yield* warm.send()
        expect((yield* warm.answer).status).toBe(200)
        const finishing = yield* acceptedCall(server.port, agent, user.tokens[0]!, "push_markdown", args(0))
        const stalled = yield* acceptedCall(server.port, agent, user.tokens[1]!, "push_markdown", args(1))
        // Part of a body, and the rest never comes: this call cannot finish by itself.
        yield* stalled.send(0.5)
        yield* finishing.send(0.5)

        const stopping = Date.now()
        yield* server.signal("SIGTERM")
        yield* pollUntil("new connections refused", Effect.map(accepts(server.port), (open) => !open), {
          within: "20 seconds",
          every: "25 millis"
        })
        yield* finishing.rest(0.5)
        const answer = yield* finishing.answer
        expect(answer.status).toBe(200)
        expect(rpcMessage(answer.text).result.isError).not.toBe(true)

        const exit = yield* server.exit("30 seconds")
        const took = Date.now() - stopping
        expect(exit).toEqual({ code: 0, signal: null })
        expect(took).toBeGreaterThanOrEqual(4_900)
        expect(server.stdout()).toContain("Requests still running after 5s: closing them")
        // The stalled call's client sees its connection cut, not an answer.
        const cut = yield* Effect.either(stalled.answer)
        expect(cut._tag).toBe("Left")
        console.log(
          `Drain past the grace on ${database.label}: a stalled call was cut; exit 0 ${took} ms after SIGTERM`
        )
      }).pipe(Effect.scoped),
    DRAIN_TEST_TIMEOUT
  )
})
