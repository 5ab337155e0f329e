/**
 * Applies the SQL migrations of @dock/migrations. The whole run is one transaction holding a Postgres advisory
 * lock, so servers starting together on one database queue up: the first applies each migration once, the
 * others then find nothing left to do. A failing migration rolls back completely. Once all of them are applied to
 * an embedded database this start made through initdb, that database becomes the template of later fresh ones
 * (Database.ts `DatabaseTemplate`).
 */
import { type Migration, migrations } from "@dock/migrations"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import { spanned } from "../Spans.ts"
import { DatabaseTemplate } from "./Database.ts"

/** An arbitrary constant naming Dock's migration lock among other advisory locks. */
const MIGRATION_LOCK = 736_110_001

export const latestMigrationId = migrations.reduce((max, m) => Math.max(max, m.id), 0)

export const applyMigrations = (list: ReadonlyArray<Migration> = migrations) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(Effect.gen(function*() {
      // A migration may rewrite a large table: the statement timeout guards requests, not this one transaction.
      yield* sql`set local statement_timeout = 0`
      yield* sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`
      yield* sql`create table if not exists dock_migrations (
        id integer primary key,
        name text not null,
        applied_at timestamptz not null
      )`
      const applied = new Set((yield* sql<{ id: number }>`select id from dock_migrations`).map((row) => row.id))
      const pending = [...list].sort((a, b) => a.id - b.id).filter((m) => !applied.has(m.id))
      for (const migration of pending) {
        yield* sql.unsafe(migration.sql).raw
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`insert into dock_migrations (id, name, applied_at) values (${migration.id}, ${migration.name}, ${now})`
        yield* Effect.logInfo(`Applied migration ${migration.id}_${migration.name}`)
      }
      return pending.map((m) => m.id)
    }))
  }).pipe(
    // Only after the whole list: a template's name says it holds every migration (EmbeddedTemplate.ts).
    Effect.tap(() => list === migrations ? saveOwedTemplate : Effect.void),
    spanned("Migrations.apply")
  )

/** The embedded template's save this start owes, if any; a database layer without DatabaseTemplate owes none. */
const saveOwedTemplate = Effect.flatMap(
  Effect.serviceOption(DatabaseTemplate),
  Option.match({ onNone: () => Effect.void, onSome: (template) => template.saveMigrated })
)

/** The highest applied migration id, or 0 when the database has never been migrated. */
export const appliedMigrationId = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const table = yield* sql<{ exists: boolean }>`select to_regclass('dock_migrations') is not null as exists`
  if (!table[0]?.exists) return 0
  const rows = yield* sql<{ max: number | null }>`select max(id) as max from dock_migrations`
  return rows[0]?.max ?? 0
})

/** Migrates at layer construction: put it between the database and everything that uses it. */
export const MigrationsLive = Layer.effectDiscard(applyMigrations())
