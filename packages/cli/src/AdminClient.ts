/**
 * The operator's client: derived from the same HttpApi the server implements, authenticated with the admin
 * token. Where the URL and token come from: flags, then DOCK_BASE_URL / DOCK_ADMIN_TOKEN, then
 * DOCK_DATA_DIR/admin-token (the file a development server writes).
 */
import { DockApi } from "@dock/domain/api"
import { FetchHttpClient, FileSystem, HttpApiClient, HttpClient, HttpClientRequest, Path } from "@effect/platform"
import { Config, Data, Effect, Option, Redacted } from "effect"
import { optionalText } from "./Environment.ts"

export interface Connection {
  readonly url: Option.Option<string>
  readonly adminToken: Option.Option<Redacted.Redacted>
}

export class MissingAdminToken extends Data.TaggedError("MissingAdminToken")<{ readonly searched: string }> {}

const serverUrl = (flag: Option.Option<string>) =>
  Option.match(flag, {
    onSome: Effect.succeed,
    onNone: () =>
      Effect.gen(function*() {
        const base = yield* optionalText("DOCK_BASE_URL")
        if (Option.isSome(base)) return base.value
        const port = yield* Config.integer("PORT").pipe(Config.withDefault(8787))
        return `http://localhost:${port}`
      })
  }).pipe(Effect.map((url) => url.replace(/\/+$/, "")))

const adminToken = (flag: Option.Option<Redacted.Redacted>) =>
  Effect.gen(function*() {
    if (Option.isSome(flag)) return flag.value
    const fromEnv = yield* optionalText("DOCK_ADMIN_TOKEN")
    if (Option.isSome(fromEnv)) return Redacted.make(fromEnv.value)
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dataDir = yield* Config.string("DOCK_DATA_DIR").pipe(Config.withDefault("./.dock"))
    const file = path.resolve(dataDir, "admin-token")
    const token = yield* fs.readFileString(file).pipe(Effect.map((text) => text.trim()), Effect.orElseSucceed(() => ""))
    if (token.length === 0) return yield* Effect.fail(new MissingAdminToken({ searched: file }))
    return Redacted.make(token)
  })

const makeClient = (baseUrl: string, token: Option.Option<Redacted.Redacted>) =>
  HttpApiClient.make(DockApi, {
    baseUrl,
    ...Option.match(token, {
      onNone: () => ({}),
      onSome: (token) => ({
        transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(token)))
      })
    })
  }).pipe(Effect.provide(FetchHttpClient.layer))

export type DockClient = Effect.Effect.Success<ReturnType<typeof makeClient>>

/** An HttpApiClient for DockApi at the resolved URL, sending the admin token as a bearer. */
export const adminClient = (connection: Connection) =>
  Effect.gen(function*() {
    const baseUrl = yield* serverUrl(connection.url)
    const token = yield* adminToken(connection.adminToken)
    return { client: yield* makeClient(baseUrl, Option.some(token)), baseUrl }
  })

/** The same client without credentials, for the public agent endpoints (register, claim). */
export const publicClient = (url: Option.Option<string>) =>
  Effect.gen(function*() {
    const baseUrl = yield* serverUrl(url)
    return { client: yield* makeClient(baseUrl, Option.none()), baseUrl }
  })
