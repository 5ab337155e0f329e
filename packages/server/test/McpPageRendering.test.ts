/**
 * Issue 13, finding 1, over the wire: Markdown that was quadratic to parse (one long bracket label) used to hold
 * the event loop for tens of seconds, on push and again on the first read. Now its parsing runs in a content
 * worker under DOCK_RENDER_DEADLINE: a push that outlasts its deadline is refused with validation_error while the
 * server goes on answering, the worker is replaced, and a stored page that cannot be rendered in time is served as
 * text from then on, rendered once. markdown-it parses those inputs in milliseconds and no input we know of runs
 * away from it, so here long pages outlast a short deadline: ~0.7 s or more for a push to read 1 MB under a long
 * front matter (slowToRead) and ~0.6 s to render 1 MB of ordinary Markdown, against 100 ms.
 */
import { ordinary, slowToRead } from "@dock/domain/testing"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { ARTIFACT_CSP } from "../src/http/ArtifactPage.ts"
import { fetchReply } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { actor, call, connect, ok, refused, type ToolResult } from "./support/McpTools.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const SHORT_DEADLINE = "100 millis"
const long = ordinary(1_000_000)
const slow = slowToRead(1_000_000)

const BoundedServer = Layer.scoped(TestServer, startTestServer({ DOCK_RENDER_DEADLINE: SHORT_DEADLINE }))

/** An anonymous sandbox agent's client: the cheapest way in for an outsider. */
const sandboxAgent = Effect.gen(function*() {
  const server = yield* TestServer
  const registered = yield* register(server.url, { agent_label: "renderer-probe" })
  expect(registered.status, registered.text).toBe(201)
  return yield* connect(registered.json.credential as string, "v2 modern")
})

/**
 * Runs `request` while asking /healthz again and again until it answers: how many health answers came back
 * while it was pending (every one must be 200).
 */
const healthAnswersDuring = (request: Effect.Effect<ToolResult>) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const pending = yield* Effect.fork(request)
    let answers = 0
    while (Option.isNone(yield* Fiber.poll(pending))) {
      const health = yield* fetchReply(`${server.url}/healthz`)
      expect(health.status).toBe(200)
      answers += 1
    }
    return { result: yield* Fiber.join(pending), answers }
  })

const renderFailuresOf = (pageVersion: string) =>
  Effect.map(
    TestServer,
    (server) =>
      server.logs().filter((entry) =>
        entry.message.startsWith("A page version could not be rendered") &&
        entry.annotations["page_version"] === pageVersion
      ).length
  )

layer(BoundedServer, { excludeTestServices: true, timeout: 120_000 })("content workers over the wire", (it) => {
  it.scoped("a sandbox's Markdown that outlasts its deadline is refused with validation_error at the deadline while /healthz keeps answering", () =>
    Effect.gen(function*() {
      const client = yield* sandboxAgent
      // A first push starts a worker (its start-up never counts against a deadline).
      expect(ok(yield* call(client, "push_markdown", { page_content: "# Warm\n\nStarted." })).action).toBe("created")

      const { answers, result } = yield* healthAnswersDuring(call(client, "push_markdown", { page_content: slow }))
      expect(refused(result).error).toMatchObject({
        code: "validation_error",
        status: 400,
        details: { reason: "deadline", deadline_ms: 100 }
      })
      expect(refused(result).error.message).toContain("too complex to render")
      // Before the content workers, a runaway push held the event loop for its whole 20 s: no health answer at all.
      expect(answers).toBeGreaterThanOrEqual(1)

      // The stopped worker was replaced: ordinary pushes go on working.
      const after = ok(yield* call(client, "push_markdown", { page_content: "# After\n\n[[Warm]] and *more*." }))
      expect(after.action).toBe("created")
    }))

  it.scoped("a stored page too complex to render: /a/ serves its source as text under the artifact headers, rendering it once", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor("v2 modern")
      const part = ok(yield* call(owner.client, "push_markdown", { page_content: "# Fine\n\nAt first." })).part
      // Content planted in the database (or stored under a longer deadline) that no longer renders in time.
      yield* server.sql`update parts set content = ${long}, version = 2 where id = ${part.id}`
      const paths = [new URL(part.url).pathname, `/artifacts/${part.id}`, new URL(part.url).pathname]
      for (const path of paths) {
        const reply = yield* fetchReply(`${server.url}${path}`)
        expect(reply.status).toBe(200)
        expect(reply.headers["content-security-policy"]).toBe(ARTIFACT_CSP)
        expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
        expect(reply.text.includes("The content is too complex to render")).toBe(true)
        expect(reply.text.includes(`<pre>## 1. `)).toBe(true)
      }
      expect(yield* renderFailuresOf(`${part.id}:2`)).toBe(1)
    }))
})
