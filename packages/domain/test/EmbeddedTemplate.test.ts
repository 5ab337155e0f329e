// The embedded database's template: the first fresh data directory runs initdb, is migrated and is saved as the
// template; later fresh ones start as a copy of it, with nothing left to migrate, and work; an existing data
// directory never touches it; a template of another PGlite version or other migrations is left alone and one
// PGlite cannot start from is replaced.
import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Database from "../src/Database/Database.ts"
import { templatePath } from "../src/Database/EmbeddedTemplate.ts"
import { appliedMigrationId, applyMigrations, latestMigrationId, MigrationsLive } from "../src/Database/Migrations.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-template-test-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
let dirs = 0
const freshDir = (label: string) => Path.join(root, `${label}-${++dirs}`)

/** `program` on a migrated embedded database in `dataDir`, with `cacheDir`'s template, closed afterwards. */
const onDatabase = <A, E>(dataDir: string, cacheDir: string, program: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.provide(
    program,
    Layer.provideMerge(MigrationsLive, Database.layer({ _tag: "Embedded", dataDir }, { templateDir: cacheDir }))
  )

/** The migrations a start on `dataDir` applies (`dock migrate`'s path: no MigrationsLive). */
const migrationsApplied = (dataDir: string, cacheDir: string) =>
  Effect.provide(applyMigrations(), Database.layer({ _tag: "Embedded", dataDir }, { templateDir: cacheDir }))

const query = <A extends object>(text: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text)).pipe(Effect.orDie)

/** True when the database has a table of that name. */
const hasTable = (name: string) =>
  Effect.map(query<{ found: boolean }>(`select to_regclass('${name}') is not null as found`), (rows) => rows[0]!.found)

/** A user row written and read back: the migrated schema works. */
const writesAndReads = Effect.gen(function*() {
  yield* query(`insert into users (username, email, kind, created_at, updated_at) values
    ('ada', 'ada@example.com', 'person', now(), now())`)
  return (yield* query<{ username: string }>(`select username from users`)).map((row) => row.username)
})

const templateIn = (cacheDir: string) => templatePath(cacheDir)!

/** `sql` run by PGlite itself on a copy of the template in `cacheDir`, leaving the template as it was. */
const onCopyOf = (cacheDir: string, sql: string) =>
  Effect.promise(async () => {
    const copy = freshDir("copy")
    Fs.cpSync(templateIn(cacheDir), copy, { recursive: true })
    const db = new PGlite(copy)
    const result = await db.query(sql)
    await db.close()
    return result.rows
  })

/**
 * Puts into `cacheDir` a template made from the real one in `from` with a table `template_marker` added, so that
 * a database started from it can be told apart from one that ran initdb.
 */
const markedTemplate = (from: string, cacheDir: string) =>
  Effect.promise(async () => {
    Fs.mkdirSync(cacheDir, { recursive: true })
    Fs.cpSync(templateIn(from), templateIn(cacheDir), { recursive: true })
    const db = new PGlite(templateIn(cacheDir))
    await db.exec("create table template_marker (id int)")
    await db.close()
  })

describe("the embedded database template", () => {
  const cache = freshDir("cache")

  it.effect(
    "the first fresh data directory runs initdb and every migration, is saved as the template, and works",
    () =>
      Effect.gen(function*() {
        expect(Fs.existsSync(templateIn(cache))).toBe(false)
        const dataDir = freshDir("data")
        const applied = yield* migrationsApplied(dataDir, cache)
        expect(applied.length).toBeGreaterThan(0)
        expect(applied.at(-1)).toBe(latestMigrationId)
        expect(Fs.readFileSync(Path.join(templateIn(cache), "PG_VERSION"), "utf8").trim()).toMatch(/^\d+$/)
        expect(Fs.existsSync(Path.join(templateIn(cache), "postmaster.pid"))).toBe(false)
        // The template holds the migrated schema, and none of the data written after it was saved.
        expect(yield* onDatabase(dataDir, cache, writesAndReads)).toEqual(["ada"])
        const held = `select max(id) as latest, (select count(*)::int from users) as users from dock_migrations`
        expect(yield* onCopyOf(cache, held)).toEqual([{ latest: latestMigrationId, users: 0 }])
      }),
    240_000
  )

  it.effect(
    "a fresh data directory starts as a copy of the template, with nothing to migrate, works, keeps its data",
    () =>
      Effect.gen(function*() {
        const marked = freshDir("marked")
        yield* markedTemplate(cache, marked)
        expect(yield* migrationsApplied(freshDir("data"), marked)).toEqual([])
        const dataDir = freshDir("data")
        const first = yield* onDatabase(
          dataDir,
          marked,
          Effect.all([hasTable("template_marker"), appliedMigrationId, writesAndReads])
        )
        expect(first).toEqual([true, latestMigrationId, ["ada"]])
        expect((Fs.statSync(Path.join(dataDir, "pgdata")).mode & 0o777).toString(8)).toBe("700")
        // A restart opens the existing directory, with its data; the template is as it was.
        const again = yield* onDatabase(dataDir, marked, query<{ username: string }>(`select username from users`))
        expect(again).toEqual([{ username: "ada" }])
        expect(yield* onCopyOf(marked, `select count(*)::int as users from users`)).toEqual([{ users: 0 }])
      }),
    240_000
  )

  it.effect("an existing data directory is opened as it is, whatever the template holds", () =>
    Effect.gen(function*() {
      const dataDir = freshDir("data")
      yield* onDatabase(dataDir, cache, writesAndReads)
      const marked = freshDir("marked")
      yield* markedTemplate(cache, marked)
      expect(yield* onDatabase(dataDir, marked, hasTable("template_marker"))).toBe(false)
    }), 240_000)

  it.effect(
    "a template of another PGlite version or other migrations is left alone; one PGlite cannot start from is replaced",
    () =>
      Effect.gen(function*() {
        const stale = freshDir("stale")
        const other = Path.join(stale, "pglite-0.0.1-t2")
        // The name of this PGlite's template with another digest of migrations.
        const otherMigrations = templateIn(stale).replace(/-[0-9a-f]{12}$/, "-000000000000")
        for (const dir of [other, otherMigrations]) {
          Fs.mkdirSync(dir, { recursive: true })
          Fs.writeFileSync(Path.join(dir, "PG_VERSION"), "1\n")
        }
        // A directory with a version file and nothing else: PGlite refuses to start from it.
        Fs.mkdirSync(templateIn(stale))
        Fs.writeFileSync(Path.join(templateIn(stale), "PG_VERSION"), "99\n")
        expect(yield* onDatabase(freshDir("data"), stale, writesAndReads)).toEqual(["ada"])
        expect(otherMigrations).not.toBe(templateIn(stale))
        for (const dir of [other, otherMigrations]) {
          expect(Fs.readFileSync(Path.join(dir, "PG_VERSION"), "utf8")).toBe("1\n")
        }
        // Replaced by a real template, which the next fresh data directory starts from.
        expect(Fs.existsSync(Path.join(templateIn(stale), "global"))).toBe(true)
        expect(yield* onDatabase(freshDir("data"), stale, writesAndReads)).toEqual(["ada"])
      }),
    240_000
  )
})
