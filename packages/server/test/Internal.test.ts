/**
 * Infrastructure failures at the edge, provoked by breaking this file's own database: a defect becomes 500
 * `internal` with a request id and no internals, and /readyz reports 503 when migrations are missing.
 */
import { latestMigrationId } from "@dock/domain"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, fetchReply, postJson, unique } from "./support/Http.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

layer(TestServerLive, { excludeTestServices: true })("infrastructure failures", (it) => {
  it.effect("a defect is 500 internal, with the request id in the body and the header, and is logged", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.sql`drop table if exists users cascade`
      const reply = yield* postJson(
        `${server.url}/admin/users`,
        { email: `gone-${unique()}@example.com` },
        bearer(server.adminToken)
      )
      expect(reply.status).toBe(500)
      const requestId = reply.headers["x-request-id"]
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
      expect(reply.json).toEqual({
        error: {
          code: "internal",
          status: 500,
          message: `Internal error (request id ${requestId})`,
          request_id: requestId
        }
      })
      expect(reply.text).not.toMatch(/users|relation|SqlError|sql/i)
      expect(reply.headers["x-content-type-options"]).toBe("nosniff")
      expect(reply.headers["cache-control"]).toBe("no-store")

      const logged = server.logs().filter((entry) => entry.annotations["request_id"] === requestId)
      expect(logged.map((entry) => [entry.level, entry.message])).toEqual([
        ["ERROR", "Unhandled failure"],
        ["INFO", "POST /admin/users 500"]
      ])
      expect(logged[0]!.cause).toMatch(/SqlError/)
    }))

  it.effect("/readyz is 503 unavailable when the migrations are missing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.sql`delete from dock_migrations`
      const reply = yield* fetchReply(`${server.url}/readyz`)
      expect(reply.status).toBe(503)
      expect(reply.json).toEqual({
        error: {
          code: "unavailable",
          status: 503,
          message: `The database is at migration 0; this server needs ${latestMigrationId}`
        }
      })
      expect(reply.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
      // Liveness does not depend on the database.
      const health = yield* fetchReply(`${server.url}/healthz`)
      expect(health.status).toBe(200)
      expect(health.json).toEqual({ status: "ok" })
    }))
})
