import { latestMigrationId } from "@dock/domain"
import { TestDatabaseLive } from "@dock/domain/testing"
import { migrations } from "@dock/migrations"
import { ServerConfig, ServerLive } from "@dock/server"
import { HttpServer } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { dock } from "./support/Dock.ts"

const ADMIN_TOKEN = "dock_admin_cli-test-token"

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-cli-test-"))
const config = Effect.runSync(
  Effect.withConfigProvider(
    ServerConfig,
    ConfigProvider.fromMap(new Map([["PORT", "0"], ["DOCK_DATA_DIR", dataDir], ["DOCK_ADMIN_TOKEN", ADMIN_TOKEN]]))
  )
)
const RunningServer = ServerLive(config, { database: TestDatabaseLive })

const serverUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as HttpServer.TcpAddress
  return `http://127.0.0.1:${address.port}`
})

layer(RunningServer, { timeout: 120_000, excludeTestServices: true })("dock users", (it) => {
  it.effect("users create --json prints exactly the user document", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const run = yield* dock([
        "users",
        "create",
        "--email",
        "grace@example.com",
        "--url",
        url,
        "--admin-token",
        ADMIN_TOKEN,
        "--json"
      ])
      expect(run.code).toBe(0)
      expect(run.stderr).toBe("")
      const user = JSON.parse(run.stdout)
      expect(Object.keys(user).sort()).toEqual(["confirmed", "default_bucket_id", "email", "id", "kind", "username"])
      expect(user).toMatchObject({ username: "grace", email: "grace@example.com", kind: "person", confirmed: true })

      const listed = yield* dock(["users", "list", "--url", url, "--json"], { DOCK_ADMIN_TOKEN: ADMIN_TOKEN })
      expect(listed.code).toBe(0)
      expect(JSON.parse(listed.stdout).map((u: { id: string }) => u.id)).toContain(user.id)
    }), 120_000)

  it.effect("human output and a username of one's choosing", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const run = yield* dock(["users", "create", "--email", "h@example.com", "--username", "hopper", "--url", url], {
        DOCK_ADMIN_TOKEN: ADMIN_TOKEN
      })
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(/^Created user hopper {2}h@example\.com {2}person/)
    }), 120_000)

  it.effect("a wrong admin token is one clear line on stderr and exit code 1", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const run = yield* dock(["users", "list", "--url", url, "--admin-token", "dock_admin_wrong", "--json"])
      expect(run.code).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr.trim().split("\n")).toEqual([
        `dock: The server at ${url} rejected the admin token: Missing or wrong admin token`
      ])
    }), 120_000)

  it.effect("a taken email is reported with its code", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const args = ["users", "create", "--email", "twice@example.com", "--url", url, "--admin-token", ADMIN_TOKEN]
      expect((yield* dock(args)).code).toBe(0)
      const again = yield* dock(args)
      expect(again.code).toBe(1)
      expect(again.stderr.trim()).toBe("dock: conflict: A user with this email already exists")
    }), 120_000)
})

layer(NodeContext.layer)("dock without a server", (it) => {
  it.effect("an unreachable server is one clear line and exit code 1", () =>
    Effect.gen(function*() {
      const run = yield* dock(["users", "list", "--url", "http://127.0.0.1:9", "--admin-token", ADMIN_TOKEN])
      expect(run.code).toBe(1)
      expect(run.stderr.trim()).toBe("dock: Cannot reach the Dock server at http://127.0.0.1:9 (transport error)")
    }), 120_000)

  it.effect("no admin token anywhere says where it looked", () =>
    Effect.gen(function*() {
      const empty = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-cli-empty-"))
      const run = yield* dock(["users", "list", "--url", "http://127.0.0.1:9"], { DOCK_DATA_DIR: empty })
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(`No admin token: pass --admin-token, set DOCK_ADMIN_TOKEN`)
      expect(run.stderr).toContain(Path.join(empty, "admin-token"))
    }), 120_000)

  it.effect("--help documents every command and its options", () =>
    Effect.gen(function*() {
      const top = yield* dock(["--help"])
      expect(top.code).toBe(0)
      for (const command of ["serve", "migrate", "users"]) expect(top.stdout).toContain(command)
      const create = yield* dock(["users", "create", "--help"])
      expect(create.code).toBe(0)
      for (const option of ["--email", "--username", "--url", "--admin-token", "--json"]) {
        expect(create.stdout).toContain(option)
      }
    }), 120_000)

  it.effect("migrate applies the migrations once to the embedded database", () =>
    Effect.gen(function*() {
      const fresh = (label: string) => Fs.mkdtempSync(Path.join(Os.tmpdir(), `dock-cli-migrate-${label}-`))
      // A cache of its own, without a template: the first data directory runs initdb and every migration.
      const cache = fresh("cache")
      const env = (dataDir: string) => ({ DOCK_DATA_DIR: dataDir, DOCK_CACHE_DIR: cache, DATABASE_URL: "" })
      const dir = fresh("data")
      const migrate = (dataDir: string) =>
        Effect.map(dock(["migrate", "--json"], env(dataDir)), (run) => ({
          code: run.code,
          answer: JSON.parse(run.stdout.trim().split("\n").at(-1)!)
        }))
      expect(yield* migrate(dir)).toEqual({
        code: 0,
        answer: { applied: migrations.map((m) => m.id), latest: latestMigrationId }
      })
      expect(yield* migrate(dir)).toEqual({ code: 0, answer: { applied: [], latest: latestMigrationId } })
      // Another fresh data directory starts from the template that first run saved: migrated already.
      expect(yield* migrate(fresh("data"))).toEqual({ code: 0, answer: { applied: [], latest: latestMigrationId } })
    }), 120_000)
})
