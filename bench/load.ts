/**
 * bench/load: a bounded load test on loopback that stops by itself. The real server (a child process on a fresh
 * PostgreSQL database on DOCK_TEST_DATABASE_URL's server or postgres://postgres@127.0.0.1:5432, dropped at the end)
 * with the production per-token limits (600 requests and 120 writes a minute, 4 calls in flight per token; the
 * same DOCK_* variables set in the bench's environment change them).
 *
 * Setup: BENCH_USERS users, each with a token (mcp:write), a Dock `load` of BENCH_PAGES pages and a Micro DB table
 * of BENCH_ROWS rows. Then BENCH_AGENTS simulated agents, each its own MCP client (the v2 SDK over Streamable
 * HTTP, connected once), the users' tokens shared round-robin (BENCH_AGENTS / BENCH_USERS agents per token), loop
 * for BENCH_SECONDS over a weighted mix of tools — get_web_page, list_web_pages, search_web_pages, push_web_page,
 * push_markdown (small pages, a bounded set of slugs per agent, so they update), query_micro_db_rows,
 * insert_micro_db_rows (a few rows), get_bucket — with a think time after each call (uniform between half and
 * one and a half BENCH_THINK_MS), so the offered load is about agents / think time calls per second. Agents start
 * spread over one think time. The mix, in weights out of 100: get_web_page 25, query_micro_db_rows 20, get_bucket
 * 15, list_web_pages 10, search_web_pages 10, insert_micro_db_rows 8, push_web_page 7, push_markdown 5 (80% reads).
 *
 * The clients share one keep-alive node:http Agent of at most BENCH_CONNECTIONS sockets (a call waits for a free
 * one): 500 clients then hold BENCH_CONNECTIONS sockets and file descriptors, not one each, and no socket is opened
 * per call (no ephemeral ports left in TIME_WAIT). A request that fails with a reset on a reused kept-alive socket
 * (the server closed it idle just as it was taken) is sent once more; those retries are counted and printed.
 *
 * Prints, per tool: calls, rate_limited (counted apart: the honest answer of a limit, not an error), errors by
 * code (anything else; should be 0), p50/p95/p99 latency of the answered calls; total calls/s; the server's RSS
 * (VmRSS from /proc/<pid>/status, Linux) every BENCH_SAMPLE_SECONDS with its slope in MB per minute over the
 * second half of the run (a leak shows as a steady rise); the server process's CPU (cores on average, ms per
 * call, from /proc/<pid>/stat); the 1-minute load average at the start and the end.
 * The reference, measured in the same run just before: the bare SDK's echo tool (bench/mcp.ts's echo server, a
 * child process) driven by the same number of agents with the same think time and connection pool for
 * BENCH_REFERENCE_SECONDS. Asserts nothing.
 *
 * BENCH_AGENTS (500), BENCH_SECONDS (180), BENCH_THINK_MS (5000), BENCH_USERS (50), BENCH_CONNECTIONS (64),
 * BENCH_PAGES (20), BENCH_ROWS (200), BENCH_REFERENCE_SECONDS (15), BENCH_SAMPLE_SECONDS (10), BENCH_ERA
 * (legacy|modern), BENCH_KEEP_DATABASE=1.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { Readable } from "node:stream"
import { startServer, stopServer } from "../scripts/support.ts"
import {
  type Era,
  loadAverage,
  machine,
  mcpEra,
  mulberry32,
  number,
  percentile,
  sourceArgs,
  withFreshServer
} from "./support/Bench.ts"

const WORDS = (
  "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec " +
  "romeo sierra tango uniform victor whiskey xray yankee zulu harbour lighthouse tide anchor beacon compass"
).split(" ")
const STATUSES = ["todo", "doing", "done"]

// ---------------------------------------------------------------------------------------------------------------
// HTTP: one bounded keep-alive pool for every client.
// ---------------------------------------------------------------------------------------------------------------

const counters = { retries: 0 }

/** A fetch over node:http with `agent`: what the SDK transport calls (a URL, a method, headers, a string body). */
const poolFetch = (agent: Http.Agent) => {
  const once = (url: URL, init: RequestInit | undefined) =>
    new Promise<Response>((resolve, reject) => {
      const headers: Record<string, string> = {}
      new Headers(init?.headers).forEach((value, name) => (headers[name] = value))
      const body = init?.body
      if (body !== undefined && body !== null && typeof body !== "string") {
        return reject(new Error("poolFetch: string bodies only"))
      }
      const request = Http.request(url, { method: init?.method ?? "GET", headers, agent }, (response) => {
        const answer = new Headers()
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(", ") : value)
        }
        const status = response.statusCode ?? 0
        const empty = status === 204 || status === 205 || status === 304 || init?.method === "HEAD"
        if (empty) response.resume()
        resolve(
          new Response(empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>), {
            status,
            headers: answer
          })
        )
      })
      request.on("error", (error) => reject(Object.assign(error, { reused: request.reusedSocket })))
      // The transport may hand every request the same long-lived signal: the listener goes when the request does.
      const signal = init?.signal
      if (signal != null) {
        const abort = () => request.destroy(signal.reason as Error)
        if (signal.aborted) abort()
        else {
          signal.addEventListener("abort", abort, { once: true })
          request.once("close", () => signal.removeEventListener("abort", abort))
        }
      }
      request.end(body ?? undefined)
    })
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input)
    try {
      return await once(url, init)
    } catch (error) {
      const { code, reused } = error as { code?: string; reused?: boolean }
      // The server closed an idle kept-alive socket just as this request took it: nothing reached the server.
      if (reused === true && (code === "ECONNRESET" || code === "EPIPE")) {
        counters.retries++
        return once(url, init)
      }
      throw error
    }
  }
}

const connect = async (url: string, token: string | undefined, era: Era, fetch: ReturnType<typeof poolFetch>) => {
  const client = new Client(
    { name: "dock-bench-load", version: "1.0.0" },
    { versionNegotiation: { mode: era === "modern" ? { pin: "2026-07-28" } : "legacy" } }
  )
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      ...(token === undefined ? {} : { authProvider: { token: async () => token } }),
      fetch
    })
  )
  return client
}

/** `count` clients, `batch` connecting at a time. */
const connectAll = async (count: number, make: (i: number) => Promise<Client>) => {
  const clients: Array<Client> = []
  for (let i = 0; i < count; i += 50) {
    clients.push(...await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => make(i + j))))
  }
  return clients
}

// ---------------------------------------------------------------------------------------------------------------
// Figures.
// ---------------------------------------------------------------------------------------------------------------

interface Tally {
  calls: number
  rateLimited: number
  readonly errors: Map<string, number>
  readonly latencies: Array<number>
}

const tally = (): Tally => ({ calls: 0, rateLimited: 0, errors: new Map(), latencies: [] })

const firstErrors = new Map<string, string>()

/** One call, timed and counted into `t`. */
const measured = async (t: Tally, client: Client, name: string, args: Record<string, unknown>) => {
  const before = performance.now()
  let code: string | undefined
  let detail = ""
  try {
    const result = await client.callTool({ name, arguments: args })
    if (result.isError === true) {
      const body = result.structuredContent as { error?: { code?: unknown } } | undefined
      code = typeof body?.error?.code === "string" ? body.error.code : "unknown"
      detail = JSON.stringify(result.structuredContent ?? result.content).slice(0, 400)
    }
  } catch (error) {
    // An HTTP refusal (the per-token request rate is answered with 429 before the call is read): the SDK throws
    // it with the response's text, Dock's error body.
    const text = (error as { data?: { text?: unknown } }).data?.text
    let bodyCode: unknown
    try {
      bodyCode = typeof text === "string" ? (JSON.parse(text) as { error?: { code?: unknown } }).error?.code : undefined
    } catch {
      bodyCode = /"code":"([a-z_]+)"/.exec(String(error))?.[1]
    }
    bodyCode ??= /"code":"([a-z_]+)"/.exec(String(error))?.[1]
    code = typeof bodyCode === "string"
      ? bodyCode
      : `thrown:${(error as { code?: string }).code ?? (error as Error).name}`
    detail = String(error).slice(0, 400)
  }
  const ms = performance.now() - before
  t.calls++
  if (code === undefined) t.latencies.push(ms)
  else if (code === "rate_limited") t.rateLimited++
  else {
    t.errors.set(code, (t.errors.get(code) ?? 0) + 1)
    const key = `${name} ${code}`
    if (!firstErrors.has(key)) {
      firstErrors.set(key, detail)
      console.error(`first ${key}: ${detail}`)
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** VmRSS of `pid` in MiB (Linux); NaN elsewhere. */
const rssMiB = (pid: number | undefined) => {
  try {
    const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024
  } catch {
    return NaN
  }
}

/** CPU time (user + system, ms) `pid` has used so far, from /proc/<pid>/stat (Linux, 100 ticks a second). */
const cpuMs = (pid: number | undefined) => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return NaN
  }
}

/** Least-squares slope of `points` ([seconds, MiB]) in MiB per minute. */
const slopePerMinute = (points: ReadonlyArray<readonly [number, number]>) => {
  const n = points.length
  if (n < 2) return NaN
  const mx = points.reduce((s, [x]) => s + x, 0) / n
  const my = points.reduce((s, [, y]) => s + y, 0) / n
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0)
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0)
  return (sxy / sxx) * 60
}

const fileDescriptorLimit = () => {
  try {
    return execFileSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).trim()
  } catch {
    return "unknown"
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The run.
// ---------------------------------------------------------------------------------------------------------------

const main = async () => {
  const agents = number("BENCH_AGENTS", 500)
  const seconds = number("BENCH_SECONDS", 180)
  const thinkMs = number("BENCH_THINK_MS", 5000)
  const users = Math.min(number("BENCH_USERS", 50), agents)
  const connections = number("BENCH_CONNECTIONS", 64)
  const pages = number("BENCH_PAGES", 20)
  const rows = number("BENCH_ROWS", 200)
  const referenceSeconds = number("BENCH_REFERENCE_SECONDS", 15)
  const sampleSeconds = number("BENCH_SAMPLE_SECONDS", 10)
  const era = mcpEra()
  const loadAtStart = loadAverage()

  // Production's per-token limits, so that an honest rate_limited can happen (counted apart).
  // Each can be set in the bench's environment (the same variable) to try other limits.
  const env = {
    DOCK_TOKEN_REQUESTS_PER_MINUTE: process.env.DOCK_TOKEN_REQUESTS_PER_MINUTE ?? "600",
    DOCK_TOKEN_WRITES_PER_MINUTE: process.env.DOCK_TOKEN_WRITES_PER_MINUTE ?? "120",
    DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER: process.env.DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER ?? "4"
  }
  await withFreshServer("load", { env }, async ({ dock, summary, admin, defer }) => {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections })
    defer(async () => agent.destroy())
    const fetch = poolFetch(agent)
    const mcpUrl = `${dock.baseUrl}/mcp`

    console.log(machine())
    console.log(summary)
    console.log(
      `open files limit (ulimit -n) ${fileDescriptorLimit()}; ${connections} pooled keep-alive sockets for ` +
        `${agents} clients; MCP era ${era}; 1-minute load average ${loadAtStart} at start`
    )

    // ---- Setup: users, tokens, Docks with pages, Micro DB tables. -------------------------------------------
    const setupStart = performance.now()
    const random = mulberry32(19)
    const word = () => WORDS[Math.floor(random() * WORDS.length)]!
    const sentence = (n: number) => Array.from({ length: n }, word).join(" ")
    interface Seeded {
      readonly token: string
      readonly bucket: string
      readonly table: string
    }
    const seeded: Array<Seeded> = []
    for (let u = 0; u < users; u += 10) {
      seeded.push(
        ...await Promise.all(Array.from({ length: Math.min(10, users - u) }, async (_, j) => {
          const n = u + j
          const username = `load-${n}`
          await admin("/admin/users", { email: `load-${n}@example.com`, username })
          const token = String(
            (await admin("/admin/tokens", { user: `load-${n}@example.com`, scopes: ["mcp:write"] })).token
          )
          const client = await connect(mcpUrl, token, era, fetch)
          const call = async (name: string, args: Record<string, unknown>) => {
            const result = await client.callTool({ name, arguments: args })
            if (result.isError === true) throw new Error(`${name}: ${JSON.stringify(result.structuredContent)}`)
            return result.structuredContent as any
          }
          await call("create_bucket", { title: `Load ${n}`, slug: "load" })
          const bucket = `${username}/load`
          for (let p = 0; p < pages; p++) {
            await call("push_web_page", {
              bucket,
              content_type: "markdown",
              page_slug: `page-${p}`,
              page_title: `Page ${p} ${sentence(2)}`,
              page_content: `# Page ${p}\n\n${sentence(60)}.\n\n${sentence(60)}.\n`
            })
          }
          const table = (await call("create_micro_db_table", {
            bucket,
            name: "Tasks",
            slug: "tasks",
            columns: [
              { name: "Name", slug: "name", type: "text", required: true },
              { name: "Status", slug: "status", type: "select", options: STATUSES },
              { name: "Qty", slug: "qty", type: "integer" }
            ]
          })).table.id as string
          const rowOf = (i: number) => ({
            name: `${sentence(2)} ${i}`,
            status: STATUSES[i % STATUSES.length]!,
            qty: i % 100
          })
          for (let r = 0; r < rows; r += 500) {
            await call("insert_micro_db_rows", {
              bucket,
              table,
              rows: Array.from({ length: Math.min(500, rows - r) }, (_, i) => rowOf(r + i))
            })
          }
          await client.close()
          return { token, bucket, table }
        }))
      )
    }
    console.log(
      `setup: ${users} users, tokens and Docks of ${pages} pages and a table of ${rows} rows in ` +
        `${((performance.now() - setupStart) / 1000).toFixed(1)} s\n`
    )

    /** Every agent loops until `deadline`: a call, then a think time; each starts after a random part of one. */
    const drive = (count: number, deadline: number, step: (i: number, call: number) => Promise<void>) =>
      Promise.all(Array.from({ length: count }, async (_, i) => {
        const own = mulberry32(1000 + i)
        await sleep(own() * thinkMs)
        for (let call = 0; performance.now() < deadline; call++) {
          await step(i, call)
          const pause = thinkMs * (0.5 + own())
          if (performance.now() + pause >= deadline) break
          await sleep(pause)
        }
      }))

    // ---- The reference: the bare SDK's echo tool, the same agents and think time. ----------------------------
    const echo = await startServer(process.execPath, [...sourceArgs, Path.join(import.meta.dirname, "mcp.ts")], {
      BENCH_ROLE: "echo"
    })
    let echoStopped = false
    defer(() => (echoStopped ? Promise.resolve() : stopServer(echo.child)))
    const echoClients = await connectAll(agents, () => connect(`${echo.baseUrl}/mcp`, undefined, era, fetch))
    const echoTally = tally()
    const echoStart = performance.now()
    await drive(
      agents,
      echoStart + referenceSeconds * 1000,
      (i, call) => measured(echoTally, echoClients[i]!, "echo", { text: `hello ${i}.${call}` })
    )
    const echoElapsed = (performance.now() - echoStart) / 1000
    await Promise.all(echoClients.map((client) => client.close()))
    await stopServer(echo.child)
    echoStopped = true

    // ---- The run. ---------------------------------------------------------------------------------------------
    const clients = await connectAll(agents, (i) => connect(mcpUrl, seeded[i % users]!.token, era, fetch))
    defer(() => Promise.all(clients.map((client) => client.close())))

    type Args = (i: number, call: number, rnd: () => number) => Record<string, unknown>
    const own = (i: number) => seeded[i % users]!
    // Every Dock is private: an agent reads and writes its own user's.
    const mix: ReadonlyArray<readonly [string, number, Args]> = [
      ["get_web_page", 25, (i, _c, rnd) => ({ bucket: own(i).bucket, page_slug: `page-${Math.floor(rnd() * pages)}` })],
      ["list_web_pages", 10, (i) => ({ bucket: own(i).bucket, limit: 20 })],
      ["search_web_pages", 10, (_i, _c, rnd) => ({
        query: `${WORDS[Math.floor(rnd() * WORDS.length)]} ${WORDS[Math.floor(rnd() * WORDS.length)]}`,
        limit: 10
      })],
      ["push_web_page", 7, (i, call, rnd) => ({
        bucket: own(i).bucket,
        content_type: "html",
        page_slug: `agent-${i}-${call % 3}`,
        page_title: `Agent ${i} note ${call % 3}`,
        page_content: `<h1>Note ${call}</h1><p>${
          Array.from({ length: 40 }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(" ")
        }</p>`
      })],
      ["push_markdown", 5, (i, call, rnd) => ({
        bucket: own(i).bucket,
        page_slug: `agent-${i}-md-${call % 3}`,
        page_title: `Agent ${i} markdown ${call % 3}`,
        page_content: `# Markdown ${call}\n\n${
          Array.from({ length: 40 }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(" ")
        }\n`
      })],
      ["query_micro_db_rows", 20, (i, _c, rnd) => ({
        bucket: own(i).bucket,
        table: own(i).table,
        filter: [
          { column: "status", op: "eq", value: STATUSES[Math.floor(rnd() * STATUSES.length)] },
          { column: "qty", op: "gte", value: Math.floor(rnd() * 100) }
        ],
        sort: [{ column: "qty", direction: "desc" }],
        limit: 20
      })],
      ["insert_micro_db_rows", 8, (i, call) => ({
        bucket: own(i).bucket,
        table: own(i).table,
        rows: [1, 2, 3].map((k) => ({ name: `agent ${i} call ${call}.${k}`, status: "todo", qty: k }))
      })],
      ["get_bucket", 15, (i) => ({ bucket: own(i).bucket })]
    ]
    const totalWeight = mix.reduce((s, [, w]) => s + w, 0)
    const tallies = new Map(mix.map(([name]) => [name, tally()]))

    const pid = dock.child.pid
    const rss: Array<readonly [number, number]> = []
    const loadRunStart = loadAverage()
    const runStart = performance.now()
    const cpuStart = cpuMs(pid)
    rss.push([0, rssMiB(pid)])
    const sampler = setInterval(() => {
      const t = (performance.now() - runStart) / 1000
      const mib = rssMiB(pid)
      rss.push([t, mib])
      const calls = [...tallies.values()].reduce((s, t) => s + t.calls, 0)
      console.log(`  ${t.toFixed(0).padStart(4)} s  RSS ${mib.toFixed(1)} MiB  ${calls} calls  load ${loadAverage()}`)
    }, sampleSeconds * 1000)
    await drive(agents, runStart + seconds * 1000, async (i, call) => {
      const rnd = mulberry32(i * 1_000_003 + call)
      let pick = rnd() * totalWeight
      const [name, , args] = mix.find(([, w]) => (pick -= w) < 0) ?? mix[0]!
      await measured(tallies.get(name)!, clients[i]!, name, args(i, call, rnd))
    })
    const elapsed = (performance.now() - runStart) / 1000
    clearInterval(sampler)
    const serverCpu = cpuMs(pid) - cpuStart
    rss.push([elapsed, rssMiB(pid)])
    const loadEnd = loadAverage()

    // ---- Figures. ---------------------------------------------------------------------------------------------
    const row = (cells: ReadonlyArray<string>) =>
      console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(24) : cell.padStart(i === 4 ? 22 : 10))).join(" "))
    const line = (name: string, t: Tally, secs: number) => {
      const sorted = [...t.latencies].sort((a, b) => a - b)
      const errors = [...t.errors].map(([code, n]) => `${code}:${n}`).join(",") || "0"
      row([
        name,
        String(t.calls),
        (t.calls / secs).toFixed(1),
        String(t.rateLimited),
        errors,
        percentile(sorted, 0.5).toFixed(1),
        percentile(sorted, 0.95).toFixed(1),
        percentile(sorted, 0.99).toFixed(1)
      ])
    }
    console.log(
      `\n${agents} agents, think time ${thinkMs} ms (±50%), ${users} tokens (${(agents / users).toFixed(0)} agents ` +
        `each), ${elapsed.toFixed(0)} s measured; limits per token: ${env.DOCK_TOKEN_REQUESTS_PER_MINUTE} ` +
        `requests/min, ${env.DOCK_TOKEN_WRITES_PER_MINUTE} writes/min, ${env.DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER} ` +
        `in flight\n`
    )
    row(["tool", "calls", "calls/s", "limited", "errors by code", "p50 ms", "p95 ms", "p99 ms"])
    const all = tally()
    for (const [name, t] of tallies) {
      line(name, t, elapsed)
      all.calls += t.calls
      all.rateLimited += t.rateLimited
      all.latencies.push(...t.latencies)
      for (const [code, n] of t.errors) all.errors.set(code, (all.errors.get(code) ?? 0) + n)
    }
    line("all Dock tools", all, elapsed)
    line(`echo (bare SDK, ${referenceSeconds} s)`, echoTally, echoElapsed)
    const secondHalf = rss.filter(([t]) => t >= elapsed / 2)
    console.log(
      `\nserver RSS (MiB) every ${sampleSeconds} s: ${rss.map(([, m]) => m.toFixed(0)).join(" ")}` +
        `\nRSS slope over the second half: ${slopePerMinute(secondHalf).toFixed(2)} MB/min ` +
        `(${secondHalf.length} samples); whole run ${slopePerMinute(rss).toFixed(2)} MB/min`
    )
    console.log(
      `server process CPU: ${(serverCpu / 1000 / elapsed).toFixed(2)} cores on average, ` +
        `${(serverCpu / Math.max(1, all.calls)).toFixed(2)} ms per call (PostgreSQL's apart); offered load about ` +
        `${(agents / (thinkMs / 1000)).toFixed(0)} calls/s less the time calls take`
    )
    console.log(`kept-alive socket resets retried: ${counters.retries}`)
    console.log(
      `reference: echo p50 ${
        percentile([...echoTally.latencies].sort((a, b) => a - b), 0.5).toFixed(1)
      } ms under the same agents, think time and pool, just before the run`
    )
    console.log(
      `1-minute load average: ${loadAtStart} at start, ${loadRunStart} when the run began, ${loadEnd} at the end`
    )
  })
}

await main()
