/**
 * The database: real PostgreSQL when a URL is given, otherwise the embedded PGlite (a real Postgres in WASM),
 * persisted in a directory or kept in memory. PGlite is served to @effect/sql-pg through pglite-socket on a
 * private unix socket with exactly one connection on each side: more corrupts concurrent transactions.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Context, Duration, Effect, Either, Layer, Redacted } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Pg from "pg"
import { copyTemplate, removeTemplate, saveTemplate } from "./EmbeddedTemplate.ts"
import { prepareMarked } from "./Prepared.ts"
import { makeSocketDir, removeStaleSocketDirs, SOCKET_FILE } from "./SocketDirs.ts"

export { cacheDirConfig } from "./EmbeddedTemplate.ts"

export type DatabaseOptions =
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted; readonly poolSize: number }
  | { readonly _tag: "Embedded"; readonly dataDir: string }
  | { readonly _tag: "InMemory" }

/** The connection pool's state now (for /metrics): connections open, idle, queries waiting for one. */
export interface DatabasePoolStats {
  readonly total: number
  readonly idle: number
  readonly waiting: number
  readonly max: number
}

/** The pool behind SqlClient, as far as it can be watched: provided by `layer` beside SqlClient and PgClient. */
export class DatabasePool extends Context.Tag("@dock/domain/DatabasePool")<DatabasePool, {
  readonly stats: () => DatabasePoolStats
}>() {}

/**
 * What a start that made a fresh embedded database through initdb still owes: saving it as the template once the
 * migrations have run (`applyMigrations` does; EmbeddedTemplate.ts). Nothing on every other start and on
 * PostgreSQL.
 */
export class DatabaseTemplate extends Context.Tag("@dock/domain/DatabaseTemplate")<DatabaseTemplate, {
  readonly saveMigrated: Effect.Effect<void>
}>() {}

const APPLICATION_NAME = "dock"
const CONNECT_TIMEOUT = Duration.seconds(10)

/**
 * No parallel query, on PostgreSQL and embedded alike: Dock runs many small statements at once, and a parallel
 * plan's workers took ~70 ms to start on the 2-core machine, more than any of its statements gains from them (a
 * Micro DB query whose plan held a Gather, never needed, took 112 ms instead of 46; issue 15).
 */
const NO_PARALLEL_QUERY = ["max_parallel_workers_per_gather", "0"] as const

/**
 * A node-postgres pool made here rather than inside PgClient (whose pool is private), so that its counts can be
 * read; PgClient is built on it as `PgClient.layer` would build it: the same options, and a first query that fails
 * the layer with "Failed to connect" when the database cannot be reached. Timestamps come back as Date; int8 and
 * numeric stay strings (decode them with NumberFromString).
 */
const poolLayer = (
  options: Pg.PoolConfig & { readonly max: number }
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | DatabasePool, SqlError.SqlError> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new Pg.Pool({
          ...options,
          application_name: APPLICATION_NAME,
          connectionTimeoutMillis: Duration.toMillis(CONNECT_TIMEOUT)
        })
        pool.on("error", () => {})
        pool.on("connect", prepareMarked)
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    )
    yield* Effect.tryPromise({
      try: () => pool.query("SELECT 1"),
      catch: (cause) => new SqlError.SqlError({ cause, message: "PgClient: Failed to connect" })
    }).pipe(Effect.timeoutFail({
      duration: CONNECT_TIMEOUT,
      onTimeout: () =>
        new SqlError.SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
    }))
    return Layer.merge(
      PgClient.layerFromPool({ acquire: Effect.succeed(pool), applicationName: APPLICATION_NAME }),
      Layer.succeed(DatabasePool, {
        stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: options.max })
      })
    )
  }))

/**
 * How long one statement may run before PostgreSQL cancels it: a backstop so that no request (an expensive
 * query, a lock wait) holds a pool connection for long. Migrations lift it for their own transaction.
 */
export const DEFAULT_STATEMENT_TIMEOUT = Duration.seconds(10)

export interface DatabaseSettings {
  /** 0 turns the timeout off. */
  readonly statementTimeout?: Duration.Duration
  /**
   * Embedded in a directory only: the cache directory whose template a fresh data directory is copied from instead
   * of running initdb (EmbeddedTemplate.ts), saved there by the first cold start. Without it, each runs initdb.
   */
  readonly templateDir?: string
}

/**
 * Postgres settings of the embedded database, sized for a small service. PGlite runs Postgres's defaults inside
 * one WASM heap, which never shrinks: 128 MB of shared buffers are touched at start (over a third of the idle
 * process), and a large sort or index build keeps what it grew to. The data directory is a real directory, so a
 * read that misses the small buffer pool is served from the OS page cache. No parallel query, as on PostgreSQL.
 */
export const EMBEDDED_SETTINGS: ReadonlyArray<readonly [name: string, value: string]> = [
  ["shared_buffers", "16MB"],
  ["max_connections", "10"],
  ["maintenance_work_mem", "16MB"],
  NO_PARALLEL_QUERY
]

const embeddedStartParams = [
  ...PGlite.defaultStartParams,
  ...EMBEDDED_SETTINGS.flatMap(([name, value]) => ["-c", `${name}=${value}`])
]

/**
 * The URL with `statement_timeout` and no parallel query added (the latter to any `options` it had): node-postgres
 * sends both in the startup message of every connection.
 */
const withSessionSettings = (url: Redacted.Redacted, statementTimeoutMs: number): Redacted.Redacted => {
  try {
    const parsed = new URL(Redacted.value(url))
    parsed.searchParams.set("statement_timeout", String(statementTimeoutMs))
    const [name, value] = NO_PARALLEL_QUERY
    const options = parsed.searchParams.get("options")
    parsed.searchParams.set("options", `${options === null ? "" : `${options} `}-c ${name}=${value}`)
    return Redacted.make(parsed.toString())
  } catch {
    // Not a URL we can edit: node-postgres reports it when connecting.
    return url
  }
}

const sqlError = (message: string) => (cause: unknown) => new SqlError.SqlError({ cause, message })

const startPglite = (pgdata: string | null) =>
  Effect.tryPromise({
    try: async () => {
      const db = new PGlite({ ...(pgdata === null ? {} : { dataDir: pgdata }), startParams: embeddedStartParams })
      await db.waitReady
      return db
    },
    catch: sqlError(`Could not open the embedded database${pgdata === null ? "" : ` in ${pgdata}`}`)
  })

/**
 * PGlite in `dataDir/pgdata`, or in memory: an existing database as it is; a new directory as a copy of the
 * template in `templateDir` when there is one, else through initdb, and then `saveMigrated` makes it the template
 * once it is migrated. A template PGlite cannot start from is removed and replaced the same way.
 */
const openEmbedded = (dataDir: string | null, templateDir: string | undefined) =>
  Effect.gen(function*() {
    const nothingToSave = (db: PGlite) => ({ db, saveMigrated: Effect.void })
    if (dataDir === null) return nothingToSave(yield* startPglite(null))
    yield* Effect.tryPromise({
      try: () => Fs.mkdir(dataDir, { recursive: true, mode: 0o700 }),
      catch: sqlError(`Could not create the data directory ${dataDir}`)
    })
    const pgdata = Path.join(dataDir, "pgdata")
    // Only a database directory that does not exist yet is made from the template; one that PGlite left half
    // made is left to PGlite, as before.
    const fresh = !(yield* Effect.promise(() => Fs.stat(pgdata).then(() => true, () => false)))
    if (!fresh || templateDir === undefined) return nothingToSave(yield* startPglite(pgdata))
    if (yield* copyTemplate(templateDir, pgdata)) {
      const started = yield* Effect.either(startPglite(pgdata))
      if (Either.isRight(started)) return nothingToSave(started.right)
      yield* Effect.logWarning("The embedded database template did not start: removed it, running initdb", started.left)
      yield* removeTemplate(templateDir)
      yield* Effect.promise(() => Fs.rm(pgdata, { recursive: true, force: true }))
    }
    const db = yield* startPglite(pgdata)
    return { db, saveMigrated: saveTemplate(templateDir, pgdata, () => db.exec("checkpoint")) }
  })

/** Starts PGlite and its socket server for the lifetime of the scope; returns the socket directory. */
const embeddedServer = (dataDir: string | null, statementTimeoutMs: number, templateDir: string | undefined) =>
  Effect.gen(function*() {
    const { db, saveMigrated } = yield* Effect.acquireRelease(
      Effect.tap(openEmbedded(dataDir, templateDir), ({ db }) =>
        // PGlite is one session shared by the socket's one connection, so a session setting applies to every
        // query. (PGlite runs in WASM without timers: it shows the setting but cannot cancel a statement.)
        Effect.tryPromise({
          try: () => db.exec(`set statement_timeout = ${statementTimeoutMs}`),
          catch: sqlError("Could not configure the embedded database")
        })),
      ({ db }) => Effect.promise(() => db.close()).pipe(Effect.timeoutOption("5 seconds"))
    )
    // What a killed instance left behind (SocketDirs.ts); then a fresh 0700 directory of ours, which keeps the
    // socket unreachable for other local users.
    const stale = yield* removeStaleSocketDirs(Os.tmpdir())
    if (stale.length > 0) yield* Effect.logInfo(`Removed stale embedded database socket folders: ${stale.join(", ")}`)
    const socketDir = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => makeSocketDir(Os.tmpdir()),
        catch: sqlError("Could not create the embedded database socket directory")
      }),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db, path: Path.join(socketDir, SOCKET_FILE), maxConnections: 1 })
          await server.start()
          return server
        },
        catch: sqlError("Could not start the embedded database socket")
      }),
      (server) => Effect.promise(() => server.stop())
    )
    return { socketDir, saveMigrated }
  })

/**
 * Logs once everything the database layer opened (the pool, and the embedded database with its socket) is closed:
 * built before it, so released after it. An operator (and the drain test) reads it as the end of a clean shutdown.
 */
const closedNotice = Layer.scopedDiscard(Effect.addFinalizer(() => Effect.logInfo("Database closed")))

/** What `layer` provides. */
export type Database = PgClient.PgClient | SqlClient.SqlClient | DatabasePool | DatabaseTemplate

/** SqlClient (and PgClient) for the chosen database, open for the lifetime of the layer. */
export const layer = (
  options: DatabaseOptions,
  settings: DatabaseSettings = {}
): Layer.Layer<Database, SqlError.SqlError> => Layer.provide(databaseLayer(options, settings), closedNotice)

const databaseLayer = (
  options: DatabaseOptions,
  settings: DatabaseSettings
): Layer.Layer<Database, SqlError.SqlError> => {
  const statementTimeoutMs = Math.round(Duration.toMillis(settings.statementTimeout ?? DEFAULT_STATEMENT_TIMEOUT))
  switch (options._tag) {
    case "Postgres":
      return Layer.merge(
        poolLayer({
          connectionString: Redacted.value(withSessionSettings(options.url, statementTimeoutMs)),
          max: options.poolSize
        }),
        Layer.succeed(DatabaseTemplate, { saveMigrated: Effect.void })
      )
    case "Embedded":
    case "InMemory":
      return Layer.unwrapScoped(
        Effect.map(
          embeddedServer(
            options._tag === "Embedded" ? options.dataDir : null,
            statementTimeoutMs,
            settings.templateDir
          ),
          ({ saveMigrated, socketDir }) =>
            Layer.merge(
              poolLayer({
                host: socketDir,
                port: 5432,
                user: "postgres",
                database: "postgres",
                max: 1,
                idleTimeoutMillis: Duration.toMillis(Duration.hours(1))
              }),
              Layer.succeed(DatabaseTemplate, { saveMigrated })
            )
        )
      )
  }
}
