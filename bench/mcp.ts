/**
 * bench/mcp: calls per second and p50/p99 latency of the MCP tools `get_web_page` (a page of a 200-page Dock,
 * named as owner/slug, each client walking through the pages), `list_buckets` and `get_bucket` on the real server
 * (a child process on a fresh PostgreSQL database on DOCK_TEST_DATABASE_URL's server or
 * postgres://postgres@127.0.0.1:5432, dropped at the end), and in the same run of a trivial `echo` tool served
 * by the bare SDK (`createMcpHandler` on node:http, also a child process: this file with BENCH_ROLE=echo), each
 * with the same concurrent MCP clients (the v2 SDK client over Streamable HTTP, connected once, keep-alive). They
 * take turns in interleaved slices so that outside load falls on all of them alike. Prints figures and the ratio
 * of each Dock tool to the echo baseline (calls/s, p50 and p99), and the CPU time per call of the server process and
 * of its database's backends (from /proc, Linux): on a machine shared with other work, the figures other load
 * changes least. Asserts nothing.
 *
 * The per-token request rate is counted as in production (a limit far above what the bench reaches, so nothing
 * is refused): the count is part of every call's cost. The 200 pages are HTML of ~2 KB, each read once before
 * the warm-up (the first native read of stored HTML sanitizes it again; later reads take it from the render cache).
 *
 * Two more references run on the echo's server: `echo_pg1` and `echo_pg2`, the echo after one or two trivial
 * statements in turn (a prepared `select $1` on a node-postgres pool of the Dock server's size, on the bench's
 * database): the cost of PostgreSQL round trips alone, which get_web_page (a bearer check, then the Dock with the
 * page) cannot go below however it is built. The gap between echo_pg2 and get_web_page is the Dock server's own.
 *
 * BENCH_SECONDS (measured per tool, default 10), BENCH_WARMUP_SECONDS (per tool, default 2), BENCH_CLIENTS
 * (default 10), BENCH_ROUNDS (slices per tool, default 5), BENCH_TOOLS (the targets measured beside the echo,
 * comma-separated: get_web_page, echo_pg1, echo_pg2, ping, list_buckets, get_bucket; default all: `ping` is an MCP
 * ping, the floor of any call: the HTTP layer, the bearer check with its count and the SDK, no tool), BENCH_ERA
 * (`legacy`: the client's default 2025 handshake, served statelessly; `modern`: pinned to 2026-07-28),
 * BENCH_KEEP_DATABASE=1 (keep the database for experiments with psql; its name is printed), BENCH_SERVER (`bundle`:
 * the Dock server as npm start runs it; default the sources through tsx) and BENCH_SERVER_NODE_ARGS (extra Node
 * options for it, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 */
import type { Client } from "@modelcontextprotocol/client"
import { createMcpHandler, fromJsonSchema, McpServer } from "@modelcontextprotocol/server"
import * as Http from "node:http"
import { Readable } from "node:stream"
import Pg from "pg"
import { startServer, stopServer } from "../scripts/support.ts"
import {
  connectMcp,
  cpuBetween,
  loadAverage,
  machine,
  mcpEra,
  number,
  percentile,
  readCpu,
  sourceArgs,
  withFreshServer
} from "./support/Bench.ts"

// ---------------------------------------------------------------------------------------------------------------
// The baseline: the bare SDK with one trivial tool, served on node:http (the child process started below).
// ---------------------------------------------------------------------------------------------------------------

const serveEcho = () => {
  // Built once, as the Dock dispatcher builds its schemas once (a schema per request would compile it each time).
  const inputSchema = fromJsonSchema<{ text: string }>({
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"]
  })
  // The round-trip floor: the echo after `round_trips` trivial statements in turn, each a prepared `select $1` on a
  // node-postgres pool of the Dock server's default size (10) on the bench's database. A tool that must ask
  // PostgreSQL that often per call costs at least this much of the machine, however it is built.
  const pool = process.env.BENCH_DATABASE_URL === undefined
    ? undefined
    : new Pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: 10 })
  const roundTripSchema = fromJsonSchema<{ text: string; round_trips: number }>({
    type: "object",
    properties: { text: { type: "string" }, round_trips: { type: "integer", minimum: 1, maximum: 4 } },
    required: ["text", "round_trips"]
  })
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "echo", version: "1.0.0" }, { capabilities: { tools: {} } })
    server.registerTool(
      "echo",
      { description: "Returns its text", inputSchema },
      async ({ text }) => ({ content: [{ type: "text", text }] })
    )
    if (pool !== undefined) {
      server.registerTool(
        "echo_after_round_trips",
        { description: "Returns its text after round_trips trivial statements", inputSchema: roundTripSchema },
        async ({ round_trips, text }) => {
          let answer = text
          for (let n = 0; n < round_trips; n++) {
            const result = await pool.query<{ text: string }>({
              name: "echo",
              text: "select $1::text as text",
              values: [answer]
            })
            answer = result.rows[0]!.text
          }
          return { content: [{ type: "text", text: answer }] }
        }
      )
    }
    return server
  })
  const port = Number(process.env.PORT)
  const server = Http.createServer(async (req, res) => {
    if (req.url === "/readyz") return res.writeHead(200, { "content-type": "application/json" }).end("{}")
    // The same bridge as the Dock server's: the body read once and handed over parsed, JSON answers buffered.
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString("utf8")
    let parsedBody: unknown = undefined
    try {
      parsedBody = text === "" ? undefined : JSON.parse(text)
    } catch {
      // Left to the SDK.
    }
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value)
    }
    const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
      method: req.method!,
      headers,
      ...(parsedBody === undefined && text !== "" ? { body: text } : {})
    })
    const response = await handler.fetch(request, parsedBody === undefined ? {} : { parsedBody })
    res.writeHead(response.status, Object.fromEntries(response.headers))
    if (response.headers.get("content-type")?.startsWith("text/event-stream") && response.body !== null) {
      Readable.fromWeb(response.body as never).pipe(res)
    } else {
      res.end(Buffer.from(await response.arrayBuffer()))
    }
  })
  server.listen(port, "127.0.0.1")
  process.once("SIGTERM", () => {
    server.closeAllConnections()
    server.close(() => process.exit(0))
  })
}

// ---------------------------------------------------------------------------------------------------------------
// The driver.
// ---------------------------------------------------------------------------------------------------------------

interface Target {
  readonly label: string
  /** The server process answering this target's calls. */
  readonly pid: number | undefined
  /** Server CPU used during the measured slices. */
  cpu: number
  /** CPU of the database's backends during the measured slices (the Dock's; the echo has none). */
  databaseCpu: number
  /** Runs SQL on the target's database, whose backends' CPU is read (the Dock's targets). */
  readonly psql: ((sql: string) => Promise<string>) | undefined
  /** What is called (a tool's name, or `ping`), for error lines. */
  readonly name: string
  /** One call by the target's client number `client`, its `call`th. */
  readonly call: (mcp: Client, client: number, call: number) => Promise<CallOutcome>
  readonly clients: ReadonlyArray<Client>
  readonly latencies: Array<number>
  /** Milliseconds measured: each slice from its start until its last call returned. */
  elapsed: number
  errors: number
}

interface CallOutcome {
  readonly isError?: unknown
  readonly structuredContent?: unknown
  readonly content?: unknown
}

type Calls = Pick<Target, "name" | "call">

/** Calls of the tool `name` with the arguments `args` gives for each client and call. */
const tool = (name: string, args: (client: number, call: number) => Record<string, unknown>): Calls => ({
  name,
  call: (mcp, client, call) => mcp.callTool({ name, arguments: args(client, call) })
})

/** MCP pings: the request without a tool (the HTTP layer, the bearer check with its count, the SDK). */
const ping: Calls = { name: "ping", call: (mcp) => mcp.ping().then(() => ({})) }

/** Every client of the target calls its tool in a loop until `ms` have passed; with `record`, every call counts. */
const slice = async (target: Target, ms: number, record: boolean) => {
  const start = performance.now()
  const cpuBefore = await readCpu(target.pid, target.psql)
  const deadline = start + ms
  await Promise.all(target.clients.map(async (client, index) => {
    for (let call = 0; performance.now() < deadline; call++) {
      const before = performance.now()
      const result = await target.call(client, index, call)
      const after = performance.now()
      if (!record) continue
      if (result.isError === true) {
        if (target.errors++ === 0) {
          console.error(`${target.name} failed: ${JSON.stringify(result.structuredContent ?? result.content)}`)
        }
      } else {
        target.latencies.push(after - before)
      }
    }
  }))
  if (record) {
    target.elapsed += performance.now() - start
    const used = cpuBetween(cpuBefore, await readCpu(target.pid, target.psql))
    target.cpu += used.process
    target.databaseCpu += used.database
  }
}

const main = async () => {
  const seconds = number("BENCH_SECONDS", 10)
  const warmup = number("BENCH_WARMUP_SECONDS", 2)
  const clients = number("BENCH_CLIENTS", 10)
  const rounds = number("BENCH_ROUNDS", 5)
  const era = mcpEra()

  const connect = (url: string, token: string | undefined) => connectMcp({ name: "dock-bench", url, era, token })

  const target = async (
    label: string,
    pid: number | undefined,
    url: string,
    token: string | undefined,
    calls: Calls,
    psql?: Target["psql"]
  ): Promise<Target> => ({
    label,
    pid,
    cpu: 0,
    databaseCpu: 0,
    psql,
    ...calls,
    clients: await Promise.all(Array.from({ length: clients }, () => connect(url, token))),
    latencies: [],
    elapsed: 0,
    errors: 0
  })

  // Counted, never refused: the request rate is part of what a call costs.
  const env = { DOCK_TOKEN_REQUESTS_PER_MINUTE: "100000000" }
  const nodeArgs = (process.env["BENCH_SERVER_NODE_ARGS"] ?? "").split(" ").filter((arg) => arg !== "")
  await withFreshServer("mcp", { env, nodeArgs }, async ({ admin, database, defer, dock, psql, summary }) => {
    const echo = await startServer(process.execPath, [...sourceArgs, import.meta.filename], {
      BENCH_ROLE: "echo",
      BENCH_DATABASE_URL: database.url
    })
    defer(() => stopServer(echo.child))

    const user = await admin("/admin/users", { email: "bench@example.com" })
    const token = String((await admin("/admin/tokens", { user: user.email, scopes: ["mcp:write"] })).token)

    // Seed a few Docks through MCP; get_bucket names them by slug in turn.
    const seeder = await connect(`${dock.baseUrl}/mcp`, token)
    const slugs: Array<string> = []
    for (let i = 1; i <= 5; i++) {
      const result = await seeder.callTool({
        name: "create_bucket",
        arguments: { title: `Bench Dock ${i}`, description: `Seeded by bench/mcp (${i} of 5)`, tags: ["bench"] }
      })
      if (result.isError === true) throw new Error(`create_bucket: ${JSON.stringify(result.structuredContent)}`)
      slugs.push((result.structuredContent as { bucket: { slug: string } }).bucket.slug)
    }
    // A Dock of 200 pages for get_web_page.
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await seeder.callTool({ name, arguments: args })
      if (result.isError === true) throw new Error(`${name}: ${JSON.stringify(result.structuredContent)}`)
      return result.structuredContent as any
    }
    const pagesDock = (await call("create_bucket", { title: "Bench Pages", slug: "bench-pages" })).bucket
    const pagesBucket = `${String(pagesDock.owner.username)}/${String(pagesDock.slug)}`
    const PAGES = 200
    const paragraph = (n: number, i: number) =>
      `<p>Paragraph ${i} of page ${n}: some <strong>text</strong> with a <a href="https://example.com/${n}/${i}">` +
      `link</a> and enough words to make the page about two kilobytes long in all, as a short note would be.</p>`
    for (let n = 0; n < PAGES; n++) {
      await call("push_web_page", {
        bucket: pagesBucket,
        content_type: "html",
        page_slug: `page-${n}`,
        page_title: `Page ${n}`,
        page_content: `<h1>Page ${n}</h1>\n${Array.from({ length: 12 }, (_, i) => paragraph(n, i)).join("\n")}`
      })
    }
    for (let n = 0; n < PAGES; n++) await call("get_web_page", { bucket: pagesBucket, page_slug: `page-${n}` })
    await seeder.close()

    console.log(machine())
    console.log(summary)
    console.log(
      `${clients} concurrent clients per tool, ${warmup} s warm-up each, then ${seconds} s measured each in ${rounds} ` +
        `interleaved rounds; MCP era ${era}` +
        `${era === "legacy" ? " (2025 handshake, stateless)" : " (2026-07-28)"}\n`
    )

    // BENCH_TOOLS: the targets measured (all by default); the echo always is.
    const only = process.env["BENCH_TOOLS"]?.split(",").map((tool) => tool.trim())
    const measured = (label: string) => only === undefined || only.some((tool) => label.startsWith(`${tool} `))
    const targets = [
      await target(
        "echo (bare SDK, node:http)",
        echo.child.pid,
        `${echo.baseUrl}/mcp`,
        undefined,
        tool("echo", (c, n) => ({ text: `hello ${c}.${n}` }))
      ),
      await target(
        "get_web_page (Dock)",
        dock.child.pid,
        `${dock.baseUrl}/mcp`,
        token,
        tool("get_web_page", (c, n) => ({ bucket: pagesBucket, page_slug: `page-${(c * 20 + n) % PAGES}` })),
        psql
      ),
      ...await Promise.all([1, 2].map((roundTrips) =>
        target(
          `echo_pg${roundTrips} (bare SDK + ${roundTrips} pg)`,
          echo.child.pid,
          `${echo.baseUrl}/mcp`,
          undefined,
          tool("echo_after_round_trips", (c, n) => ({ text: `hello ${c}.${n}`, round_trips: roundTrips })),
          psql
        )
      )),
      await target("ping (Dock, no tool)", dock.child.pid, `${dock.baseUrl}/mcp`, token, ping, psql),
      await target(
        "list_buckets (Dock)",
        dock.child.pid,
        `${dock.baseUrl}/mcp`,
        token,
        tool("list_buckets", () => ({})),
        psql
      ),
      await target(
        "get_bucket (Dock)",
        dock.child.pid,
        `${dock.baseUrl}/mcp`,
        token,
        tool("get_bucket", (c, n) => ({ bucket: slugs[(c + n) % slugs.length]! })),
        psql
      )
    ].filter((t, index) => index === 0 || measured(t.label))
    defer(() => Promise.all(targets.flatMap((t) => t.clients.map((client) => client.close()))))
    const loadBefore = loadAverage()
    for (const t of targets) await slice(t, warmup * 1000, false)
    // Interleaved slices, so that load from elsewhere on the machine falls on every target alike.
    for (let round = 0; round < rounds; round++) {
      for (const t of targets) await slice(t, (seconds * 1000) / rounds, true)
    }
    const loadAfter = loadAverage()

    const figures = targets.map((t) => {
      const sorted = [...t.latencies].sort((a, b) => a - b)
      const calls = Math.max(1, t.latencies.length + t.errors)
      return {
        label: t.label,
        errors: t.errors,
        callsPerSecond: t.latencies.length / (t.elapsed / 1000),
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        cpuPerCall: t.cpu / calls,
        databaseCpuPerCall: t.psql === undefined ? undefined : t.databaseCpu / calls
      }
    })
    const baseline = figures[0]!
    const row = (cells: ReadonlyArray<string>) =>
      console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(28) : cell.padStart(i >= 5 ? 14 : 9))).join(" "))
    row([
      "tool",
      "calls/s",
      "p50 ms",
      "p99 ms",
      "errors",
      "calls/s ratio",
      "p50 ratio",
      "p99 ratio",
      "CPU ms/call",
      "PG CPU ms/call"
    ])
    for (const f of figures) {
      row([
        f.label,
        f.callsPerSecond.toFixed(0),
        f.p50.toFixed(2),
        f.p99.toFixed(2),
        String(f.errors),
        f === baseline ? "1" : (f.callsPerSecond / baseline.callsPerSecond).toFixed(3),
        f === baseline ? "1" : (f.p50 / baseline.p50).toFixed(2),
        f === baseline ? "1" : (f.p99 / baseline.p99).toFixed(2),
        f.cpuPerCall.toFixed(2),
        f.databaseCpuPerCall?.toFixed(2) ?? ""
      ])
    }
    console.log(
      "\nratios: each target against the echo baseline (calls/s: higher is better; p50, p99: lower is better)"
    )
    console.log("CPU ms/call: the server process's own CPU time (user + system) per measured call; PG CPU ms/call:")
    console.log("its database's backends' (the bench's few psql readings of them included)")
    console.log(`per-token request rate counted (DOCK_TOKEN_REQUESTS_PER_MINUTE=${env.DOCK_TOKEN_REQUESTS_PER_MINUTE})`)
    console.log(`1-minute load average ${loadBefore} before, ${loadAfter} after`)
  })
}

if (process.env.BENCH_ROLE === "echo") serveEcho()
else await main()
