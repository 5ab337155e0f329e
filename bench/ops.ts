/**
 * bench/ops: the operations of Effect's fiber runtime, and the fibers, that one request costs the server: the
 * figure behind most of an MCP call's CPU beyond the bare SDK's (docs/decisions.md, "Where a call's time goes"),
 * and one that the machine's other load does not move: the same code gives the same count on any day, so a change's
 * before and after can be compared where CPU time, on a shared 2-core machine, varies by ±15% from run to run.
 *
 * The whole server (ServerLive, as the tests start it) runs in this process on a fresh database (PostgreSQL on
 * DOCK_TEST_DATABASE_URL, else the embedded one), with op supervision on: a Supervisor is told of every operation
 * any fiber of the server runs. Requests are sent one at a time (raw HTTP, keep-alive), each kind BENCH_WARMUP (20)
 * times unrecorded and BENCH_RUNS (200) times recorded; the count between the first recorded request's start and
 * the last one's answer, divided by the runs, is the figure (what a request leaves running after its answer, such
 * as the response's finalizers, lands in the next one: over many runs the total is the same). Content workers and
 * the SQL driver run outside the fiber runtime and count nothing.
 *
 * Printed per request: ops and fibers a request, the SQL statements it sends are in bench:statements. With
 * `--verbose`, each request's BENCH_TOP (25) most frequent operations: the primitive (`OnSuccess`, `Sync`, …) and the start of
 * the code it runs, which is how a hot spot is found (a `Commit (restore) => flatMap(acquire …` per `Effect.locally`
 * or `provideService`, a `WithRuntime (fiber) => { const span …` per span). Asserts nothing.
 */
import { Effect, Layer, RuntimeFlags, Supervisor } from "effect"
import {
  bearer,
  fetchReply,
  jsonRpcAnswer,
  MCP_HEADERS,
  postJson,
  rawToolCall,
  type Reply
} from "../packages/server/test/support/Http.ts"
import { startTestServer } from "../packages/server/test/support/TestServer.ts"
import { loadAverage, machine, number } from "./support/Bench.ts"

const verbose = process.argv.includes("--verbose")

/** Counts the operations and fibers started while `counting`; with `verbose`, the operations by what they run. */
class OpCounter extends Supervisor.AbstractSupervisor<void> {
  counting = false
  ops = 0
  fibers = 0
  readonly kinds = new Map<string, number>()
  /** A closure's label, made once per closure (toString is slow). */
  private readonly labels = new WeakMap<object, string>()

  get value() {
    return Effect.void
  }

  override onStart() {
    if (this.counting) this.fibers++
  }

  override onEffect(_fiber: unknown, effect: unknown) {
    if (!this.counting) return
    this.ops++
    if (verbose) {
      const kind = this.kindOf(effect as Record<string, unknown>)
      this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1)
    }
  }

  reset() {
    this.ops = 0
    this.fibers = 0
    this.kinds.clear()
  }

  private kindOf(effect: Record<string, unknown>) {
    const op = String(effect["_op"])
    const code = [effect["effect_instruction_i0"], effect["effect_instruction_i1"], effect["effect_instruction_i2"]]
      .find((value) => typeof value === "function") as object | undefined
    if (code === undefined) return op
    let label = this.labels.get(code)
    if (label === undefined) {
      label = `${op} ${String(code).replace(/\s+/g, " ").slice(0, 110)}`
      this.labels.set(code, label)
    }
    return label
  }
}

const main = Effect.gen(function*() {
  const warmup = number("BENCH_WARMUP", 20)
  const runs = number("BENCH_RUNS", 200)
  const counter = new OpCounter()
  const server = yield* startTestServer({
    // Counted, never refused: the count is part of every call, as in production.
    DOCK_TOKEN_REQUESTS_PER_MINUTE: "100000000",
    DOCK_TOKEN_WRITES_PER_MINUTE: "100000000"
  }).pipe(Effect.provide(Layer.mergeAll(RuntimeFlags.enableOpSupervision, Supervisor.addSupervisor(counter))))

  const admin = (path: string, body: unknown) =>
    Effect.map(postJson(`${server.url}${path}`, body, bearer(server.adminToken)), (reply) => reply.json)
  const user = yield* admin("/admin/users", { email: "ops@example.com" })
  const { token } = yield* admin("/admin/tokens", { user: user.email, scopes: ["mcp:write"] })
  /** A tool call that must succeed: the bench measures calls that do their work. */
  const toolCall = (name: string, args: Record<string, unknown>) =>
    Effect.map(rawToolCall(server.url, token, name, args), (reply: Reply) => {
      if (reply.status !== 200 || jsonRpcAnswer(reply).result?.isError === true) {
        throw new Error(`${name}: ${reply.status} ${reply.text.slice(0, 300)}`)
      }
      return jsonRpcAnswer(reply).result.structuredContent
    })

  const { bucket: dock } = yield* toolCall("create_bucket", { title: "Ops bench", slug: "ops-bench" })
  const bucket = `${dock.owner.username}/${dock.slug}`
  const html = `<h1>Page</h1>\n${
    Array.from({ length: 12 }, (_, i) =>
      `<p>Paragraph ${i}: some <strong>text</strong> with a <a href="https://example.com/${i}">link</a>.</p>`)
      .join("\n")
  }`
  yield* toolCall("push_web_page", { bucket, content_type: "html", page_slug: "page", page_content: html })
  let version = 0
  const markdown = () =>
    `# Notes ${++version}\n\n${
      Array.from(
        { length: 40 },
        (_, i) => `- item ${i} of version ${version}, see [[page]] and https://example.com/${i}`
      )
        .join("\n")
    }\n`

  // A Micro DB table of typed columns with 500 rows: one query of a page of 50 and one row by id.
  const { table } = yield* toolCall("create_micro_db_table", {
    bucket,
    name: "Tasks",
    slug: "tasks",
    columns: [
      { name: "Code", slug: "code", type: "text", required: true },
      { name: "Status", slug: "status", type: "select", options: ["todo", "doing", "done"] },
      { name: "Price", slug: "price", type: "number" },
      { name: "Due", slug: "due", type: "date" },
      { name: "Done", slug: "done", type: "boolean" }
    ]
  })
  const { rows } = yield* toolCall("insert_micro_db_rows", {
    bucket,
    table: table.id,
    rows: Array.from({ length: 500 }, (_, i) => ({
      code: `R${i}`,
      status: ["todo", "doing", "done"][i % 3],
      price: (i * 37) % 1000,
      due: `2026-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + (i % 28)).padStart(2, "0")}`,
      done: i % 4 === 0
    }))
  })

  const requests: ReadonlyArray<{ readonly label: string; readonly send: Effect.Effect<unknown> }> = [
    { label: "GET /healthz", send: fetchReply(`${server.url}/healthz`) },
    {
      label: "MCP ping",
      send: postJson(`${server.url}/mcp`, { jsonrpc: "2.0", id: 1, method: "ping" }, {
        ...MCP_HEADERS,
        ...bearer(token)
      })
    },
    { label: "get_web_page", send: toolCall("get_web_page", { bucket, page_slug: "page" }) },
    { label: "get_bucket", send: toolCall("get_bucket", { bucket }) },
    { label: "list_web_pages", send: toolCall("list_web_pages", { bucket }) },
    {
      label: "query_micro_db_rows (50 of 500)",
      send: toolCall("query_micro_db_rows", {
        bucket,
        table: table.id,
        filter: [{ column: "status", op: "eq", value: "todo" }, { column: "price", op: "gte", value: 100 }],
        sort: [{ column: "price", direction: "desc" }],
        limit: 50
      })
    },
    { label: "get_micro_db_row", send: toolCall("get_micro_db_row", { bucket, table: table.id, row_id: rows[0].id }) },
    {
      label: "push_web_page (Markdown, 4 KB)",
      send: Effect.suspend(() =>
        toolCall("push_web_page", { bucket, content_type: "markdown", page_slug: "notes", page_content: markdown() })
      )
    }
  ]

  console.log(machine())
  console.log(`${warmup} unrecorded and ${runs} recorded requests of each kind, one at a time\n`)
  console.log(`${"request".padEnd(32)} ${"ops".padStart(8)} ${"fibers".padStart(8)}`)
  const figures: Array<{ label: string; ops: number; fibers: number; kinds: Array<[string, number]> }> = []
  for (const request of requests) {
    for (let i = 0; i < warmup; i++) yield* request.send
    counter.reset()
    counter.counting = true
    for (let i = 0; i < runs; i++) yield* request.send
    counter.counting = false
    const figure = {
      label: request.label,
      ops: counter.ops / runs,
      fibers: counter.fibers / runs,
      kinds: [...counter.kinds].sort((a, b) => b[1] - a[1]).slice(0, number("BENCH_TOP", 25))
    }
    figures.push(figure)
    console.log(
      `${figure.label.padEnd(32)} ${figure.ops.toFixed(0).padStart(8)} ${figure.fibers.toFixed(1).padStart(8)}`
    )
  }
  if (verbose) {
    for (const figure of figures) {
      console.log(`\n${figure.label}: the most frequent operations a request`)
      for (const [kind, n] of figure.kinds) console.log(`${(n / runs).toFixed(1).padStart(7)}  ${kind}`)
    }
  }
  console.log(`\n1-minute load average ${loadAverage()} (the counts do not depend on it)`)
})

await Effect.runPromise(Effect.scoped(main))
