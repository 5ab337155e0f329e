/**
 * `dock serve` and `dock migrate`: the commands that act on the configured database directly rather than through
 * the API. They run the server's own program, so this is the CLI's one import of @dock/server and of the whole
 * domain, and it happens only when one of them runs: every other command, and `--help`, starts without the server,
 * the database or the MCP SDK (seconds of loading).
 */
import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { connection } from "../ApiCommand.ts"
import { CliFailure } from "../CliFailure.ts"

const loadServer = Effect.promise(() => import("@dock/server"))
const loadDomain = Effect.promise(() => import("@dock/domain"))

const serverConfiguration = Effect.flatMap(
  loadServer,
  (server) => server.configuration.pipe(Effect.mapError((error) => new CliFailure({ message: error.message })))
)

export const serve = Command.make("serve", {}, () =>
  Effect.gen(function*() {
    const server = yield* loadServer
    return yield* server.serve(yield* serverConfiguration)
  })).pipe(Command.withDescription("Run the Dock server (configured by the environment, see README)"))

export const migrate = Command.make(
  "migrate",
  { json: connection.json },
  ({ json }) =>
    Effect.gen(function*() {
      const config = yield* serverConfiguration
      const { loggerLayer } = yield* loadServer
      const { applyMigrations, Database, latestMigrationId } = yield* loadDomain
      const applied = yield* applyMigrations().pipe(
        Effect.provide(Database.layer(config.database, { templateDir: config.cacheDir })),
        Effect.provide(loggerLayer(config.env)),
        Effect.mapError((error) => new CliFailure({ message: `Migration failed: ${error.message}` }))
      )
      yield* Console.log(
        json
          ? JSON.stringify({ applied, latest: latestMigrationId })
          : applied.length === 0
          ? `Database is up to date (migration ${latestMigrationId})`
          : `Applied migrations ${applied.join(", ")}; database is at migration ${latestMigrationId}`
      )
    })
).pipe(Command.withDescription("Apply pending database migrations and exit"))
