/**
 * The `dock` command line. Operator commands talk to a running server through the admin API; `serve` and
 * `migrate` act on the configured database directly. `--json` prints exactly one JSON document on stdout;
 * every failure is one line on stderr and exit code 1.
 */
import { Command, Options } from "@effect/cli"
import { HttpClientError } from "@effect/platform"
import { applyMigrations, Database, isDockError, latestMigrationId, type User } from "@dock/domain"
import { configuration, loggerLayer, serve } from "@dock/server"
import { Console, Effect, Option } from "effect"
import { adminClient, type Connection, MissingAdminToken } from "./AdminClient.ts"

// Options every client command accepts after its own arguments.
const connection = {
  url: Options.text("url").pipe(
    Options.withDescription("Dock server URL (default: DOCK_BASE_URL, else http://localhost:$PORT)"),
    Options.optional
  ),
  adminToken: Options.redacted("admin-token").pipe(
    Options.withDescription("Operator token (default: DOCK_ADMIN_TOKEN, else DOCK_DATA_DIR/admin-token)"),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print exactly one JSON document on stdout"))
}

/** A failure already phrased for a person; printed as one line on stderr. */
export class CliFailure extends Error {
  readonly _tag = "CliFailure"
}

/** One line for every way a client command can fail. */
const describeFailure = (error: unknown, baseUrl: string): string => {
  if (isDockError(error)) {
    if (error.code === "unauthorized") return `The server at ${baseUrl} rejected the admin token: ${error.message}`
    return `${error.code}: ${error.message}`
  }
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") return `Cannot reach the Dock server at ${baseUrl} (${error.reason.toLowerCase()} error)`
    return `Unexpected answer from ${baseUrl}: HTTP ${error.response.status}`
  }
  if (error instanceof MissingAdminToken) {
    return `No admin token: pass --admin-token, set DOCK_ADMIN_TOKEN, or run a development server that writes ${error.searched}`
  }
  return `Unexpected failure: ${String(error)}`
}

/** Runs an admin API call and prints its result as JSON or as text. */
const withAdmin = <A>(
  options: Connection & { readonly json: boolean },
  call: (client: Effect.Effect.Success<ReturnType<typeof adminClient>>["client"]) => Effect.Effect<A, unknown>,
  human: (result: A) => string
) =>
  Effect.gen(function*() {
    const { baseUrl, client } = yield* adminClient(options).pipe(
      Effect.mapError((error) => new CliFailure(describeFailure(error, "")))
    )
    const result = yield* call(client).pipe(Effect.mapError((error) => new CliFailure(describeFailure(error, baseUrl))))
    yield* Console.log(options.json ? JSON.stringify(result) : human(result))
  })

const userLine = (user: User) =>
  `${user.username}  ${user.email ?? "-"}  ${user.kind}${user.confirmed ? "" : " (unconfirmed)"}  id ${user.id}  default Dock ${user.default_bucket_id ?? "-"}`

const usersCreate = Command.make(
  "create",
  {
    email: Options.text("email").pipe(Options.withDescription("The person's email address")),
    username: Options.text("username").pipe(
      Options.withDescription("URL-safe name (default: derived from the email)"),
      Options.optional
    ),
    ...connection
  },
  (options) =>
    withAdmin(
      options,
      (client) =>
        client.adminUsers.create({
          payload: { email: options.email, ...Option.match(options.username, { onNone: () => ({}), onSome: (username) => ({ username }) }) }
        }),
      (user) => `Created user ${userLine(user)}`
    )
).pipe(Command.withDescription("Create a confirmed user (with a default Dock)"))

const usersList = Command.make(
  "list",
  connection,
  (options) =>
    withAdmin(
      options,
      (client) => client.adminUsers.list({ urlParams: {} }),
      (users) => users.length === 0 ? "No users" : users.map(userLine).join("\n")
    )
).pipe(Command.withDescription("List users"))

const users = Command.make("users").pipe(
  Command.withDescription("Manage users (admin API)"),
  Command.withSubcommands([usersCreate, usersList])
)

const serveCommand = Command.make("serve", {}, () =>
  configuration.pipe(
    Effect.mapError((error) => new CliFailure(error.message)),
    Effect.flatMap(serve)
  )).pipe(Command.withDescription("Run the Dock server (configured by the environment, see README)"))

const migrate = Command.make(
  "migrate",
  { json: connection.json },
  ({ json }) =>
    Effect.gen(function*() {
      const config = yield* configuration.pipe(Effect.mapError((error) => new CliFailure(error.message)))
      const applied = yield* applyMigrations().pipe(
        Effect.provide(Database.layer(config.database)),
        Effect.provide(loggerLayer(config.env)),
        Effect.mapError((error) => new CliFailure(`Migration failed: ${error.message}`))
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

const dock = Command.make("dock").pipe(
  Command.withDescription("Dock: an agent-first store for living artifacts"),
  Command.withSubcommands([serveCommand, migrate, users])
)

export const cli = Command.run(dock, { name: "dock", version: "0.0.0" })
