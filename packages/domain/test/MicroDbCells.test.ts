// The Micro DB's cells (migration 10: each scalar value typed, in btree order) over a real database: kept in step
// with every write of rows (inserts, updates, deletes, schema changes, forks, a table's delete), backfilled by
// the migration; and queries answered through them give exactly what the documented semantics give (compared
// with a reference over seeded random rows: typed filters, sorts with rows without a value last, ties in
// insertion order, long strings, paging), with `total` exact on a short page.
import { migrations } from "@dock/migrations"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Data, Effect } from "effect"
import { CELL_TEXT_CHARS, Docks, MicroDb, type MicroDbFilter, type MicroDbSort, userPrincipal } from "../src/index.ts"
import { hashCellsOf, hashMemoryBytes } from "../src/MicroDb/MicroDbRepo.ts"
import { DomainTest } from "../src/testing.ts"
import { as, createDock, newUser } from "./support/Fixtures.ts"

/** A Dock of a new owner, and the owner acting. */
const owned = Effect.gen(function*() {
  const user = yield* newUser("cells")
  const dock = yield* createDock(user, { title: "Cells", visibility: "public", allowForks: true })
  return { bucket: { bucket: dock.id }, owner: userPrincipal(user), dockId: dock.id }
})

/** Rows whose cells differ from what their data gives (both ways); none when the cells are in step. */
const cellsOutOfStep = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<{ side: string; slug: string }>`
    (select 'extra' as side, slug from (
      select table_id, row_seq, slug, num, txt from micro_db_cells
      except all
      select r.table_id, r.seq, v.slug, v.num, v.txt from micro_db_rows r cross join lateral micro_db_cells_of(r.data) v
    ) extra)
    union all
    (select 'missing' as side, slug from (
      select r.table_id, r.seq, v.slug, v.num, v.txt from micro_db_rows r cross join lateral micro_db_cells_of(r.data) v
      except all
      select table_id, row_seq, slug, num, txt from micro_db_cells
    ) missing)`
})

/** The cells of one row, by slug. */
const cellsOf = (rowId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ slug: string; num: string | null; txt: string | null }>`select c.slug, c.num::text as num, c.txt
      from micro_db_cells c join micro_db_rows r on r.table_id = c.table_id and r.seq = c.row_seq
      where r.id = ${rowId} order by c.slug`
  )

const cellCount = (tableId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: number }>`select count(*)::int as n from micro_db_cells where table_id = ${tableId}`.pipe(
        Effect.map((rows) => rows[0]!.n)
      )
  )

// ---------------------------------------------------------------------------------------------------------------
// The reference: docs/micro-db.md "Queries", written out plainly.
// ---------------------------------------------------------------------------------------------------------------

type Data = Readonly<Record<string, unknown>>

/** Strings by code point (JavaScript's `<` compares UTF-16 units, which orders U+E000-U+FFFF after astral ones). */
const byCodePoint = (a: string, b: string) => {
  const x = [...a].map((c) => c.codePointAt(0)!)
  const y = [...b].map((c) => c.codePointAt(0)!)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

const compare = (a: unknown, b: unknown) =>
  typeof a === "number" && typeof b === "number"
    ? a - b
    : typeof a === "boolean" && typeof b === "boolean"
    ? Number(a) - Number(b)
    : byCodePoint(String(a), String(b))

const matches = (data: Data, filter: MicroDbFilter) => {
  const value = data[filter.column]
  const has = value !== undefined
  const equal = (other: unknown) => has && compare(value, other) === 0
  switch (filter.op) {
    case "eq":
      return equal(filter.value)
    case "neq":
      return !equal(filter.value)
    case "gt":
      return has && compare(value, filter.value) > 0
    case "gte":
      return has && compare(value, filter.value) >= 0
    case "lt":
      return has && compare(value, filter.value) < 0
    case "lte":
      return has && compare(value, filter.value) <= 0
    case "in":
      return (filter.value as Array<unknown>).some(equal)
    case "not_in":
      return !(filter.value as Array<unknown>).some(equal)
    case "is_null":
      return !has
    case "is_not_null":
      return has
    default:
      throw new Error(`no reference for ${filter.op}`)
  }
}

/** Indexes (insertion order) of the rows the query gives, in order. */
const reference = (
  rows: ReadonlyArray<Data>,
  filters: ReadonlyArray<MicroDbFilter>,
  sorts: ReadonlyArray<MicroDbSort>
) =>
  rows.map((data, index) => ({ data, index }))
    .filter(({ data }) => filters.every((filter) => matches(data, filter)))
    .sort((a, b) => {
      for (const sort of sorts) {
        const x = a.data[sort.column]
        const y = b.data[sort.column]
        if (x === undefined || y === undefined) {
          if (x !== y) return x === undefined ? 1 : -1
          continue
        }
        const order = compare(x, y) * (sort.direction === "desc" ? -1 : 1)
        if (order !== 0) return order
      }
      return a.index - b.index
    })
    .map(({ index }) => index)

/** A seeded random in [0, 1). */
const seeded = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
  return seed / 2_147_483_648
}

const LONG = "x".repeat(CELL_TEXT_CHARS - 1)

interface Cell {
  readonly row_seq: string
  readonly slug: string
  readonly num: string | null
  readonly txt: string | null
}
/** Ends a transaction by rolling it back, carrying what was seen inside it. */
class Rollback extends Data.TaggedError("Rollback")<{ readonly found: ReadonlyArray<Cell> }> {}

layer(DomainTest)("MicroDb cells", (it) => {
  it.effect("cells follow inserts, updates, deletes, schema changes, forks and a table's delete", () =>
    Effect.gen(function*() {
      const { bucket, dockId, owner } = yield* owned
      const microDb = yield* MicroDb
      const table = yield* microDb.createTable(bucket, {
        name: "Kinds",
        columns: [
          { name: "N", type: "number" },
          { name: "I", type: "integer" },
          { name: "B", type: "boolean" },
          { name: "T", type: "long_text" },
          { name: "D", type: "date" },
          { name: "At", type: "datetime" },
          { name: "S", type: "select", options: ["x", "y"] },
          { name: "M", type: "multi_select", options: ["x", "y"] },
          { name: "J", type: "json" }
        ]
      }).pipe(as(owner))
      const long = "é".repeat(CELL_TEXT_CHARS + 50)
      const [first, second] = yield* microDb.insertRows(bucket, "kinds", [
        {
          n: -1.5,
          i: 9_007_199_254_740_991,
          b: false,
          t: long,
          d: "2026-02-28",
          at: "2026-02-28T23:30:00+02:00",
          s: "y",
          m: ["y", "x"],
          j: { deep: [1] }
        },
        { n: 1e21, b: true, j: 7 }
      ]).pipe(as(owner))
      expect(yield* cellsOf(first!.id)).toEqual([
        { slug: "at", num: null, txt: "2026-02-28T21:30:00.000Z" },
        { slug: "b", num: "0", txt: null },
        { slug: "d", num: null, txt: "2026-02-28" },
        { slug: "i", num: "9007199254740991", txt: null },
        { slug: "n", num: "-1.5", txt: null },
        { slug: "s", num: null, txt: "y" },
        // a long string keeps its first CELL_TEXT_CHARS characters; arrays and objects have no cell
        { slug: "t", num: null, txt: "é".repeat(CELL_TEXT_CHARS) }
      ])
      expect(yield* cellsOf(second!.id)).toEqual([
        { slug: "b", num: "1", txt: null },
        { slug: "j", num: "7", txt: null },
        { slug: "n", num: "1000000000000000000000", txt: null }
      ])
      expect(yield* cellsOutOfStep).toEqual([])

      const findN = (value: number) =>
        Effect.map(
          microDb.query(bucket, "kinds", { filter: [{ column: "n", op: "eq", value }], limit: 10, offset: 0 }),
          (found) => found.rows.map((row) => row.id)
        ).pipe(as(owner))

      // an update sets and clears values
      yield* microDb.updateRow(bucket, "kinds", first!.id, { n: 2, b: null, s: "x" }).pipe(as(owner))
      expect(yield* findN(2)).toEqual([first!.id])
      expect(yield* findN(-1.5)).toEqual([])
      expect((yield* cellsOf(first!.id)).map((cell) => cell.slug)).not.toContain("b")
      expect(yield* cellsOutOfStep).toEqual([])

      // a new column with a default fills every row; a rename moves the cells; a type change converts them
      yield* microDb.addColumn(bucket, "kinds", { name: "Extra", type: "integer", default: 5 }).pipe(as(owner))
      expect(yield* cellsOutOfStep).toEqual([])
      yield* microDb.updateColumn(bucket, "kinds", "extra", { slug: "more" }).pipe(as(owner))
      expect(yield* cellsOutOfStep).toEqual([])
      const renamed = yield* microDb.query(bucket, "kinds", {
        filter: [{ column: "more", op: "gte", value: 5 }],
        limit: 10,
        offset: 0
      }).pipe(as(owner))
      expect(renamed.rows.map((row) => row.id)).toEqual([first!.id, second!.id])
      yield* microDb.updateColumn(bucket, "kinds", "n", { type: "text" }).pipe(as(owner))
      expect(yield* cellsOutOfStep).toEqual([])
      // as text, "1e+21" and "2" compare by code point
      const asText = yield* microDb.query(bucket, "kinds", {
        filter: [{ column: "n", op: "gt", value: "1" }],
        sort: [{ column: "n", direction: "asc" }],
        limit: 10,
        offset: 0
      }).pipe(as(owner))
      expect(asText.rows.map((row) => row.data.n)).toEqual(["1e+21", "2"])
      yield* microDb.updateColumn(bucket, "kinds", "n", { type: "number" }).pipe(as(owner))
      expect(yield* findN(2)).toEqual([first!.id])
      yield* microDb.deleteColumn(bucket, "kinds", "s").pipe(as(owner))
      expect(yield* cellsOutOfStep).toEqual([])

      // a fork's copies have their own cells; a row's delete and the table's delete take theirs away
      const forker = userPrincipal(yield* newUser("cellsfork"))
      const fork = yield* Effect.flatMap(Docks, (docks) => docks.fork({ bucket: dockId }, {})).pipe(as(forker))
      const copied = yield* microDb.query({ bucket: fork.id }, "kinds", {
        filter: [{ column: "n", op: "eq", value: 2 }],
        limit: 10,
        offset: 0
      }).pipe(as(forker))
      expect(copied.rows.map((row) => row.data)).toEqual([
        (yield* microDb.row(bucket, "kinds", first!.id).pipe(
          as(owner)
        )).data
      ])
      expect(yield* cellsOutOfStep).toEqual([])
      yield* microDb.deleteRow(bucket, "kinds", second!.id).pipe(as(owner))
      expect(yield* cellsOutOfStep).toEqual([])
      expect(yield* cellCount(table.id)).toBeGreaterThan(0)
      yield* microDb.deleteTable(bucket, "kinds").pipe(as(owner))
      expect(yield* cellCount(table.id)).toBe(0)
      expect(yield* cellsOutOfStep).toEqual([])
    }))

  it.effect("queries give what the reference gives: typed filters, sorts, rows without a value last, ties, paging", () =>
    Effect.gen(function*() {
      const { bucket, owner } = yield* owned
      const microDb = yield* MicroDb
      yield* microDb.createTable(bucket, {
        name: "Mixed",
        columns: [
          { name: "Num", type: "number" },
          { name: "Int", type: "integer" },
          { name: "Flag", type: "boolean" },
          { name: "Word", type: "text" },
          { name: "Day", type: "date" },
          { name: "At", type: "datetime" },
          { name: "Pick", type: "select", options: ["a", "b", "c"] }
        ]
      }).pipe(as(owner))
      const random = seeded(15)
      const pick = <A>(values: ReadonlyArray<A>) => values[Math.floor(random() * values.length)]!
      // few distinct values (ties), a value missing now and then, strings that differ only past what a cell keeps
      const words = ["", "a", "B", "b", "ab", "é", "z", "\uFF5E", "😀", `${LONG}a`, `${LONG}ab`, `${LONG}b`, `${LONG}`]
      const rows: Array<Record<string, unknown>> = Array.from({ length: 240 }, () => {
        const row: Record<string, unknown> = {
          num: pick([-2, -0.5, 0, 0.5, 3, 10, 1e21]),
          int: pick([-3, 0, 7, 100]),
          flag: pick([true, false]),
          word: pick(words),
          day: pick(["2024-02-29", "2025-01-01", "0001-01-01", "9999-12-31"]),
          at: pick(["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.001Z", "2025-12-31T23:59:59.999Z"]),
          pick: pick(["a", "b", "c"])
        }
        for (const key of Object.keys(row)) if (random() < 0.15) delete row[key]
        return row
      })
      yield* microDb.insertRows(bucket, "mixed", rows.slice(0, 120)).pipe(as(owner))
      yield* microDb.insertRows(bucket, "mixed", rows.slice(120)).pipe(as(owner))
      const ids = (yield* microDb.query(bucket, "mixed", { limit: 500, offset: 0 }).pipe(as(owner))).rows.map((row) =>
        row.id
      )

      const values: Record<string, ReadonlyArray<unknown>> = {
        num: [-2, 0, 0.5, 1e21, 4],
        int: [0, 7, 50],
        flag: [true, false],
        word: ["a", "b", "é", LONG, `${LONG}a`, `${LONG}ab`, `${LONG}aa`, "\uFF5E"],
        day: ["2024-02-29", "2025-06-01", "0001-01-01"],
        at: ["2026-01-01T00:00:00.000Z", "2025-12-31T23:59:59.999Z"],
        pick: ["a", "b", "c"]
      }
      const columns = Object.keys(values)
      const scalarOps = ["eq", "neq", "gt", "gte", "lt", "lte"] as const
      const filterOf = (): MicroDbFilter => {
        const column = pick(columns)
        const op = pick(
          column === "flag"
            ? ["eq", "neq", "in", "not_in", "is_null", "is_not_null"] as const
            : [...scalarOps, "in", "not_in", "is_null", "is_not_null"] as const
        )
        if (op === "is_null" || op === "is_not_null") return { column, op }
        if (op === "in" || op === "not_in") return { column, op, value: [pick(values[column]!), pick(values[column]!)] }
        return { column, op, value: pick(values[column]!) }
      }
      for (let round = 0; round < 60; round++) {
        const filters = Array.from({ length: Math.floor(random() * 3) }, filterOf)
        const sorts = Array.from(
          { length: Math.floor(random() * 3) },
          () => ({ column: pick(columns), direction: pick(["asc", "desc"] as const) })
        )
        const expected = reference(rows, filters, sorts).map((index) => ids[index])
        const limit = pick([1, 7, 50, 500])
        const offset = pick([0, 0, 3, 40])
        const found = yield* microDb.query(bucket, "mixed", { filter: filters, sort: sorts, limit, offset }).pipe(
          as(owner)
        )
        const label = JSON.stringify({ filters, sorts, limit, offset }).slice(0, 400)
        expect(found.rows.map((row) => row.id), label).toEqual(expected.slice(offset, offset + limit))
        // with a filter: exact on a short page, else left out
        const short = expected.length < offset + limit
        expect(found.total, label).toBe(filters.length === 0 ? rows.length : short ? expected.length : undefined)
      }
    }))

  it.effect("a walk's hash holds at most half of what the database's hash memory lets the planner hash", () =>
    Effect.gen(function*() {
      const bytes = yield* hashMemoryBytes(yield* SqlClient.SqlClient)
      // the planner hashes a subquery whose rows, at 32 bytes each, fit its hash memory: twice these
      expect(hashCellsOf(bytes) * 64).toBeLessThanOrEqual(bytes)
      expect(hashCellsOf(4 * 1024 * 1024 * 2)).toBe(131_072)
      expect(hashCellsOf(64 * 1024)).toBe(1_024)
      expect(hashCellsOf(1024 * 1024 * 1024)).toBe(200_000)
    }))

  it.effect("past 10,000 rows: a sort's walk keeps its last value's ties whole, and gives way on a narrow filter", () =>
    Effect.gen(function*() {
      const { bucket, owner } = yield* owned
      const microDb = yield* MicroDb
      yield* microDb.createTable(bucket, {
        name: "Wide",
        columns: [
          { name: "N", type: "integer" },
          { name: "Tag", type: "select", options: ["x", "y", "rare"] },
          { name: "W", type: "text" }
        ]
      }).pipe(as(owner))
      // n in runs of 96 rows (a walk of n's first 10,000 cells ends 16 rows into the run of 104), "x" on every
      // fourth row, "rare" on three late ones (one past the walk), w missing on every seventh
      const rows: Array<Record<string, unknown>> = Array.from({ length: 10_200 }, (_, i) => ({
        n: Math.floor(i / 96),
        tag: [9_000, 9_500, 10_150].includes(i) ? "rare" : i % 4 === 0 ? "x" : "y",
        ...(i % 7 === 0 ? {} : { w: `w${(i * 7_919) % 1_000}` })
      }))
      for (let from = 0; from < rows.length; from += 500) {
        yield* microDb.insertRows(bucket, "wide", rows.slice(from, from + 500)).pipe(as(owner))
      }
      const ids = (yield* microDb.query(bucket, "wide", { limit: 500, offset: 0 }).pipe(as(owner))).rows.map((row) =>
        row.id
      )
      const cases: ReadonlyArray<
        {
          filter: ReadonlyArray<MicroDbFilter>
          sort: ReadonlyArray<MicroDbSort>
          limit: number
          offset: number
        }
      > = [
        // the walk's 10,000 cells hold 2,498 "x" rows, the last four of them in the run it ends in: the page's
        // last rows are the run's first by w, which only a walk that reads the whole run finds
        {
          filter: [{ column: "tag", op: "eq", value: "x" }],
          sort: [{ column: "n", direction: "asc" }, { column: "w", direction: "desc" }],
          limit: 50,
          offset: 2_448
        },
        {
          filter: [],
          sort: [{ column: "n", direction: "desc" }, { column: "w", direction: "asc" }],
          limit: 500,
          offset: 0
        },
        {
          filter: [{ column: "tag", op: "eq", value: "rare" }],
          sort: [{ column: "n", direction: "asc" }],
          limit: 50,
          offset: 0
        },
        {
          filter: [{ column: "tag", op: "eq", value: "rare" }],
          sort: [{ column: "w", direction: "desc" }],
          limit: 2,
          offset: 1
        },
        {
          filter: [{ column: "tag", op: "in", value: ["rare", "x"] }, { column: "n", op: "gte", value: 100 }],
          sort: [{
            column: "w",
            direction: "asc"
          }],
          limit: 100,
          offset: 0
        },
        // walks of w that meet HASH_SAMPLE rows before the page is full: from there the first filter narrow enough
        // (n's 960 cells here; "x" alone would be too many for a page of 50) is tested against a hash of its cells,
        // the others looked up
        {
          filter: [{ column: "n", op: "gte", value: 50 }, { column: "n", op: "lt", value: 60 }, {
            column: "tag",
            op: "eq",
            value: "x"
          }],
          sort: [{ column: "w", direction: "asc" }],
          limit: 50,
          offset: 0
        },
        // the first filter matches too many cells to be worth hashing (10,197 of "x" or "y"): the next one (n's 600)
        // is hashed
        {
          filter: [{ column: "tag", op: "in", value: ["x", "y"] }, { column: "n", op: "gte", value: 100 }],
          sort: [{ column: "w", direction: "desc" }, { column: "n", direction: "asc" }],
          limit: 30,
          offset: 20
        },
        // deep pages at one row in four: the walk's sample says "x" (~2,550 cells) costs less hashed than the
        // ~2,800 lookups left; on a text sort (rows without a value last), and on two keys with the first filtered
        {
          filter: [{ column: "tag", op: "eq", value: "x" }],
          sort: [{ column: "w", direction: "desc" }],
          limit: 40,
          offset: 700
        },
        {
          filter: [{ column: "tag", op: "in", value: ["x", "rare"] }, { column: "n", op: "lt", value: 100 }],
          sort: [{ column: "n", direction: "desc" }, { column: "w", direction: "asc" }],
          limit: 60,
          offset: 2_000
        },
        // a walk that the sample sends on with lookups: past the sample a page of 700 is still short, but "x" or
        // "y" is on nearly every row, more cells (10,197) than a hash is worth for the ~500 rows left
        {
          filter: [{ column: "tag", op: "in", value: ["x", "y"] }],
          sort: [{ column: "w", direction: "asc" }],
          limit: 100,
          offset: 600
        },
        // no filter, insertion order: a deep offset, and one past the end
        { filter: [], sort: [], limit: 50, offset: 6_000 },
        { filter: [], sort: [], limit: 50, offset: 10_300 }
      ]
      for (const each of cases) {
        const expected = reference(rows, each.filter, each.sort)
        const found = yield* microDb.query(bucket, "wide", each).pipe(as(owner))
        const label = JSON.stringify(each)
        // the first 500 ids are known; past them, the rows' data says which they are
        expect(found.rows.map((row) => row.data), label).toEqual(
          expected.slice(each.offset, each.offset + each.limit).map((index) => rows[index])
        )
        const known = expected.slice(each.offset, each.offset + each.limit).map((index) => ids[index])
        found.rows.forEach((row, i) => known[i] === undefined || expect(row.id, label).toBe(known[i]))
        const short = expected.length < each.offset + each.limit
        expect(found.total, label).toBe(each.filter.length === 0 ? rows.length : short ? expected.length : undefined)
      }
    }))

  it.effect("total: the table's count without a filter; with one, exact on a short page, left out on a full one", () =>
    Effect.gen(function*() {
      const { bucket, owner } = yield* owned
      const microDb = yield* MicroDb
      yield* microDb.createTable(bucket, { name: "Many", columns: [{ name: "N", type: "integer" }] }).pipe(as(owner))
      const size = 400
      yield* microDb.insertRows(bucket, "many", Array.from({ length: size }, (_, n) => ({ n }))).pipe(as(owner))
      const query = (filter: ReadonlyArray<MicroDbFilter>, limit: number, offset = 0) =>
        microDb.query(bucket, "many", { filter, sort: [{ column: "n", direction: "desc" }], limit, offset }).pipe(
          as(owner)
        )
      const gte = (value: number): ReadonlyArray<MicroDbFilter> => [{ column: "n", op: "gte", value }]
      expect((yield* query([], 5)).total).toBe(size)
      // the page is full: the matches past it are not counted, whether few or many
      const many = yield* query(gte(100), 5)
      expect(many.rows.map((row) => row.data.n)).toEqual([size - 1, size - 2, size - 3, size - 4, size - 5])
      expect("total" in many).toBe(false)
      expect("total" in (yield* query(gte(size - 6), 5))).toBe(false)
      // exactly a page of matches is a full page too; one fewer is a short one
      expect("total" in (yield* query(gte(size - 5), 5))).toBe(false)
      expect((yield* query(gte(size - 4), 5)).total).toBe(4)
      // a short page, or a page past the end, knows its total however many matched
      const last = yield* query(gte(100), 50, size - 100 - 20)
      expect(last.rows.map((row) => row.data.n)).toEqual(Array.from({ length: 20 }, (_, n) => 119 - n))
      expect(last.total).toBe(size - 100)
      expect(yield* query(gte(100), 50, size)).toEqual({ rows: [], total: size - 100 })
      // a condition on the rows' JSON (neq) the same way, through the rows
      const most = yield* query([{ column: "n", op: "neq", value: 3 }], 50)
      expect(most.rows).toHaveLength(50)
      expect("total" in most).toBe(false)
      const under = [{ column: "n", op: "neq", value: 3 }, { column: "n", op: "lt", value: 10 }] as const
      expect((yield* query(under, 50)).total).toBe(9)
      expect((yield* query(under, 5, 5)).total).toBe(9)
    }))

  it.effect("migration 10 backfills the cells of the rows already there", () =>
    Effect.gen(function*() {
      const { bucket, owner } = yield* owned
      const microDb = yield* MicroDb
      yield* microDb.createTable(bucket, {
        name: "Before",
        columns: [{ name: "N", type: "number" }, { name: "T", type: "text" }]
      }).pipe(as(owner))
      yield* microDb.insertRows(bucket, "before", [{ n: 1, t: "one" }, { n: 2 }, { t: LONG }]).pipe(as(owner))
      const sql = yield* SqlClient.SqlClient
      const cells = () =>
        sql<Cell>`select row_seq::text, slug, num::text as num, txt from micro_db_cells
          order by table_id, row_seq, slug`
      const kept = yield* cells()
      expect(kept.length).toBeGreaterThanOrEqual(4)
      const migration = migrations.find((each) => each.id === 10)!
      // Undone and done again inside a transaction that is rolled back: the shared database keeps its cells.
      const again = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe(`drop table micro_db_cells; drop function micro_db_rows_cells() cascade;
          drop function micro_db_cells_of(jsonb);`).raw
        yield* sql.unsafe(migration.sql).raw
        return yield* new Rollback({ found: yield* cells() })
      })).pipe(Effect.catchTag("Rollback", (rollback) => Effect.succeed(rollback.found)))
      expect(again).toEqual(kept)
      expect(yield* cellsOutOfStep).toEqual([])
    }))
})
