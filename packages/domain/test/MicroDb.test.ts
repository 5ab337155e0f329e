// The Micro DB service over a real database: column types and conversions (pure), typed queries, unique columns,
// bulk writes, schema changes and snapshots, called as the domain's callers call it.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import { Docks, errorBody, MicroDb, userPrincipal } from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"
import { as, createDock, newUser } from "./support/Fixtures.ts"

const failure = <A, E extends { readonly code: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => errorBody(error as never).error)

layer(DomainTest)("MicroDb", (it) => {
  it.effect("a table, rows, a typed query and a snapshot", () =>
    Effect.gen(function*() {
      const user = yield* newUser("mdb")
      const dock = yield* createDock(user, { title: "Data" })
      const owner = userPrincipal(user)
      const microDb = yield* MicroDb
      const bucket = { bucket: dock.id }
      const table = yield* microDb.createTable(bucket, {
        name: "Tasks",
        columns: [
          { name: "Title", type: "text", required: true, unique: true },
          { name: "Price", type: "number" },
          { name: "Due", type: "date" },
          { name: "Status", type: "select", options: ["open", "done"], default: "open" }
        ]
      }).pipe(as(owner))
      expect(table.slug).toBe("tasks")
      const rows = yield* microDb.insertRows(bucket, "tasks", [
        { title: "a", price: 9, due: "2026-01-02" },
        { title: "b", price: 10, due: "2025-12-31", status: "done" },
        { title: "c", price: 100 }
      ]).pipe(as(owner))
      expect(rows.map((row) => row.data.title)).toEqual(["a", "b", "c"])
      const found = yield* microDb.query(bucket, "tasks", {
        filter: [{ column: "price", op: "gt", value: 9 }, { column: "status", op: "eq", value: "open" }],
        sort: [{ column: "price", direction: "desc" }],
        limit: 10,
        offset: 0
      }).pipe(as(owner))
      expect(found.rows.map((row) => row.data.title)).toEqual(["c"])
      expect(found.total).toBe(1)
      const clash = yield* failure(microDb.insertRows(bucket, "tasks", [{ title: "a" }]).pipe(as(owner)))
      expect(clash.code).toBe("validation_error")
      const snapshot = yield* microDb.snapshot(bucket).pipe(as(owner))
      expect(snapshot).toMatchObject({ version: 2, tables: 1, rows: 3 })
      const { column } = yield* microDb.updateColumn(bucket, "tasks", "price", { type: "text" }).pipe(as(owner))
      expect(column.type).toBe("text")
      const deleted = yield* microDb.deleteColumn(bucket, "tasks", "due").pipe(as(owner))
      expect(deleted.version).toBe(3)
      const gone = yield* microDb.deleteTable(bucket, "tasks").pipe(as(owner))
      expect(gone.rows).toBe(3)
    }))

  it.effect("a read of a table, a row or rows finds the Dock, its shell and the table in one statement", () =>
    Effect.gen(function*() {
      const user = yield* newUser("mdbreads")
      const dock = yield* createDock(user, { title: "Reads" })
      const owner = userPrincipal(user)
      const microDb = yield* MicroDb
      const bucket = { bucket: dock.id }
      const table = yield* microDb.createTable(bucket, {
        name: "Birds",
        columns: [{ name: "Name", type: "text" }, { name: "Seen", type: "integer" }]
      }).pipe(as(owner))
      const [wren] = yield* microDb.insertRows(bucket, "birds", [{ name: "wren", seen: 3 }]).pipe(as(owner))
      /** How many statements `effect` sends (the spans @effect/sql opens, one a statement), and its answer. */
      const statementsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.gen(function*() {
          const native = yield* Effect.tracer
          let statements = 0
          const counting = Tracer.make({
            span: (name, ...rest) => {
              if (name === "sql.execute") statements++
              return native.span(name, ...rest)
            },
            context: (f, fiber) => native.context(f, fiber)
          })
          const answer = yield* effect.pipe(Effect.withTracer(counting))
          return { statements, answer }
        })
      // the resolver's statement (with the shell and the table beside the Dock), then the read's own, if any
      const byId = yield* statementsOf(microDb.table(bucket, table.id).pipe(as(owner)))
      expect(byId).toMatchObject({ statements: 1, answer: { slug: "birds" } })
      const row = yield* statementsOf(microDb.row(bucket, "birds", wren!.id).pipe(as(owner)))
      expect(row).toMatchObject({ statements: 2, answer: { data: { name: "wren", seen: 3 } } })
      const rows = yield* statementsOf(
        microDb.query(bucket, "birds", { filter: [{ column: "seen", op: "gt", value: 1 }], limit: 10, offset: 0 })
          .pipe(as(owner))
      )
      expect(rows.statements).toBe(2)
      expect(rows.answer.rows.map((found) => found.id)).toEqual([wren!.id])
      const missing = yield* failure(microDb.table(bucket, "owls").pipe(as(owner)))
      expect(missing).toMatchObject({ code: "not_found", message: "No table \"owls\" in this Dock's Micro DB" })
    }))

  it.effect("a fork copies the Micro DB's tables and rows (new ids, same data and order) and counts their bytes and the shell's", () =>
    Effect.gen(function*() {
      const upstreamUser = yield* newUser("mdbup")
      const forkerUser = yield* newUser("mdbfork")
      const dock = yield* createDock(upstreamUser, { title: "Shared data", visibility: "public", allowForks: true })
      const upstream = userPrincipal(upstreamUser)
      const forker = userPrincipal(forkerUser)
      const microDb = yield* MicroDb
      yield* microDb.createTable({ bucket: dock.id }, {
        name: "Birds",
        columns: [{ name: "Name", type: "text", unique: true }, { name: "Seen", type: "integer" }]
      }).pipe(as(upstream))
      const original = yield* microDb.insertRows({ bucket: dock.id }, "birds", [
        { name: "wren", seen: 3 },
        { name: "robin", seen: 1 }
      ]).pipe(as(upstream))
      const fork = yield* Effect.flatMap(Docks, (docks) => docks.fork({ bucket: dock.id }, {})).pipe(as(forker))
      const tables = yield* microDb.tables({ bucket: fork.id }).pipe(as(forker))
      expect(tables.map((table) => [table.slug, table.row_count])).toEqual([["birds", 2]])
      const copied = yield* microDb.query({ bucket: fork.id }, "birds", { limit: 10, offset: 0 }).pipe(as(forker))
      expect(copied.rows.map((row) => row.data)).toEqual(original.map((row) => row.data))
      expect(copied.rows.map((row) => row.id)).not.toContain(original[0]!.id)
      // The fork's copy is its own: a write there leaves the upstream alone.
      yield* microDb.insertRows({ bucket: fork.id }, "birds", [{ name: "jay" }]).pipe(as(forker))
      expect((yield* microDb.table({ bucket: dock.id }, "birds").pipe(as(upstream))).row_count).toBe(2)
      const sql = yield* SqlClient.SqlClient
      const [usage] = yield* sql<{ bytes: string }>`select bytes from dock_usage where dock_id = ${fork.id}`
      const [rows] = yield* sql<{ bytes: string }>`select sum(r.size_bytes)::bigint as bytes from micro_db_rows r
        join micro_db_tables t on t.id = r.table_id where t.dock_id = ${fork.id}`
      // the copied shell is stored too (its one version, the latest snapshot) and counts like any page
      const [shell] = yield* sql<{ bytes: string }>`select sum(v.size_bytes)::bigint as bytes from part_versions v
        join parts p on p.id = v.part_id where p.dock_id = ${fork.id}`
      expect(Number(usage!.bytes)).toBe(Number(rows!.bytes) + Number(shell!.bytes))
    }))
})
