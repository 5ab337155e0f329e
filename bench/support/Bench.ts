/**
 * What the benches share: env knobs, figures (percentile, median, timing), a seeded random, the machine and its
 * load, psql, MCP clients, and the Dock server on a fresh PostgreSQL database (DOCK_TEST_DATABASE_URL's server or
 * postgres://postgres@127.0.0.1:5432, dropped at the end).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { type Started, startServer, stopServer } from "../../scripts/support.ts"

export const KiB = 1024
export const MiB = 1024 * KiB

/** The env knob `name` as a positive number, `fallback` when unset; throws on anything else. */
export const number = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
}

// ---------------------------------------------------------------------------------------------------------------
// Figures.
// ---------------------------------------------------------------------------------------------------------------

/** The p-th percentile (0 to 1, nearest rank) of ascending `sorted`; NaN when it is empty. */
export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!

/** The middle value (the upper one of an even count). */
export const median = (values: ReadonlyArray<number>) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** Milliseconds `run` took. */
export const time = (run: () => void) => {
  const started = performance.now()
  run()
  return performance.now() - started
}

/** The mark after a figure measured against a target: "  ok" under it, "  OVER n ms" otherwise, "" without one. */
export const againstTarget = (worst: number, target: number | undefined) =>
  target === undefined ? "" : worst < target ? "  ok" : `  OVER ${target} ms`

/** `unit` repeated to exactly `size` characters (1 MiB unless told). */
export const fill = (unit: string, size = MiB) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size)

/** A seeded random in [0, 1): the same inputs every run. */
export const mulberry32 = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

// ---------------------------------------------------------------------------------------------------------------
// The machine.
// ---------------------------------------------------------------------------------------------------------------

/** USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100 on Linux. */
const CLOCK_TICKS = 100

/**
 * The CPU time (user + system, ms) process `pid` has used so far, from /proc (Linux); 0 when unknown or gone.
 * Beside latency it shows what a call costs, which other load on a shared machine changes far less.
 */
const cpuOf = async (pid: string | number | undefined): Promise<number> => {
  if (pid === undefined) return 0
  const stat = await Fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined)
  if (stat === undefined) return 0
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
}

/** CPU used so far (ms): a process's, and by pid each backend of the database `psql` runs on (none without it). */
export interface CpuReading {
  readonly process: number
  readonly backends: ReadonlyMap<string, number>
}

export const readCpu = async (
  pid: string | number | undefined,
  psql?: (sql: string) => Promise<string>
): Promise<CpuReading> => {
  const pids = psql === undefined
    ? []
    : (await psql("select pid from pg_stat_activity where datname = current_database()"))
      .split("\n").filter((backend) => backend !== "")
  return {
    process: await cpuOf(pid),
    backends: new Map(await Promise.all(pids.map(async (backend) => [backend, await cpuOf(backend)] as const)))
  }
}

/** The CPU used between two readings (ms): the process's and its database's (backends gone since not counted). */
export const cpuBetween = (before: CpuReading, after: CpuReading) => {
  let database = 0
  for (const [pid, now] of after.backends) database += now - (before.backends.get(pid) ?? 0)
  return { process: after.process - before.process, database }
}

/** "Node v…, n CPUs (model)". */
export const machine = () => `Node ${process.version}, ${Os.cpus().length} CPUs (${Os.cpus()[0]?.model ?? "unknown"})`

/** The load average as printed: the 1-minute figure ("0.52"), or with `all` the 1, 5 and 15-minute ones ("0.52 / 0.61 / 0.70"). */
export const loadAverage = ({ all = false }: { readonly all?: boolean } = {}) =>
  (all ? Os.loadavg() : Os.loadavg().slice(0, 1)).map((n) => n.toFixed(2)).join(" / ")

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL.
// ---------------------------------------------------------------------------------------------------------------

/** The PostgreSQL server the benches create their databases on. */
export const pgServer = () => process.env.DOCK_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/**
 * `sql` run by psql on `url`, its output trimmed; rejects with psql's errors. Asynchronous: a synchronous child
 * process would stall the event loop (for minutes while bench/pages seeds), and the MCP clients' kept-alive
 * sockets, closed by the server meanwhile, would then fail their next request.
 */
export const psqlAt = (url: string, sql: string) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn("psql", [url, "-v", "ON_ERROR_STOP=1", "-qAt", "-f", "-"], { stdio: ["pipe", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    child.stderr.on("data", (chunk) => (err += chunk))
    child.on("error", reject)
    child.on(
      "close",
      (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`psql exited with ${code}: ${err}`)))
    )
    child.stdin.end(sql)
  })

export interface Database {
  /** The server's URL (its `postgres` database), where the database was created and is dropped. */
  readonly server: string
  readonly name: string
  /** The URL of the database itself. */
  readonly url: string
  readonly host: string
  /** The server's version, as `show server_version` prints it. */
  readonly version: string
}

/**
 * A new, uniquely named database `dock_bench_<label>_…` on pgServer(); undefined when the server is not reachable.
 * With BENCH_TEMPLATE_DATABASE it is a copy of that database (one kept by an earlier run), so runs of two versions
 * of the code measure the same data.
 */
export const createDatabase = async (label: string): Promise<Database | undefined> => {
  const server = pgServer()
  const name = `dock_bench_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const template = process.env["BENCH_TEMPLATE_DATABASE"]
  if (template !== undefined && !/^[a-z0-9_]+$/.test(template)) throw new Error("BENCH_TEMPLATE_DATABASE: a name")
  let version: string
  try {
    version = await psqlAt(server, "show server_version")
    await psqlAt(server, `create database ${name}${template === undefined ? "" : ` template ${template}`}`)
  } catch {
    return undefined
  }
  const url = new URL(server)
  url.pathname = `/${name}`
  return { server, name, url: url.toString(), host: url.host, version }
}

/** The database `name` on pgServer(), which must exist; undefined when the server is not reachable. */
const existingDatabase = async (name: string): Promise<Database | undefined> => {
  const server = pgServer()
  const url = new URL(server)
  url.pathname = `/${name}`
  try {
    return {
      server,
      name,
      url: url.toString(),
      host: url.host,
      version: await psqlAt(url.toString(), "show server_version")
    }
  } catch {
    return undefined
  }
}

export const dropDatabase = (database: Database) =>
  psqlAt(database.server, `drop database if exists ${database.name} with (force)`)

// ---------------------------------------------------------------------------------------------------------------
// The Dock server and MCP clients.
// ---------------------------------------------------------------------------------------------------------------

export const root = Path.resolve(import.meta.dirname, "../..")
/** Node options that run the TypeScript sources, as the package scripts do. */
export const sourceArgs: ReadonlyArray<string> = ["--conditions=dock-source", "--import", "tsx"]
export const serverMain = Path.join(root, "packages/server/src/main.ts")

/**
 * The ways to run `checkout`'s server or CLI that `variable` (BENCH_SERVER, BENCH_CLI) names, a comma-separated
 * list: `bundle` (default: what `npm start` and `npm run dock` run, scripts/bundle.mjs's output), `dist` (the
 * compiled output of `tsc -b`, which must be built) and `tsx` (the sources, as they ran before issue 15).
 */
export const runners = (variable: string, checkout: string, what: "server" | "cli") => {
  const [pkg, entry] = what === "server" ? ["server", "main"] : ["cli", "bin"]
  const ways: Record<string, ReadonlyArray<string>> = {
    bundle: [Path.join(checkout, `bundle/${entry}.js`)],
    dist: [Path.join(checkout, `packages/${pkg}/dist/${entry}.js`)],
    tsx: [...sourceArgs, Path.join(checkout, `packages/${pkg}/src/${entry}.ts`)]
  }
  return (process.env[variable] ?? "bundle").split(",").map((label) => {
    const args = ways[label.trim()]
    if (args === undefined) throw new Error(`${variable} lists bundle, dist or tsx`)
    return { label: label.trim(), args }
  })
}

/**
 * How the benches that start one Dock server run it: the sources through tsx (as every bench figure before issue 15
 * was measured), unless BENCH_SERVER names one of `runners` (`bundle`, what `npm start` runs, built first when out of
 * date; `dist`).
 */
const benchServerArgs = (): ReadonlyArray<string> => {
  if (process.env["BENCH_SERVER"] === undefined) return [...sourceArgs, serverMain]
  const [runner] = runners("BENCH_SERVER", root, "server")
  if (runner!.label === "bundle") execFileSync(process.execPath, bundleCheck(root), { stdio: "inherit" })
  return runner!.args
}

/** `node scripts/bundle.mjs` in `checkout`: builds the bundle when it is missing or out of date. */
export const bundleCheck = (checkout: string): ReadonlyArray<string> => [Path.join(checkout, "scripts/bundle.mjs")]

export type Era = "legacy" | "modern"

/** BENCH_ERA: `modern` pins the client to 2026-07-28; otherwise (`legacy`) its default 2025 handshake, served statelessly. */
export const mcpEra = (): Era => (process.env.BENCH_ERA === "modern" ? "modern" : "legacy")

/** An MCP client (the v2 SDK over Streamable HTTP), connected to `url`. */
export const connectMcp = async (options: {
  /** The client's name in its handshake. */
  readonly name: string
  readonly url: string
  readonly era: Era
  /** A bearer token; none for a server without auth. */
  readonly token?: string | undefined
  /** Send a request once more when a kept-alive connection was closed under us (a request body here is a string). */
  readonly retry?: boolean
}) => {
  const client = new Client(
    { name: options.name, version: "1.0.0" },
    { versionNegotiation: { mode: options.era === "modern" ? { pin: "2026-07-28" } : "legacy" } }
  )
  const { token } = options
  await client.connect(
    new StreamableHTTPClientTransport(new URL(options.url), {
      ...(token === undefined ? {} : { authProvider: { token: async () => token } }),
      ...(options.retry === true ? { fetch: (url, init) => fetch(url, init).catch(() => fetch(url, init)) } : {})
    })
  )
  return client
}

export interface FreshServer {
  /** The Dock server process. */
  readonly dock: Started
  readonly database: Database
  /** "PostgreSQL <version> at <host>, fresh database <name> (dropped at the end)". */
  readonly summary: string
  /** Whether the database is an existing one (BENCH_DATABASE) rather than a fresh one. */
  readonly reused: boolean
  /** `sql` run by psql on the fresh database. */
  readonly psql: (sql: string) => Promise<string>
  /** POST to an admin route with the admin token; the answer's JSON, which must come with 201. */
  readonly admin: (path: string, body: unknown) => Promise<Record<string, unknown>>
  /** Runs `cleanup` at the end, before the ones deferred earlier (clients close before the server stops). */
  readonly defer: (cleanup: () => Promise<unknown>) => void
}

/**
 * `body` with the Dock server (this checkout's sources, a child process) on a new database from createDatabase
 * and a fresh data directory, both named after `label`; exits with 1 when PostgreSQL is not reachable. At the end,
 * whether `body` succeeded or not, every deferred cleanup runs (newest first), then the server stops and the
 * database is dropped (kept with BENCH_KEEP_DATABASE=1, for experiments with psql; its name is printed). With
 * BENCH_DATABASE=<name> that existing database is used instead, as it is, and kept. When `body` fails, the end of
 * the server's output is shown.
 */
export const withFreshServer = async <A>(
  label: string,
  options: {
    /** Node options for the server before the ones that run the sources. */
    readonly nodeArgs?: ReadonlyArray<string>
    /** Server env on top of the database, data directory, admin token and per-token limits (off). */
    readonly env?: Record<string, string>
  },
  body: (server: FreshServer) => Promise<A>
): Promise<A> => {
  // BENCH_DATABASE=<name>: an existing database (one kept with BENCH_KEEP_DATABASE=1), used as it is and kept.
  const reused = process.env["BENCH_DATABASE"]
  const database = reused === undefined ? await createDatabase(label) : await existingDatabase(reused)
  if (database === undefined) {
    console.error(`PostgreSQL at ${pgServer()} is not reachable: nothing measured`)
    process.exit(1)
  }
  const adminToken = "dock_admin_bench"
  const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), `dock-bench-${label}-`))
  const cleanups: Array<() => Promise<unknown>> = [
    async () =>
      process.env["BENCH_KEEP_DATABASE"] === "1" || reused !== undefined
        ? console.log(`kept database ${database.name}`)
        : dropDatabase(database),
    () => Fs.rm(dataDir, { recursive: true, force: true })
  ]
  let dock: Started | undefined
  try {
    dock = await startServer(process.execPath, [...(options.nodeArgs ?? []), ...benchServerArgs()], {
      DATABASE_URL: database.url,
      DOCK_DATA_DIR: dataDir,
      DOCK_ADMIN_TOKEN: adminToken,
      // Per-token limits off (and calls in flight per token at their maximum), so the bench measures the server
      // rather than its throttle.
      DOCK_TOKEN_REQUESTS_PER_MINUTE: "0",
      DOCK_TOKEN_WRITES_PER_MINUTE: "0",
      DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE: "0",
      DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER: "100",
      ...options.env
    }, 120_000)
    const { child, baseUrl } = dock
    cleanups.unshift(() => stopServer(child))
    const admin = async (path: string, body: unknown) => {
      const post = () =>
        fetch(`${baseUrl}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      // Once more when a kept-alive connection was closed under us (seen after bench/pages' long seeding pause).
      const response = await post().catch(post)
      if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
      return (await response.json()) as Record<string, unknown>
    }
    return await body({
      dock,
      database,
      summary: reused === undefined
        ? `PostgreSQL ${database.version} at ${database.host}, fresh database ${database.name} (dropped at the end)`
        : `PostgreSQL ${database.version} at ${database.host}, existing database ${database.name} (BENCH_DATABASE, kept)`,
      reused: reused !== undefined,
      psql: (sql) => psqlAt(database.url, sql),
      admin,
      defer: (cleanup) => void cleanups.unshift(cleanup)
    })
  } catch (error) {
    if (dock !== undefined) console.error(`server output (last 4000 characters):\n${dock.output().slice(-4000)}`)
    throw error
  } finally {
    // Every one, whatever an earlier one did: the database is dropped even when a client failed to close.
    for (const cleanup of cleanups) {
      await cleanup().catch((error: unknown) => console.error(`cleanup failed: ${String(error)}`))
    }
  }
}
