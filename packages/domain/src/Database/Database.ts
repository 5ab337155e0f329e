/**
 * The database: real PostgreSQL when a URL is given, otherwise the embedded PGlite (a real Postgres in WASM),
 * persisted in a directory or kept in memory. PGlite is served to @effect/sql-pg through pglite-socket on a
 * private unix socket with exactly one connection on each side: more corrupts concurrent transactions.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Duration, Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"

export type DatabaseOptions =
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted; readonly poolSize: number }
  | { readonly _tag: "Embedded"; readonly dataDir: string }
  | { readonly _tag: "InMemory" }

/** Timestamps come back as Date; int8 and numeric stay strings (decode them with NumberFromString). */
const clientDefaults = {
  applicationName: "dock",
  connectTimeout: "10 seconds"
} as const

/**
 * How long one statement may run before PostgreSQL cancels it: a backstop so that no request (an expensive
 * query, a lock wait) holds a pool connection for long. Migrations lift it for their own transaction.
 */
export const DEFAULT_STATEMENT_TIMEOUT = Duration.seconds(10)

export interface DatabaseSettings {
  /** 0 turns the timeout off. */
  readonly statementTimeout?: Duration.Duration
}

/** The URL with `statement_timeout` added: node-postgres sends it in the startup message of every connection. */
const withStatementTimeout = (url: Redacted.Redacted, milliseconds: number): Redacted.Redacted => {
  try {
    const parsed = new URL(Redacted.value(url))
    parsed.searchParams.set("statement_timeout", String(milliseconds))
    return Redacted.make(parsed.toString())
  } catch {
    // Not a URL we can edit: node-postgres reports it when connecting.
    return url
  }
}

const sqlError = (message: string) => (cause: unknown) => new SqlError.SqlError({ cause, message })

/** Starts PGlite and its socket server for the lifetime of the scope; returns the socket directory. */
const embeddedServer = (dataDir: string | null, statementTimeoutMs: number) =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          if (dataDir !== null) await Fs.mkdir(dataDir, { recursive: true, mode: 0o700 })
          const db = dataDir === null ? new PGlite() : new PGlite(Path.join(dataDir, "pgdata"))
          await db.waitReady
          // PGlite is one session shared by the socket's one connection, so a session setting applies to every
          // query. (PGlite runs in WASM without timers: it shows the setting but cannot cancel a statement.)
          await db.exec(`set statement_timeout = ${statementTimeoutMs}`)
          return db
        },
        catch: sqlError(`Could not open the embedded database${dataDir === null ? "" : ` in ${dataDir}`}`)
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.timeoutOption("5 seconds"))
    )
    // A fresh 0700 directory keeps the socket unreachable for other local users.
    const socketDir = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => Fs.mkdtemp(Path.join(Os.tmpdir(), "dock-pg-")),
        catch: sqlError("Could not create the embedded database socket directory")
      }),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db, path: Path.join(socketDir, ".s.PGSQL.5432"), maxConnections: 1 })
          await server.start()
          return server
        },
        catch: sqlError("Could not start the embedded database socket")
      }),
      (server) => Effect.promise(() => server.stop())
    )
    return socketDir
  })

/** SqlClient (and PgClient) for the chosen database, open for the lifetime of the layer. */
export const layer = (
  options: DatabaseOptions,
  settings: DatabaseSettings = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> => {
  const statementTimeoutMs = Math.round(Duration.toMillis(settings.statementTimeout ?? DEFAULT_STATEMENT_TIMEOUT))
  switch (options._tag) {
    case "Postgres":
      return PgClient.layer({
        ...clientDefaults,
        url: withStatementTimeout(options.url, statementTimeoutMs),
        maxConnections: options.poolSize
      })
    case "Embedded":
    case "InMemory":
      return Layer.unwrapScoped(
        Effect.map(
          embeddedServer(options._tag === "Embedded" ? options.dataDir : null, statementTimeoutMs),
          (socketDir) =>
            PgClient.layer({
              ...clientDefaults,
              host: socketDir,
              port: 5432,
              username: "postgres",
              database: "postgres",
              maxConnections: 1,
              idleTimeout: "1 hour"
            })
        )
      )
  }
}
