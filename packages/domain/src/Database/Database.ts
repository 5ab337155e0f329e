/**
 * The database: real PostgreSQL when a URL is given, otherwise the embedded PGlite (a real Postgres in WASM),
 * persisted in a directory or kept in memory. PGlite is served to @effect/sql-pg through pglite-socket on a
 * private unix socket with exactly one connection on each side: more corrupts concurrent transactions.
 */
import { PgClient } from "@effect/sql-pg"
import { SqlClient, SqlError } from "@effect/sql"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Layer, Redacted } from "effect"
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

const sqlError = (message: string) => (cause: unknown) => new SqlError.SqlError({ cause, message })

/** Starts PGlite and its socket server for the lifetime of the scope; returns the socket directory. */
const embeddedServer = (dataDir: string | null) =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          if (dataDir !== null) await Fs.mkdir(dataDir, { recursive: true, mode: 0o700 })
          const db = dataDir === null ? new PGlite() : new PGlite(Path.join(dataDir, "pgdata"))
          await db.waitReady
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
export const layer = (options: DatabaseOptions): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> => {
  switch (options._tag) {
    case "Postgres":
      return PgClient.layer({ ...clientDefaults, url: options.url, maxConnections: options.poolSize })
    case "Embedded":
    case "InMemory":
      return Layer.unwrapScoped(
        Effect.map(embeddedServer(options._tag === "Embedded" ? options.dataDir : null), (socketDir) =>
          PgClient.layer({
            ...clientDefaults,
            host: socketDir,
            port: 5432,
            username: "postgres",
            database: "postgres",
            maxConnections: 1,
            idleTimeout: "1 hour"
          }))
      )
  }
}
