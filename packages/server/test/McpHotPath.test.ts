/**
 * The MCP hot path (issue 15): a read tool call is one statement for the bearer check (the token, with the
 * request counted) and one for the Dock with the page. What that must not cost: a revocation or an expiry takes
 * effect on the very next request, on a warmed-up path and on another server process; the per-token request rate
 * stays exact under parallel calls, in one process and across two processes sharing one PostgreSQL database.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { bearer, jsonRpcAnswer, postJson, rawToolCall, type Reply, unique } from "./support/Http.ts"
import { awayFromWindowEnd, statusCounts } from "./support/Identity.ts"
import { spawnTwoServersOnOneDatabase } from "./support/ServerProcess.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const LIMIT = 10
const ADMIN = "dock_admin_hot-path"

/** A tool call's structured content; fails the test when the call was refused. */
const succeeded = (reply: Reply) => {
  expect(reply.status, reply.text.slice(0, 300)).toBe(200)
  const result = jsonRpcAnswer(reply).result
  expect(result.isError, JSON.stringify(result.structuredContent)).not.toBe(true)
  return result.structuredContent
}

const expectUnauthorized = (reply: Reply) => {
  expect(reply.status).toBe(401)
  expect(reply.json.error.code).toBe("unauthorized")
  expect(reply.headers["www-authenticate"]).toContain("error=\"invalid_token\"")
}

/** A user of the server at `url` with a write token (and its id), made through the admin API. */
const userWithToken = (url: string, adminToken: string) =>
  Effect.gen(function*() {
    const headers = bearer(adminToken)
    const user = yield* postJson(`${url}/admin/users`, { email: `hot-${unique()}@example.com` }, headers)
    expect(user.status, user.text).toBe(201)
    const token = yield* postJson(`${url}/admin/tokens`, { user: user.json.email, scopes: ["mcp:write"] }, headers)
    expect(token.status, token.text).toBe(201)
    return { username: user.json.username as string, token: token.json.token as string, id: token.json.id as string }
  })

/** A public Dock with one page, made over MCP; answers get_web_page's arguments for it. */
const dockWithPage = (url: string, token: string) =>
  Effect.gen(function*() {
    const dock =
      succeeded(yield* rawToolCall(url, token, "create_bucket", { title: `Hot ${unique()}`, visibility: "public" }))
        .bucket
    const bucket = `${dock.owner.username}/${dock.slug}`
    succeeded(
      yield* rawToolCall(url, token, "push_web_page", {
        bucket,
        content_type: "html",
        page_slug: "home",
        page_content: "<h1>Home</h1><p>Read often.</p>"
      })
    )
    return { bucket, page_slug: "home" }
  })

const revoke = (url: string, adminToken: string, tokenId: string) =>
  Effect.gen(function*() {
    const reply = yield* postJson(`${url}/admin/tokens/${tokenId}/revoke`, {}, bearer(adminToken))
    expect(reply.status, reply.text).toBe(200)
  })

const LimitedServer = Layer.scoped(
  TestServer,
  startTestServer({ DOCK_TOKEN_REQUESTS_PER_MINUTE: String(LIMIT), DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER: "100" })
)

layer(LimitedServer, { excludeTestServices: true })("the MCP hot path", (it) => {
  it.effect("a revoked token: the very next get_web_page is 401, however warm the path was", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* userWithToken(server.url, server.adminToken)
      const reader = yield* userWithToken(server.url, server.adminToken)
      const page = yield* dockWithPage(server.url, owner.token)
      // The same token, warmed up by calls just before (whatever a process might remember of it).
      for (let n = 0; n < 3; n++) {
        expect(succeeded(yield* rawToolCall(server.url, owner.token, "get_web_page", page)).part.slug).toBe("home")
      }
      yield* revoke(server.url, server.adminToken, owner.id)
      expectUnauthorized(yield* rawToolCall(server.url, owner.token, "get_web_page", page))
      // Other tokens are unaffected.
      expect(jsonRpcAnswer(yield* rawToolCall(server.url, reader.token, "list_buckets", {})).result.isError).not.toBe(
        true
      )
    }))

  it.effect("an expiry takes effect on the very next get_web_page", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* userWithToken(server.url, server.adminToken)
      const page = yield* dockWithPage(server.url, owner.token)
      succeeded(yield* rawToolCall(server.url, owner.token, "get_web_page", page))
      yield* server.sql`update tokens set expires_at = ${new Date(Date.now() - 1)} where id = ${owner.id}`
      expectUnauthorized(yield* rawToolCall(server.url, owner.token, "get_web_page", page))
    }))

  it.effect(`30 parallel get_web_page calls against a limit of ${LIMIT} a minute: exactly ${LIMIT} pass`, () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* userWithToken(server.url, server.adminToken)
      // The Dock and page are made with another token of the same user, so the reader's minute starts empty.
      const page = yield* dockWithPage(server.url, owner.token)
      const headers = bearer(server.adminToken)
      const reader = yield* postJson(
        `${server.url}/admin/tokens`,
        { user: owner.username, scopes: ["mcp:read"] },
        headers
      )
      expect(reader.status, reader.text).toBe(201)
      yield* awayFromWindowEnd("1 minute", "15 seconds")
      const replies = yield* Effect.all(
        Array.from({ length: 30 }, () => rawToolCall(server.url, reader.json.token, "get_web_page", page)),
        { concurrency: "unbounded" }
      )
      expect(statusCounts(replies)).toEqual({ 200: LIMIT, 429: 30 - LIMIT })
      for (const reply of replies) {
        if (reply.status === 200) expect(succeeded(reply).part.slug).toBe("home")
        else expect(reply.json.error).toMatchObject({ code: "rate_limited", status: 429 })
      }
      // One counter row holds the window's count: every call counted once, the refused ones too.
      const rows = yield* server.sql<{ count: number }>`select count from request_counters
        where key = ${`token-requests:${reader.json.id}`}`
      expect(rows.map((row) => row.count)).toEqual([30])
    }))
})

describe.runIf(process.env["DOCK_TEST_DATABASE_URL"] !== undefined)("the MCP hot path across two processes", () => {
  it.live(
    `40 parallel get_web_page calls over two processes with a limit of ${LIMIT}: exactly ${LIMIT} pass; a ` +
      "revocation through one process is 401 on the other at once",
    () =>
      Effect.gen(function*() {
        const { databaseUrl, servers: [a, b] } = yield* spawnTwoServersOnOneDatabase({
          DOCK_ADMIN_TOKEN: ADMIN,
          DOCK_SECRET: "hot-path-secret",
          DOCK_TOKEN_REQUESTS_PER_MINUTE: String(LIMIT),
          DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER: "100"
        })
        const owner = yield* userWithToken(a.url, ADMIN)
        const page = yield* dockWithPage(a.url, owner.token)
        const reader = yield* userWithToken(a.url, ADMIN)
        yield* awayFromWindowEnd("1 minute", "20 seconds")

        const replies = yield* Effect.all(
          Array.from(
            { length: 40 },
            (_, n) => rawToolCall(n % 2 === 0 ? a.url : b.url, reader.token, "get_web_page", page)
          ),
          { concurrency: "unbounded" }
        )
        expect(statusCounts(replies)).toEqual({ 200: LIMIT, 429: 40 - LIMIT })
        for (const reply of replies.filter((reply) => reply.status === 200)) {
          expect(succeeded(reply).part.slug).toBe("home")
        }
        const counted = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ count: number }>`select count from request_counters
            where key = ${`token-requests:${reader.id}`}`
        }).pipe(Effect.provide(PgClient.layer({ url: databaseUrl, maxConnections: 1 })))
        expect(counted.map((row) => row.count)).toEqual([40])

        // The owner reads through both processes; revoked through one, the next call through the other is 401.
        succeeded(yield* rawToolCall(a.url, owner.token, "get_web_page", page))
        succeeded(yield* rawToolCall(b.url, owner.token, "get_web_page", page))
        yield* revoke(a.url, ADMIN, owner.id)
        expectUnauthorized(yield* rawToolCall(b.url, owner.token, "get_web_page", page))
        expectUnauthorized(yield* rawToolCall(a.url, owner.token, "get_web_page", page))
      }).pipe(Effect.scoped),
    300_000
  )
})
