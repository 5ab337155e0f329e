/**
 * The embedded database's template. PGlite's initdb is most of a fresh embedded start (~6 s and ~800 MB on the
 * 2-core machine: it runs a second Postgres in WASM), and its result is the same for every fresh database of one
 * PGlite build. So the first cold start dumps its freshly initialised data directory into the cache directory, and
 * every later fresh database (a new DOCK_DATA_DIR, each in-memory test database) loads that dump instead (PGlite's
 * `loadDataDir`, the way its own `clone()` works). The template holds nothing of Dock's: migrations are applied
 * after it as on any start, so it depends on PGlite alone and is named after PGlite's version.
 */
import { Config, Effect, Option } from "effect"
import { readFileSync } from "node:fs"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import * as Zlib from "node:zlib"

/** Bumped when what we put into a template changes, so that older files are no longer picked up. */
const TEMPLATE_FORMAT = 1

const gzip = promisify(Zlib.gzip)
const gunzip = promisify(Zlib.gunzip)

/**
 * DOCK_CACHE_DIR, else $XDG_CACHE_HOME/dock, else ~/.cache/dock: where Dock keeps what it can rebuild (today the
 * embedded database template). Per user, like any cache: another local user must not be able to hand us a data
 * directory.
 */
export const cacheDirConfig: Config.Config<string> = Config.all({
  explicit: Config.option(Config.nonEmptyString("DOCK_CACHE_DIR")),
  xdg: Config.option(Config.nonEmptyString("XDG_CACHE_HOME"))
}).pipe(
  Config.map(({ explicit, xdg }) =>
    Path.resolve(
      Option.getOrElse(
        explicit,
        () => Path.join(Option.getOrElse(xdg, () => Path.join(Os.homedir(), ".cache")), "dock")
      )
    )
  )
)

/**
 * The installed PGlite's version, from its package.json (which the package does not export, so it is found next
 * to the resolved entry point); undefined when it cannot be read, and then no template is used.
 */
const PGLITE_VERSION: string | undefined = (() => {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
    const manifest = JSON.parse(readFileSync(Path.join(Path.dirname(entry), "..", "package.json"), "utf8"))
    return typeof manifest.version === "string" ? manifest.version : undefined
  } catch {
    return undefined
  }
})()

/** The template's file in `dir` for the installed PGlite; undefined when its version is unknown. */
export const templateFile = (dir: string): string | undefined =>
  PGLITE_VERSION === undefined ? undefined : Path.join(dir, `pglite-${PGLITE_VERSION}-t${TEMPLATE_FORMAT}.tar.gz`)

/**
 * The template in `dir` as PGlite's `loadDataDir` takes it; none when there is none yet. It is unzipped here
 * rather than by PGlite, whose unzipping leaves an unhandled rejection behind on a damaged file (which would end
 * the process): a file that does not unzip is removed, and this start runs initdb and saves a new one.
 */
export const readTemplate = (dir: string) =>
  Effect.gen(function*() {
    const file = templateFile(dir)
    if (file === undefined) return Option.none<Blob>()
    const compressed = yield* Effect.tryPromise(() => Fs.readFile(file)).pipe(
      Effect.map(Option.some),
      Effect.catchAll((error) =>
        (error.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT"
          ? Effect.succeedNone
          : Effect.logWarning(`Could not read the embedded database template ${file}`, error.error).pipe(
            Effect.as(Option.none<Buffer>())
          )
      )
    )
    if (Option.isNone(compressed)) return Option.none<Blob>()
    return yield* Effect.tryPromise(() => gunzip(compressed.value)).pipe(
      Effect.map((tar) => Option.some(new Blob([tar], { type: "application/x-tar" }))),
      Effect.catchAll((error) =>
        Effect.logWarning(`The embedded database template ${file} is damaged: removed it`, error.error).pipe(
          Effect.zipRight(removeTemplate(dir)),
          Effect.as(Option.none<Blob>())
        )
      )
    )
  })

/**
 * Saves `dump` (an uncompressed tar of a data directory) as the template in `dir`, zipped (41 MB of mostly empty
 * pages become ~5 MB) off the event loop. Written under a temporary name and renamed, so a reader never sees half a
 * file and starters racing to save their own (equal) dumps leave one whole one. Never fails: without a template,
 * the next fresh start runs initdb again, as it did before templates.
 */
export const writeTemplate = (dir: string, dump: () => Promise<Blob>) =>
  Effect.gen(function*() {
    const file = templateFile(dir)
    if (file === undefined) return
    const temporary = `${file}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`
    yield* Effect.tryPromise(async () => {
      await Fs.mkdir(dir, { recursive: true, mode: 0o700 })
      const tar = new Uint8Array(await (await dump()).arrayBuffer())
      await Fs.writeFile(temporary, await gzip(tar, { level: 1 }), { mode: 0o600 })
      await Fs.rename(temporary, file)
    }).pipe(
      Effect.tap(() => Effect.logInfo(`Saved the embedded database template ${file}`)),
      Effect.catchAll((error) =>
        Effect.logWarning(
          `Could not save the embedded database template ${file}: fresh databases will run initdb`,
          error.error
        ).pipe(Effect.zipRight(Effect.promise(() => Fs.rm(temporary, { force: true }))))
      )
    )
  })

/** Removes a template that PGlite could not start from, so that the next cold start saves a good one. */
export const removeTemplate = (dir: string) =>
  Effect.promise(async () => {
    const file = templateFile(dir)
    if (file !== undefined) await Fs.rm(file, { force: true })
  })
