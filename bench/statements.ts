/**
 * bench/statements: the SQL statements one MCP tool call runs, read from the PostgreSQL server log (issue 14's
 * "statement counts before and after").
 *
 * A database `dock_statements` on DOCK_TEST_DATABASE_URL's server (or postgres://postgres@127.0.0.1:5432) is
 * dropped, created with `log_statement = 'all'` and served by the real Dock server (this checkout's sources, a
 * child process). A Dock with a page and a Micro DB table of a few rows is prepared over MCP; then each measured
 * call runs BENCH_WARMUP (2) times unrecorded and BENCH_RUNS (3) times recorded, and for each recorded run the
 * statements logged for this database between the log's byte size before and after the call are its statements:
 * push_web_page creating a page, push_web_page updating one (new content each run), get_web_page (the Dock named
 * as BENCH_BUCKET says, by bare slug, and not named: the grounding Dock), get_bucket, list_micro_db_tables and
 * query_micro_db_rows. The per-token request rate is counted, as in production (a limit no run reaches).
 *
 * Every logged statement counts, transaction control included (`LOG:  execute <unnamed>: …` for node-postgres'
 * extended protocol, `LOG:  statement: …` for BEGIN/COMMIT and simple queries). Printed per call: the total, the
 * statements that read or write the `docks` table, the repeats (the same statement text, whitespace collapsed, more
 * than once in one call; transaction control apart) and the transactions, of the run most recorded runs agree
 * with; the odd runs' extra and missing statements are shown, and the call is marked UNSTABLE when they differ in
 * more than the token's last_used_at (written at most once a minute, so one call in a minute has one more
 * statement). Then the same as a Markdown table; `--verbose` lists the statements.
 *
 * The log is the server's stderr log (DOCK_PG_LOG, /var/log/postgresql/postgresql-15-main.log); it must be
 * readable and log_line_prefix must name the database (%d): other databases' lines are left out by it. The
 * sandbox sweep, the server's one background job, runs at start and then every DOCK_JOB_INTERVAL, set here to
 * an hour; a call during which it ran anyway would show its advisory lock and is flagged. The bench touches the
 * database only before the calls are measured.
 *
 * BENCH_WARMUP (2), BENCH_RUNS (3), BENCH_BUCKET (path: the Dock as owner/slug; id: its UUID), BENCH_ERA
 * (legacy|modern), BENCH_KEEP_DATABASE=1 (keep the database for experiments with psql). Asserts nothing.
 */
import type { Client } from "@modelcontextprotocol/client"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { startServer, stopServer } from "../scripts/support.ts"
import { connectMcp, loadAverage, machine, mcpEra, pgServer, psqlAt, serverMain, sourceArgs } from "./support/Bench.ts"

const DATABASE = "dock_statements"
const ADMIN_TOKEN = "dock_admin_bench"
const verbose = process.argv.includes("--verbose")

const count = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number`)
  return value
}

// ---------------------------------------------------------------------------------------------------------------
// The server log.
// ---------------------------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const logSize = async (log: string) => (await Fs.stat(log)).size

/**
 * The log's size once it stopped growing for a moment: statements logged late (after the answer was sent) land
 * before it rather than in the next call.
 */
const settledSize = async (log: string) => {
  let size = await logSize(log)
  for (;;) {
    await sleep(150)
    const next = await logSize(log)
    if (next === size) return size
    size = next
  }
}

/** The log's bytes from `start` to `end`. */
const logBetween = async (log: string, start: number, end: number) => {
  if (end < start) throw new Error(`${log} shrank (rotated?) during a call: run again`)
  const file = await Fs.open(log, "r")
  try {
    const buffer = Buffer.alloc(end - start)
    await file.read(buffer, 0, buffer.length, start)
    return buffer.toString("utf8")
  } finally {
    await file.close()
  }
}

interface Logged {
  /** The statements in the order they ran, whitespace as logged. */
  readonly statements: ReadonlyArray<string>
  /** ERROR messages logged for the database. */
  readonly errors: ReadonlyArray<string>
}

/** A log line's start: log_line_prefix begins with %m (or %t), a timestamp. */
const ENTRY_START = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/
/** The prefix, the severity and the message of one entry. */
const ENTRY = /^(.*?) (LOG|ERROR|DETAIL|STATEMENT|HINT|CONTEXT|NOTICE|WARNING|FATAL|PANIC): {2}([\s\S]*)$/
const STATEMENT = /^(?:statement|execute [^:]*): ([\s\S]*)$/

/** The statements and errors logged for `database` in `text` (whole entries; continuation lines start with a tab). */
const parseLog = (text: string, database: string): Logged => {
  const entries: Array<string> = []
  for (const line of text.split("\n")) {
    if (ENTRY_START.test(line) || entries.length === 0) entries.push(line)
    else entries[entries.length - 1] += `\n${line}`
  }
  const ours = new RegExp(`(^|[\\s@\\[])${database}([\\s@\\]]|$)`)
  const statements: Array<string> = []
  const errors: Array<string> = []
  for (const entry of entries) {
    const match = ENTRY.exec(entry)
    if (match === null || !ours.test(match[1]!)) continue
    if (match[2] === "ERROR") errors.push(match[3]!)
    if (match[2] !== "LOG") continue
    const statement = STATEMENT.exec(match[3]!)
    if (statement !== null) statements.push(statement[1]!)
  }
  return { statements, errors }
}

// ---------------------------------------------------------------------------------------------------------------
// Figures of one call.
// ---------------------------------------------------------------------------------------------------------------

const normalize = (statement: string) => statement.replace(/\s+/g, " ").trim()
const TRANSACTION_CONTROL = /^(begin|start transaction|commit|rollback|savepoint|release|end)\b/i
/** A statement that names `docks` as a table it reads or writes. */
const TOUCHES_DOCKS = /\b(from|join|update|into)\s+(only\s+)?("?public"?\.)?"?docks"?(\s|$|,|\))/i
const SWEEP = /pg_advisory_xact_lock/i
const LAST_USED = /^update tokens set last_used_at\b/i

interface Figures {
  readonly statements: ReadonlyArray<string>
  readonly total: number
  readonly docks: number
  /** Statements (transaction control apart) that ran more than once, with how often. */
  readonly repeated: ReadonlyArray<{ readonly statement: string; readonly times: number }>
  /** The extra runs: the statements' count minus the distinct ones (transaction control apart). */
  readonly repeats: number
  readonly transactions: number
  readonly errors: ReadonlyArray<string>
  readonly sweep: boolean
}

const figuresOf = ({ statements: logged, errors }: Logged): Figures => {
  const statements = logged.map(normalize)
  const times = new Map<string, number>()
  for (const statement of statements) {
    if (!TRANSACTION_CONTROL.test(statement)) times.set(statement, (times.get(statement) ?? 0) + 1)
  }
  const repeated = [...times].filter(([, n]) => n > 1).map(([statement, n]) => ({ statement, times: n }))
  return {
    statements,
    total: statements.length,
    docks: statements.filter((statement) => TOUCHES_DOCKS.test(statement)).length,
    repeated,
    repeats: repeated.reduce((sum, { times }) => sum + times - 1, 0),
    transactions: statements.filter((statement) => /^(begin|start transaction)\b/i.test(statement)).length,
    errors,
    sweep: statements.some((statement) => SWEEP.test(statement))
  }
}

/** The statements of `a` left after taking out one of each in `b` (a multiset difference). */
const difference = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
  const left = [...b]
  return a.filter((statement) => {
    const i = left.indexOf(statement)
    if (i < 0) return true
    left.splice(i, 1)
    return false
  })
}

// ---------------------------------------------------------------------------------------------------------------
// The run.
// ---------------------------------------------------------------------------------------------------------------

const main = async () => {
  const warmup = count("BENCH_WARMUP", 2)
  const runs = Math.max(1, count("BENCH_RUNS", 3))
  const bucketForm = process.env.BENCH_BUCKET === "id" ? "id" : "path"
  const era = mcpEra()
  const log = process.env.DOCK_PG_LOG ?? "/var/log/postgresql/postgresql-15-main.log"

  try {
    await Fs.access(log, Fs.constants.R_OK)
  } catch {
    console.error(
      `The PostgreSQL server log ${log} is not readable: set DOCK_PG_LOG to the log of the server at ${pgServer()} ` +
        `(log_destination stderr) and run as a user who may read it`
    )
    process.exit(1)
  }
  const server = pgServer()
  let version: string
  let prefix: string
  try {
    version = await psqlAt(server, "show server_version")
    prefix = await psqlAt(server, "show log_line_prefix")
  } catch (error) {
    console.error(`PostgreSQL at ${server} is not reachable: nothing measured (${String(error)})`)
    process.exit(1)
  }
  if (!prefix.includes("%d")) {
    console.error(`log_line_prefix '${prefix}' does not name the database (%d): the log cannot tell this bench's lines`)
    process.exit(1)
  }

  await psqlAt(server, `drop database if exists ${DATABASE} with (force)`)
  await psqlAt(server, `create database ${DATABASE}`)
  await psqlAt(server, `alter database ${DATABASE} set log_statement = 'all'`)
  const url = new URL(server)
  url.pathname = `/${DATABASE}`
  const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "dock-bench-statements-"))
  const cleanups: Array<() => Promise<unknown>> = [
    async () =>
      process.env.BENCH_KEEP_DATABASE === "1"
        ? console.log(`kept database ${DATABASE}`)
        : psqlAt(server, `drop database if exists ${DATABASE} with (force)`),
    () => Fs.rm(dataDir, { recursive: true, force: true })
  ]
  let output = () => ""
  try {
    const dock = await startServer(process.execPath, [...sourceArgs, serverMain], {
      DATABASE_URL: url.toString(),
      DOCK_DATA_DIR: dataDir,
      DOCK_ADMIN_TOKEN: ADMIN_TOKEN,
      // The per-token request rate counted as in production (a limit no run reaches): its counter is part of what
      // a call costs. The write rate off, as in the other benches; the sweep once at start and then not for an hour.
      DOCK_TOKEN_REQUESTS_PER_MINUTE: "100000000",
      DOCK_TOKEN_WRITES_PER_MINUTE: "0",
      DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE: "0",
      DOCK_JOB_INTERVAL: "1 hour"
    }, 120_000)
    output = dock.output
    cleanups.unshift(() => stopServer(dock.child))

    console.log(machine())
    console.log(`PostgreSQL ${version} at ${url.host}, fresh database ${DATABASE} (log_statement = all), log ${log}`)
    console.log(
      `MCP era ${era}; Dock named by ${bucketForm}; ${warmup} warm-up and ${runs} recorded runs per call; ` +
        `1-minute load ${loadAverage()}\n`
    )

    const admin = async (path: string, body: unknown) => {
      const response = await fetch(`${dock.baseUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
      return (await response.json()) as Record<string, unknown>
    }
    const user = await admin("/admin/users", { email: "statements@example.com", username: "bench-statements" })
    const token = String((await admin("/admin/tokens", { user: user.email, scopes: ["mcp:write"] })).token)
    const client: Client = await connectMcp({ name: "dock-bench-statements", url: `${dock.baseUrl}/mcp`, era, token })
    cleanups.unshift(() => client.close())

    /** One tool call's structured content; throws with the error body when it failed. */
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args })
      if (result.isError === true) {
        throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 500)}`)
      }
      return result.structuredContent as any
    }

    // The data: a Dock, a page, a Micro DB table of a few rows.
    const created = (await call("create_bucket", { title: "Statements", slug: "statements" })).bucket
    const bucket = bucketForm === "id" ? String(created.id) : `${String(user.username)}/${String(created.slug)}`
    const page = (n: number) => `<h1>Page ${n}</h1><p>Some text for version ${n}, with a <a href="/x">link</a>.</p>`
    await call("push_web_page", { bucket, page_slug: "home", page_title: "Home", page_content: page(0) })
    await call("create_micro_db_table", {
      bucket,
      name: "Tasks",
      slug: "tasks",
      columns: [
        { name: "Title", slug: "title", type: "text", required: true },
        { name: "Status", slug: "status", type: "select", options: ["todo", "done"] },
        { name: "Points", slug: "points", type: "integer" }
      ]
    })
    await call("insert_micro_db_rows", {
      bucket,
      table: "tasks",
      rows: Array.from({ length: 5 }, (_, i) => ({ title: `Task ${i}`, status: ["todo", "done"][i % 2], points: i }))
    })

    // Reads that name no Dock read the grounding Dock.
    await call("set_grounding_bucket", { bucket_path: `${String(user.username)}/${String(created.slug)}` })

    let n = 0
    const calls: ReadonlyArray<{ readonly label: string; readonly run: () => Promise<unknown> }> = [
      {
        label: "push_web_page (new page)",
        run: async () => {
          const answer = await call("push_web_page", { bucket, page_slug: `new-${++n}`, page_content: page(n) })
          if (answer.action !== "created") throw new Error(`push_web_page of a new page answered ${answer.action}`)
        }
      },
      {
        label: "push_web_page (update)",
        run: async () => {
          const answer = await call("push_web_page", { bucket, page_slug: "home", page_content: page(++n) })
          if (answer.action !== "updated") throw new Error(`push_web_page of home answered ${answer.action}`)
        }
      },
      { label: "get_web_page", run: () => call("get_web_page", { bucket, page_slug: "home" }) },
      {
        label: "get_web_page (bare slug)",
        run: () => call("get_web_page", { bucket: String(created.slug), page_slug: "home" })
      },
      {
        label: "get_web_page (grounding Dock)",
        run: () => call("get_web_page", { page_slug: "home" })
      },
      { label: "get_bucket", run: () => call("get_bucket", { bucket }) },
      { label: "list_micro_db_tables", run: () => call("list_micro_db_tables", { bucket }) },
      { label: "query_micro_db_rows", run: () => call("query_micro_db_rows", { bucket, table: "tasks", limit: 10 }) }
    ]

    interface Result {
      readonly label: string
      readonly figures: Figures
      readonly stable: boolean
      /** The recorded runs' totals. */
      readonly runs: string
    }
    const results: Array<Result> = []
    for (const { label, run } of calls) {
      for (let i = 0; i < warmup; i++) await run()
      const recorded: Array<Figures> = []
      for (let i = 0; i < runs; i++) {
        const before = await settledSize(log)
        await run()
        const after = await settledSize(log)
        recorded.push(figuresOf(parseLog(await logBetween(log, before, after), DATABASE)))
      }
      // The run most runs agree with (the last of equals): a token's last_used_at, written at most once a minute,
      // adds a statement to whichever call comes first in a new minute.
      const same = (a: Figures, b: Figures) => a.statements.join("\n") === b.statements.join("\n")
      const figures = recorded.reduce((best, r) =>
        recorded.filter((o) => same(o, r)).length >= recorded.filter((o) => same(o, best)).length ? r : best
      )
      // Stable when every run ran the same statements, but for the once-a-minute last_used_at.
      const stable = recorded.every((r) =>
        [...difference(r.statements, figures.statements), ...difference(figures.statements, r.statements)]
          .every((statement) => LAST_USED.test(statement))
      )
      const totals = recorded.map((r) => r.total).join(", ")
      results.push({ label, figures, stable, runs: totals })

      console.log(
        `${label}: ${figures.total} statements, ${figures.docks} on docks, ${figures.repeats} repeated, ` +
          `${figures.transactions} transaction(s)${stable ? "" : `  UNSTABLE (totals of the runs: ${totals})`}` +
          (recorded.some((r) => r.sweep) ? "  (the sandbox sweep ran during a run)" : "") +
          (figures.errors.length > 0 ? `  ${figures.errors.length} ERROR(s): ${figures.errors.join(" | ")}` : "")
      )
      for (const { statement, times } of figures.repeated) console.log(`  repeated ×${times}: ${statement}`)
      recorded.forEach((r, i) => {
        if (same(r, figures)) return
        const extra = difference(r.statements, figures.statements).map((statement) => `+ ${statement}`)
        const missing = difference(figures.statements, r.statements).map((statement) => `- ${statement}`)
        const changes = [...extra, ...missing]
        const what = changes.length === 0 ? "the same statements in another order" : changes.join("; ")
        console.log(`  run ${i + 1} differs: ${what}`)
      })
      if (verbose) {
        figures.statements.forEach((statement, i) => {
          const marks = [
            TOUCHES_DOCKS.test(statement) ? "docks" : "",
            figures.repeated.some((r) => r.statement === statement) ? "repeat" : ""
          ].filter((mark) => mark !== "")
          console.log(`  ${String(i + 1).padStart(2)}. ${marks.length > 0 ? `[${marks.join(", ")}] ` : ""}${statement}`)
        })
      }
    }

    console.log("\n| call | statements | on `docks` | repeated | transactions |\n|---|---|---|---|---|")
    for (const { label, figures, stable, runs } of results) {
      console.log(
        `| ${label} | ${figures.total}${stable ? "" : ` (unstable: ${runs})`} | ${figures.docks} | ` +
          `${figures.repeats} | ${figures.transactions} |`
      )
    }
  } catch (error) {
    console.error(`server output (last 4000 characters):\n${output().slice(-4000)}`)
    throw error
  } finally {
    for (const cleanup of cleanups) {
      await cleanup().catch((error: unknown) => console.error(`cleanup failed: ${String(error)}`))
    }
  }
}

await main()
