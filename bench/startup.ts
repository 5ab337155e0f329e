/**
 * bench/startup: time from spawn to /readyz and resident memory after start, on the embedded database (a fresh
 * data directory, so the first start includes creating and migrating it, then a warm restart) and on PostgreSQL
 * (a fresh database on DOCK_TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres). Prints figures;
 * asserts nothing.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { startServer, stopServer } from "../scripts/support.ts"
import { createDatabase, dropDatabase, pgServer, serverMain, sourceArgs } from "./support/Bench.ts"

const node = process.execPath
const args = [...sourceArgs, serverMain]
const env = { DOCK_ADMIN_TOKEN: "dock_admin_bench" }

const rssMiB = async (pid: number): Promise<number> => {
  const status = await Fs.readFile(`/proc/${pid}/status`, "utf8")
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN)
  return kb / 1024
}

const measure = async (label: string, extraEnv: Record<string, string>) => {
  const server = await startServer(node, args, { ...env, ...extraEnv }, 120_000)
  // Let start-up garbage settle for a moment before reading memory.
  await new Promise((resolve) => setTimeout(resolve, 500))
  const rss = await rssMiB(server.child.pid!)
  await stopServer(server.child)
  console.log(
    `${label.padEnd(38)} ready ${String(Math.round(server.readyMs)).padStart(6)} ms   rss ${
      rss.toFixed(1).padStart(7)
    } MiB`
  )
}

const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "dock-bench-"))
try {
  await measure("embedded PGlite, fresh data dir", { DOCK_DATA_DIR: dataDir })
  await measure("embedded PGlite, existing data dir", { DOCK_DATA_DIR: dataDir })
} finally {
  await Fs.rm(dataDir, { recursive: true, force: true })
}

const database = await createDatabase("startup")
if (database === undefined) {
  console.log(`PostgreSQL at ${pgServer()} is not reachable: skipped the PostgreSQL figures`)
  process.exit(0)
}
try {
  const pgDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "dock-bench-pg-"))
  await measure("PostgreSQL, empty database", { DATABASE_URL: database.url, DOCK_DATA_DIR: pgDir })
  await measure("PostgreSQL, migrated database", { DATABASE_URL: database.url, DOCK_DATA_DIR: pgDir })
  await Fs.rm(pgDir, { recursive: true, force: true })
} finally {
  await dropDatabase(database)
}
