// The embedded database's template: the first fresh database runs initdb and saves its data directory as the
// template; later fresh ones (a new data directory, an in-memory database) start from it, get the migrations and
// work; an existing data directory never touches it; a template of another PGlite version is left alone and one
// PGlite cannot start from is replaced.
import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Database from "../src/Database/Database.ts"
import { templateFile } from "../src/Database/EmbeddedTemplate.ts"
import { appliedMigrationId, latestMigrationId, MigrationsLive } from "../src/Database/Migrations.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-template-test-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
let dirs = 0
const freshDir = (label: string) => Path.join(root, `${label}-${++dirs}`)

/** `program` on the database `options` names, with `templateDir`'s template, closed again afterwards. */
const onDatabase = <A, E>(
  options: Database.DatabaseOptions,
  templateDir: string,
  program: Effect.Effect<A, E, SqlClient.SqlClient>
) => Effect.provide(program, Layer.provideMerge(MigrationsLive, Database.layer(options, { templateDir })))

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

const templateOf = (dir: string) => templateFile(dir)!

/**
 * Puts into `dir` a template made from the real one in `from` with a table `template_marker` added, so that a
 * database started from it can be told apart from one that ran initdb.
 */
const markedTemplate = (from: string, dir: string) =>
  Effect.promise(async () => {
    const db = new PGlite({
      loadDataDir: new Blob([Fs.readFileSync(templateOf(from))], { type: "application/x-gzip" })
    })
    await db.exec("create table template_marker (id int); checkpoint")
    const dump = await db.dumpDataDir("gzip")
    await db.close()
    Fs.mkdirSync(dir, { recursive: true })
    Fs.writeFileSync(templateOf(dir), new Uint8Array(await dump.arrayBuffer()))
  })

describe("the embedded database template", () => {
  const cache = freshDir("cache")

  it.effect(
    "the first fresh database runs initdb, saves the template, and is migrated and working",
    () =>
      Effect.gen(function*() {
        expect(Fs.existsSync(templateOf(cache))).toBe(false)
        const dataDir = freshDir("data")
        const users = yield* onDatabase(
          { _tag: "Embedded", dataDir },
          cache,
          Effect.zipRight(
            Effect.flatMap(appliedMigrationId, (id) => Effect.sync(() => expect(id).toBe(latestMigrationId))),
            writesAndReads
          )
        )
        expect(users).toEqual(["ada"])
        expect(Fs.statSync(templateOf(cache)).size).toBeGreaterThan(0)
        // The template holds PGlite's fresh database, nothing of ours: it loads without our tables.
        const db = new PGlite({
          loadDataDir: new Blob([Fs.readFileSync(templateOf(cache))], { type: "application/x-gzip" })
        })
        const tables = yield* Effect.promise(() => db.query(`select to_regclass('users') is null as absent`))
        expect(tables.rows).toEqual([{ absent: true }])
        yield* Effect.promise(() => db.close())
      }),
    240_000
  )

  it.effect(
    "a fresh data directory starts from the template, gets the migrations, works, and keeps its data",
    () =>
      Effect.gen(function*() {
        const marked = freshDir("marked")
        yield* markedTemplate(cache, marked)
        const saved = Fs.statSync(templateOf(marked)).mtimeMs
        const dataDir = freshDir("data")
        const first = yield* onDatabase(
          { _tag: "Embedded", dataDir },
          marked,
          Effect.all([hasTable("template_marker"), appliedMigrationId, writesAndReads])
        )
        expect(first).toEqual([true, latestMigrationId, ["ada"]])
        // A restart opens the existing directory: the data is there and the template is not written again.
        const again = yield* onDatabase(
          { _tag: "Embedded", dataDir },
          marked,
          query<{ username: string }>(`select username from users`)
        )
        expect(again).toEqual([{ username: "ada" }])
        expect(Fs.statSync(templateOf(marked)).mtimeMs).toBe(saved)
      }),
    240_000
  )

  it.effect("an in-memory database starts from the template too", () =>
    Effect.gen(function*() {
      const marked = freshDir("marked")
      yield* markedTemplate(cache, marked)
      const seen = yield* onDatabase(
        { _tag: "InMemory" },
        marked,
        Effect.all([hasTable("template_marker"), appliedMigrationId, writesAndReads])
      )
      expect(seen).toEqual([true, latestMigrationId, ["ada"]])
    }), 240_000)

  it.effect("an existing data directory is opened as it is, whatever the template holds", () =>
    Effect.gen(function*() {
      const dataDir = freshDir("data")
      yield* onDatabase({ _tag: "Embedded", dataDir }, cache, writesAndReads)
      const marked = freshDir("marked")
      yield* markedTemplate(cache, marked)
      const seen = yield* onDatabase({ _tag: "Embedded", dataDir }, marked, hasTable("template_marker"))
      expect(seen).toBe(false)
    }), 240_000)

  it.effect(
    "a template of another PGlite version is left alone; one PGlite cannot start from is replaced",
    () =>
      Effect.gen(function*() {
        const stale = freshDir("stale")
        Fs.mkdirSync(stale, { recursive: true })
        const current = templateOf(stale)
        const other = Path.join(stale, "pglite-0.0.1-t1.tar.gz")
        Fs.writeFileSync(other, "an older template")
        Fs.writeFileSync(current, "not a data directory")
        const users = yield* onDatabase({ _tag: "Embedded", dataDir: freshDir("data") }, stale, writesAndReads)
        expect(users).toEqual(["ada"])
        expect(Fs.readFileSync(other, "utf8")).toBe("an older template")
        // The unusable file was replaced by a real template, which the next fresh database starts from.
        expect(Fs.statSync(current).size).toBeGreaterThan(1000)
        const next = yield* onDatabase({ _tag: "Embedded", dataDir: freshDir("data") }, stale, writesAndReads)
        expect(next).toEqual(["ada"])
      }),
    240_000
  )
})
