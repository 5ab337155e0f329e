/**
 * The Micro DB's integrity over the wire (docs/micro-db.md), with real MCP clients: insert_micro_db_rows writes
 * all rows or none (every kind of bad row, 500 accepted, 501 refused); unique compares stored values; parallel
 * writers never break a unique column, a required column, a column's type or the row cap (writers of one table
 * take turns), the Dock's content size stays exact when writes race a table's deletion, and snapshots taken
 * during writes are each one consistent view (this one needs real PostgreSQL to race); schema changes convert every
 * value or touch nothing and name the offending rows, renames move the data, turning on required/unique and
 * shrinking options check existing rows, and deleting a column or a table snapshots first; a snapshot's JSON
 * is exactly what the read tools return, and only the newest snapshots are kept (version 1 stays); tenancy for
 * owners, outsiders, viewers, editors, restricted and read-only tokens and anonymous /mcp/public readers; and
 * the plan caps (rows per table, rows per bulk insert, rows counted in the Dock's content size), with tight
 * limits on a second server.
 *
 * Both servers run with the per-token write limit off (DOCK_TOKEN_WRITES_PER_MINUTE=0): the write rate is
 * another file's subject, and these tests make more writes per token than a minute allows.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { unique } from "./support/Http.ts"
import type { AnyClient, Era } from "./support/McpClients.ts"
import {
  actor,
  call,
  connect,
  connectPublic,
  createBucket,
  grant,
  NOT_FOUND,
  ok,
  refused,
  tokenFor,
  type ToolResult
} from "./support/McpTools.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The default limits, except the per-token write rate (off). */
const MainServer = Layer.scoped(TestServer, startTestServer({ DOCK_TOKEN_WRITES_PER_MINUTE: "0" }))

const ROW_CAP = 10
const BULK_CAP = 5
const RETENTION = 3
const DOCK_BYTES = 20_000
/** Tight plan caps for the limit tests. */
const TightServer = Layer.scoped(
  TestServer,
  startTestServer({
    DOCK_TOKEN_WRITES_PER_MINUTE: "0",
    DOCK_PLAN_MAX_ROWS_PER_TABLE: String(ROW_CAP),
    DOCK_PLAN_MAX_BULK_ROWS: String(BULK_CAP),
    DOCK_PLAN_SNAPSHOT_RETENTION: String(RETENTION),
    DOCK_PLAN_MAX_DOCK_BYTES: String(DOCK_BYTES)
  })
)

// ---------------------------------------------------------------------------------------------------------
// Helpers

type Json = any

/** A successful call's structured content. */
const use = (client: AnyClient, tool: string, args: Record<string, unknown>) =>
  Effect.map(call(client, tool, args), (result) => ok(result) as Json)

/** A refused call's error. */
const fail = (client: AnyClient, tool: string, args: Record<string, unknown>) =>
  Effect.map(call(client, tool, args), (result) => refused(result).error as Json)

const newDock = (client: AnyClient, extra: Record<string, unknown> = {}) =>
  createBucket(client, { title: "Micro", slug: `micro-${unique()}`, ...extra })

interface ColumnDef {
  readonly name: string
  readonly slug?: string
  readonly type: string
  readonly required?: boolean
  readonly unique?: boolean
  readonly default?: unknown
  readonly options?: ReadonlyArray<string>
  readonly description?: string | null
}

const createTable = (
  client: AnyClient,
  bucket: string,
  name: string,
  columns: ReadonlyArray<ColumnDef>,
  extra: Record<string, unknown> = {}
) => Effect.map(use(client, "create_micro_db_table", { bucket, name, columns, ...extra }), (body) => body.table as Json)

const insertRows = (client: AnyClient, bucket: string, table: string, rows: ReadonlyArray<Record<string, unknown>>) =>
  Effect.map(use(client, "insert_micro_db_rows", { bucket, table, rows }), (body) => body.rows as Array<Json>)

/** Every row of a table in the default order (oldest first, then id), page by page. */
const allRows = (client: AnyClient, bucket: string, table: string, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const rows: Array<Json> = []
    for (let offset = 0;; offset += 500) {
      const page = yield* use(client, "query_micro_db_rows", { bucket, table, limit: 500, offset, ...extra })
      rows.push(...page.rows)
      if (page.rows.length < 500) return rows
    }
  })

const totalOf = (client: AnyClient, bucket: string, table: string) =>
  Effect.map(use(client, "query_micro_db_rows", { bucket, table, limit: 1 }), (body) => body.total as number)

/** What the database holds for one table: its rows and their bytes, and the kept row_count. */
const stored = (tableId: string) =>
  Effect.flatMap(TestServer, (server) =>
    server.sql<{ n: number; bytes: number; row_count: number | null }>`select
        (select count(*)::int from micro_db_rows where table_id = ${tableId}) as n,
        (select coalesce(sum(size_bytes), 0)::int from micro_db_rows where table_id = ${tableId}) as bytes,
        (select row_count from micro_db_tables where id = ${tableId}) as row_count`.pipe(
      Effect.map((rows) => rows[0]!),
      Effect.orDie
    ))

/** Each row's UTF-8 size of its data's JSON as the database holds it, in the order of `ids`. */
const jsonSizes = (ids: ReadonlyArray<string>) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      Effect.forEach(ids, (id) =>
        server.sql<{ n: number }>`select octet_length(data::text)::int as n from micro_db_rows where id = ${id}`.pipe(
          Effect.map((rows) =>
            rows[0]!.n
          ),
          Effect.orDie
        ))
  )

/** The bytes of content a Dock is charged for. */
const usageOf = (dockId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ bytes: number; artifacts: number }>`select bytes::int as bytes, artifacts from dock_usage
      where dock_id = ${dockId}`.pipe(
        Effect.map((rows) => rows[0] ?? { bytes: 0, artifacts: 0 }),
        Effect.orDie
      )
  )

/** The bytes of every stored version of the Dock's Micro DB shell (its snapshots): they count as content too. */
const shellBytes = (dockId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ bytes: number }>`select coalesce(sum(v.size_bytes), 0)::int as bytes
      from part_versions v join parts p on p.id = v.part_id where p.dock_id = ${dockId} and p.page_kind = 'micro_db'`
        .pipe(
          Effect.map((rows) => rows[0]!.bytes),
          Effect.orDie
        )
  )

/** Everything of a Dock's Micro DB in the database, as text: tables, rows, the shell and its versions. */
const microDbState = (dockId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ tables: string; rows: string; shell: string | null; versions: number }>`select
        (select coalesce(json_agg(t order by t.position)::text, '[]') from micro_db_tables t
          where t.dock_id = ${dockId}) as tables,
        (select coalesce(json_agg(r order by r.seq)::text, '[]') from micro_db_rows r
          where r.table_id in (select id from micro_db_tables where dock_id = ${dockId})) as rows,
        (select row_to_json(p)::text from parts p where p.dock_id = ${dockId} and p.page_kind = 'micro_db') as shell,
        (select count(*)::int from part_versions v
          where v.part_id in (select id from parts where dock_id = ${dockId} and page_kind = 'micro_db')) as versions`
        .pipe(
          Effect.map((rows) => JSON.stringify(rows[0])),
          Effect.orDie
        )
  )

/** A snapshot's JSON document, read back with get_web_page_version. */
const snapshotDocument = (client: AnyClient, bucket: string, snapshot: { part_id: string; version: number }) =>
  Effect.map(
    use(client, "get_web_page_version", { bucket, web_page: snapshot.part_id, version: snapshot.version }),
    (body) => {
      expect(body.version).toBe(snapshot.version)
      return JSON.parse(body.content) as Json
    }
  )

const expectSnapshotShape = (snapshot: Json) => {
  expect(Object.keys(snapshot).sort()).toEqual(["created_at", "part_id", "rows", "tables", "version"])
  expect(snapshot.part_id).toMatch(UUID)
  expect(Number.isInteger(snapshot.version)).toBe(true)
  expect(Number.isNaN(Date.parse(snapshot.created_at))).toBe(false)
}

/** The row ids named by a validation_error about existing rows. */
const offendingIds = (error: Json) =>
  (error.details.errors as Array<{ row_id: string }>).map((entry) => entry.row_id).sort()

// ---------------------------------------------------------------------------------------------------------
// Type changes: a column `v` of one type, rows holding `values` (and one row without a value), a patch.

interface Conversion {
  readonly from: Omit<ColumnDef, "name">
  readonly values: ReadonlyArray<unknown>
  readonly patch: Record<string, unknown>
  /** The converted values, in row order; or a check of each converted value against its original. */
  readonly expected: ReadonlyArray<unknown> | ((before: unknown, after: unknown) => void)
}

const CONVERSIONS: ReadonlyArray<Conversion> = [
  { from: { type: "number" }, values: [1.5, 42, -3, 0], patch: { type: "text" }, expected: ["1.5", "42", "-3", "0"] },
  { from: { type: "integer" }, values: [7, -2], patch: { type: "long_text" }, expected: ["7", "-2"] },
  { from: { type: "boolean" }, values: [true, false], patch: { type: "text" }, expected: ["true", "false"] },
  {
    from: { type: "json" },
    values: [{ k: [1, "é"] }, [1, 2]],
    patch: { type: "text" },
    expected: (before, after) => {
      expect(typeof after).toBe("string")
      expect(JSON.parse(after as string)).toEqual(before)
    }
  },
  { from: { type: "text" }, values: ["12.5", "-7", "0"], patch: { type: "number" }, expected: [12.5, -7, 0] },
  { from: { type: "text" }, values: ["7", "-12"], patch: { type: "integer" }, expected: [7, -12] },
  { from: { type: "integer" }, values: [3, -4], patch: { type: "number" }, expected: [3, -4] },
  { from: { type: "number" }, values: [4, 10, -1], patch: { type: "integer" }, expected: [4, 10, -1] },
  { from: { type: "text" }, values: ["true", "false"], patch: { type: "boolean" }, expected: [true, false] },
  {
    from: { type: "date" },
    values: ["2026-03-01", "1999-12-31"],
    patch: { type: "datetime" },
    expected: ["2026-03-01T00:00:00.000Z", "1999-12-31T00:00:00.000Z"]
  },
  {
    from: { type: "datetime" },
    values: ["2026-03-01T23:30:00-02:00", "2026-03-01T00:00:00Z"],
    patch: { type: "date" },
    expected: ["2026-03-02", "2026-03-01"]
  },
  { from: { type: "text" }, values: ["2026-02-28"], patch: { type: "date" }, expected: ["2026-02-28"] },
  {
    from: { type: "text" },
    values: ["2026-03-01T09:30:00+01:00"],
    patch: { type: "datetime" },
    expected: ["2026-03-01T08:30:00.000Z"]
  },
  {
    from: { type: "select", options: ["a", "b"] },
    values: ["a", "b"],
    patch: { type: "multi_select", options: ["a", "b"] },
    expected: [["a"], ["b"]]
  },
  {
    from: { type: "multi_select", options: ["a", "b"] },
    values: [["a"], ["b"]],
    patch: { type: "select", options: ["a", "b"] },
    expected: ["a", "b"]
  },
  {
    from: { type: "text" },
    values: ["red", "blue"],
    patch: { type: "select", options: ["red", "blue"] },
    expected: ["red", "blue"]
  },
  {
    from: { type: "text" },
    values: ["https://example.com/x?y=1"],
    patch: { type: "url" },
    expected: ["https://example.com/x?y=1"]
  },
  { from: { type: "text" }, values: ["ann@example.com"], patch: { type: "email" }, expected: ["ann@example.com"] },
  { from: { type: "number" }, values: [5, 2.5], patch: { type: "json" }, expected: [5, 2.5] },
  {
    from: { type: "multi_select", options: ["a", "b"] },
    values: [["b", "a"]],
    patch: { type: "json" },
    expected: [["a", "b"]]
  },
  { from: { type: "date" }, values: ["2026-01-02"], patch: { type: "text" }, expected: ["2026-01-02"] }
]

/** Conversions some value refuses; `bad` are the indexes of the values that do not convert. */
const REFUSED_CONVERSIONS: ReadonlyArray<Omit<Conversion, "expected"> & { readonly bad: ReadonlyArray<number> }> = [
  { from: { type: "text" }, values: ["12", "twelve", "3.5x"], patch: { type: "number" }, bad: [1, 2] },
  { from: { type: "text" }, values: ["7", "7.5"], patch: { type: "integer" }, bad: [1] },
  { from: { type: "number" }, values: [4, 4.5], patch: { type: "integer" }, bad: [1] },
  { from: { type: "text" }, values: ["true", "yes"], patch: { type: "boolean" }, bad: [1] },
  { from: { type: "text" }, values: ["2026-02-28", "2026-02-30"], patch: { type: "date" }, bad: [1] },
  { from: { type: "text" }, values: ["2026-02-28T10:00:00Z", "tomorrow"], patch: { type: "datetime" }, bad: [1] },
  {
    from: { type: "multi_select", options: ["a", "b"] },
    values: [["a"], ["a", "b"]],
    patch: { type: "select", options: ["a", "b"] },
    bad: [1]
  },
  { from: { type: "text" }, values: ["red", "green"], patch: { type: "select", options: ["red", "blue"] }, bad: [1] },
  { from: { type: "text" }, values: ["https://ok.example", "not a url"], patch: { type: "url" }, bad: [1] },
  { from: { type: "text" }, values: ["a@example.com", "nope"], patch: { type: "email" }, bad: [1] }
]

/** A table with one column `v` of the given type and one row per value, plus a row without a value (last). */
const conversionTable = (
  client: AnyClient,
  bucket: string,
  from: Omit<ColumnDef, "name">,
  values: ReadonlyArray<unknown>
) =>
  Effect.gen(function*() {
    const table = yield* createTable(client, bucket, `Convert ${unique()}`, [
      { name: "V", slug: "v", ...from },
      { name: "N", slug: "n", type: "integer" }
    ])
    const rows = yield* insertRows(client, bucket, table.id, [...values.map((v, n) => ({ v, n })), {
      n: values.length
    }])
    return { table, rows }
  })

// ---------------------------------------------------------------------------------------------------------
// Tenancy: every read and write tool against one table and row.

const readCalls = (bucket: string, table: string, rowId: string): ReadonlyArray<[string, Record<string, unknown>]> => [
  ["list_micro_db_tables", { bucket }],
  ["get_micro_db_schema", { bucket, table }],
  ["query_micro_db_rows", { bucket, table }],
  ["query_micro_db_rows", { bucket, table, filter: [{ column: "title", op: "eq", value: "first" }] }],
  ["get_micro_db_row", { bucket, table, row_id: rowId }]
]

const writeCalls = (bucket: string, table: string, rowId: string): ReadonlyArray<[string, Record<string, unknown>]> => [
  ["push_micro_db", { bucket, title: "Taken over" }],
  ["create_micro_db_table", { bucket, name: "Intruder", columns: [{ name: "X", type: "text" }] }],
  ["update_micro_db_table", { bucket, table, name: "Renamed by an intruder" }],
  ["add_micro_db_column", { bucket, table, column_def: { name: "Intruder", type: "text" } }],
  ["update_micro_db_column", { bucket, table, column: "title", patch: { name: "Intruded" } }],
  ["insert_micro_db_row", { bucket, table, data: { title: "intruder" } }],
  ["insert_micro_db_rows", { bucket, table, rows: [{ title: "intruder" }] }],
  ["update_micro_db_row", { bucket, table, row_id: rowId, data: { title: "intruder" } }],
  ["delete_micro_db_row", { bucket, table, row_id: rowId }],
  ["delete_micro_db_column", { bucket, table, column: "title" }],
  ["delete_micro_db_table", { bucket, table }],
  ["snapshot_micro_db", { bucket }]
]

type Expectation = "ok" | "not_found" | "permission_denied" | ((result: ToolResult) => void)

/** Runs calls, collecting every mismatch with its expectation, and fails once with all of them. */
const expectAll = (
  label: string,
  client: AnyClient,
  calls: ReadonlyArray<[string, Record<string, unknown>]>,
  expected: Expectation
) =>
  Effect.gen(function*() {
    const mismatches: Array<string> = []
    for (const [tool, args] of calls) {
      const result = yield* call(client, tool, args)
      try {
        if (typeof expected === "function") expected(result)
        else if (expected === "ok") ok(result)
        else {
          const error = refused(result).error
          expect(error.code).toBe(expected)
          expect(error.status).toBe(expected === "not_found" ? 404 : 403)
        }
      } catch (cause) {
        mismatches.push(
          `${label} ${tool} ${JSON.stringify(args)}: expected ${
            typeof expected === "function" ? "check" : expected
          }, got ${JSON.stringify(result.structuredContent)} (${String(cause).split("\n")[0]})`
        )
      }
    }
    expect(mismatches).toEqual([])
  })

/** A Dock of `owner` with a Micro DB: a table `notes` (title text, score integer) and two rows. */
const seededMicroDb = (owner: AnyClient, dockArgs: Record<string, unknown> = {}, shell: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const dock = yield* newDock(owner, dockArgs)
    if (Object.keys(shell).length > 0) yield* use(owner, "push_micro_db", { bucket: dock.id, ...shell })
    const table = yield* createTable(owner, dock.id, "Notes", [
      { name: "Title", slug: "title", type: "text" },
      { name: "Score", slug: "score", type: "integer" }
    ], { slug: "notes" })
    const rows = yield* insertRows(owner, dock.id, table.id, [{ title: "first", score: 1 }, {
      title: "second",
      score: 2
    }])
    return { dock, table, rows }
  })

// =========================================================================================================

layer(MainServer, { excludeTestServices: true, timeout: 180_000 })("Micro DB integrity", (it) => {
  // ---------------------------------------------------------------------------------------------------------
  // insert_micro_db_rows: all or nothing

  it.scoped("insert_micro_db_rows: one bad row among many refuses the batch, names the row and column, writes nothing", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Items", [
        { name: "Code", slug: "code", type: "text", unique: true },
        { name: "Qty", slug: "qty", type: "integer", required: true },
        { name: "Status", slug: "status", type: "select", options: ["open", "closed"] }
      ])
      const existing = yield* insertRows(owner.client, dock.id, table.id, [{ code: "X1", qty: 1, status: "open" }])
      const good = (i: number) => ({ code: `C${i}`, qty: i, status: i % 2 === 0 ? "open" : "closed" })
      const batch = (patch: (rows: Array<Record<string, unknown>>) => void) => {
        const rows: Array<Record<string, unknown>> = Array.from({ length: 12 }, (_, i) => good(i))
        patch(rows)
        return rows
      }
      const before = yield* stored(table.id)
      const usageBefore = yield* usageOf(dock.id)
      const stateBefore = yield* microDbState(dock.id)

      const cases: ReadonlyArray<
        { label: string; rows: Array<Record<string, unknown>>; errors: ReadonlyArray<{ row: number; column: string }> }
      > = [
        {
          label: "a wrong type",
          rows: batch((rows) => (rows[6] = { ...rows[6], qty: "6" })),
          errors: [{ row: 6, column: "qty" }]
        },
        {
          label: "a fraction in an integer",
          rows: batch((rows) => (rows[3] = { ...rows[3], qty: 3.5 })),
          errors: [{ row: 3, column: "qty" }]
        },
        {
          label: "a unique clash inside the batch",
          rows: batch((rows) => {
            rows[2] = { ...rows[2], code: "dup" }
            rows[9] = { ...rows[9], code: "dup" }
          }),
          errors: [{ row: 9, column: "code" }]
        },
        {
          label: "a unique clash with an existing row",
          rows: batch((rows) => (rows[4] = { ...rows[4], code: "X1" })),
          errors: [{ row: 4, column: "code" }]
        },
        {
          label: "a required column missing",
          rows: batch((rows) => (rows[11] = { code: "C11", status: "open" })),
          errors: [{ row: 11, column: "qty" }]
        },
        {
          label: "a required column set to null",
          rows: batch((rows) => (rows[0] = { ...rows[0], qty: null })),
          errors: [{ row: 0, column: "qty" }]
        },
        {
          label: "a value outside the options",
          rows: batch((rows) => (rows[5] = { ...rows[5], status: "Open" })),
          errors: [{ row: 5, column: "status" }]
        },
        {
          label: "an unknown key",
          rows: batch((rows) => (rows[7] = { ...rows[7], colour: "red" })),
          errors: [{ row: 7, column: "colour" }]
        },
        {
          label: "several bad rows",
          rows: batch((rows) => {
            rows[1] = { ...rows[1], qty: true }
            rows[10] = { ...rows[10], status: 1 }
          }),
          errors: [{ row: 1, column: "qty" }, { row: 10, column: "status" }]
        }
      ]
      for (const { errors, label, rows } of cases) {
        const error = yield* fail(owner.client, "insert_micro_db_rows", { bucket: dock.id, table: table.id, rows })
        expect(error.code, label).toBe("validation_error")
        expect(error.status, label).toBe(400)
        const listed = error.details.errors as Array<{ row: number; column: string; message: string }>
        for (const entry of listed) {
          expect(Object.keys(entry).sort(), label).toEqual(["column", "message", "row"])
          expect(typeof entry.message, label).toBe("string")
        }
        expect(listed.map(({ column, row }) => ({ column, row })), label).toEqual(expect.arrayContaining([...errors]))
        // only the bad rows are named
        const badRows = new Set(errors.map((entry) => entry.row))
        if (label === "a unique clash inside the batch") badRows.add(2)
        for (const entry of listed) expect(badRows.has(entry.row), `${label}: ${JSON.stringify(entry)}`).toBe(true)
        // nothing written: not a row, not a byte, not a version
        expect(yield* stored(table.id), label).toEqual(before)
        expect(yield* totalOf(owner.client, dock.id, table.id), label).toBe(1)
        expect(yield* usageOf(dock.id), label).toEqual(usageBefore)
        expect(yield* microDbState(dock.id), label).toBe(stateBefore)
      }
      // the good rows alone go in, in order
      const inserted = yield* insertRows(owner.client, dock.id, table.id, batch(() => {}))
      expect(inserted.map((row) => row.data)).toEqual(batch(() => {}))
      expect((yield* allRows(owner.client, dock.id, table.id)).map((row) => row.id)).toEqual([
        existing[0].id,
        ...inserted.map((row) => row.id)
      ])
    }))

  it.scoped("insert_micro_db_rows: 500 rows go in at once; 501 are refused and nothing is written", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Bulk", [
        { name: "N", slug: "n", type: "integer", unique: true },
        { name: "Label", slug: "label", type: "text", required: true }
      ])
      const rows = (from: number, count: number) =>
        Array.from({ length: count }, (_, i) => ({ n: from + i, label: `row ${from + i} ✓` }))
      const inserted = yield* insertRows(owner.client, dock.id, table.id, rows(0, 500))
      expect(inserted).toHaveLength(500)
      expect(inserted.map((row) => row.data)).toEqual(rows(0, 500))
      expect(new Set(inserted.map((row) => row.id)).size).toBe(500)
      for (const row of inserted) expect(row.id).toMatch(UUID)
      expect(yield* totalOf(owner.client, dock.id, table.id)).toBe(500)

      const before = yield* stored(table.id)
      expect(before).toMatchObject({ n: 500, row_count: 500 })
      const error = yield* fail(owner.client, "insert_micro_db_rows", {
        bucket: dock.id,
        table: table.id,
        rows: rows(500, 501)
      })
      expect(error.code).toBe("validation_error")
      expect(yield* stored(table.id)).toEqual(before)
      // an empty batch is refused too (1-500 rows)
      expect((yield* fail(owner.client, "insert_micro_db_rows", { bucket: dock.id, table: table.id, rows: [] })).code)
        .toBe(
          "validation_error"
        )
      expect(yield* totalOf(owner.client, dock.id, table.id)).toBe(500)
      // the list shows the count the rows made
      const listed = (yield* use(owner.client, "list_micro_db_tables", { bucket: dock.id })).tables
      expect(listed.find((entry: Json) => entry.id === table.id).row_count).toBe(500)
    }))

  // ---------------------------------------------------------------------------------------------------------
  // Concurrency

  it.scoped("parallel inserts never break a unique column: one row per value, the others validation_error", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const second = yield* connect(owner.token, MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Codes", [
        { name: "Code", slug: "code", type: "text", unique: true },
        { name: "By", slug: "by", type: "integer" }
      ])
      // 20 single inserts over 5 values, from two connections
      const singles = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) =>
          call(i % 2 === 0 ? owner.client : second, "insert_micro_db_row", {
            bucket: dock.id,
            table: table.id,
            data: { code: `v${i % 5}`, by: i }
          })),
        { concurrency: "unbounded" }
      )
      const succeeded = singles.filter((result) => result.isError !== true)
      expect(succeeded).toHaveLength(5)
      for (const result of singles.filter((result) => result.isError === true)) {
        expect(refused(result).error).toMatchObject({
          code: "validation_error",
          details: { errors: [{ column: "code" }] }
        })
      }
      const rows = yield* allRows(owner.client, dock.id, table.id)
      expect(rows.map((row) => row.data.code).sort()).toEqual(["v0", "v1", "v2", "v3", "v4"])

      // 12 overlapping batches of 3: batch i holds w{i}, w{i+1}, w{i+2}
      const batches = yield* Effect.all(
        Array.from({ length: 12 }, (_, i) =>
          Effect.map(
            call(i % 2 === 0 ? owner.client : second, "insert_micro_db_rows", {
              bucket: dock.id,
              table: table.id,
              rows: [0, 1, 2].map((k) => ({ code: `w${i + k}`, by: i }))
            }),
            (result) => ({ i, result })
          )),
        { concurrency: "unbounded" }
      )
      const won = batches.filter(({ result }) => result.isError !== true).map(({ i }) => i)
      expect(won.length).toBeGreaterThanOrEqual(1)
      for (const { result } of batches.filter(({ result }) => result.isError === true)) {
        expect(refused(result).error.code).toBe("validation_error")
      }
      // the batches that went in are disjoint, and went in whole
      const after = yield* allRows(owner.client, dock.id, table.id)
      const codes = after.map((row) => row.data.code as string)
      expect(new Set(codes).size).toBe(codes.length)
      expect(codes.length).toBe(5 + 3 * won.length)
      for (const i of won) {
        expect(after.filter((row) => row.data.by === i && String(row.data.code).startsWith("w")).length).toBe(3)
      }
      expect(yield* stored(table.id)).toMatchObject({ n: codes.length, row_count: codes.length })

      // parallel updates that set one value on different rows: exactly one wins
      const targets = after.slice(0, 8)
      const updates = yield* Effect.all(
        targets.map((row, i) =>
          call(i % 2 === 0 ? owner.client : second, "update_micro_db_row", {
            bucket: dock.id,
            table: table.id,
            row_id: row.id,
            data: { code: "shared" }
          })
        ),
        { concurrency: "unbounded" }
      )
      expect(updates.filter((result) => result.isError !== true)).toHaveLength(1)
      const final = yield* allRows(owner.client, dock.id, table.id, {
        filter: [{ column: "code", op: "eq", value: "shared" }]
      })
      expect(final).toHaveLength(1)
    }))

  it.scoped("a schema change racing inserts: turning on unique or required never lets a violating row in", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const second = yield* connect(owner.token, MODERN)
      const dock = yield* newDock(owner.client)
      for (let round = 0; round < 4; round++) {
        const table = yield* createTable(owner.client, dock.id, `Race ${round}`, [
          { name: "Code", slug: "code", type: "text" },
          { name: "Note", slug: "note", type: "text" }
        ])
        yield* insertRows(owner.client, dock.id, table.id, [{ code: "A", note: "x" }, { code: "B", note: "y" }])
        const [uniqueOn, duplicate, requiredOn, missing] = yield* Effect.all([
          call(owner.client, "update_micro_db_column", {
            bucket: dock.id,
            table: table.id,
            column: "code",
            patch: { unique: true }
          }),
          call(second, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { code: "A", note: "z" } }),
          call(owner.client, "update_micro_db_column", {
            bucket: dock.id,
            table: table.id,
            column: "note",
            patch: { required: true }
          }),
          call(second, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { code: "C" } })
        ], { concurrency: "unbounded" })
        const schema = yield* use(owner.client, "get_micro_db_schema", { bucket: dock.id, table: table.id })
        const column = (slug: string) => schema.columns.find((entry: Json) => entry.slug === slug)
        const rows = yield* allRows(owner.client, dock.id, table.id)
        const codes = rows.map((row) => row.data.code)
        // whichever came first, the other was refused when it would break the rule
        if (uniqueOn.isError !== true) {
          expect(column("code").unique).toBe(true)
          expect(new Set(codes).size).toBe(codes.length)
        } else {
          expect(refused(uniqueOn).error.code).toBe("validation_error")
          expect(column("code").unique).toBe(false)
          expect(duplicate.isError).not.toBe(true)
        }
        if (requiredOn.isError !== true) {
          expect(column("note").required).toBe(true)
          expect(rows.every((row) => typeof row.data.note === "string")).toBe(true)
          expect(missing.isError).toBe(true)
        } else {
          expect(refused(requiredOn).error.code).toBe("validation_error")
          expect(missing.isError).not.toBe(true)
        }
      }
    }))

  it.scoped("unique compares stored values: datetimes by instant, numbers by value, text exactly", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Keys", [
        { name: "At", slug: "at", type: "datetime", unique: true },
        { name: "N", slug: "n", type: "number", unique: true },
        { name: "Word", slug: "word", type: "text", unique: true }
      ])
      yield* insertRows(owner.client, dock.id, table.id, [{ at: "2026-01-01T10:00:00Z", n: 1.5, word: "Tide" }])
      // the same instant written with an offset, the same number written differently
      const sameInstant = yield* fail(owner.client, "insert_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        data: { at: "2026-01-01T11:00:00+01:00" }
      })
      expect(sameInstant).toMatchObject({ code: "validation_error", details: { errors: [{ column: "at" }] } })
      expect(
        (yield* fail(owner.client, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { n: 1.50 } })).code
      )
        .toBe("validation_error")
      const inBatch = yield* fail(owner.client, "insert_micro_db_rows", {
        bucket: dock.id,
        table: table.id,
        rows: [{ at: "2027-05-05T00:00:00Z" }, { at: "2027-05-04T20:00:00-04:00" }]
      })
      expect(inBatch).toMatchObject({ code: "validation_error", details: { errors: [{ row: 1, column: "at" }] } })
      // text is compared exactly: other case, other normalization form, other spacing are other values
      const words = yield* insertRows(owner.client, dock.id, table.id, [{ word: "tide" }, { word: "Tide " }, {
        word: "TIDE"
      }])
      expect(words).toHaveLength(3)
      expect(yield* totalOf(owner.client, dock.id, table.id)).toBe(4)
      // update_micro_db_row: the row may keep its own value, not take another's
      const rows = yield* allRows(owner.client, dock.id, table.id)
      yield* use(owner.client, "update_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        row_id: rows[0].id,
        data: { word: "Tide", n: 1.5 }
      })
      expect(
        (yield* fail(owner.client, "update_micro_db_row", {
          bucket: dock.id,
          table: table.id,
          row_id: rows[1].id,
          data: { at: "2026-01-01T05:00:00-05:00" }
        })).code
      ).toBe("validation_error")
    }))

  it.scoped("parallel inserts racing a type change never leave a value of the old type", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const second = yield* connect(owner.token, MODERN)
      const dock = yield* newDock(owner.client)
      for (let round = 0; round < 3; round++) {
        const table = yield* createTable(owner.client, dock.id, `Typed ${round}`, [{
          name: "V",
          slug: "v",
          type: "text"
        }])
        yield* insertRows(owner.client, dock.id, table.id, Array.from({ length: 50 }, (_, i) => ({ v: String(i) })))
        const results = yield* Effect.all([
          ...Array.from({ length: 6 }, (_, i) =>
            call(second, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { v: String(100 + i) } })),
          call(owner.client, "update_micro_db_column", {
            bucket: dock.id,
            table: table.id,
            column: "v",
            patch: { type: "number" }
          }),
          ...Array.from({ length: 6 }, (_, i) =>
            call(second, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { v: String(200 + i) } }))
        ], { concurrency: "unbounded" })
        expect(results[6]!.isError, JSON.stringify(results[6]!.structuredContent)).not.toBe(true)
        const rows = yield* allRows(owner.client, dock.id, table.id)
        // every stored value is a number now; the inserts that came after the change were refused as text
        for (const row of rows) {
          expect(typeof row.data.v, JSON.stringify(row.data)).toBe("number")
        }
        const inserted = results.filter((result, i) =>
          i !== 6 && result.isError !== true
        ).length
        expect(rows).toHaveLength(50 + inserted)
        expect(yield* stored(table.id)).toMatchObject({ n: 50 + inserted, row_count: 50 + inserted })
      }
    }))

  it.scoped("the Dock's content size stays exact when inserts and updates race a table's deletion", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const second = yield* connect(owner.token, MODERN)
      const dock = yield* newDock(owner.client)
      const keep = yield* createTable(owner.client, dock.id, "Keep", [{ name: "T", slug: "t", type: "text" }])
      yield* insertRows(owner.client, dock.id, keep.id, [{ t: "stays" }])
      const base = yield* usageOf(dock.id)
      const baseShell = yield* shellBytes(dock.id)
      for (let round = 0; round < 3; round++) {
        const table = yield* createTable(owner.client, dock.id, `Doomed ${round}`, [{
          name: "T",
          slug: "t",
          type: "long_text"
        }])
        const rows = yield* insertRows(
          owner.client,
          dock.id,
          table.id,
          Array.from({ length: 20 }, (_, i) => ({ t: "x".repeat(100 + i) }))
        )
        const results = yield* Effect.all([
          ...Array.from(
            { length: 5 },
            (_, i) =>
              call(second, "insert_micro_db_rows", {
                bucket: dock.id,
                table: table.id,
                rows: [{ t: "y".repeat(500 + i) }, { t: "z" }]
              })
          ),
          call(owner.client, "delete_micro_db_table", { bucket: dock.id, table: table.id }),
          ...Array.from(
            { length: 5 },
            (_, i) =>
              call(second, "update_micro_db_row", {
                bucket: dock.id,
                table: table.id,
                row_id: rows[i]!.id,
                data: { t: "w".repeat(900) }
              })
          )
        ], { concurrency: "unbounded" })
        expect(results[5]!.isError, JSON.stringify(results[5]!.structuredContent)).not.toBe(true)
        for (const result of results.filter((result) => result.isError === true)) {
          expect(refused(result).error.code).toBe("not_found")
        }
        expect(yield* stored(table.id)).toEqual({ n: 0, bytes: 0, row_count: null })
        // the rows are released; the delete's snapshot stays stored and counted
        expect(yield* usageOf(dock.id)).toEqual({
          artifacts: base.artifacts,
          bytes: base.bytes + (yield* shellBytes(dock.id)) - baseShell
        })
      }
      // what the Dock is charged for is what it holds
      const server = yield* TestServer
      const [held] = yield* server.sql<{ bytes: number }>`select
          ((select coalesce(sum(size_bytes), 0) from micro_db_rows r join micro_db_tables t on t.id = r.table_id
            where t.dock_id = ${dock.id}) +
           (select coalesce(sum(v.size_bytes), 0) from part_versions v join parts p on p.id = v.part_id
            where p.dock_id = ${dock.id}))::int as bytes`
      expect((yield* usageOf(dock.id)).bytes).toBe(held!.bytes)
    }))

  it.scoped("snapshots taken while rows and columns change are each one consistent view", () =>
    Effect.gen(function*() {
      const ROUNDS = 80
      const owner = yield* actor(MODERN)
      const second = yield* connect(owner.token, MODERN)
      const third = yield* connect(owner.token, MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Moving", [
        { name: "A", slug: "a", type: "text" },
        { name: "N", slug: "n", type: "integer" }
      ])
      yield* insertRows(owner.client, dock.id, table.id, Array.from({ length: 100 }, (_, n) => ({ a: `v${n}`, n })))
      // renames back and forth (every row rewritten) and bulk inserts, racing snapshots
      const slugs = ["a", "b"]
      const renames = Effect.forEach(Array.from({ length: ROUNDS }, (_, i) => i), (i) =>
        call(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: table.id,
          column: slugs[i % 2]!,
          patch: { slug: slugs[(i + 1) % 2]!, name: slugs[(i + 1) % 2]!.toUpperCase() }
        }))
      const inserts = Effect.forEach(
        Array.from({ length: ROUNDS }, (_, i) =>
          i),
        (i) =>
          call(third, "insert_micro_db_rows", {
            bucket: dock.id,
            table: table.id,
            rows: Array.from({ length: 5 }, (_, k) => ({ n: 2000 + i * 5 + k }))
          })
      )
      const problems: Array<string> = []
      // each snapshot read back at once (older ones are pruned beyond 20)
      const snapshots = Effect.forEach(
        Array.from({ length: ROUNDS }, (_, i) =>
          i),
        () =>
          Effect.gen(function*() {
            const snapshot = (yield* use(second, "snapshot_micro_db", { bucket: dock.id })).snapshot
            const document = yield* snapshotDocument(second, dock.id, snapshot)
            const saved = document.tables[0]
            const slugsNow = new Set(saved.columns.map((column: Json) => column.slug))
            const stray = saved.rows.filter((row: Json) => Object.keys(row.data).some((key) => !slugsNow.has(key)))
            if (stray.length > 0) {
              problems.push(
                `version ${snapshot.version}: columns ${[...slugsNow].join(",")} but ${stray.length} rows hold ${
                  Object.keys(stray[0].data).join(",")
                }`
              )
            }
            if (saved.row_count !== saved.rows.length) {
              problems.push(`version ${snapshot.version}: row_count ${saved.row_count}, ${saved.rows.length} rows`)
            }
            if (snapshot.rows !== saved.rows.length) {
              problems.push(`version ${snapshot.version}: snapshot.rows ${snapshot.rows}, ${saved.rows.length} rows`)
            }
            if ((saved.rows.length - 100) % 5 !== 0) {
              problems.push(`version ${snapshot.version}: a part of a bulk insert (${saved.rows.length} rows)`)
            }
          })
      )
      const [renamed, inserted] = yield* Effect.all([renames, inserts, snapshots], { concurrency: "unbounded" })
      for (const result of [...renamed, ...inserted]) {
        expect(result.isError, JSON.stringify(result.structuredContent)).not.toBe(true)
      }
      expect(problems).toEqual([])
    }))

  // ---------------------------------------------------------------------------------------------------------
  // Schema changes

  it.scoped("update_micro_db_column: a type change converts every value when every value converts", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const mismatches: Array<string> = []
      for (const conversion of CONVERSIONS) {
        const label = `${conversion.from.type} → ${String(conversion.patch.type)} ${JSON.stringify(conversion.values)}`
        const { rows, table } = yield* conversionTable(owner.client, dock.id, conversion.from, conversion.values)
        const result = yield* call(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: table.id,
          column: "v",
          patch: conversion.patch
        })
        if (result.isError === true) {
          mismatches.push(`${label}: refused ${JSON.stringify(result.structuredContent)}`)
          continue
        }
        try {
          const column = ok(result).column
          expect(column).toMatchObject({ slug: "v", type: conversion.patch.type })
          const after = yield* allRows(owner.client, dock.id, table.id)
          expect(after.map((row) => row.id)).toEqual(rows.map((row) => row.id))
          const values = after.slice(0, -1).map((row) => row.data.v)
          if (typeof conversion.expected === "function") {
            values.forEach((value, i) =>
              (conversion.expected as (a: unknown, b: unknown) => void)(conversion.values[i], value)
            )
          } else {
            expect(values).toEqual(conversion.expected)
          }
          // the row without a value still has none, the other column is untouched
          expect(after.at(-1)!.data).toEqual({ n: conversion.values.length })
          expect(after.map((row) => row.data.n)).toEqual(rows.map((row) => row.data.n))
          const schema = yield* use(owner.client, "get_micro_db_schema", { bucket: dock.id, table: table.id })
          expect(schema.columns.find((entry: Json) => entry.slug === "v")).toEqual(column)
        } catch (cause) {
          mismatches.push(`${label}: ${String(cause).split("\n")[0]}`)
        }
      }
      expect(mismatches).toEqual([])
    }))

  it.scoped("update_micro_db_column: a type change some value refuses names the offending rows and touches nothing", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const mismatches: Array<string> = []
      for (const conversion of REFUSED_CONVERSIONS) {
        const label = `${conversion.from.type} → ${String(conversion.patch.type)} ${JSON.stringify(conversion.values)}`
        const { rows, table } = yield* conversionTable(owner.client, dock.id, conversion.from, conversion.values)
        const state = yield* microDbState(dock.id)
        const result = yield* call(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: table.id,
          column: "v",
          patch: conversion.patch
        })
        try {
          const error = refused(result).error as Json
          expect(error.code).toBe("validation_error")
          expect(error.details.total_invalid).toBe(conversion.bad.length)
          for (const entry of error.details.errors) {
            expect(entry).toMatchObject({
              column: "v",
              row_id: expect.stringMatching(UUID),
              message: expect.any(String)
            })
          }
          expect(offendingIds(error)).toEqual(conversion.bad.map((i) => rows[i].id).sort())
          expect(yield* microDbState(dock.id)).toBe(state)
          const schema = yield* use(owner.client, "get_micro_db_schema", { bucket: dock.id, table: table.id })
          expect(schema.columns.find((entry: Json) => entry.slug === "v").type).toBe(conversion.from.type)
        } catch (cause) {
          mismatches.push(`${label}: ${JSON.stringify(result.structuredContent)} (${String(cause).split("\n")[0]})`)
        }
      }
      expect(mismatches).toEqual([])

      // at most 50 rows listed, total_invalid counts them all
      const many = [...Array.from({ length: 60 }, (_, i) => `x${i}`), ...Array.from({ length: 5 }, (_, i) => String(i))]
      const { rows, table } = yield* conversionTable(owner.client, dock.id, { type: "text" }, many)
      const state = yield* microDbState(dock.id)
      const error = yield* fail(owner.client, "update_micro_db_column", {
        bucket: dock.id,
        table: table.id,
        column: "v",
        patch: { type: "number" }
      })
      expect(error.code).toBe("validation_error")
      expect(error.details.total_invalid).toBe(60)
      expect(error.details.errors).toHaveLength(50)
      const bad = new Set(rows.slice(0, 60).map((row) => row.id))
      for (const id of offendingIds(error)) expect(bad.has(id)).toBe(true)
      expect(yield* microDbState(dock.id)).toBe(state)
    }))

  it.scoped("update_micro_db_column: a type change that would make two values of a unique column equal is refused", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const cases: ReadonlyArray<
        { from: string; values: ReadonlyArray<unknown>; to: string; clash: ReadonlyArray<number> }
      > = [
        { from: "text", values: ["1", "01", "2"], to: "number", clash: [0, 1] },
        {
          from: "text",
          values: ["2026-01-01T10:00:00Z", "2026-01-01T11:00:00+01:00", "2026-01-02T00:00:00Z"],
          to: "datetime",
          clash: [0, 1]
        },
        {
          from: "datetime",
          values: ["2026-01-01T01:00:00Z", "2026-01-01T23:00:00Z", "2026-01-02T00:00:00Z"],
          to: "date",
          clash: [0, 1]
        },
        { from: "number", values: [1, 2, 3], to: "integer", clash: [] }
      ]
      for (const { clash, from, to, values } of cases) {
        const label = `${from} → ${to} ${JSON.stringify(values)}`
        const { rows, table } = yield* conversionTable(owner.client, dock.id, { type: from, unique: true }, values)
        const state = yield* microDbState(dock.id)
        const result = yield* call(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: table.id,
          column: "v",
          patch: { type: to }
        })
        if (clash.length === 0) {
          expect(ok(result).column, label).toMatchObject({ type: to, unique: true })
          continue
        }
        const error = refused(result).error as Json
        expect(error.code, label).toBe("validation_error")
        const named = offendingIds(error)
        expect(named.length, label).toBeGreaterThanOrEqual(1)
        for (const id of named) expect(clash.map((i) => rows[i].id), label).toContain(id)
        expect(yield* microDbState(dock.id), label).toBe(state)
      }
    }))

  it.scoped("update_micro_db_column: a type-only patch between select and multi_select keeps the column's options", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      // the patch is any subset of the column; both types take options, so the column's own stay
      const single = yield* conversionTable(owner.client, dock.id, { type: "select", options: ["a", "b"] }, ["b", "a"])
      const toMulti = yield* call(owner.client, "update_micro_db_column", {
        bucket: dock.id,
        table: single.table.id,
        column: "v",
        patch: { type: "multi_select" }
      })
      expect(ok(toMulti).column).toMatchObject({ type: "multi_select", options: ["a", "b"] })
      expect((yield* allRows(owner.client, dock.id, single.table.id)).map((row) => row.data.v)).toEqual([
        ["b"],
        ["a"],
        undefined
      ])
      const back = yield* call(owner.client, "update_micro_db_column", {
        bucket: dock.id,
        table: single.table.id,
        column: "v",
        patch: { type: "select" }
      })
      expect(ok(back).column).toMatchObject({ type: "select", options: ["a", "b"] })
      expect((yield* allRows(owner.client, dock.id, single.table.id)).map((row) => row.data.v)).toEqual([
        "b",
        "a",
        undefined
      ])
    }))

  it.scoped("update_micro_db_column: a rename keeps every value under the new slug", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "People", [
        { name: "Name", slug: "name", type: "text", unique: true, required: true },
        { name: "Age", slug: "age", type: "integer" }
      ])
      const rows = yield* insertRows(owner.client, dock.id, table.id, [
        { name: "Zoë", age: 31 },
        { name: "東京", age: 7 },
        { name: "Ana" }
      ])
      const renamed = (yield* use(owner.client, "update_micro_db_column", {
        bucket: dock.id,
        table: table.id,
        column: "name",
        patch: { name: "Full name", slug: "full_name" }
      })).column
      expect(renamed).toMatchObject({
        name: "Full name",
        slug: "full_name",
        type: "text",
        unique: true,
        required: true,
        position: 0
      })
      const after = yield* allRows(owner.client, dock.id, table.id)
      expect(after.map((row) => row.data)).toEqual([
        { full_name: "Zoë", age: 31 },
        { full_name: "東京", age: 7 },
        { full_name: "Ana" }
      ])
      expect(after.map((row) => row.id)).toEqual(rows.map((row) => row.id))
      // the new slug is the column now, in filters, rows and writes; the old one is gone
      expect(
        (yield* allRows(owner.client, dock.id, table.id, {
          filter: [{ column: "full_name", op: "eq", value: "東京" }]
        }))
          .map((row) => row.id)
      ).toEqual([rows[1].id])
      expect(
        (yield* fail(owner.client, "query_micro_db_rows", {
          bucket: dock.id,
          table: table.id,
          filter: [{ column: "name", op: "eq", value: "Zoë" }]
        })).code
      ).toBe("validation_error")
      expect(
        (yield* fail(owner.client, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { name: "Old" } }))
          .code
      )
        .toBe("validation_error")
      // still unique under its new slug
      expect(
        (yield* fail(owner.client, "insert_micro_db_row", {
          bucket: dock.id,
          table: table.id,
          data: { full_name: "Ana" }
        })).code
      )
        .toBe("validation_error")
      expect(
        (yield* use(owner.client, "get_micro_db_row", { bucket: dock.id, table: table.id, row_id: rows[0].id })).row
          .data
      )
        .toEqual({ full_name: "Zoë", age: 31 })

      // a name change alone keeps the data readable under whatever slug the column has
      const retitled = (yield* use(owner.client, "update_micro_db_column", {
        bucket: dock.id,
        table: table.id,
        column: "age",
        patch: { name: "Age in years" }
      })).column
      expect(retitled.name).toBe("Age in years")
      expect((yield* allRows(owner.client, dock.id, table.id)).map((row) => row.data[retitled.slug])).toEqual([
        31,
        7,
        undefined
      ])

      // a rename onto another column's slug would mix two columns: refused, nothing moved
      const state = yield* microDbState(dock.id)
      expect(
        (yield* fail(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: table.id,
          column: retitled.slug,
          patch: { slug: "full_name" }
        })).code
      ).toBe("validation_error")
      expect(yield* microDbState(dock.id)).toBe(state)
    }))

  it.scoped("update_micro_db_column: turning on required or unique, or shrinking options, checks existing rows", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Tasks", [
        { name: "Title", slug: "title", type: "text" },
        { name: "Code", slug: "code", type: "integer" },
        { name: "Status", slug: "status", type: "select", options: ["todo", "doing", "done"] },
        { name: "Tags", slug: "tags", type: "multi_select", options: ["a", "b", "c"] }
      ])
      const rows = yield* insertRows(owner.client, dock.id, table.id, [
        { title: "one", code: 1, status: "todo", tags: ["a"] },
        { code: 2, status: "done", tags: ["a", "c"] },
        { title: "three", code: 1, status: "doing" },
        { title: "four", code: 4, status: "done" },
        { title: "five", status: "todo" }
      ])
      const state = yield* microDbState(dock.id)
      const refusal = (column: string, patch: Record<string, unknown>) =>
        fail(owner.client, "update_micro_db_column", { bucket: dock.id, table: table.id, column, patch })

      const required = yield* refusal("title", { required: true })
      expect(required).toMatchObject({ code: "validation_error", details: { total_invalid: 1 } })
      expect(offendingIds(required)).toEqual([rows[1].id])
      expect(required.details.errors[0].column).toBe("title")

      // duplicates: the rows sharing code 1 (rows without a value don't count)
      const uniqueError = yield* refusal("code", { unique: true })
      expect(uniqueError.code).toBe("validation_error")
      const named = offendingIds(uniqueError)
      expect(named.length).toBeGreaterThanOrEqual(1)
      for (const id of named) expect([rows[0].id, rows[2].id]).toContain(id)

      const shrunk = yield* refusal("status", { options: ["todo", "doing"] })
      expect(shrunk).toMatchObject({ code: "validation_error", details: { total_invalid: 2 } })
      expect(offendingIds(shrunk)).toEqual([rows[1].id, rows[3].id].sort())

      const tags = yield* refusal("tags", { options: ["a", "b"] })
      expect(tags).toMatchObject({ code: "validation_error", details: { total_invalid: 1 } })
      expect(offendingIds(tags)).toEqual([rows[1].id])

      expect(yield* microDbState(dock.id)).toBe(state)
      const schema = yield* use(owner.client, "get_micro_db_schema", { bucket: dock.id, table: table.id })
      expect(schema.columns.map((column: Json) => [column.slug, column.required, column.unique, column.options]))
        .toEqual([
          ["title", false, false, []],
          ["code", false, false, []],
          ["status", false, false, ["todo", "doing", "done"]],
          ["tags", false, false, ["a", "b", "c"]]
        ])

      // once the rows are fixed, the same changes go through and then hold for new rows
      yield* use(owner.client, "update_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        row_id: rows[1].id,
        data: { title: "two", status: "doing", tags: ["a"] }
      })
      yield* use(owner.client, "update_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        row_id: rows[2].id,
        data: { code: 3 }
      })
      yield* use(owner.client, "update_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        row_id: rows[3].id,
        data: { status: null }
      })
      expect(
        (yield* use(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: table.id,
          column: "title",
          patch: { required: true }
        })).column.required
      ).toBe(true)
      expect(
        (yield* use(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: table.id,
          column: "code",
          patch: { unique: true }
        })).column.unique
      ).toBe(true)
      expect(
        (yield* use(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: table.id,
          column: "status",
          patch: { options: ["todo", "doing"] }
        })).column.options
      ).toEqual(["todo", "doing"])
      expect(
        (yield* fail(owner.client, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { code: 9 } })).code
      ).toBe("validation_error")
      expect(
        (yield* fail(owner.client, "insert_micro_db_row", {
          bucket: dock.id,
          table: table.id,
          data: { title: "x", code: 4 }
        })).code
      ).toBe("validation_error")
      expect(
        (yield* fail(owner.client, "insert_micro_db_row", {
          bucket: dock.id,
          table: table.id,
          data: { title: "x", status: "done" }
        })).code
      ).toBe("validation_error")
      // update_micro_db_row checks the merged row: clearing a required value is refused
      expect(
        (yield* fail(owner.client, "update_micro_db_row", {
          bucket: dock.id,
          table: table.id,
          row_id: rows[0].id,
          data: { title: null }
        })).code
      ).toBe("validation_error")
      expect(yield* totalOf(owner.client, dock.id, table.id)).toBe(5)
    }))

  it.scoped("delete_micro_db_column and delete_micro_db_table answer a snapshot that holds what they deleted", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const keep = yield* createTable(owner.client, dock.id, "Keep", [{ name: "K", slug: "k", type: "text" }])
      yield* insertRows(owner.client, dock.id, keep.id, [{ k: "stays" }])
      const table = yield* createTable(owner.client, dock.id, "Ledger", [
        { name: "Item", slug: "item", type: "text" },
        { name: "Amount", slug: "amount", type: "number" }
      ])
      const rows = yield* insertRows(owner.client, dock.id, table.id, [
        { item: "tea ☕", amount: 3.5 },
        { item: "bread", amount: 2 },
        { item: "none" }
      ])
      const before = yield* use(owner.client, "get_micro_db_schema", { bucket: dock.id, table: table.id })

      const dropped = yield* use(owner.client, "delete_micro_db_column", {
        bucket: dock.id,
        table: table.id,
        column: "amount"
      })
      expect(Object.keys(dropped).sort()).toEqual(["ok", "snapshot"])
      expect(dropped.ok).toBe(true)
      expectSnapshotShape(dropped.snapshot)
      expect(dropped.snapshot).toMatchObject({ tables: 2, rows: 4 })
      const document = yield* snapshotDocument(owner.client, dock.id, dropped.snapshot)
      const saved = document.tables.find((entry: Json) => entry.id === table.id)
      expect(saved.columns).toEqual(before.columns)
      expect(saved.rows.map((row: Json) => row.data)).toEqual(rows.map((row) => row.data))
      expect(saved.rows.map((row: Json) => row.id)).toEqual(rows.map((row) => row.id))
      // gone from the table and from every row
      const schema = yield* use(owner.client, "get_micro_db_schema", { bucket: dock.id, table: table.id })
      expect(schema.columns.map((column: Json) => column.slug)).toEqual(["item"])
      expect((yield* allRows(owner.client, dock.id, table.id)).map((row) => row.data)).toEqual([
        { item: "tea ☕" },
        { item: "bread" },
        { item: "none" }
      ])
      expect(
        (yield* fail(owner.client, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { amount: 1 } }))
          .code
      )
        .toBe("validation_error")

      const listed = (yield* use(owner.client, "list_micro_db_tables", { bucket: dock.id })).tables
      const tableBefore = listed.find((entry: Json) => entry.id === table.id)
      const rowsBefore = yield* allRows(owner.client, dock.id, table.id)
      const deleted = yield* use(owner.client, "delete_micro_db_table", { bucket: dock.id, table: table.slug })
      expect(Object.keys(deleted).sort()).toEqual(["ok", "snapshot"])
      expect(deleted.ok).toBe(true)
      expectSnapshotShape(deleted.snapshot)
      expect(deleted.snapshot.version).toBe(dropped.snapshot.version + 1)
      expect(deleted.snapshot).toMatchObject({ part_id: dropped.snapshot.part_id, tables: 2, rows: 4 })
      const last = yield* snapshotDocument(owner.client, dock.id, deleted.snapshot)
      expect(last.tables.find((entry: Json) => entry.id === table.id)).toEqual({ ...tableBefore, rows: rowsBefore })
      // the table and its rows are gone; the other table is untouched
      expect((yield* fail(owner.client, "query_micro_db_rows", { bucket: dock.id, table: table.id })).code).toBe(
        "not_found"
      )
      expect(
        (yield* fail(owner.client, "get_micro_db_row", { bucket: dock.id, table: table.id, row_id: rows[0].id })).code
      ).toBe("not_found")
      expect(
        (yield* use(owner.client, "list_micro_db_tables", { bucket: dock.id })).tables.map((entry: Json) => entry.id)
      ).toEqual([keep.id])
      expect(yield* stored(table.id)).toEqual({ n: 0, bytes: 0, row_count: null })
      expect((yield* allRows(owner.client, dock.id, keep.id)).map((row) => row.data)).toEqual([{ k: "stays" }])
      // both snapshots are listed as such
      const versions =
        (yield* use(owner.client, "list_web_page_versions", { bucket: dock.id, web_page: deleted.snapshot.part_id }))
          .versions
      const reasons = Object.fromEntries(versions.map((entry: Json) => [entry.version, entry.reason]))
      expect(reasons[dropped.snapshot.version]).toBe("snapshot")
      expect(reasons[deleted.snapshot.version]).toBe("snapshot")
    }))

  // ---------------------------------------------------------------------------------------------------------
  // Snapshots

  it.scoped("snapshot_micro_db: the JSON read back is exactly what the read tools return", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const shell =
        (yield* use(owner.client, "push_micro_db", { bucket: dock.id, title: "Everything ✨", summary: "all types" }))
          .part
      expect(shell).toMatchObject({
        bucket_id: dock.id,
        page_kind: "micro_db",
        content_type: "json",
        title: "Everything ✨",
        version: 1
      })
      const everything = yield* createTable(owner.client, dock.id, "Every type", [
        { name: "Title", slug: "title", type: "text", required: true, unique: true, description: "Ünïcode wélcome" },
        { name: "Notes", slug: "notes", type: "long_text" },
        { name: "Price", slug: "price", type: "number", default: 0 },
        { name: "Qty", slug: "qty", type: "integer" },
        { name: "Done", slug: "done", type: "boolean", default: false },
        { name: "Due", slug: "due", type: "date" },
        { name: "At", slug: "at", type: "datetime" },
        { name: "Status", slug: "status", type: "select", options: ["todo", "doing", "done ✓"] },
        { name: "Tags", slug: "tags", type: "multi_select", options: ["红", "green", "🚀"] },
        { name: "Site", slug: "site", type: "url" },
        { name: "Contact", slug: "contact", type: "email" },
        { name: "Meta", slug: "meta", type: "json" }
      ], { description: "all twelve types" })
      yield* insertRows(owner.client, dock.id, everything.id, [
        {
          title: "Zoë — 東京 🚀",
          notes: "Line one\nשלום עולם\n\"quoted\" and \\ backslashed\ttab <b>not html</b>",
          price: 12.75,
          qty: 9_007_199_254_740_991,
          done: true,
          due: "2026-11-21",
          at: "2026-11-21T10:30:00+01:00",
          status: "done ✓",
          tags: ["🚀", "红"],
          site: "https://example.com/ä?q=1#frag",
          contact: "zoe@example.com",
          meta: { nested: { list: [1, "two", null, true], emoji: "🎉" }, n: -0.5 }
        },
        { title: "plain", qty: -3, tags: ["green"] },
        { title: "e\u0301 combining", price: 1e-7, meta: [] },
        { title: "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral", due: "0001-01-01", at: "9999-12-31T23:59:59.999Z", meta: "just a string" }
      ])
      const second = yield* createTable(owner.client, dock.id, "Second", [{ name: "Word", slug: "word", type: "text" }])
      yield* insertRows(
        owner.client,
        dock.id,
        second.id,
        Array.from({ length: 30 }, (_, i) => ({ word: `w${i} ${"ü".repeat(i)}` }))
      )
      yield* createTable(owner.client, dock.id, "Empty", [{ name: "Nothing", slug: "nothing", type: "json" }])
      // moved first, so position order differs from creation order
      yield* use(owner.client, "update_micro_db_table", { bucket: dock.id, table: second.id, position: 0 })
      yield* use(owner.client, "insert_micro_db_row", {
        bucket: dock.id,
        table: everything.id,
        data: { title: "later" }
      })

      const taken = (yield* use(owner.client, "snapshot_micro_db", { bucket: dock.id })).snapshot
      expectSnapshotShape(taken)

      // what the read tools say
      const tables = (yield* use(owner.client, "list_micro_db_tables", { bucket: dock.id })).tables as Array<Json>
      expect(tables.map((table) => table.name)).toEqual(["Second", "Every type", "Empty"])
      expect(tables.map((table) => table.position)).toEqual([0, 1, 2])
      const expected: Array<Json> = []
      for (const table of tables) {
        const schema = yield* use(owner.client, "get_micro_db_schema", { bucket: dock.id, table: table.id })
        expect(schema.table).toEqual(table)
        expect(schema.columns).toEqual(table.columns)
        const rows = yield* allRows(owner.client, dock.id, table.id)
        expect(rows).toHaveLength(table.row_count)
        for (const row of rows) {
          expect(
            (yield* use(owner.client, "get_micro_db_row", { bucket: dock.id, table: table.id, row_id: row.id })).row
          ).toEqual(row)
        }
        expected.push({ ...table, rows })
      }
      expect(taken).toMatchObject({ part_id: shell.id, version: 2, tables: 3, rows: 35 })

      const document = yield* snapshotDocument(owner.client, dock.id, taken)
      expect(Object.keys(document).sort()).toEqual(["bucket_id", "created_at", "format", "tables"])
      expect(document.format).toBe("dock.micro_db.snapshot/1")
      expect(document.bucket_id).toBe(dock.id)
      expect(Number.isNaN(Date.parse(document.created_at))).toBe(false)
      expect(document.tables).toEqual(expected)
      // the values came back as stored (datetime normalized, multi_select in option order)
      const first = expected[1].rows.find((row: Json) => row.data.title === "Zoë — 東京 🚀").data
      expect(first.at).toBe("2026-11-21T09:30:00.000Z")
      expect(first.tags).toEqual(["红", "🚀"])
      expect(first.qty).toBe(9_007_199_254_740_991)

      // listed as a snapshot; version 1 is the empty Micro DB the shell started with
      const versions = (yield* use(owner.client, "list_web_page_versions", { bucket: dock.id, web_page: shell.id }))
        .versions as Array<Json>
      expect(versions.map((entry) => entry.version).sort()).toEqual([1, 2])
      expect(versions.find((entry) => entry.version === 2).reason).toBe("snapshot")
      expect(versions.find((entry) => entry.version === 2).content_type).toBe("json")
      const empty = yield* snapshotDocument(owner.client, dock.id, { part_id: shell.id, version: 1 })
      expect(empty).toMatchObject({ format: "dock.micro_db.snapshot/1", bucket_id: dock.id, tables: [] })
      // the shell is now at the snapshot's version
      expect((yield* use(owner.client, "get_web_page", { bucket: dock.id, web_page: shell.id })).part.version).toBe(2)
    }))

  it.scoped("snapshot_micro_db: the newest 20 snapshots are kept, older ones pruned, version 1 stays", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Counter", [{ name: "N", slug: "n", type: "integer" }])
      const taken: Array<Json> = []
      for (let i = 1; i <= 22; i++) {
        yield* use(owner.client, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { n: i } })
        taken.push((yield* use(owner.client, "snapshot_micro_db", { bucket: dock.id })).snapshot)
      }
      expect(taken.map((snapshot) => snapshot.version)).toEqual(Array.from({ length: 22 }, (_, i) => i + 2))
      expect(taken.map((snapshot) => snapshot.rows)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1))
      const partId = taken[0].part_id
      const versions = (yield* use(owner.client, "list_web_page_versions", { bucket: dock.id, web_page: partId }))
        .versions as Array<Json>
      expect(versions.map((entry) => entry.version).sort((a, b) => a - b)).toEqual([
        1,
        ...Array.from({ length: 20 }, (_, i) => i + 4)
      ])
      for (const entry of versions) {
        expect(entry.reason, `version ${entry.version}`).toBe(entry.version === 1 ? "created" : "snapshot")
      }
      for (const version of [2, 3]) {
        expect((yield* fail(owner.client, "get_web_page_version", { bucket: dock.id, web_page: partId, version })).code)
          .toBe("not_found")
      }
      expect((yield* snapshotDocument(owner.client, dock.id, { part_id: partId, version: 1 })).tables).toEqual([])
      const oldestKept = yield* snapshotDocument(owner.client, dock.id, taken[2])
      expect(oldestKept.tables[0].rows.map((row: Json) => row.data.n)).toEqual([1, 2, 3])
      const newest = yield* snapshotDocument(owner.client, dock.id, taken[21])
      expect(newest.tables[0].rows).toHaveLength(22)
    }))

  // ---------------------------------------------------------------------------------------------------------
  // Tenancy

  it.scoped("a private Dock: outsiders see nothing (not_found, as for a missing Dock); viewers read, never write", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const outsider = yield* actor(MODERN)
      const viewer = yield* actor(MODERN)
      const editor = yield* actor(MODERN)
      const { dock, rows, table } = yield* seededMicroDb(owner.client)
      yield* grant(dock.id, viewer.user, "viewer")
      yield* grant(dock.id, editor.user, "editor")
      const path = `${owner.user.username}/${dock.slug}`
      const state = yield* microDbState(dock.id)

      for (const bucket of [dock.id, path]) {
        for (const tableRef of [table.id, table.slug]) {
          yield* expectAll(
            "outsider read",
            outsider.client,
            readCalls(bucket, tableRef, rows[0].id),
            (result) => expect(refused(result)).toEqual(NOT_FOUND)
          )
          yield* expectAll(
            "outsider write",
            outsider.client,
            writeCalls(bucket, tableRef, rows[0].id),
            (result) => expect(refused(result)).toEqual(NOT_FOUND)
          )
        }
      }
      // what the Dock's snapshots hold is as hidden
      const snapshot = (yield* use(owner.client, "snapshot_micro_db", { bucket: dock.id })).snapshot
      expect(
        refused(
          yield* call(outsider.client, "get_web_page_version", {
            bucket: dock.id,
            web_page: snapshot.part_id,
            version: 2
          })
        )
      )
        .toEqual(NOT_FOUND)
      const afterSnapshot = yield* microDbState(dock.id)
      expect(afterSnapshot).not.toBe(state)

      yield* expectAll("viewer read", viewer.client, readCalls(dock.id, table.id, rows[0].id), "ok")
      yield* expectAll("viewer write", viewer.client, writeCalls(dock.id, table.id, rows[0].id), "permission_denied")
      const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), MODERN)
      yield* expectAll("read-only token read", readOnly, readCalls(dock.id, table.id, rows[0].id), "ok")
      yield* expectAll(
        "read-only token write",
        readOnly,
        writeCalls(dock.id, table.id, rows[0].id),
        "permission_denied"
      )
      // a token restricted to another Dock reads (reads are unaffected) but every write is a structured 403
      const elsewhere = yield* newDock(owner.client)
      const restricted = yield* connect(yield* tokenFor(owner.user, { docks: [elsewhere.id] }), MODERN)
      yield* expectAll("restricted token read", restricted, readCalls(dock.id, table.id, rows[0].id), "ok")
      yield* expectAll(
        "restricted token write",
        restricted,
        writeCalls(dock.id, table.id, rows[0].id),
        "permission_denied"
      )
      // nothing a refused caller sent reached the Micro DB
      expect(yield* microDbState(dock.id)).toBe(afterSnapshot)
      // inside its own Dock the restricted token writes
      const own = yield* createTable(restricted, elsewhere.id, "Own", [{ name: "X", slug: "x", type: "text" }])
      expect(
        (yield* use(restricted, "insert_micro_db_row", { bucket: elsewhere.id, table: own.id, data: { x: "mine" } }))
          .row.data
      )
        .toEqual({ x: "mine" })

      // an editor writes
      const inserted = (yield* use(editor.client, "insert_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        data: { title: "by editor" }
      })).row
      expect(
        (yield* use(owner.client, "get_micro_db_row", { bucket: dock.id, table: table.id, row_id: inserted.id })).row
      ).toEqual(inserted)
      expect((yield* use(editor.client, "snapshot_micro_db", { bucket: dock.id })).snapshot.version).toBe(3)

      // the anonymous public endpoint sees none of it
      const anonymous = yield* connectPublic(MODERN)
      yield* expectAll(
        "anonymous read",
        anonymous,
        readCalls(dock.id, table.id, rows[0].id),
        (result) => expect(refused(result).error.code).toBe("not_found")
      )
      yield* expectAll(
        "anonymous read by path",
        anonymous,
        readCalls(path, table.slug, rows[0].id),
        (result) => expect(refused(result).error.code).toBe("not_found")
      )
    }))

  it.scoped("a public Dock: outsiders and anonymous readers read; outsiders cannot write (permission_denied)", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const outsider = yield* actor(MODERN)
      const { dock, rows, table } = yield* seededMicroDb(owner.client, { visibility: "public" })
      const path = `${owner.user.username}/${dock.slug}`
      const state = yield* microDbState(dock.id)
      const ownerView = yield* Effect.forEach(
        readCalls(dock.id, table.id, rows[0].id),
        ([tool, args]) => use(owner.client, tool, args)
      )

      const anonymous = yield* connectPublic(MODERN)
      for (const [label, client] of [["outsider", outsider.client], ["anonymous", anonymous]] as const) {
        const view = yield* Effect.forEach(
          readCalls(dock.id, table.id, rows[0].id),
          ([tool, args]) => use(client, tool, args)
        )
        expect(view, label).toEqual(ownerView)
        yield* expectAll(`${label} read by path and slug`, client, readCalls(path, table.slug, rows[0].id), "ok")
      }
      yield* expectAll(
        "outsider write",
        outsider.client,
        writeCalls(dock.id, table.id, rows[0].id),
        "permission_denied"
      )
      yield* expectAll(
        "outsider write by path",
        outsider.client,
        writeCalls(path, table.slug, rows[0].id),
        "permission_denied"
      )
      expect(yield* microDbState(dock.id)).toBe(state)
      // the anonymous endpoint offers the read tools and no write tool
      const offered = (yield* Effect.promise(() => anonymous.listTools())).tools.map((tool) => tool.name)
      for (const [tool] of readCalls(dock.id, table.id, rows[0].id)) expect(offered).toContain(tool)
      for (const [tool] of writeCalls(dock.id, table.id, rows[0].id)) expect(offered).not.toContain(tool)
      // a public Dock's snapshots are readable too
      const snapshot = (yield* use(owner.client, "snapshot_micro_db", { bucket: dock.id })).snapshot
      const document = yield* snapshotDocument(outsider.client, dock.id, snapshot)
      expect(document.tables[0].rows.map((row: Json) => row.id)).toEqual(rows.map((row) => row.id))
    }))

  it.scoped("a private Micro DB shell in a public Dock hides its tables from everyone but the Dock's members", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const outsider = yield* actor(MODERN)
      const viewer = yield* actor(MODERN)
      const { dock, rows, table } = yield* seededMicroDb(owner.client, { visibility: "public" }, {
        visibility: "private",
        title: "Secret DB"
      })
      yield* grant(dock.id, viewer.user, "viewer")
      // a public Dock without a Micro DB
      const bare = yield* newDock(owner.client, { visibility: "public" })
      const shell = yield* shellId(owner.client, dock.id)
      const state = yield* microDbState(dock.id)

      const anonymous = yield* connectPublic(MODERN)
      for (const [label, client] of [["outsider", outsider.client], ["anonymous", anonymous]] as const) {
        // the Dock itself stays readable
        ok(yield* call(client, "get_bucket", { bucket: dock.id }))
        // what the caller cannot read is not_found (a Dock without a Micro DB lists no tables)
        expect(refused(yield* call(client, "list_micro_db_tables", { bucket: dock.id })).error, label)
          .toMatchObject({ code: "not_found", status: 404 })
        expect(ok(yield* call(client, "list_micro_db_tables", { bucket: bare.id })), label).toEqual({ tables: [] })
        yield* expectAll(`${label} read`, client, readCalls(dock.id, table.id, rows[0].id).slice(1), "not_found")
        yield* expectAll(
          `${label} read by slug`,
          client,
          readCalls(dock.id, table.slug, rows[0].id).slice(1),
          "not_found"
        )
        // nor the shell as a page, nor its snapshots
        expect((yield* fail(client, "get_web_page", { bucket: dock.id, web_page: shell })).code, label).toBe(
          "not_found"
        )
        const pages = ok(yield* call(client, "list_web_pages", { bucket: dock.id })).parts as Array<Json>
        expect(pages.filter((part) => part.page_kind === "micro_db"), label).toEqual([])
      }
      yield* expectAll(
        "outsider write",
        outsider.client,
        writeCalls(dock.id, table.id, rows[0].id).slice(1),
        (result) => expect(["not_found", "permission_denied"]).toContain(refused(result).error.code)
      )
      expect(yield* microDbState(dock.id)).toBe(state)
      // members read
      yield* expectAll("viewer read", viewer.client, readCalls(dock.id, table.id, rows[0].id), "ok")
      expect(
        (yield* use(viewer.client, "list_micro_db_tables", { bucket: dock.id })).tables.map((entry: Json) => entry.id)
      ).toEqual([
        table.id
      ])
      // made public again, the tables show
      yield* use(owner.client, "push_micro_db", { bucket: dock.id, visibility: "public" })
      yield* expectAll(
        "outsider read after push public",
        outsider.client,
        readCalls(dock.id, table.id, rows[0].id),
        "ok"
      )
    }))

  it.scoped("publishing the Micro DB is the owner's: an editor's push_micro_db with a visibility is permission_denied, nothing changes", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const editor = yield* actor(MODERN)
      const { dock, rows, table } = yield* seededMicroDb(owner.client, { visibility: "public" }, {
        visibility: "private",
        title: "Secret DB"
      })
      yield* grant(dock.id, editor.user, "editor")
      const state = yield* microDbState(dock.id)
      // any visibility is a publishing setting: public would expose the owner's rows, private would hide them
      for (const visibility of ["public", "private"]) {
        expect(yield* fail(editor.client, "push_micro_db", { bucket: dock.id, visibility }), visibility).toMatchObject({
          code: "permission_denied",
          status: 403
        })
        expect(
          yield* fail(editor.client, "push_micro_db", { bucket: dock.id, title: "Mine now", visibility }),
          visibility
        )
          .toMatchObject({ code: "permission_denied" })
      }
      expect(yield* microDbState(dock.id)).toBe(state)
      const anonymous = yield* connectPublic(MODERN)
      yield* expectAll("anonymous read", anonymous, readCalls(dock.id, table.id, rows[0].id).slice(1), "not_found")
      // the editor still edits the shell's other fields; the owner publishes
      expect((yield* use(editor.client, "push_micro_db", { bucket: dock.id, summary: "by the editor" })).part.summary)
        .toBe("by the editor")
      yield* use(owner.client, "push_micro_db", { bucket: dock.id, visibility: "public" })
      yield* expectAll(
        "anonymous read once the owner publishes",
        anonymous,
        readCalls(dock.id, table.id, rows[0].id),
        "ok"
      )
    }))

  it.scoped("rows count against the Dock's content size by the UTF-8 size of their JSON data", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Sized", [
        { name: "Text", slug: "text", type: "text" },
        { name: "N", slug: "n", type: "number" }
      ])
      const base = yield* usageOf(dock.id)
      const data = [{ text: "ascii", n: 1 }, { text: "東京 🚀 Zoë", n: 2.5 }, { text: "x".repeat(1000) }]
      const inserted = yield* insertRows(owner.client, dock.id, table.id, data)
      // a row's size is the UTF-8 length of its data's JSON as stored (jsonb's text form)
      const sizes = yield* jsonSizes(inserted.map((row) => row.id))
      for (const [i, row] of inserted.entries()) {
        expect(sizes[i]).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(row.data), "utf8"))
        expect(sizes[i]).toBeLessThan(Buffer.byteLength(JSON.stringify(row.data), "utf8") + 10)
      }
      const total = sizes.reduce((a, b) => a + b, 0)
      expect(yield* stored(table.id)).toEqual({ n: 3, bytes: total, row_count: 3 })
      expect((yield* usageOf(dock.id)).bytes - base.bytes).toBe(total)
      // an update charges the difference, a delete releases the row
      yield* use(owner.client, "update_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        row_id: inserted[2].id,
        data: { text: "short" }
      })
      const [shorter] = yield* jsonSizes([inserted[2].id])
      expect(shorter).toBeLessThan(sizes[2]!)
      expect((yield* usageOf(dock.id)).bytes - base.bytes).toBe(sizes[0]! + sizes[1]! + shorter!)
      yield* use(owner.client, "delete_micro_db_row", { bucket: dock.id, table: table.id, row_id: inserted[1].id })
      expect((yield* usageOf(dock.id)).bytes - base.bytes).toBe(sizes[0]! + shorter!)
      // snapshots are stored history and count by their bytes; deleting the table releases its rows
      const baseShell = yield* shellBytes(dock.id)
      yield* use(owner.client, "snapshot_micro_db", { bucket: dock.id })
      const snapshots = () => Effect.map(shellBytes(dock.id), (bytes) => bytes - baseShell)
      expect(yield* snapshots()).toBeGreaterThan(0)
      expect((yield* usageOf(dock.id)).bytes - base.bytes).toBe(sizes[0]! + shorter! + (yield* snapshots()))
      yield* use(owner.client, "delete_micro_db_table", { bucket: dock.id, table: table.id })
      expect((yield* usageOf(dock.id)).bytes).toBe(base.bytes + (yield* snapshots()))
    }))
})

/** The shell part's id, as the owner sees it in list_web_pages. */
const shellId = (client: AnyClient, bucket: string) =>
  Effect.map(
    use(client, "list_web_pages", { bucket }),
    (body) => (body.parts as Array<Json>).find((part) => part.page_kind === "micro_db")!.id as string
  )

// =========================================================================================================

layer(TightServer, { excludeTestServices: true, timeout: 120_000 })("Micro DB plan caps (tight limits)", (it) => {
  it.scoped("rows per table: tier_limit_exceeded with the limit, for single and bulk inserts, nothing partial", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Capped", [{ name: "N", slug: "n", type: "integer" }])
      yield* insertRows(owner.client, dock.id, table.id, [1, 2, 3, 4].map((n) => ({ n })))
      yield* insertRows(owner.client, dock.id, table.id, [5, 6, 7, 8].map((n) => ({ n })))
      // 3 more would pass the cap of 10: none goes in
      const bulk = yield* fail(owner.client, "insert_micro_db_rows", {
        bucket: dock.id,
        table: table.id,
        rows: [9, 10, 11].map((n) => ({ n }))
      })
      expect(bulk).toMatchObject({ code: "tier_limit_exceeded", status: 403, details: { max_rows_per_table: ROW_CAP } })
      expect(yield* stored(table.id)).toMatchObject({ n: 8, row_count: 8 })
      yield* insertRows(owner.client, dock.id, table.id, [9, 10].map((n) => ({ n })))
      const single = yield* fail(owner.client, "insert_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        data: { n: 11 }
      })
      expect(single).toMatchObject({
        code: "tier_limit_exceeded",
        status: 403,
        details: { max_rows_per_table: ROW_CAP }
      })
      expect(yield* totalOf(owner.client, dock.id, table.id)).toBe(ROW_CAP)
      // a delete makes room again; the cap is per table
      const rows = yield* allRows(owner.client, dock.id, table.id)
      yield* use(owner.client, "delete_micro_db_row", { bucket: dock.id, table: table.id, row_id: rows[0].id })
      yield* use(owner.client, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { n: 11 } })
      const other = yield* createTable(owner.client, dock.id, "Other", [{ name: "N", slug: "n", type: "integer" }])
      yield* insertRows(owner.client, dock.id, other.id, [1, 2, 3, 4, 5].map((n) => ({ n })))
      expect(yield* stored(table.id)).toMatchObject({ n: ROW_CAP, row_count: ROW_CAP })
    }))

  it.scoped("rows per bulk insert: more than DOCK_PLAN_MAX_BULK_ROWS is tier_limit_exceeded, nothing written", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Bulk", [{ name: "N", slug: "n", type: "integer" }])
      const error = yield* fail(owner.client, "insert_micro_db_rows", {
        bucket: dock.id,
        table: table.id,
        rows: Array.from({ length: BULK_CAP + 1 }, (_, n) => ({ n }))
      })
      expect(error).toMatchObject({
        code: "tier_limit_exceeded",
        status: 403,
        details: { max_rows_per_insert: BULK_CAP }
      })
      expect(yield* stored(table.id)).toMatchObject({ n: 0, row_count: 0 })
      expect(yield* insertRows(owner.client, dock.id, table.id, Array.from({ length: BULK_CAP }, (_, n) => ({ n }))))
        .toHaveLength(BULK_CAP)
    }))

  it.scoped("parallel inserts never pass the row cap", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const second = yield* connect(owner.token, MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Race", [{ name: "N", slug: "n", type: "integer" }])
      yield* insertRows(owner.client, dock.id, table.id, [0, 1, 2, 3].map((n) => ({ n })))
      const singles = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) =>
          call(i % 2 === 0 ? owner.client : second, "insert_micro_db_row", {
            bucket: dock.id,
            table: table.id,
            data: { n: 100 + i }
          })),
        { concurrency: "unbounded" }
      )
      expect(singles.filter((result) => result.isError !== true)).toHaveLength(ROW_CAP - 4)
      for (const result of singles.filter((result) => result.isError === true)) {
        expect(refused(result).error.code).toBe("tier_limit_exceeded")
      }
      expect(yield* stored(table.id)).toMatchObject({ n: ROW_CAP, row_count: ROW_CAP })

      // batches of 3 into an empty table of cap 10: exactly 3 batches fit
      const empty = yield* createTable(owner.client, dock.id, "Race bulk", [{ name: "N", slug: "n", type: "integer" }])
      const batches = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) =>
          call(i % 2 === 0 ? owner.client : second, "insert_micro_db_rows", {
            bucket: dock.id,
            table: empty.id,
            rows: [0, 1, 2].map((k) => ({ n: i * 10 + k }))
          })),
        { concurrency: "unbounded" }
      )
      expect(batches.filter((result) => result.isError !== true)).toHaveLength(3)
      for (const result of batches.filter((result) => result.isError === true)) {
        expect(refused(result).error.code).toBe("tier_limit_exceeded")
      }
      const rows = yield* allRows(owner.client, dock.id, empty.id)
      expect(rows).toHaveLength(9)
      // whole batches only
      const groups = new Map<number, number>()
      for (const row of rows) {
        groups.set(Math.floor(row.data.n / 10), (groups.get(Math.floor(row.data.n / 10)) ?? 0) + 1)
      }
      expect([...groups.values()]).toEqual([3, 3, 3])
      expect(yield* stored(empty.id)).toMatchObject({ n: 9, row_count: 9 })
    }))

  it.scoped("rows count against the Dock's byte cap: tier_limit_exceeded, and a delete makes room", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Big", [{
        name: "Body",
        slug: "body",
        type: "long_text"
      }])
      const body = (c: string) => c.repeat(6_000)
      const inserted = yield* insertRows(owner.client, dock.id, table.id, [{ body: body("a") }, { body: body("b") }])
      yield* use(owner.client, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { body: body("c") } })
      const usage = yield* usageOf(dock.id)
      expect(usage.bytes).toBeGreaterThan(18_000)
      const single = yield* fail(owner.client, "insert_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        data: { body: body("d") }
      })
      expect(single).toMatchObject({ code: "tier_limit_exceeded", status: 403, details: { max_bytes: DOCK_BYTES } })
      const bulk = yield* fail(owner.client, "insert_micro_db_rows", {
        bucket: dock.id,
        table: table.id,
        rows: [{ body: "small" }, { body: body("e") }]
      })
      expect(bulk).toMatchObject({ code: "tier_limit_exceeded", details: { max_bytes: DOCK_BYTES } })
      // growing a row past the cap is refused as well
      const grown = yield* fail(owner.client, "update_micro_db_row", {
        bucket: dock.id,
        table: table.id,
        row_id: inserted[0].id,
        data: { body: body("a") + body("a") }
      })
      expect(grown.code).toBe("tier_limit_exceeded")
      expect(yield* usageOf(dock.id)).toEqual(usage)
      expect(yield* totalOf(owner.client, dock.id, table.id)).toBe(3)
      // pages and rows share the cap
      expect(
        (yield* fail(owner.client, "push_web_page", {
          bucket: dock.id,
          page_slug: "p",
          page_content: `<p>${"z".repeat(3_000)}</p>`
        })).code
      )
        .toBe("tier_limit_exceeded")
      yield* use(owner.client, "delete_micro_db_row", { bucket: dock.id, table: table.id, row_id: inserted[0].id })
      yield* use(owner.client, "insert_micro_db_row", { bucket: dock.id, table: table.id, data: { body: body("d") } })
      expect(yield* totalOf(owner.client, dock.id, table.id)).toBe(3)
    }))

  it.scoped("snapshot retention follows DOCK_PLAN_SNAPSHOT_RETENTION; delete snapshots count too", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* newDock(owner.client)
      const table = yield* createTable(owner.client, dock.id, "Kept", [
        { name: "A", slug: "a", type: "text" },
        { name: "B", slug: "b", type: "text" }
      ])
      yield* insertRows(owner.client, dock.id, table.id, [{ a: "1", b: "2" }])
      const versions: Array<number> = []
      for (let i = 0; i < 4; i++) {
        versions.push((yield* use(owner.client, "snapshot_micro_db", { bucket: dock.id })).snapshot.version)
      }
      const dropped =
        (yield* use(owner.client, "delete_micro_db_column", { bucket: dock.id, table: table.id, column: "b" })).snapshot
      versions.push(dropped.version)
      expect(versions).toEqual([2, 3, 4, 5, 6])
      const listed =
        (yield* use(owner.client, "list_web_page_versions", { bucket: dock.id, web_page: dropped.part_id }))
          .versions as Array<Json>
      expect(listed.map((entry) => entry.version).sort((a, b) => a - b)).toEqual([1, 4, 5, 6])
      for (const version of [2, 3]) {
        expect(
          (yield* fail(owner.client, "get_web_page_version", { bucket: dock.id, web_page: dropped.part_id, version }))
            .code
        ).toBe("not_found")
      }
      // the delete's snapshot still holds the column
      const document = yield* snapshotDocument(owner.client, dock.id, dropped)
      expect(document.tables[0].rows[0].data).toEqual({ a: "1", b: "2" })
    }))
})
