/**
 * bench/microdb: the Micro DB at 100,000 rows on the real server (a child process on a fresh PostgreSQL database
 * on DOCK_TEST_DATABASE_URL's server or postgres://postgres@127.0.0.1:5432, dropped at the end), over MCP with
 * the v2 SDK client over Streamable HTTP (connected once):
 *
 * 1. Builds one table of typed columns (code text, name text, status select, price number, qty integer, due
 *    date, done boolean; no unique column) to BENCH_ROWS rows with insert_micro_db_rows in batches of
 *    BENCH_BATCH (500) rows, one writer: the time of each batch, p50/p95 over the whole build and over its first
 *    and last tenth (how the insert cost grows with the table).
 * 2. BENCH_INSERT_BATCHES more batches into the full table; then `code` is made unique (update_micro_db_column,
 *    which checks every row; timed) and BENCH_UNIQUE_BATCHES batches go in with their 500 new codes checked
 *    against the full table.
 * 3. query_micro_db_rows p50/p95 per query shape, BENCH_QUERY_RUNS calls each after BENCH_QUERY_WARMUP unrecorded
 *    ones, each call with a different value so no two calls are the same query: a typed two-condition filter
 *    plus a sort (eq on select + range on number, sorted by number; range on date, sorted by text), no filter
 *    sorted by date, eq+eq without a sort (the GIN index), the default order with no filter (the first index),
 *    a deep offset, and get_micro_db_row by id. Then the first shape with BENCH_CLIENTS concurrent clients. Each
 *    shape also prints the CPU a call of the server process and of the database's backends, over its recorded calls
 *    (where a call's time goes: the server's CPU is the reference for what the query itself costs).
 *
 * After the build the bench runs `vacuum analyze` over the database, what autovacuum would do after so many inserts
 * (the CI machine's PostgreSQL has autovacuum off): the planner knows the tables' sizes and values, and index-only
 * scans need not read the table for rows the visibility map knows.
 *
 * The per-token limits are off and the plan's caps raised (DOCK_PLAN_MAX_ROWS_PER_TABLE, DOCK_PLAN_MAX_DOCK_BYTES)
 * so that only the server limits the run. Prints figures and the 1-minute load average; asserts nothing.
 *
 * BENCH_ROWS (100000), BENCH_BATCH (500), BENCH_INSERT_BATCHES (10), BENCH_UNIQUE_BATCHES (3), BENCH_QUERY_RUNS (40),
 * BENCH_QUERY_WARMUP (3),
 * BENCH_QUERY_LIMIT (50), BENCH_CLIENTS (4), BENCH_CONCURRENT_SECONDS (5), BENCH_ERA (legacy|modern),
 * BENCH_KEEP_DATABASE=1 (keep the database for experiments with psql; its name is printed),
 * BENCH_TEMPLATE_DATABASE=<a kept database> (run on a copy of it: no build, no insert figures; part 3 only, after
 * a `vacuum analyze`), so two versions of the code are measured on the same rows, one after the other;
 * BENCH_SERVER_NODE_ARGS (extra Node options for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 */
import type { Client } from "@modelcontextprotocol/client"
import {
  connectMcp,
  cpuBetween,
  type CpuReading,
  loadAverage,
  machine,
  mcpEra,
  mulberry32,
  number,
  percentile,
  readCpu,
  withFreshServer
} from "./support/Bench.ts"

const STATUSES = ["todo", "doing", "review", "done", "blocked"]
const WORDS = (
  "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec " +
  "romeo sierra tango uniform victor whiskey xray yankee zulu harbour lighthouse tide anchor beacon compass " +
  "rudder keel mast sail deck hull bow stern galley cabin"
).split(" ")
const DAY = 86_400_000
const FIRST_DAY = Date.UTC(2024, 0, 1)
const DAYS = 3 * 365

const isoDay = (n: number) => new Date(FIRST_DAY + n * DAY).toISOString().slice(0, 10)

/** One row of the bench table; `n` numbers it (and makes `code` unique). */
const rowOf = (random: () => number, n: number) => ({
  code: `R${n.toString().padStart(7, "0")}`,
  name: `${WORDS[Math.floor(random() * WORDS.length)]} ${WORDS[Math.floor(random() * WORDS.length)]} ${n % 997}`,
  status: STATUSES[Math.floor(random() * STATUSES.length)]!,
  price: Math.round(random() * 100_000) / 100,
  qty: Math.floor(random() * 1000),
  due: isoDay(Math.floor(random() * DAYS)),
  done: random() < 0.3
})

interface Figure {
  readonly label: string
  readonly calls: number
  readonly p50: number
  readonly p95: number
  readonly note: string
}

const figureOf = (label: string, latencies: ReadonlyArray<number>, note = ""): Figure => {
  const sorted = [...latencies].sort((a, b) => a - b)
  return { label, calls: sorted.length, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), note }
}

const show = (figure: Figure) =>
  console.log(
    `  ${figure.label}: p50 ${figure.p50.toFixed(1)} ms, p95 ${figure.p95.toFixed(1)} ms (${figure.calls} calls` +
      `${figure.note === "" ? "" : `; ${figure.note}`})`
  )

const main = async () => {
  const totalRows = number("BENCH_ROWS", 100_000)
  const batch = Math.min(number("BENCH_BATCH", 500), 500)
  const insertBatches = number("BENCH_INSERT_BATCHES", 10)
  const uniqueBatches = number("BENCH_UNIQUE_BATCHES", 3)
  const queryRuns = number("BENCH_QUERY_RUNS", 40)
  const queryWarmup = Number(process.env.BENCH_QUERY_WARMUP ?? 3)
  const queryLimit = number("BENCH_QUERY_LIMIT", 50)
  const clients = number("BENCH_CLIENTS", 4)
  const concurrentSeconds = number("BENCH_CONCURRENT_SECONDS", 5)
  const era = mcpEra()
  const loadStart = loadAverage()

  await withFreshServer("microdb", {
    nodeArgs: (process.env["BENCH_SERVER_NODE_ARGS"] ?? "").split(" ").filter((arg) => arg !== ""),
    env: {
      // The plan's caps out of the way too: the bench measures the server, not its limits.
      DOCK_PLAN_MAX_ROWS_PER_TABLE: String(totalRows + (insertBatches + uniqueBatches) * batch + 1000),
      DOCK_PLAN_MAX_DOCK_BYTES: "2000000000"
    }
  }, async ({ dock, summary, psql, admin, defer }) => {
    console.log(machine())
    console.log(summary)
    console.log(`server ready in ${(dock.readyMs / 1000).toFixed(1)} s; MCP era ${era}; 1-minute load ${loadStart}\n`)

    // A copy of an earlier run's database (BENCH_TEMPLATE_DATABASE) has the user, the table and its rows already.
    const template = process.env["BENCH_TEMPLATE_DATABASE"]
    const email = "microdb@example.com"
    if (template === undefined) await admin("/admin/users", { email, username: "bench-microdb" })
    const token = String((await admin("/admin/tokens", { user: email, scopes: ["mcp:write"] })).token)
    const connect = async () => {
      const client = await connectMcp({
        name: "dock-bench-microdb",
        url: `${dock.baseUrl}/mcp`,
        era,
        token,
        retry: true
      })
      defer(() => client.close())
      return client
    }
    /** One tool call's structured content; throws with the error body when it failed. */
    const call = async (client: Client, name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args })
      if (result.isError === true) {
        throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 500)}`)
      }
      return result.structuredContent as any
    }
    const timed = async <A>(run: () => Promise<A>) => {
      const started = performance.now()
      const value = await run()
      return { value, ms: performance.now() - started }
    }

    const client = await connect()
    const figures: Array<Figure> = []
    const built = template !== undefined
      ? {
        bucket: await psql("select id from docks where slug = 'microdb-bench'"),
        table: await psql("select id from micro_db_tables where slug = 'tasks'"),
        tableRows: Number(await psql("select row_count from micro_db_tables where slug = 'tasks'"))
      }
      : await build()
    const { bucket, table, tableRows } = built
    if (template !== undefined) {
      console.log(`the data of ${template}: ${tableRows} rows (not built: no insert figures)`)
      await psql("vacuum analyze")
    }

    async function build() {
      const bucket = (await call(client, "create_bucket", { title: "Micro DB bench", slug: "microdb-bench" })).bucket
        .id as string
      const table = (await call(client, "create_micro_db_table", {
        bucket,
        name: "Tasks",
        slug: "tasks",
        columns: [
          { name: "Code", slug: "code", type: "text", required: true },
          { name: "Name", slug: "name", type: "text", required: true },
          { name: "Status", slug: "status", type: "select", options: STATUSES },
          { name: "Price", slug: "price", type: "number" },
          { name: "Qty", slug: "qty", type: "integer" },
          { name: "Due", slug: "due", type: "date" },
          { name: "Done", slug: "done", type: "boolean" }
        ]
      })).table.id as string

      // ---------------------------------------------------------------------------------------------------------
      // 1. Build the table.
      // ---------------------------------------------------------------------------------------------------------
      console.log(`building ${totalRows} rows with insert_micro_db_rows, ${batch} rows per call, one writer…`)
      const random = mulberry32(42)
      const buildLatencies: Array<number> = []
      const buildStart = performance.now()
      let next = 0
      while (next < totalRows) {
        const rows = Array.from({ length: Math.min(batch, totalRows - next) }, () => rowOf(random, next++))
        const { ms } = await timed(() => call(client, "insert_micro_db_rows", { bucket, table, rows }))
        buildLatencies.push(ms)
        if (buildLatencies.length % 40 === 0) {
          console.log(`  ${next} rows, last batch ${ms.toFixed(0)} ms`)
        }
      }
      const buildSeconds = (performance.now() - buildStart) / 1000
      const tenth = Math.max(1, Math.floor(buildLatencies.length / 10))
      figures.push(
        figureOf(
          `insert_micro_db_rows ${batch} rows, whole build`,
          buildLatencies,
          `${(totalRows / buildSeconds).toFixed(0)} rows/s`
        ),
        figureOf(`insert_micro_db_rows ${batch} rows, first tenth`, buildLatencies.slice(0, tenth)),
        figureOf(`insert_micro_db_rows ${batch} rows, last tenth`, buildLatencies.slice(-tenth))
      )
      console.log(`built in ${buildSeconds.toFixed(1)} s`)
      figures.forEach(show)
      const relation = await psql("select pg_size_pretty(pg_total_relation_size('micro_db_rows'))")
      console.log(`  micro_db_rows with its indexes: ${relation}`)
      await psql("vacuum analyze")

      // ---------------------------------------------------------------------------------------------------------
      // 2. More batches into the full table.
      // ---------------------------------------------------------------------------------------------------------
      const fullLatencies: Array<number> = []
      for (let i = 0; i < insertBatches; i++) {
        const rows = Array.from({ length: batch }, () => rowOf(random, next++))
        fullLatencies.push((await timed(() => call(client, "insert_micro_db_rows", { bucket, table, rows }))).ms)
      }
      const full = figureOf(`insert_micro_db_rows ${batch} rows into ${totalRows} rows`, fullLatencies)
      show(full)
      figures.push(full)

      // `code` made unique: every row checked once, then each insert checks its new codes against the table.
      const uniqueOn = await timed(() =>
        call(client, "update_micro_db_column", { bucket, table, column: "code", patch: { unique: true } })
      )
      const uniqueOnFigure = figureOf(`update_micro_db_column unique on, ${next} rows`, [uniqueOn.ms])
      show(uniqueOnFigure)
      figures.push(uniqueOnFigure)
      const uniqueLatencies: Array<number> = []
      for (let i = 0; i < uniqueBatches; i++) {
        const rows = Array.from({ length: batch }, () => rowOf(random, next++))
        uniqueLatencies.push((await timed(() => call(client, "insert_micro_db_rows", { bucket, table, rows }))).ms)
        console.log(`  unique batch ${i + 1}: ${uniqueLatencies.at(-1)!.toFixed(0)} ms`)
      }
      const uniqueFigure = figureOf(
        `insert_micro_db_rows ${batch} rows, unique code, into ${totalRows + insertBatches * batch} rows`,
        uniqueLatencies
      )
      show(uniqueFigure)
      figures.push(uniqueFigure)
      return { bucket, table, tableRows: next }
    }

    // ---------------------------------------------------------------------------------------------------------
    // 3. Queries.
    // ---------------------------------------------------------------------------------------------------------
    console.log(
      `\nquery_micro_db_rows over ${tableRows} rows, limit ${queryLimit}, ${queryRuns} calls each (1 client):`
    )
    const pick = mulberry32(7)
    const status = () => STATUSES[Math.floor(pick() * STATUSES.length)]!
    const priceRange = () => {
      const low = Math.floor(pick() * 900)
      return [low, low + 100]
    }
    const dayRange = (days: number) => {
      const from = Math.floor(pick() * (DAYS - days))
      return [isoDay(from), isoDay(from + days)]
    }
    const shapes: ReadonlyArray<{ label: string; args: () => Record<string, unknown> }> = [
      {
        label: "eq status + price range, sort price asc",
        args: () => {
          const [low, high] = priceRange()
          return {
            filter: [{ column: "status", op: "eq", value: status() }, { column: "price", op: "gte", value: low }, {
              column: "price",
              op: "lt",
              value: high
            }],
            sort: [{ column: "price", direction: "asc" }]
          }
        }
      },
      {
        label: "due range (90 days) + done eq, sort name asc",
        args: () => {
          const [from, to] = dayRange(90)
          return {
            filter: [{ column: "due", op: "gte", value: from }, { column: "due", op: "lt", value: to }, {
              column: "done",
              op: "eq",
              value: pick() < 0.5
            }],
            sort: [{ column: "name", direction: "asc" }]
          }
        }
      },
      {
        label: "due range (30 days), sort name asc",
        args: () => {
          const [from, to] = dayRange(30)
          return {
            filter: [{ column: "due", op: "gte", value: from }, { column: "due", op: "lt", value: to }],
            sort: [{ column: "name", direction: "asc" }]
          }
        }
      },
      {
        label: "qty gt + price lte, sort qty desc, price asc",
        args: () => ({
          filter: [{ column: "qty", op: "gt", value: Math.floor(pick() * 900) }, {
            column: "price",
            op: "lte",
            value: Math.floor(pick() * 1000)
          }],
          sort: [{ column: "qty", direction: "desc" }, { column: "price", direction: "asc" }]
        })
      },
      {
        label: "no filter, sort due desc",
        args: () => ({ sort: [{ column: "due", direction: pick() < 0.5 ? "desc" : "asc" }] })
      },
      {
        label: "eq status + eq done, no sort (GIN)",
        args: () => ({
          filter: [{ column: "status", op: "eq", value: status() }, { column: "done", op: "eq", value: pick() < 0.5 }]
        })
      },
      {
        label: "eq code (one row, GIN)",
        args: () => ({
          filter: [{
            column: "code",
            op: "eq",
            value: `R${Math.floor(pick() * tableRows).toString().padStart(7, "0")}`
          }]
        })
      },
      { label: "no filter, default order, offset 0", args: () => ({}) },
      {
        label: "no filter, default order, deep offset",
        args: () => ({ offset: Math.floor(tableRows / 2 + pick() * 1000) })
      },
      {
        label: "status in 2 + price range, sort price desc, offset 1000",
        args: () => {
          const [low] = priceRange()
          return {
            filter: [{ column: "status", op: "in", value: [status(), status()] }, {
              column: "price",
              op: "gte",
              value: low
            }],
            sort: [{ column: "price", direction: "desc" }],
            offset: 1000
          }
        }
      }
    ]
    const queryFigures: Array<Figure> = []
    for (const shape of shapes) {
      const latencies: Array<number> = []
      const totals: Array<number> = []
      let withoutTotal = 0
      let cpuBefore: CpuReading | undefined
      for (let i = 0; i < queryWarmup + queryRuns; i++) {
        if (i === queryWarmup) cpuBefore = await readCpu(dock.child.pid, psql)
        const { ms, value } = await timed(() =>
          call(client, "query_micro_db_rows", { bucket, table, limit: queryLimit, ...shape.args() })
        )
        if (i >= queryWarmup) {
          latencies.push(ms)
          if (typeof value.total === "number") totals.push(value.total)
          else withoutTotal++
        }
      }
      totals.sort((a, b) => a - b)
      const used = cpuBetween(cpuBefore!, await readCpu(dock.child.pid, psql))
      const figure = figureOf(
        shape.label,
        latencies,
        [
          ...(totals.length > 0 ? [`median total ${percentile(totals, 0.5)}`] : []),
          ...(withoutTotal > 0 ? [`no total (a full page) on ${withoutTotal}`] : []),
          `CPU a call: server ${(used.process / queryRuns).toFixed(1)} ms, PostgreSQL ${
            (used.database / queryRuns).toFixed(1)
          } ms`
        ].join(", ")
      )
      show(figure)
      queryFigures.push(figure)
    }
    // get_micro_db_row by id
    const someRows =
      (await call(client, "query_micro_db_rows", { bucket, table, limit: 500, offset: 20_000 % tableRows }))
        .rows as Array<{ id: string }>
    const rowLatencies: Array<number> = []
    for (let i = 0; i < queryWarmup + queryRuns; i++) {
      const { ms } = await timed(() =>
        call(client, "get_micro_db_row", { bucket, table, row_id: someRows[i % someRows.length]!.id })
      )
      if (i >= queryWarmup) rowLatencies.push(ms)
    }
    const rowFigure = figureOf("get_micro_db_row by id", rowLatencies)
    show(rowFigure)
    queryFigures.push(rowFigure)

    // The first shape with concurrent clients.
    const concurrent = await Promise.all(Array.from({ length: clients }, () => connect()))
    const concurrentLatencies: Array<number> = []
    const started = performance.now()
    const deadline = started + concurrentSeconds * 1000
    await Promise.all(concurrent.map(async (each) => {
      while (performance.now() < deadline) {
        const { ms } = await timed(() =>
          call(each, "query_micro_db_rows", { bucket, table, limit: queryLimit, ...shapes[0]!.args() })
        )
        concurrentLatencies.push(ms)
      }
    }))
    const elapsed = (performance.now() - started) / 1000
    const concurrentFigure = figureOf(
      `${shapes[0]!.label}, ${clients} clients`,
      concurrentLatencies,
      `${(concurrentLatencies.length / elapsed).toFixed(1)} calls/s`
    )
    show(concurrentFigure)
    queryFigures.push(concurrentFigure)

    // ---------------------------------------------------------------------------------------------------------
    // The table.
    // ---------------------------------------------------------------------------------------------------------
    console.log(`\n| figure (${tableRows} rows) | p50 ms | p95 ms | note |`)
    console.log("|---|---|---|---|")
    for (const f of [...figures, ...queryFigures]) {
      console.log(`| ${f.label} | ${f.p50.toFixed(1)} | ${f.p95.toFixed(1)} | ${f.note} |`)
    }
    console.log(`\n1-minute load average ${loadStart} at start, ${loadAverage()} at the end`)
  })
}

await main()
