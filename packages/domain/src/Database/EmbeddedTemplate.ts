/**
 * The embedded database's template. PGlite's initdb is most of a fresh embedded start (~6 s and ~800 MB on the
 * 2-core machine: it runs a second Postgres in WASM), and its result is the same for every fresh data directory
 * of one PGlite build; so are Dock's migrations applied to it. So the first cold start saves its data directory,
 * freshly initialised and migrated, in the cache directory, and every later fresh data directory starts as a copy
 * of it with nothing left to migrate (a fresh start 1.26 → 0.95 s, `bench:startup`). A plain copy of files rather
 * than PGlite's `loadDataDir` tarball: the same speed here (both write ~1,000 files), and loading a tarball left the
 * process ~100 MB larger for good. The template is named after PGlite's version and a digest of the migrations it
 * holds, so that another PGlite or another set of migrations never starts from it.
 */
import { migrations } from "@dock/migrations"
import { Config, Effect, Option } from "effect"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"

/** Bumped when what a template holds changes, so that older ones are no longer picked up. */
const TEMPLATE_FORMAT = 3

/** The migrations a template holds, as a short digest of every migration's id, name and SQL. */
const MIGRATIONS_DIGEST = createHash("sha256")
  .update(JSON.stringify(migrations.map(({ id, name, sql }) => [id, name, sql])))
  .digest("hex")
  .slice(0, 12)

/**
 * DOCK_CACHE_DIR, else $XDG_CACHE_HOME/dock, else ~/.cache/dock: where Dock keeps what it can rebuild (today the
 * embedded database template). Per user, like any cache: another local user must not be able to hand us a data
 * directory.
 */
export const cacheDirConfig: Config.Config<string> = Config.all({
  explicit: Config.option(Config.nonEmptyString("DOCK_CACHE_DIR")),
  xdg: Config.option(Config.nonEmptyString("XDG_CACHE_HOME"))
}).pipe(Config.map(({ explicit, xdg }) =>
  Path.resolve(
    Option.getOrElse(explicit, () => Path.join(Option.getOrElse(xdg, () => Path.join(Os.homedir(), ".cache")), "dock"))
  )
))

/**
 * The installed PGlite's version, from its package.json (which the package does not export, so it is found next
 * to the resolved entry point); undefined when it cannot be read, and then no template is used.
 */
const PGLITE_VERSION: string | undefined = (() => {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
    const manifest = JSON.parse(Fs.readFileSync(Path.join(Path.dirname(entry), "..", "package.json"), "utf8"))
    return typeof manifest.version === "string" ? manifest.version : undefined
  } catch {
    return undefined
  }
})()

/**
 * The template's directory in `cacheDir` for the installed PGlite and these migrations; undefined when PGlite's
 * version is unknown.
 */
export const templatePath = (cacheDir: string): string | undefined =>
  PGLITE_VERSION === undefined
    ? undefined
    : Path.join(cacheDir, `pglite-${PGLITE_VERSION}-t${TEMPLATE_FORMAT}-${MIGRATIONS_DIGEST}`)

/** A sibling of `path` no one else uses, to copy into before renaming into place. */
const temporarySibling = (path: string) => `${path}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`

/**
 * Copies the directory tree `from` to `to` (directories 0700), leaving out the lock file of a running server.
 * Synchronous: it runs while the server starts, when nothing else waits on the event loop.
 */
const copyTree = (from: string, to: string) => {
  Fs.mkdirSync(to, { mode: 0o700 })
  for (const entry of Fs.readdirSync(from, { withFileTypes: true })) {
    const source = Path.join(from, entry.name)
    const target = Path.join(to, entry.name)
    if (entry.isDirectory()) copyTree(source, target)
    else if (entry.name !== "postmaster.pid") Fs.copyFileSync(source, target)
  }
}

/**
 * Makes `pgdata` (which does not exist) a copy of the template in `cacheDir`; false, and nothing made, when there
 * is no template. Copied beside it and renamed, so that an interrupted copy never looks like a database.
 */
export const copyTemplate = (cacheDir: string, pgdata: string) =>
  Effect.gen(function*() {
    const template = templatePath(cacheDir)
    if (template === undefined || !Fs.existsSync(template)) return false
    const temporary = temporarySibling(pgdata)
    return yield* Effect.try(() => {
      copyTree(template, temporary)
      Fs.renameSync(temporary, pgdata)
      return true
    }).pipe(Effect.catchAll((error) =>
      Effect.logWarning(`Could not copy the embedded database template ${template}: running initdb`, error.error).pipe(
        Effect.zipRight(Effect.sync(() => Fs.rmSync(temporary, { recursive: true, force: true }))),
        Effect.as(false)
      )
    ))
  })

/**
 * Saves a copy of `pgdata`, a freshly initialised data directory with every migration applied, as the template
 * in `cacheDir`, after `checkpoint` (which leaves nothing in it to replay). Copied beside it and renamed, so a
 * reader never sees half a template, and of starters racing to save theirs (equal ones) one wins and the others
 * drop their copy. Never fails: without a template, the next fresh start runs initdb, as every start did before
 * templates.
 */
export const saveTemplate = (cacheDir: string, pgdata: string, checkpoint: () => Promise<unknown>) =>
  Effect.gen(function*() {
    const template = templatePath(cacheDir)
    if (template === undefined) return
    const temporary = temporarySibling(template)
    yield* Effect.tryPromise(async () => {
      await checkpoint()
      Fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 })
      copyTree(pgdata, temporary)
      try {
        Fs.renameSync(temporary, template)
      } catch (error) {
        // Another starter saved it first.
        if (!Fs.existsSync(template)) throw error
        Fs.rmSync(temporary, { recursive: true, force: true })
      }
    }).pipe(
      Effect.tap(() => Effect.logInfo(`Saved the embedded database template ${template}`)),
      Effect.catchAll((error) =>
        Effect.logWarning(
          `Could not save the embedded database template ${template}: fresh data directories will run initdb`,
          error.error
        ).pipe(Effect.zipRight(Effect.sync(() => Fs.rmSync(temporary, { recursive: true, force: true }))))
      )
    )
  })

/** Removes a template PGlite could not start from, so that the next cold start saves a good one. */
export const removeTemplate = (cacheDir: string) =>
  Effect.sync(() => {
    const template = templatePath(cacheDir)
    if (template !== undefined) Fs.rmSync(template, { recursive: true, force: true })
  })
