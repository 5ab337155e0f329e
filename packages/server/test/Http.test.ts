/** The HTTP edge of the in-process server: probes, the error body, security headers, Host checks, admin API. */
import { latestMigrationId } from "@dock/domain"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, fetchReply, nodeRequest, postJson, type Reply, unique } from "./support/Http.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const expectSecurityHeaders = (reply: Reply) => {
  expect(reply.headers["x-content-type-options"]).toBe("nosniff")
  expect(reply.headers["referrer-policy"]).toBe("no-referrer")
  expect(reply.headers["x-frame-options"]).toBe("DENY")
  expect(reply.headers["content-security-policy"]).toMatch(/frame-ancestors 'none'/)
  expect(reply.headers["x-request-id"]).toMatch(UUID)
}

const errorBody = (code: string, status: number, message: unknown = expect.any(String)) => ({
  error: { code, status, message }
})

layer(TestServerLive, { excludeTestServices: true })("HTTP edge", (it) => {
  it.effect("GET /healthz answers 200 ok", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* fetchReply(`${server.url}/healthz`)
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toMatch(/^application\/json/)
      expect(reply.json).toEqual({ status: "ok" })
    }))

  it.effect("GET /readyz answers 200 with the latest migration", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* fetchReply(`${server.url}/readyz`)
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({ status: "ready", migration: latestMigrationId })
      expect(latestMigrationId).toBeGreaterThanOrEqual(1)
    }))

  it.effect("an unknown route is 404 not_found with the error body", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* fetchReply(`${server.url}/no/such/route?x=1`)
      expect(reply.status).toBe(404)
      expect(reply.headers["content-type"]).toMatch(/^application\/json/)
      expect(reply.json).toEqual(errorBody("not_found", 404, "No route for GET /no/such/route"))
    }))

  it.effect("every response carries the security headers and its own request id", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const ok = yield* fetchReply(`${server.url}/healthz`)
      const notFound = yield* fetchReply(`${server.url}/missing`)
      const unauthorized = yield* fetchReply(`${server.url}/admin/users`)
      const badRequest = yield* postJson(`${server.url}/admin/users`, "{not json", bearer(server.adminToken))
      const forbidden = yield* nodeRequest({ port: server.port, path: "/healthz", headers: { host: "evil.example" } })
      expect([ok.status, notFound.status, unauthorized.status, badRequest.status, forbidden.status])
        .toEqual([200, 404, 401, 400, 403])
      for (const reply of [ok, notFound, unauthorized, badRequest, forbidden]) expectSecurityHeaders(reply)

      const again = yield* fetchReply(`${server.url}/healthz`)
      expect(again.headers["x-request-id"]).toMatch(UUID)
      expect(again.headers["x-request-id"]).not.toBe(ok.headers["x-request-id"])
      const ids = new Set(
        [ok, notFound, unauthorized, badRequest, forbidden, again].map((r) => r.headers["x-request-id"])
      )
      expect(ids.size).toBe(6)
    }))

  it.effect("each request is logged once with its request id, status and duration", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* fetchReply(`${server.url}/no-such-page-${unique()}`)
      const requestId = reply.headers["x-request-id"]
      const lines = server.logs().filter((entry) => entry.annotations["request_id"] === requestId)
      expect(lines).toHaveLength(1)
      expect(lines[0]!.level).toBe("INFO")
      expect(lines[0]!.message).toMatch(/^GET \/no-such-page-[0-9a-f]+ 404$/)
      expect(lines[0]!.annotations["status"]).toBe(404)
      expect(lines[0]!.annotations["duration_ms"]).toEqual(expect.any(Number))
    }))

  it.effect("the admin API answers 401 unauthorized without the right bearer token", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const missing = yield* fetchReply(`${server.url}/admin/users`)
      const wrong = yield* fetchReply(`${server.url}/admin/users`, { headers: bearer("dock_admin_wrong") })
      const wrongLonger = yield* fetchReply(`${server.url}/admin/users`, { headers: bearer(`${server.adminToken}x`) })
      const notBearer = yield* fetchReply(`${server.url}/admin/users`, {
        headers: { authorization: `Basic ${btoa(`admin:${server.adminToken}`)}` }
      })
      const create = yield* postJson(
        `${server.url}/admin/users`,
        { email: `nobody-${unique()}@example.com` },
        bearer("x")
      )
      for (const reply of [missing, wrong, wrongLonger, notBearer, create]) {
        expect(reply.status).toBe(401)
        expect(reply.json).toEqual(errorBody("unauthorized", 401))
      }
      expect(wrong.json.error.message).toBe("Missing or wrong admin token")
    }))

  it.effect("POST /admin/users creates a confirmed person: 201 with exactly the user's fields", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const id = unique()
      const reply = yield* postJson(
        `${server.url}/admin/users`,
        { email: `Ada.${id}@Example.com` },
        bearer(server.adminToken)
      )
      expect(reply.status).toBe(201)
      expect(Object.keys(reply.json).sort()).toEqual(
        ["confirmed", "default_bucket_id", "email", "id", "kind", "username"]
      )
      expect(reply.json).toEqual({
        id: expect.any(String),
        username: `ada-${id}`,
        email: `ada.${id}@example.com`,
        kind: "person",
        confirmed: true,
        default_bucket_id: expect.any(String)
      })
      const rows = yield* server.sql<{ username: string; email: string; default_dock_id: string; created_at: Date }>`
        select username, email, default_dock_id, created_at from users where id = ${reply.json.id}`
      expect(rows).toEqual([{
        username: `ada-${id}`,
        email: `ada.${id}@example.com`,
        default_dock_id: reply.json.default_bucket_id,
        created_at: expect.any(Date)
      }])
      expect(Math.abs(rows[0]!.created_at.getTime() - Date.now())).toBeLessThan(60_000)
    }))

  it.effect("POST /admin/users with an explicit username uses it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const id = unique()
      const reply = yield* postJson(
        `${server.url}/admin/users`,
        { email: `x-${id}@example.com`, username: `grace-${id}` },
        bearer(server.adminToken)
      )
      expect(reply.status).toBe(201)
      expect(reply.json.username).toBe(`grace-${id}`)
    }))

  it.effect("a duplicate email is 409 conflict", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const email = `dup-${unique()}@example.com`
      const first = yield* postJson(`${server.url}/admin/users`, { email }, bearer(server.adminToken))
      expect(first.status).toBe(201)
      const second = yield* postJson(
        `${server.url}/admin/users`,
        { email: email.toUpperCase() },
        bearer(server.adminToken)
      )
      expect(second.status).toBe(409)
      expect(second.json).toEqual({
        error: {
          code: "conflict",
          status: 409,
          message: "A user with this email already exists",
          details: { field: "email" }
        }
      })
      const rows = yield* server.sql<{ n: string }>`select count(*) as n from users where email = ${email}`
      expect(Number(rows[0]!.n)).toBe(1)
    }))

  it.effect("a body that is not JSON is 400 bad_request", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* postJson(`${server.url}/admin/users`, `{"email": "half`, bearer(server.adminToken))
      expect(reply.status).toBe(400)
      expect(reply.json).toEqual(errorBody("bad_request", 400, "The request body is not valid JSON"))
    }))

  it.effect("a body of the wrong shape is 400 validation_error naming the path", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const cases: ReadonlyArray<unknown> = [{}, { username: "someone" }, { email: 42 }, { email: null }]
      for (const body of cases) {
        const reply = yield* postJson(`${server.url}/admin/users`, body, bearer(server.adminToken))
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.json.error.code).toBe("validation_error")
        expect(reply.json.error.status).toBe(400)
        expect(reply.json.error.message).toMatch(/^Invalid email: /)
        expect(reply.json.error.details.path).toEqual(["email"])
      }
    }))

  it.effect("an invalid email address is 400 validation_error from the domain", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* postJson(`${server.url}/admin/users`, { email: "not-an-address" }, bearer(server.adminToken))
      expect(reply.status).toBe(400)
      expect(reply.json).toEqual({
        error: {
          code: "validation_error",
          status: 400,
          message: "email is not a valid email address",
          details: { field: "email" }
        }
      })
    }))

  it.effect("GET /admin/users lists created users", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const created = yield* postJson(
        `${server.url}/admin/users`,
        { email: `list-${unique()}@example.com` },
        bearer(server.adminToken)
      )
      expect(created.status).toBe(201)
      const reply = yield* fetchReply(`${server.url}/admin/users?limit=1000`, { headers: bearer(server.adminToken) })
      expect(reply.status).toBe(200)
      expect(reply.json).toContainEqual(created.json)
    }))

  it.effect("GET /admin/users honours limit and offset", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (let n = 0; n < 2; n++) {
        const created = yield* postJson(
          `${server.url}/admin/users`,
          { email: `page-${unique()}@example.com` },
          bearer(server.adminToken)
        )
        expect(created.status).toBe(201)
      }
      const all = yield* fetchReply(`${server.url}/admin/users?limit=1000`, { headers: bearer(server.adminToken) })
      const page = yield* fetchReply(`${server.url}/admin/users?limit=1&offset=1`, {
        headers: bearer(server.adminToken)
      })
      expect(page.status).toBe(200)
      expect(page.json).toEqual([all.json[1]])
    }))

  it.effect("GET /admin/users?limit=0 is 400 validation_error", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (const query of ["limit=0", "limit=1001", "limit=abc", "offset=-1"]) {
        const reply = yield* fetchReply(`${server.url}/admin/users?${query}`, { headers: bearer(server.adminToken) })
        expect(reply.status, query).toBe(400)
        expect(reply.json.error.code, query).toBe("validation_error")
        expect(reply.json.error.status).toBe(400)
        expect(reply.json.error.details.path).toEqual([query.split("=")[0]])
      }
    }))

  it.effect("a foreign Host header is 403 forbidden", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (const host of ["evil.example", `evil.example:${server.port}`, "localhost.evil.example"]) {
        const reply = yield* nodeRequest({ port: server.port, path: "/healthz", headers: { host } })
        expect(reply.status, host).toBe(403)
        expect(reply.json).toEqual(errorBody("forbidden", 403, `This server does not answer for the host ${host}`))
      }
      const admin = yield* nodeRequest({
        port: server.port,
        method: "POST",
        path: "/admin/users",
        headers: { host: "evil.example", "content-type": "application/json", ...bearer(server.adminToken) },
        body: JSON.stringify({ email: `host-${unique()}@example.com` })
      })
      expect(admin.status).toBe(403)
      expect(admin.json.error.code).toBe("forbidden")
    }))

  it.effect("loopback Host headers are accepted in development", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      expect(server.config.env).toBe("development")
      for (
        const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, `[::1]:${server.port}`, "LOCALHOST"]
      ) {
        const reply = yield* nodeRequest({ port: server.port, path: "/healthz", headers: { host } })
        expect(reply.status, host).toBe(200)
        expect(reply.json).toEqual({ status: "ok" })
      }
    }))
})
