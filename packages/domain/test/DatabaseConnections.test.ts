// What every database connection gets (Database.ts): no parallel query, and prepared statements (Prepared.ts) — a
// statement marked PREPARED is one named statement of its connection, parsed once and run from PostgreSQL's plan
// cache, answering as an unmarked one does; unmarked statements stay unnamed; past PREPARED_MAX texts on one
// connection, marked statements still answer, unnamed.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PREPARED_MAX } from "../src/Database/Prepared.ts"
import { readOnlySnapshot } from "../src/Database/Transactional.ts"
import { TestDatabaseLive } from "../src/testing.ts"

interface PreparedRow {
  readonly name: string
  readonly statement: string
  readonly runs: number
}

/** The statements prepared on this connection whose text contains `tag`. */
const preparedWith = (tag: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<PreparedRow>`select name, statement, (generic_plans + custom_plans)::int as runs from pg_prepared_statements
      where statement like ${`%${tag}%`} order by name`
  )

layer(TestDatabaseLive)("Database connections", (it) => {
  it.effect("no connection plans parallel query: its workers cost more to start than they gain", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Three at once, each holding its connection a moment (pg_sleep): three connections of the pool, where it has them.
      const settings = yield* Effect.all(
        Array.from(
          { length: 3 },
          () =>
            sql<{ value: string }>`select current_setting('max_parallel_workers_per_gather') as value, pg_sleep(0.05)`
        ),
        { concurrency: "unbounded" }
      )
      expect(settings.flat().map((row) => row.value)).toEqual(["0", "0", "0"])
    }))

  it.effect("a marked statement is prepared once on its connection and run from the plan cache", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // One transaction: one connection, whose prepared statements the view lists.
      const prepared = yield* sql.withTransaction(Effect.gen(function*() {
        for (let n = 0; n < 7; n++) {
          const rows = yield* sql`/* prepared */ select ${n}::int + 1 as next, ${`row ${n}`}::text as label -- marked`
          expect(rows).toEqual([{ next: n + 1, label: `row ${n}` }])
          expect(yield* sql`select ${n}::int * 2 as twice -- unmarked`).toEqual([{ twice: n * 2 }])
        }
        return {
          marked: yield* preparedWith("-- marked"),
          unmarked: yield* preparedWith("-- unmarked")
        }
      }))
      expect(prepared.marked).toHaveLength(1)
      expect(prepared.marked[0]!.name).toMatch(/^d\d+_\d+$/)
      expect(prepared.marked[0]!.statement.startsWith("/* prepared */ select $1::int + 1")).toBe(true)
      // Parsed once, executed seven times (PostgreSQL counts each execution's plan, custom or generic).
      expect(prepared.marked[0]!.runs).toBe(7)
      expect(prepared.unmarked).toEqual([])
    }))

  it.effect("past PREPARED_MAX marked texts on a connection, marked statements still answer, unnamed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const texts = PREPARED_MAX + 10
      const found = yield* sql.withTransaction(Effect.gen(function*() {
        for (let n = 0; n < texts; n++) {
          const rows = yield* sql.unsafe<{ value: number }>(`/* prepared */ select $1::int as value -- cap ${n}`, [n])
          expect(rows).toEqual([{ value: n }])
        }
        return yield* preparedWith("-- cap ")
      }))
      expect(found.length).toBeGreaterThan(0)
      expect(found.length).toBeLessThanOrEqual(PREPARED_MAX)
    }))

  it.effect("a read-only snapshot is one transaction, repeatable read and read only, opened by one statement", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const snapshot = readOnlySnapshot(sql)
      const seen = yield* snapshot(Effect.all([
        sql<{ isolation: string; readOnly: string; pid: number; at: string }>`select
          current_setting('transaction_isolation') as isolation, current_setting('transaction_read_only') as "readOnly",
          pg_backend_pid() as pid, now()::text as at`,
        sql<{ pid: number; at: string }>`select pg_backend_pid() as pid, now()::text as at`
      ]))
      expect(seen[0][0]).toMatchObject({ isolation: "repeatable read", readOnly: "on" })
      // the same connection and the same transaction (now() is the transaction's start) for both statements
      expect(seen[1][0]).toEqual({ pid: seen[0][0]!.pid, at: seen[0][0]!.at })
      const write = yield* snapshot(sql`create temporary table snapshot_write (id int)`).pipe(Effect.flip)
      expect(write.cause).toMatchObject({ code: "25006" })
      // rolled back and given back: the pool still answers, outside any transaction
      const after = yield* sql<{ level: string }>`select current_setting('transaction_isolation') as level`
      expect(after[0]!.level).toBe("read committed")
    }))
})
