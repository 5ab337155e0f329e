/**
 * bench/startup: how long the server takes from spawn to /readyz answering 200, and its resident memory once
 * idle, each row beside references measured in the same run:
 *
 * - references: `node -e 0` and `node --import tsx -e 0` (spawn to exit); a bare PGlite (a plain Node script
 *   opening an existing data directory, with PGlite's defaults and with Dock's settings, EMBEDDED_SETTINGS) and a
 *   raw PostgreSQL connect (node-postgres, one `select 1`): spawn to the answer, and the memory then.
 * - embedded PGlite: a fresh data directory without a template (the first start on a machine: initdb, and the
 *   template saved into a fresh DOCK_CACHE_DIR), a fresh data directory from that template, an existing one.
 * - PostgreSQL: an empty database (migrations run) and a migrated one, on a fresh database on
 *   DOCK_TEST_DATABASE_URL's server or postgres://postgres@127.0.0.1:5432 (dropped at the end).
 *
 * The server runs with MALLOC_TRIM_THRESHOLD_ as `npm start` sets it (131072, or the bench's own value; `X` or any
 * value glibc does not read to measure without it). Idle memory is VmRSS one second after /readyz answered; CPU
 * is the process's user + system time when it was ready (threads included, child processes not), a figure the
 * machine's load changes far less than the wall time.
 * Each row runs BENCH_RUNS times (3; the start without a template once, as it makes the template) and prints the
 * median and the slowest. BENCH_SERVER: how the server runs (support/Bench.ts `runners`: `bundle`, as `npm start`
 * runs it, by default; `dist`; `tsx`); with `bundle`, the check `npm start` runs first (scripts/bundle.mjs finding
 * nothing to build) is timed too.
 * BENCH_CHECKOUT: the checkout whose server is measured (default this one), so that one bench gives before and
 * after figures. Prints figures; asserts nothing.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { EMBEDDED_SETTINGS } from "../packages/domain/src/Database/Database.ts"
import { startServer, stopServer } from "../scripts/support.ts"
import {
  bundleCheck,
  createDatabase,
  dropDatabase,
  loadAverage,
  machine,
  median,
  number,
  pgServer,
  root,
  runners
} from "./support/Bench.ts"

const node = process.execPath
const runs = number("BENCH_RUNS", 3)
const checkout = Path.resolve(process.env["BENCH_CHECKOUT"] ?? root)
const serverCommands = runners("BENCH_SERVER", checkout, "server")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const rssMiB = async (pid: number): Promise<number> => {
  const status = await Fs.readFile(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024
}

/** User + system CPU time of the process so far, in milliseconds (/proc/<pid>/stat, in clock ticks of 10 ms). */
const cpuMs = async (pid: number): Promise<number> => {
  const fields = (await Fs.readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

interface Figure {
  readonly ms: number
  readonly rss: number
  readonly cpu: number
}

const row = (label: string, figures: ReadonlyArray<Figure>) => {
  const ms = figures.map((f) => f.ms)
  const rss = figures.map((f) => f.rss)
  const cpu = figures.map((f) => f.cpu)
  const shown = (values: ReadonlyArray<number>, digits: number) =>
    values.length === 1
      ? values[0]!.toFixed(digits)
      : `${median(values).toFixed(digits)} (max ${Math.max(...values).toFixed(digits)})`
  console.log(
    `${label.padEnd(52)} ${shown(ms, 0).padStart(16)} ms   ${
      Number.isNaN(cpu[0]) ? "" : `cpu ${shown(cpu, 0).padStart(16)} ms   `
    }${Number.isNaN(rss[0]) ? "" : `rss ${shown(rss, 1).padStart(18)} MiB`}`
  )
}

/** Milliseconds from spawn to exit of `node args`. */
const exitTime = (args: ReadonlyArray<string>): Promise<Figure> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(node, args, { stdio: "ignore", cwd: checkout })
    child.on("error", reject)
    child.on("exit", (code) =>
      code === 0 ? resolve({ ms: performance.now() - started, rss: NaN, cpu: NaN }) : reject(new Error(`exit ${code}`)))
  })

/**
 * Runs a plain Node ES module `code` (in this checkout, so that it finds its packages) that prints one line when it
 * is ready; time from spawn to that line and the memory then, after which the process is ended.
 */
const readyLine = (code: string, args: ReadonlyArray<string>): Promise<Figure> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child: ChildProcess = spawn(node, ["--input-type=module", "-e", code, ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.on("error", reject)
    child.stdout!.once("data", async () => {
      const ms = performance.now() - started
      const cpu = await cpuMs(child.pid!)
      await sleep(1000)
      const rss = await rssMiB(child.pid!)
      child.kill("SIGKILL")
      resolve({ ms, rss, cpu })
    })
  })

const bareNode = `
console.log("ready")
setInterval(() => {}, 1000)
`

const barePglite = `
import { PGlite } from "@electric-sql/pglite"
const [dataDir, settings] = process.argv.slice(1)
const params = JSON.parse(settings).flatMap(([name, value]) => ["-c", name + "=" + value])
const db = new PGlite(dataDir, params.length === 0 ? {} : { startParams: [...PGlite.defaultStartParams, ...params] })
await db.query("select 1")
console.log("ready")
setInterval(() => {}, 1000)
`

const barePostgres = `
import pg from "pg"
const client = new pg.Client(process.argv[1])
await client.connect()
await client.query("select 1")
console.log("ready")
setInterval(() => {}, 1000)
`

/** glibc's malloc setting as `npm start` and the container image give it (package.json, Dockerfile). */
const mallocTrim = process.env["MALLOC_TRIM_THRESHOLD_"] ?? "131072"

const serverStart = async (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Figure> => {
  const server = await startServer(
    node,
    args,
    { DOCK_ADMIN_TOKEN: "dock_admin_bench", MALLOC_TRIM_THRESHOLD_: mallocTrim, ...env },
    180_000
  )
  const cpu = await cpuMs(server.child.pid!)
  await sleep(1000)
  const rss = await rssMiB(server.child.pid!)
  await stopServer(server.child)
  return { ms: server.readyMs, rss, cpu }
}

const repeat = async (times: number, run: (i: number) => Promise<Figure>) => {
  const figures: Array<Figure> = []
  for (let i = 0; i < times; i++) figures.push(await run(i))
  return figures
}

const scratch = await Fs.mkdtemp(Path.join(Os.tmpdir(), "dock-bench-startup-"))
const fresh = (label: string) => Fs.mkdtemp(Path.join(scratch, `${label}-`))

console.log(machine())
console.log(`load average before: ${loadAverage({ all: true })}`)
console.log(
  `server: ${checkout} (${serverCommands.map((c) => c.label).join(", ")}), MALLOC_TRIM_THRESHOLD_=${mallocTrim}; ` +
    `${runs} runs a row, median (max)\n`
)

row("reference: node -e 0 (spawn to exit)", await repeat(runs, () => exitTime(["-e", "0"])))
row(
  "reference: node --import tsx -e 0 (spawn to exit)",
  await repeat(runs, () => exitTime(["--import", "tsx", "-e", "0"]))
)
row("reference: bare node (spawn to its first line)", await repeat(runs, () => readyLine(bareNode, [])))
if (serverCommands.some((c) => c.label === "bundle")) {
  await exitTime(bundleCheck(checkout))
  row("npm start's build check (nothing to build)", await repeat(runs, () => exitTime(bundleCheck(checkout))))
}

try {
  let existing = ""
  for (const { args, label } of serverCommands) {
    const cacheDir = await fresh("cache")
    const at = (dataDir: string) => ({ DOCK_DATA_DIR: dataDir, DOCK_CACHE_DIR: cacheDir, DATABASE_URL: "" })
    existing = await fresh("data")
    row(`embedded [${label}], fresh data dir, no template (initdb)`, [await serverStart(args, at(existing))])
    row(
      `embedded [${label}], fresh data dir from the template`,
      await repeat(runs, async () => serverStart(args, at(await fresh("data"))))
    )
    row(`embedded [${label}], existing data dir`, await repeat(runs, () => serverStart(args, at(existing))))
  }
  const pgdata = Path.join(existing, "pgdata")
  row(
    "reference: bare PGlite, existing dir, its defaults",
    await repeat(runs, () => readyLine(barePglite, [pgdata, "[]"]))
  )
  row(
    `reference: bare PGlite, existing dir, ${EMBEDDED_SETTINGS.map(([name, value]) => `${name}=${value}`).join(" ")}`,
    await repeat(runs, () => readyLine(barePglite, [pgdata, JSON.stringify(EMBEDDED_SETTINGS)]))
  )

  const database = await createDatabase("startup")
  if (database === undefined) {
    console.log(`PostgreSQL at ${pgServer()} is not reachable: skipped the PostgreSQL figures`)
  } else {
    try {
      row(
        "reference: raw PostgreSQL connect + select 1 (node-postgres)",
        await repeat(runs, () => readyLine(barePostgres, [database.url]))
      )
      for (const { args, label } of serverCommands) {
        const env = async () => ({ DATABASE_URL: database.url, DOCK_DATA_DIR: await fresh("pg") })
        if (label === serverCommands[0]!.label) {
          row(`PostgreSQL [${label}], empty database (migrations run)`, [await serverStart(args, await env())])
        }
        row(`PostgreSQL [${label}], migrated database`, await repeat(runs, async () => serverStart(args, await env())))
      }
    } finally {
      await dropDatabase(database)
    }
  }
} finally {
  await Fs.rm(scratch, { recursive: true, force: true })
}
console.log(`\nload average after: ${loadAverage({ all: true })}`)
