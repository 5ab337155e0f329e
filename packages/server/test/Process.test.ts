/**
 * The server as `npm start` runs it, in a child process: start-up time, data surviving a restart, refusing bad
 * configuration, graceful shutdown with a request in flight, and two servers migrating one database together.
 * The tests in this file run one after another (vitest's default within a file): each starts PGlite or Node
 * processes, and the machine may have only two cores.
 */
import { latestMigrationId } from "@dock/domain"
import { migrations } from "@dock/migrations"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Option } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ADMIN_TOKEN_FILE } from "../src/Secrets.ts"
import { bearer, fetchReply, postJson, unique } from "./support/Http.ts"
import {
  accepts,
  openAccepted,
  pollUntil,
  ProcessFailed,
  runToExit,
  spawnServer,
  spawnTwoServersOnOneDatabase
} from "./support/ServerProcess.ts"
import { scopedTempDir } from "./support/TestServer.ts"

const PROCESS_TEST_TIMEOUT = 180_000

/** Start-up and shutdown times seen in this run, printed at the end for the record. */
const timings: Array<string> = []
const record = (label: string, millis: number) => Effect.sync(() => void timings.push(`${label}: ${millis} ms`))
afterAll(() => {
  if (timings.length > 0) console.log(`Server process timings:\n  ${timings.join("\n  ")}`)
})

/** `POST /admin/users` accepted by the server (openAccepted), its body still the caller's to write. */
const openInFlightCreate = (port: number, token: string, body: string) =>
  openAccepted(port, {
    path: "/admin/users",
    headers: { "content-type": "application/json", ...bearer(token) },
    contentLength: Buffer.byteLength(body),
    agent: false,
    within: "20 seconds"
  })

describe("the server process", () => {
  // How fast it starts is a figure (recorded here, measured by bench:startup), not a pass mark: on a loaded CI
  // machine a fresh start took 11-19 s where it takes 3-4 s idle.
  it.live("starts on a fresh data directory, and keeps its data across a restart", () =>
    Effect.gen(function*() {
      const dataDir = yield* scopedTempDir("dock-process-")
      const first = yield* spawnServer({ DOCK_DATA_DIR: dataDir })
      yield* record("fresh start to /healthz", first.startupMillis)

      const ready = yield* fetchReply(`${first.url}/readyz`)
      expect(ready.status).toBe(200)
      expect(ready.json).toEqual({ status: "ready", migration: latestMigrationId })

      const tokenFile = Path.join(dataDir, ADMIN_TOKEN_FILE)
      expect(Fs.statSync(tokenFile).mode & 0o777).toBe(0o600)
      const token = Fs.readFileSync(tokenFile, "utf8").trim()
      expect(token).toMatch(/^dock_admin_/)
      const email = `restart-${unique()}@example.com`
      const created = yield* postJson(`${first.url}/admin/users`, { email }, bearer(token))
      expect(created.status).toBe(201)
      expect(created.json).toMatchObject({ email, kind: "person", confirmed: true })
      // The logs mention the token file, never the token.
      expect(first.stdout()).toContain(tokenFile)
      expect(first.stdout() + first.stderr()).not.toContain(token)

      const stopping = Date.now()
      yield* first.signal("SIGTERM")
      const exit = yield* first.exit("30 seconds")
      yield* record("SIGTERM to exit (idle)", Date.now() - stopping)
      expect(exit).toEqual({ code: 0, signal: null })

      const second = yield* spawnServer({ DOCK_DATA_DIR: dataDir })
      yield* record("restart to /healthz", second.startupMillis)
      expect(Fs.readFileSync(tokenFile, "utf8").trim()).toBe(token)
      const listed = yield* fetchReply(`${second.url}/admin/users?limit=1000`, { headers: bearer(token) })
      expect(listed.status).toBe(200)
      expect(listed.json).toContainEqual(created.json)
      const again = yield* postJson(`${second.url}/admin/users`, { email }, bearer(token))
      expect(again.status).toBe(409)
    }).pipe(Effect.scoped), PROCESS_TEST_TIMEOUT)

  it.live("refuses an invalid PORT: exit code 1 and one stderr line naming PORT", () =>
    Effect.gen(function*() {
      const dataDir = yield* scopedTempDir("dock-process-")
      const result = yield* runToExit({ PORT: "abc", DOCK_DATA_DIR: dataDir })
      expect(result.code).toBe(1)
      const lines = result.stderr.split("\n").filter((line) => line.includes("PORT"))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^Invalid configuration: .*PORT.*abc/)
      expect(result.stdout).not.toContain("Listening")
      // Nothing was started, so nothing was written.
      expect(Fs.readdirSync(dataDir)).toEqual([])
    }).pipe(Effect.scoped), PROCESS_TEST_TIMEOUT)

  it.live("refuses production with an http base URL: exit code 1 naming DOCK_BASE_URL", () =>
    Effect.gen(function*() {
      const dataDir = yield* scopedTempDir("dock-process-")
      const result = yield* runToExit({
        DOCK_ENV: "production",
        DOCK_SECRET: "s3cret",
        DOCK_BASE_URL: "http://dock.example",
        DOCK_DATA_DIR: dataDir
      })
      expect(result.code).toBe(1)
      const lines = result.stderr.split("\n").filter((line) => line.includes("DOCK_BASE_URL"))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^Invalid configuration: /)
      expect(result.stdout).not.toContain("Listening")
    }).pipe(Effect.scoped), PROCESS_TEST_TIMEOUT)

  it.live(
    "on SIGTERM stops accepting connections but finishes the request in flight, then exits 0",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* scopedTempDir("dock-process-")
        const token = `dock_admin_${unique()}`
        const server = yield* spawnServer({
          DOCK_DATA_DIR: dataDir,
          DOCK_ADMIN_TOKEN: token,
          DOCK_SHUTDOWN_GRACE: "30 seconds"
        })
        yield* record("start to /healthz (shutdown test)", server.startupMillis)

        const email = `slow-${unique()}@example.com`
        const body = JSON.stringify({ email })
        const half = Math.floor(body.length / 2)
        const { answered, request } = yield* openInFlightCreate(server.port, token, body)
        request.write(body.slice(0, half))

        const stopping = Date.now()
        yield* server.signal("SIGTERM")
        yield* pollUntil("new connections refused", Effect.map(accepts(server.port), (open) => !open), {
          within: "20 seconds",
          every: "25 millis"
        })
        yield* record("SIGTERM to connections refused", Date.now() - stopping)
        expect(Option.isNone(yield* Deferred.poll(answered))).toBe(true)

        request.end(body.slice(half))
        const reply = yield* Deferred.await(answered).pipe(Effect.timeoutFail({
          duration: "20 seconds",
          onTimeout: () => new ProcessFailed({ message: "The request in flight was never answered" })
        }))
        expect(reply.status).toBe(201)
        expect(JSON.parse(reply.text)).toMatchObject({ email, kind: "person", confirmed: true })
        // A keep-alive client is told not to reuse the connection of a draining server.
        expect(reply.connection).toBe("close")

        const exit = yield* server.exit("40 seconds")
        yield* record("SIGTERM to exit (request in flight)", Date.now() - stopping)
        expect(exit).toEqual({ code: 0, signal: null })
        expect(server.stdout()).toContain("Shutting down: finishing in-flight requests")
        expect(server.stdout()).not.toContain("closing them")
      }).pipe(Effect.scoped),
    PROCESS_TEST_TIMEOUT
  )

  it.live("cuts a request still running when the grace period ends, then exits 0", () =>
    Effect.gen(function*() {
      const dataDir = yield* scopedTempDir("dock-process-")
      const token = `dock_admin_${unique()}`
      const server = yield* spawnServer({
        DOCK_DATA_DIR: dataDir,
        DOCK_ADMIN_TOKEN: token,
        DOCK_SHUTDOWN_GRACE: "1 second"
      })
      const body = JSON.stringify({ email: `stalled-${unique()}@example.com` })
      const { answered, request } = yield* openInFlightCreate(server.port, token, body)
      // Half a body, and the rest never comes: this request cannot finish by itself.
      request.write(body.slice(0, 5))

      const stopping = Date.now()
      yield* server.signal("SIGTERM")
      const exit = yield* server.exit("30 seconds")
      const took = Date.now() - stopping
      yield* record("SIGTERM to exit (stalled request, 1 s grace)", took)
      expect(exit).toEqual({ code: 0, signal: null })
      expect(took).toBeGreaterThanOrEqual(900)
      expect(server.stdout()).toContain("Requests still running after 1s: closing them")
      // The client sees its connection cut, not an answer.
      expect((yield* Effect.either(Deferred.await(answered)))._tag).toBe("Left")
    }).pipe(Effect.scoped), PROCESS_TEST_TIMEOUT)
})

describe.runIf(process.env["DOCK_TEST_DATABASE_URL"] !== undefined)(
  "two server processes on one PostgreSQL database",
  () => {
    it.live(
      "start together, both become ready, and every migration is applied exactly once",
      () =>
        Effect.gen(function*() {
          const { databaseUrl, servers } = yield* spawnTwoServersOnOneDatabase({
            DOCK_ADMIN_TOKEN: "dock_admin_two-processes"
          })
          for (const [n, server] of servers.entries()) {
            yield* record(`PostgreSQL server ${n + 1} start to /healthz`, server.startupMillis)
          }
          for (const server of servers) {
            const ready = yield* fetchReply(`${server.url}/readyz`)
            expect(ready.status).toBe(200)
            expect(ready.json).toEqual({ status: "ready", migration: latestMigrationId })
          }
          // Neither server used its data directory for a database.
          for (const server of servers) {
            expect(Fs.existsSync(Path.join(server.dataDir, "pgdata"))).toBe(false)
          }

          const rows = yield* Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            return yield* sql<{ id: number; count: string }>`
          select id, count(*) as count from dock_migrations group by id order by id`
          }).pipe(Effect.provide(PgClient.layer({ url: databaseUrl, maxConnections: 1 })))
          expect(rows.map((row) => [row.id, Number(row.count)])).toEqual(
            [...migrations].sort((a, b) => a.id - b.id).map((m) => [m.id, 1])
          )

          // Both serve the same data.
          const [a, b] = servers as [typeof servers[0], typeof servers[0]]
          const created = yield* postJson(
            `${a.url}/admin/users`,
            { email: `shared-${unique()}@example.com` },
            bearer("dock_admin_two-processes")
          )
          expect(created.status).toBe(201)
          const listed = yield* fetchReply(`${b.url}/admin/users?limit=1000`, {
            headers: bearer("dock_admin_two-processes")
          })
          expect(listed.json).toContainEqual(created.json)
        }).pipe(Effect.scoped),
      PROCESS_TEST_TIMEOUT
    )
  }
)
