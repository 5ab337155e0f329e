// Migrations: applied once, idempotent, safe when several servers start together, all-or-nothing on failure.
import { type Migration, migrations } from "@dock/migrations"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Data, Effect, Layer, Option } from "effect"
import * as Database from "../src/Database/Database.ts"
import { appliedMigrationId, applyMigrations, latestMigrationId } from "../src/Database/Migrations.ts"
import { scopedPostgresDatabase, TestDatabaseLive, testServerUrl } from "../src/Database/TestDatabase.ts"

/** A fresh database nobody has migrated: a new PostgreSQL database on the test server, or in-memory PGlite. */
const UnmigratedDatabase = Layer.unwrapScoped(
  Effect.flatMap(
    testServerUrl,
    Option.match({
      onNone: () => Effect.succeed(Database.layer({ _tag: "InMemory" })),
      onSome: (server) =>
        Effect.map(scopedPostgresDatabase(server), (url) => Database.layer({ _tag: "Postgres", url, poolSize: 5 }))
    })
  )
)

const tableExists = (name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ exists: boolean }>`select to_regclass(${name}) is not null as exists`
    return rows[0]?.exists === true
  })

const appliedIds = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return (yield* sql<{ id: number }>`select id from dock_migrations order by id`).map((row) => row.id)
})

/** Ends a transaction by rolling it back, carrying what was seen inside it. */
class Rollback extends Data.TaggedError("Rollback")<{
  readonly ids: ReadonlyArray<number>
  readonly rows: ReadonlyArray<{ x: number }>
}> {}

const foundationTables = ["users", "docks", "dock_members", "activity"]

layer(TestDatabaseLive)("Migrations on a migrated database", (it) => {
  it.effect("records every migration once, up to the latest", () =>
    Effect.gen(function*() {
      expect(latestMigrationId).toBe(Math.max(...migrations.map((m) => m.id)))
      expect(yield* appliedMigrationId).toBe(latestMigrationId)
      expect(yield* appliedIds).toEqual(migrations.map((m) => m.id).sort((a, b) => a - b))
      const sql = yield* SqlClient.SqlClient
      const names = yield* sql<{ id: number; name: string }>`select id, name from dock_migrations order by id`
      expect(names).toEqual(migrations.map((m) => ({ id: m.id, name: m.name })))
      for (const table of foundationTables) expect(yield* tableExists(table)).toBe(true)
    }))

  it.effect("has nothing left to do when run again", () =>
    Effect.gen(function*() {
      expect(yield* applyMigrations()).toEqual([])
      expect(yield* applyMigrations()).toEqual([])
      expect(yield* appliedMigrationId).toBe(latestMigrationId)
      expect(yield* appliedIds).toEqual(migrations.map((m) => m.id).sort((a, b) => a - b))
    }))

  it.effect("rolls a failing run back completely, earlier good migrations of the run included", () =>
    Effect.gen(function*() {
      const list: ReadonlyArray<Migration> = [
        ...migrations,
        { id: 998, name: "good", sql: "create table t998 (x int);" },
        { id: 999, name: "broken", sql: "create table t999 (x int); select nonsense from nowhere;" }
      ]
      const error = yield* Effect.flip(applyMigrations(list))
      expect(error._tag).toBe("SqlError")
      expect(yield* tableExists("t998")).toBe(false)
      expect(yield* tableExists("t999")).toBe(false)
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`select id from dock_migrations where id in (998, 999)`).toEqual([])
      expect(yield* appliedMigrationId).toBe(latestMigrationId)
      // the connection is still usable after the rollback
      expect(yield* applyMigrations()).toEqual([])
    }))

  it.effect("applies only the new migration of a longer list, in id order", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Never committed: the outer transaction is rolled back so the shared database keeps only the real migrations.
      const applied = yield* sql.withTransaction(Effect.gen(function*() {
        const ids = yield* applyMigrations([
          { id: 1002, name: "second", sql: "insert into t1001 values (2);" },
          ...migrations,
          { id: 1001, name: "first", sql: "create table t1001 (x int);" }
        ])
        const rows = yield* sql<{ x: number }>`select x from t1001`
        return yield* new Rollback({ ids, rows })
      })).pipe(Effect.catchTag("Rollback", Effect.succeed))
      expect(applied.ids).toEqual([1001, 1002])
      expect(applied.rows).toEqual([{ x: 2 }])
      expect(yield* tableExists("t1001")).toBe(false)
      expect(yield* appliedMigrationId).toBe(latestMigrationId)
    }))
})

layer(UnmigratedDatabase)("Migrations on a fresh database", (it) => {
  it.effect("applied by five concurrent runs, each migration exactly once", () =>
    Effect.gen(function*() {
      expect(yield* appliedMigrationId).toBe(0)
      const runs = yield* Effect.all(Array.from({ length: 5 }, () => applyMigrations()), {
        concurrency: "unbounded"
      })
      const all = migrations.map((m) => m.id).sort((a, b) => a - b)
      // exactly one run did the work; the others found nothing left to do
      expect(runs.filter((ids) => ids.length > 0)).toEqual([all])
      expect(runs.filter((ids) => ids.length === 0)).toHaveLength(4)
      const sql = yield* SqlClient.SqlClient
      const counts = yield* sql<{ id: number; n: number }>`select id, count(*)::int as n from dock_migrations
          group by id order by id`
      expect(counts).toEqual(all.map((id) => ({ id, n: 1 })))
      expect(yield* appliedMigrationId).toBe(latestMigrationId)
      for (const table of foundationTables) expect(yield* tableExists(table)).toBe(true)
    }))
})
