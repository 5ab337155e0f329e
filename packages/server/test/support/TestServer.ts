/**
 * The whole server (`ServerLive`) in this process on an ephemeral port, over a fresh test database, for HTTP
 * tests that talk to it with real requests. The database's SqlClient is handed out too, so a test can look at
 * rows or break the schema on purpose.
 */
import { capturingMailer, DomainLive, Features, HmacKey, Limits, PublicBaseUrl } from "@dock/domain"
import { TestDatabaseLive } from "@dock/domain/testing"
import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Cause, ConfigProvider, Context, Effect, Layer, Logger, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { ServerConfig, type ServerConfig as ServerConfigShape } from "../../src/Config.ts"
import { ServerLive } from "../../src/Server.ts"

export const ADMIN_TOKEN = "dock_admin_test-token-for-the-in-process-server"
/** DOCK_SECRET of the in-process server (ServerLive needs one; `dock serve` would generate it). */
export const TEST_SECRET = "test-secret-for-the-in-process-server"

/** One line the server logged. */
export interface LogEntry {
  readonly level: string
  readonly message: string
  readonly annotations: Readonly<Record<string, unknown>>
  /** The pretty-printed cause, when the line carried one. */
  readonly cause: string | undefined
}

export interface RunningServer {
  readonly port: number
  /** http://127.0.0.1:<port> */
  readonly url: string
  readonly adminToken: string
  readonly config: ServerConfigShape
  readonly sql: SqlClient.SqlClient
  /**
   * Runs an effect with every domain service over the server's own database: how a test seeds content that no
   * tool can make yet (pages before the page tools exist) without going around the domain's rules.
   */
  readonly domain: <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof DomainLive>>) => Effect.Effect<A, E>
  /** Everything the server has logged so far (kept in memory rather than printed). */
  readonly logs: () => ReadonlyArray<LogEntry>
}

export class TestServer extends Context.Tag("@dock/server/test/TestServer")<TestServer, RunningServer>() {}

/** A fresh directory for the lifetime of the scope. */
export const scopedTempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

/** ServerConfig read from exactly these variables (nothing from the process environment). */
export const configFrom = (env: Record<string, string>) =>
  Effect.withConfigProvider(ServerConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

const messageText = (message: unknown) => Array.isArray(message) ? message.map(String).join(" ") : String(message)

/** Records what the server logs, instead of printing it. */
const capturingLogger = (entries: Array<LogEntry>) =>
  Logger.make(({ annotations, cause, logLevel, message }) => {
    entries.push({
      level: logLevel.label,
      message: messageText(message),
      annotations: Object.fromEntries(annotations),
      cause: Cause.isEmpty(cause) ? undefined : Cause.pretty(cause)
    })
  })

/**
 * Starts `ServerLive(config, { database: TestDatabaseLive })` on 127.0.0.1 and an ephemeral port for the
 * lifetime of the scope. `env` adds or overrides configuration variables.
 */
export const startTestServer = (env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const dataDir = yield* scopedTempDir("dock-server-test-")
    const config = yield* configFrom({
      PORT: "0",
      HOST: "127.0.0.1",
      DOCK_DATA_DIR: dataDir,
      DOCK_ADMIN_TOKEN: ADMIN_TOKEN,
      DOCK_SECRET: TEST_SECRET,
      ...env
    }).pipe(Effect.orDie)

    const entries: Array<LogEntry> = []
    const { database, server } = yield* Effect.gen(function*() {
      // Built here rather than inside ServerLive so that tests share the server's database connection.
      const database = yield* Layer.build(TestDatabaseLive)
      const server = yield* Layer.build(ServerLive(config, { database: Layer.succeedContext(database) }))
      return { database, server }
    }).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, capturingLogger(entries))),
      Effect.orDie
    )
    const domainContext = yield* Layer.build(DomainLive.pipe(Layer.provide(Layer.mergeAll(
      Layer.succeedContext(database),
      Layer.succeed(Limits, Limits.defaults),
      Layer.succeed(Features, Features.defaults),
      Layer.succeed(HmacKey, Redacted.make(TEST_SECRET)),
      Layer.succeed(PublicBaseUrl, config.baseUrl),
      capturingMailer
    )))).pipe(Effect.orDie)
    const address = Context.get(server, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage(`Expected a TCP address, got ${address.path}`)
    const port = address.port
    return {
      port,
      url: `http://127.0.0.1:${port}`,
      adminToken: ADMIN_TOKEN,
      config,
      sql: Context.get(database, SqlClient.SqlClient),
      domain: (effect) => Effect.provide(effect, domainContext),
      logs: () => [...entries]
    } satisfies RunningServer
  })

/**
 * One server per test file: `layer(TestServerLive, { excludeTestServices: true })("…", (it) => …)`. Without
 * `excludeTestServices` the server would be built on the TestClock and stamp every row with 1970.
 */
export const TestServerLive = Layer.scoped(TestServer, startTestServer())
