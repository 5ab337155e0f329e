/**
 * The shape every client command shares: its own options plus the connection flags, one call on the Dock API,
 * and its answer printed as one JSON document (`--json`) or as text. Every failure becomes one `CliFailure`
 * line; the commands themselves only say what to call and how the answer reads.
 */
import { isDockError } from "@dock/domain/api"
import { Command, Options } from "@effect/cli"
import { HttpClientError } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import { adminClient, type Connection, type DockClient, MissingAdminToken, publicClient } from "./AdminClient.ts"
import { CliFailure } from "./CliFailure.ts"

/** Options every client command accepts after its own arguments. */
export const connection = {
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

/** The public agent endpoints take no operator token. */
const publicConnection = { url: connection.url, json: connection.json }

/** `{ key: value }` when the option is set, `{}` otherwise: optional flags become optional payload fields. */
export const present = <K extends string, A>(key: K, option: Option.Option<A>): { [P in K]?: A } =>
  Option.match(option, { onNone: () => ({}), onSome: (value) => ({ [key]: value }) as { [P in K]?: A } })

/** What a command asks of the API, and how the answer reads for a person. */
export interface ApiRequest<A, R> {
  readonly call: (client: DockClient, baseUrl: string) => Effect.Effect<A, unknown, R>
  readonly human: (result: A) => string
}

/** One line for every way a client command can fail. */
const describeFailure = (error: unknown, baseUrl: string): CliFailure => {
  if (error instanceof CliFailure) return error
  const message = (text: string) => new CliFailure({ message: text })
  if (isDockError(error)) {
    if (error.code === "unauthorized") {
      return message(`The server at ${baseUrl} rejected the admin token: ${error.message}`)
    }
    return message(`${error.code}: ${error.message}`)
  }
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") {
      return message(`Cannot reach the Dock server at ${baseUrl} (${error.reason.toLowerCase()} error)`)
    }
    return message(`Unexpected answer from ${baseUrl}: HTTP ${error.response.status}`)
  }
  if (error instanceof MissingAdminToken) {
    return message(
      `No admin token: pass --admin-token, set DOCK_ADMIN_TOKEN, or run a development server that writes ${error.searched}`
    )
  }
  return message(`Unexpected failure: ${String(error)}`)
}

const runRequest = <A, R1, R2>(
  connect: Effect.Effect<{ readonly client: DockClient; readonly baseUrl: string }, unknown, R1>,
  json: boolean,
  request: ApiRequest<A, R2>
) =>
  Effect.gen(function*() {
    const { baseUrl, client } = yield* connect.pipe(Effect.mapError((error) => describeFailure(error, "")))
    const result = yield* request.call(client, baseUrl).pipe(
      Effect.mapError((error) => describeFailure(error, baseUrl))
    )
    yield* Console.log(json ? JSON.stringify(result) : request.human(result))
  })

/** Runs one admin API request (operator token) and prints its answer. */
export const adminRequest = <A, R>(options: Connection & { readonly json: boolean }, request: ApiRequest<A, R>) =>
  runRequest(adminClient(options), options.json, request)

// The command's own options and the connection flags are parsed as two groups (the flags stay the same, in the
// same order) so that the connection keeps its concrete type inside these generic helpers.

/** An operator command: `config`'s options plus the connection flags, one admin API request. */
export const adminCommand = <Name extends string, const Config extends Command.Command.Config, A, R>(
  name: Name,
  config: Config,
  request: (options: Command.Command.ParseConfigValue<Config>) => ApiRequest<A, R>
) =>
  Command.make(
    name,
    { options: config, connection },
    (parsed) => adminRequest(parsed.connection, request(parsed.options))
  )

/** An agent command on a public endpoint: `config`'s options plus --url and --json, no operator token. */
export const publicCommand = <Name extends string, const Config extends Command.Command.Config, A, R>(
  name: Name,
  config: Config,
  request: (
    options: Command.Command.ParseConfigValue<Config>,
    connection: { readonly json: boolean }
  ) => ApiRequest<A, R>
) =>
  Command.make(
    name,
    { options: config, connection: publicConnection },
    ({ connection, options }) => runRequest(publicClient(connection.url), connection.json, request(options, connection))
  )
