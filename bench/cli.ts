/**
 * bench/cli: how long the `dock` command line takes, spawn to exit, beside references measured in the same run:
 * `node -e 0` and `node --import tsx -e 0`. Rows: `dock --help`, and one admin command (`dock users list --json`)
 * against a running server on a fresh PostgreSQL database (DOCK_TEST_DATABASE_URL's server or
 * postgres://postgres@127.0.0.1:5432, dropped at the end). BENCH_CLI: how the CLI runs (support/Bench.ts
 * `runners`: `bundle`, as `npm run dock` runs it, by default, with the build check it runs first; `dist`; `tsx`).
 * Each row runs BENCH_RUNS (5) times; the median and the slowest are printed, of the
 * wall time and of the CPU time. BENCH_CHECKOUT: the checkout whose CLI is measured (default this one), for before
 * and after figures from one bench. Prints figures; asserts nothing.
 */
import { execFile } from "node:child_process"
import * as Path from "node:path"
import { bundleCheck, loadAverage, machine, median, number, root, runners, withFreshServer } from "./support/Bench.ts"

const runs = number("BENCH_RUNS", 5)
const checkout = Path.resolve(process.env["BENCH_CHECKOUT"] ?? root)
const clis = runners("BENCH_CLI", checkout, "cli")

/**
 * Milliseconds from spawn to exit of `node args`, and the CPU time it used (user + system, as /usr/bin/time
 * reports it: a figure the machine's load changes far less); fails unless it exits with 0.
 */
const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ readonly ms: number; readonly cpu: number }>((resolve, reject) => {
    const started = performance.now()
    execFile(
      "/usr/bin/time",
      ["-f", "cpu %U %S", process.execPath, ...args],
      { cwd: checkout, env: { ...process.env, ...env } },
      (error, _stdout, stderr) => {
        const ms = performance.now() - started
        const times = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(stderr)
        if (error || times === null) return reject(new Error(`${args.join(" ")}: ${stderr}`))
        resolve({ ms, cpu: (Number(times[1]) + Number(times[2])) * 1000 })
      }
    )
  })

const row = async (label: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const figures: Array<{ readonly ms: number; readonly cpu: number }> = []
  for (let i = 0; i < runs; i++) figures.push(await run(args, env))
  const shown = (values: ReadonlyArray<number>) =>
    `${median(values).toFixed(0).padStart(6)} ms (max ${Math.max(...values).toFixed(0)})`
  console.log(
    `${label.padEnd(52)} ${shown(figures.map((f) => f.ms))}   cpu ${shown(figures.map((f) => f.cpu))}`
  )
}

await withFreshServer("cli", {}, async ({ admin, dock }) => {
  await admin("/admin/users", { email: "bench@example.com" })
  console.log(machine())
  console.log(`load average before: ${loadAverage({ all: true })}`)
  console.log(`cli: ${checkout}; ${runs} runs a row, median (max), spawn to exit\n`)
  await row("reference: node -e 0", ["-e", "0"])
  await row("reference: node --import tsx -e 0", ["--import", "tsx", "-e", "0"])
  if (clis.some((c) => c.label === "bundle")) {
    await run(bundleCheck(checkout))
    await row("npm run dock's build check (nothing to build)", bundleCheck(checkout))
  }
  for (const { args, label } of clis) {
    await row(`dock --help [${label}]`, [...args, "--help"])
    await row(`dock users list --json [${label}]`, [...args, "users", "list", "--json", "--url", dock.baseUrl], {
      DOCK_ADMIN_TOKEN: "dock_admin_bench"
    })
  }
  console.log(`\nload average after: ${loadAverage({ all: true })}`)
})
