/**
 * A fresh, migrated database for one test file: in-memory PGlite by default, or — when
 * DOCK_TEST_DATABASE_URL names a PostgreSQL server whose user may create databases — a newly created database
 * on that server, dropped again when the layer closes.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as Database from "./Database.ts"
import { MigrationsLive } from "./Migrations.ts"

const withDatabase = (url: Redacted.Redacted, database: string): Redacted.Redacted => {
  const parsed = new URL(Redacted.value(url))
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}

/** Runs one statement on the server's maintenance database through a short-lived connection. */
const onServer = (url: Redacted.Redacted, statement: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(statement).raw
  }).pipe(Effect.provide(PgClient.layer({ url, maxConnections: 1 })))

/** Creates an empty database on the server for the lifetime of the scope; returns its URL. */
export const scopedPostgresDatabase = (serverUrl: Redacted.Redacted) =>
  Effect.gen(function*() {
    const name = `dock_test_${randomBytes(8).toString("hex")}`
    yield* Effect.acquireRelease(
      onServer(serverUrl, `create database "${name}"`),
      () => onServer(serverUrl, `drop database if exists "${name}" with (force)`).pipe(Effect.ignoreLogged)
    )
    return withDatabase(serverUrl, name)
  })

/** The PostgreSQL server tests should use, if any. */
export const testServerUrl = Config.option(Config.redacted("DOCK_TEST_DATABASE_URL")).pipe(Effect.orDie)

const freshPostgres = (serverUrl: Redacted.Redacted) =>
  Layer.unwrapScoped(
    Effect.map(scopedPostgresDatabase(serverUrl), (url) => Database.layer({ _tag: "Postgres", url, poolSize: 5 }))
  )

export const TestDatabaseLive: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> = Layer
  .unwrapEffect(
    Effect.map(
      testServerUrl,
      Option.match({
        onNone: () => Database.layer({ _tag: "InMemory" }),
        onSome: freshPostgres
      })
    )
  ).pipe((db) => Layer.provideMerge(MigrationsLive, db))
