/**
 * The `dock` command line. Operator commands talk to a running server through the admin API; `serve` and
 * `migrate` act on the configured database directly. `--json` prints exactly one JSON document on stdout;
 * every failure is one line on stderr and exit code 1.
 */
import { Args, Command, Options } from "@effect/cli"
import { FileSystem, HttpClientError, Path } from "@effect/platform"
import {
  type AnonymousRegistration,
  applyMigrations,
  Database,
  isDockError,
  latestMigrationId,
  type Member,
  mediaTypeForFileName,
  type SandboxSummary,
  type Source,
  SOURCE_CONTENT_MAX_BYTES,
  type TokenInfo,
  type User
} from "@dock/domain"
import { configuration, loggerLayer, serve } from "@dock/server"
import { Console, Effect, Option } from "effect"
import { adminClient, type Connection, type DockClient, MissingAdminToken, publicClient } from "./AdminClient.ts"
import { saveRegistration } from "./Credentials.ts"

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

/** `{ key: value }` when the option is set, `{}` otherwise: optional flags become optional payload fields. */
const present = <K extends string, A>(key: K, option: Option.Option<A>): { [P in K]?: A } =>
  Option.match(option, { onNone: () => ({}), onSome: (value) => ({ [key]: value }) as { [P in K]?: A } })

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

/** Runs one API call and prints its result as JSON or as text. */
const runCall = <A, R1, R2>(
  connect: Effect.Effect<{ readonly client: DockClient; readonly baseUrl: string }, unknown, R1>,
  json: boolean,
  call: (client: DockClient, baseUrl: string) => Effect.Effect<A, unknown, R2>,
  human: (result: A) => string
) =>
  Effect.gen(function*() {
    const { baseUrl, client } = yield* connect.pipe(Effect.mapError((error) => new CliFailure(describeFailure(error, ""))))
    const result = yield* call(client, baseUrl).pipe(
      Effect.mapError((error) => new CliFailure(describeFailure(error, baseUrl)))
    )
    yield* Console.log(json ? JSON.stringify(result) : human(result))
  })

/** An admin API call (operator token). */
const withAdmin = <A, R>(
  options: Connection & { readonly json: boolean },
  call: (client: DockClient) => Effect.Effect<A, unknown, R>,
  human: (result: A) => string
) => runCall(adminClient(options), options.json, call, human)

/** A public agent endpoint (no operator token). */
const withPublic = <A, R>(
  options: { readonly url: Option.Option<string>; readonly json: boolean },
  call: (client: DockClient, baseUrl: string) => Effect.Effect<A, unknown, R>,
  human: (result: A) => string
) => runCall(publicClient(options.url), options.json, call, human)

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
          payload: { email: options.email, ...present("username", options.username) }
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


const tokenLine = (token: TokenInfo) =>
  `${token.id}  ${token.label ?? "-"}  ${token.kind}  ${token.scopes.join(",")}` +
  `  docks ${token.allowed_bucket_ids?.join(",") ?? "any"}  expires ${token.expires_at ?? "never"}` +
  (token.revoked_at === null ? "" : `  REVOKED ${token.revoked_at}`)

const tokensCreate = Command.make(
  "create",
  {
    user: Options.text("user").pipe(Options.withDescription("The token's user: email, username or id")),
    label: Options.text("label").pipe(Options.withDescription("The agent's visible identity"), Options.optional),
    scope: Options.choice("scope", ["mcp:read", "mcp:write"]).pipe(
      Options.withDescription("mcp:read or mcp:write (write implies read); repeat for several; default mcp:write"),
      Options.repeated
    ),
    dock: Options.text("dock").pipe(
      Options.withDescription("Restrict writes to this Dock (id or owner/slug); repeat for several"),
      Options.repeated
    ),
    expiresIn: Options.text("expires-in").pipe(
      Options.withDescription(`Lifetime as a duration, e.g. "90 days" (default: no expiry)`),
      Options.optional
    ),
    ...connection
  },
  (options) =>
    withAdmin(
      options,
      (client) =>
        client.adminTokens.create({
          payload: {
            user: options.user,
            ...present("label", options.label),
            ...(options.scope.length === 0 ? {} : { scopes: options.scope }),
            ...(options.dock.length === 0 ? {} : { docks: options.dock }),
            ...present("expires_in", options.expiresIn)
          }
        }),
      (token) =>
        [
          `Token ${token.id} (${token.scopes.join(", ")}; docks: ${token.allowed_bucket_ids?.join(", ") ?? "any"}; expires: ${token.expires_at ?? "never"})`,
          "",
          `  ${token.token}`,
          "",
          "This is the only time the token is shown."
        ].join("\n")
    )
).pipe(Command.withDescription("Create an MCP token for a user (the secret is printed once)"))

const tokensList = Command.make(
  "list",
  {
    user: Options.text("user").pipe(Options.withDescription("Only this user's tokens (email, username or id)"), Options.optional),
    ...connection
  },
  (options) =>
    withAdmin(
      options,
      (client) =>
        client.adminTokens.list({
          urlParams: present("user", options.user)
        }),
      (tokens) => (tokens.length === 0 ? "No tokens" : tokens.map(tokenLine).join("\n"))
    )
).pipe(Command.withDescription("List tokens (never their secrets)"))

const tokensRevoke = Command.make(
  "revoke",
  { id: Args.text({ name: "token-id" }).pipe(Args.withDescription("The token's id")), ...connection },
  (options) =>
    withAdmin(
      options,
      (client) => client.adminTokens.revoke({ path: { id: options.id } }),
      (token) => `Revoked ${tokenLine(token)}`
    )
).pipe(Command.withDescription("Revoke a token: it fails from the next request on"))

const tokens = Command.make("tokens").pipe(
  Command.withDescription("Manage MCP tokens (admin API)"),
  Command.withSubcommands([tokensCreate, tokensList, tokensRevoke])
)

const sandboxLine = (sandbox: SandboxSummary) =>
  `${sandbox.bucket_slug ?? "(deleted)"}  ${sandbox.status}  created ${sandbox.created_at}  window ends ${sandbox.expires_at}`

const sandboxesList = Command.make(
  "list",
  {
    status: Options.choice("status", ["unclaimed", "claimed", "expired"]).pipe(
      Options.withDescription("Only sandboxes in this state"),
      Options.optional
    ),
    ...connection
  },
  (options) =>
    withAdmin(
      options,
      (client) =>
        client.adminSandboxes.list({
          urlParams: present("status", options.status)
        }),
      (sandboxes) => (sandboxes.length === 0 ? "No sandboxes" : sandboxes.map(sandboxLine).join("\n"))
    )
).pipe(Command.withDescription("List anonymous sandboxes"))

const sandboxesSweep = Command.make(
  "sweep",
  connection,
  (options) =>
    withAdmin(
      options,
      (client) => client.adminSandboxes.sweep(),
      (result) => `Expired ${result.expired} sandboxes, purged ${result.purged}`
    )
).pipe(Command.withDescription("Expire and purge sandboxes now (runs to completion)"))

const sandboxes = Command.make("sandboxes").pipe(
  Command.withDescription("Anonymous sandboxes (admin API)"),
  Command.withSubcommands([sandboxesList, sandboxesSweep])
)

const register = Command.make(
  "register",
  {
    label: Options.text("label").pipe(Options.withDescription("The agent's visible name"), Options.optional),
    url: connection.url,
    json: connection.json
  },
  (options) =>
    withPublic(
      options,
      (client, baseUrl) =>
        client.agentAuth.register({
          payload: {
            type: "anonymous",
            requested_credential_type: "mcp_write_token",
            ...present("agent_label", options.label)
          }
        }).pipe(
          Effect.filterOrFail(
            (registration): registration is AnonymousRegistration => registration.registration_type === "anonymous",
            () => new CliFailure("The server answered with another kind of registration")
          ),
          Effect.tap((registration) =>
            saveRegistration(baseUrl, registration).pipe(
              Effect.tap((file) => options.json ? Effect.void : Console.log(`Saved to ${file} (mode 0600).`)),
              Effect.mapError((error) => new CliFailure(`Registered, but could not save the credentials: ${error.message}`))
            )
          )
        ),
      (registration) =>
        [
          `Registered an anonymous sandbox: ${registration.sandbox_bucket.slug} (${registration.sandbox_bucket.id})`,
          `Token (shown once):`,
          `  ${registration.credential}`,
          `Claim token: ${registration.registration_id}`,
          `Claim window ends: ${registration.expires_at}`,
          "",
          registration.claim_instructions
        ].join("\n")
    ).pipe(Effect.asVoid)
).pipe(Command.withDescription("Register an anonymous agent: a sandbox Dock and a write token (saved locally, mode 0600)"))

const claimStart = Command.make(
  "start",
  {
    registration: Options.text("registration").pipe(Options.withDescription("The registration id (claim token)")),
    email: Options.text("email").pipe(Options.withDescription("The person's email; a six-digit code is mailed there")),
    url: connection.url,
    json: connection.json
  },
  (options) =>
    withPublic(
      options,
      (client) => client.agentAuth.claim({ payload: { claim_token: options.registration, email: options.email } }),
      (answer) => `A code was mailed to ${options.email}. Claim token valid until ${"claim_token_expires" in answer ? answer.claim_token_expires : "-"}.`
    )
).pipe(Command.withDescription("Start claiming a registration: mail a six-digit code"))

const claimComplete = Command.make(
  "complete",
  {
    registration: Options.text("registration").pipe(Options.withDescription("The registration id (claim token)")),
    otp: Options.text("otp").pipe(Options.withDescription("The six-digit code from the mail")),
    url: connection.url,
    json: connection.json
  },
  (options) =>
    withPublic(
      options,
      (client) => client.agentAuth.claim({ payload: { claim_token: options.registration, otp: options.otp } }),
      (answer) =>
        "bucket" in answer
          ? `Claimed: ${answer.bucket.slug} now belongs to ${answer.account.username} (${answer.account.email}); the token works until ${answer.token.expires_at}.`
          : "credential" in answer
          ? `Confirmed ${answer.account.email}. Token (shown once):\n  ${answer.credential}`
          : `Status: ${answer.status}`
    )
).pipe(Command.withDescription("Complete a claim with the mailed code"))

const claim = Command.make("claim").pipe(
  Command.withDescription("Claim an anonymous sandbox for a person"),
  Command.withSubcommands([claimStart, claimComplete])
)

const memberLine = (member: Member) => `${member.username}  ${member.role}  (user ${member.user_id}, Dock ${member.bucket_id})`
const dockOption = Options.text("dock").pipe(Options.withDescription("The Dock: its id or owner/slug"))
const userOption = Options.text("user").pipe(Options.withDescription("The user: email, username or id"))

const membersAdd = Command.make(
  "add",
  {
    dock: dockOption,
    user: userOption,
    role: Options.choice("role", ["editor", "viewer", "owner"]).pipe(
      Options.withDescription("editor (default) can write; viewer can read a private Dock"),
      Options.withDefault("editor" as const)
    ),
    ...connection
  },
  (options) =>
    withAdmin(
      options,
      (client) => client.adminMembers.add({ payload: { dock: options.dock, user: options.user, role: options.role } }),
      (member) => `Granted ${memberLine(member)}`
    )
).pipe(Command.withDescription("Grant a user a role on a Dock (or change it)"))

const membersList = Command.make(
  "list",
  { dock: dockOption, ...connection },
  (options) =>
    withAdmin(
      options,
      (client) => client.adminMembers.list({ urlParams: { dock: options.dock } }),
      (members) => (members.length === 0 ? "No collaborators" : members.map(memberLine).join("\n"))
    )
).pipe(Command.withDescription("List a Dock's collaborators"))

const membersRemove = Command.make(
  "remove",
  { dock: dockOption, user: userOption, ...connection },
  (options) =>
    withAdmin(
      options,
      (client) => client.adminMembers.remove({ payload: { dock: options.dock, user: options.user } }),
      (member) => `Removed ${memberLine(member)}`
    )
).pipe(Command.withDescription("Remove a user's grant on a Dock"))

const members = Command.make("members").pipe(
  Command.withDescription("Collaborators on Docks (admin API)"),
  Command.withSubcommands([membersAdd, membersList, membersRemove])
)

const sourceLine = (source: Source) =>
  `${source.source_id}  ${source.title}  ${source.media_type}  ${source.size_bytes} bytes  from ${source.origin}` +
  `  (Dock ${source.bucket_id}, added ${source.created_at})${source.archived ? "  ARCHIVED" : ""}`

/**
 * What `dock sources add` sends for FILE: its text (UTF-8, at most the server's limit, checked before reading
 * it all), its media type from the extension unless given, and its file name as the origin unless given.
 */
const sourceFile = (file: string, mediaType: Option.Option<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const name = path.basename(file)
    const type = Option.getOrUndefined(mediaType) ?? mediaTypeForFileName(name)
    if (type === undefined) {
      return yield* Effect.fail(
        new CliFailure(`Cannot tell the media type of ${name} from its extension (.txt, .md, .markdown, .html, .htm); pass --media-type`)
      )
    }
    const info = yield* fs.stat(file).pipe(Effect.mapError(() => new CliFailure(`Cannot read ${file}: no such file`)))
    if (info.type !== "File") return yield* Effect.fail(new CliFailure(`Cannot read ${file}: not a file`))
    if (Number(info.size) > SOURCE_CONTENT_MAX_BYTES) {
      return yield* Effect.fail(new CliFailure(`${file} is ${info.size} bytes; a source is at most ${SOURCE_CONTENT_MAX_BYTES} (5 MiB)`))
    }
    const bytes = yield* fs.readFile(file).pipe(Effect.mapError((error) => new CliFailure(`Cannot read ${file}: ${error.message}`)))
    const content = yield* Effect.try({
      try: () => new TextDecoder("utf-8", { fatal: true }).decode(bytes),
      catch: () => new CliFailure(`${file} is not UTF-8 text`)
    })
    return { name, mediaType: type, content }
  })

const sourcesAdd = Command.make(
  "add",
  {
    dock: dockOption,
    file: Args.text({ name: "file" }).pipe(Args.withDescription("A .txt, .md/.markdown or .html/.htm file (UTF-8, at most 5 MiB)")),
    title: Options.text("title").pipe(
      Options.withDescription("Title (default: the Markdown front matter's title, else the file name)"),
      Options.optional
    ),
    origin: Options.text("origin").pipe(
      Options.withDescription("Where it came from: a file name or URL (default: the file's name)"),
      Options.optional
    ),
    mediaType: Options.text("media-type").pipe(
      Options.withDescription("text/plain, text/markdown or text/html (default: from the file's extension)"),
      Options.optional
    ),
    ...connection
  },
  (options) =>
    Effect.flatMap(sourceFile(options.file, options.mediaType), (file) =>
      withAdmin(
        options,
        (client) =>
          client.adminSources.add({
            payload: {
              dock: options.dock,
              origin: Option.getOrElse(options.origin, () => file.name),
              media_type: file.mediaType,
              content: file.content,
              ...present("title", options.title)
            }
          }),
        (source) => `Added ${sourceLine(source)}`
      ))
).pipe(Command.withDescription("Add a source to a Dock: the text of a plain text, Markdown or HTML file"))

const sourcesList = Command.make(
  "list",
  { dock: dockOption, ...connection },
  (options) =>
    withAdmin(
      options,
      (client) => client.adminSources.list({ urlParams: { dock: options.dock } }),
      (sources) => (sources.length === 0 ? "No sources" : sources.map(sourceLine).join("\n"))
    )
).pipe(Command.withDescription("List a Dock's sources, archived ones too"))

const sourcesArchive = Command.make(
  "archive",
  { id: Args.text({ name: "source-id" }).pipe(Args.withDescription("The source's id")), ...connection },
  (options) =>
    withAdmin(
      options,
      (client) => client.adminSources.archive({ path: { id: options.id } }),
      (source) => `Archived ${sourceLine(source)}`
    )
).pipe(Command.withDescription("Archive a source: list_sources and read_source no longer show it"))

const sources = Command.make("sources").pipe(
  Command.withDescription("Sources of Docks (admin API)"),
  Command.withSubcommands([sourcesAdd, sourcesList, sourcesArchive])
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
  Command.withSubcommands([serveCommand, migrate, users, tokens, members, sources, sandboxes, register, claim])
)

export const cli = Command.run(dock, { name: "dock", version: "0.0.0" })
