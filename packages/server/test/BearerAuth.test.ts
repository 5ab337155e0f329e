/**
 * Bearer authentication (security "MCP transport and auth", spec §5, architecture §6–§7): a tiny route that
 * authenticates with `authenticateRequest` (what /mcp and /images use), served over real HTTP with the request
 * middleware, on the domain test layer. What reaches the route, and how every kind of bad token is answered.
 */
import {
  Accounts,
  CapturedMail,
  type Limits,
  newToken,
  type RateLimits,
  Registrations,
  Tokens,
  type UserId
} from "@dock/domain"
import { domainTestWith } from "@dock/domain/testing"
import { HttpLayerRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import * as Http from "node:http"
import { authenticateRequest } from "../src/http/BearerAuth.ts"
import { errorResponse } from "../src/http/ErrorResponse.ts"
import { requestMiddleware } from "../src/http/RequestMiddleware.ts"
import { bearer, fetchReply, type Reply, unique } from "./support/Http.ts"
import { awayFromWindowEnd } from "./support/Identity.ts"
import { configFrom } from "./support/TestServer.ts"

const BASE = "https://dock.example"
const CHALLENGE = `Bearer resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`
const REQUESTS_PER_MINUTE = 3

/** Answers the authenticated principal; a refusal is the error response routes answer with. */
const WhoAmI = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Tokens | RateLimits | Limits>()
    const whoami = Effect.flatMap(HttpServerRequest.HttpServerRequest, authenticateRequest).pipe(
      Effect.map((principal) => HttpServerResponse.unsafeJson(principal)),
      Effect.catchAll((error) => Effect.succeed(errorResponse(error))),
      Effect.provide(context)
    )
    yield* router.add("GET", "/whoami", whoami)
  })
)

const BearerServer = Layer.unwrapEffect(
  Effect.map(
    configFrom({ PORT: "0", DOCK_BASE_URL: BASE }).pipe(Effect.orDie),
    (config) =>
      HttpLayerRouter.serve(WhoAmI.pipe(Layer.provide(requestMiddleware(config, []))), { disableLogger: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(() => Http.createServer(), { port: 0, host: "127.0.0.1" }))
      )
  )
).pipe(
  Layer.provideMerge(domainTestWith({ tokenRequestsPerMinute: REQUESTS_PER_MINUTE })),
  Layer.provide(Logger.remove(Logger.defaultLogger))
)

const whoamiUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as HttpServer.TcpAddress
  return `http://127.0.0.1:${address.port}/whoami`
})

const whoami = (headers: Record<string, string> = {}, query = "") =>
  Effect.flatMap(whoamiUrl, (url) => fetchReply(`${url}${query}`, { headers }))

const expectUnauthorized = (reply: Reply, tokenSent: boolean) => {
  expect(reply.status).toBe(401)
  expect(reply.json).toEqual({ error: { code: "unauthorized", status: 401, message: expect.any(String) } })
  expect(reply.headers["www-authenticate"]).toBe(tokenSent ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE)
}

const newUser = Effect.gen(function*() {
  const accounts = yield* Accounts
  return yield* accounts.create({ email: `bearer-${unique()}@example.com`, kind: "person", confirmed: true })
}).pipe(Effect.orDie)

const tokenFor = (userId: UserId, label = "whoami agent") =>
  Effect.flatMap(Tokens, (tokens) => tokens.create({ userId, label, kind: "personal", scopes: ["mcp:read"] })).pipe(
    Effect.orDie
  )

layer(BearerServer, { excludeTestServices: true })("bearer authentication", (it) => {
  it.effect("no Authorization header: 401 with the resource-metadata challenge and no error attribute", () =>
    Effect.gen(function*() {
      const reply = yield* whoami()
      expectUnauthorized(reply, false)
      expect(reply.headers["www-authenticate"]).not.toContain("error=")
      expect(reply.headers["x-request-id"]).toBeDefined()
    }))

  it.effect("malformed, mistyped, unknown, revoked and expired tokens: 401 with error=\"invalid_token\"", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const tokens = yield* Tokens
      const sql = yield* SqlClient.SqlClient
      const valid = yield* tokenFor(user.id)
      const lastChar = valid.token.at(-1)!
      const badChecksum = valid.token.slice(0, -1) + (lastChar === "A" ? "B" : "A")
      const revoked = yield* tokenFor(user.id)
      yield* tokens.revoke(revoked.id)
      const expired = yield* tokenFor(user.id)
      yield* sql`update tokens set expires_at = ${new Date(Date.now() - 60_000)} where id = ${expired.id}`

      const cases: ReadonlyArray<[string, string]> = [
        ["not a bearer scheme", `Basic ${btoa(`x:${valid.token}`)}`],
        ["bearer without a token", "Bearer"],
        ["two values", `Bearer ${valid.token} ${valid.token}`],
        ["a token failing its checksum", `Bearer ${badChecksum}`],
        ["a truncated token", `Bearer ${valid.token.slice(0, -3)}`],
        ["another prefix", `Bearer ${valid.token.replace("dock_mcp_", "dock_reg_")}`],
        ["an unknown well-formed token", `Bearer ${newToken()}`],
        ["a revoked token", `Bearer ${revoked.token}`],
        ["an expired token", `Bearer ${expired.token}`]
      ]
      for (const [what, header] of cases) {
        const reply = yield* whoami({ authorization: header })
        expect(reply.status, what).toBe(401)
        expectUnauthorized(reply, true)
      }
      // The valid one still works.
      expect((yield* whoami(bearer(valid.token))).status).toBe(200)
    }))

  it.effect("a token in the query string (and no header) is ignored: 401", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const valid = yield* tokenFor(user.id)
      const reply = yield* whoami({}, `?access_token=${valid.token}`)
      expectUnauthorized(reply, false)
    }))

  it.effect("a valid token reaches the route with its principal", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const tokens = yield* Tokens
      const created = yield* tokens.create({
        userId: user.id,
        label: "reader",
        kind: "personal",
        scopes: ["mcp:read"],
        allowedBucketIds: [user.default_bucket_id!]
      }).pipe(Effect.orDie)
      const reply = yield* whoami(bearer(created.token))
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({
        userId: user.id,
        username: user.username,
        tokenId: created.id,
        scopes: ["mcp:read"],
        allowedBucketIds: [user.default_bucket_id],
        sandbox: false,
        agentLabel: "reader"
      })
      // The scheme is case-insensitive.
      expect((yield* whoami({ authorization: `bearer ${created.token}` })).json.tokenId).toBe(created.id)
    }))

  it.effect("an anonymous registration's token is a sandbox principal confined to its sandbox", () =>
    Effect.gen(function*() {
      const registrations = yield* Registrations
      const registration = yield* registrations.register(
        { type: "anonymous", requested_credential_type: "mcp_write_token", agent_label: "sandboxed" },
        "192.0.2.10"
      ).pipe(Effect.orDie)
      if (registration.registration_type !== "anonymous") return yield* Effect.dieMessage("expected anonymous")
      const reply = yield* whoami(bearer(registration.credential))
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({
        userId: expect.any(String),
        username: expect.stringMatching(/^anon-/),
        tokenId: registration.token_id,
        scopes: ["mcp:read", "mcp:write"],
        allowedBucketIds: [registration.sandbox_bucket.id],
        sandbox: true,
        agentLabel: "sandboxed"
      })
    }))

  it.effect("after a claim the same token is the person's, still confined to the sandbox", () =>
    Effect.gen(function*() {
      const registrations = yield* Registrations
      const mail = yield* CapturedMail
      const registration = yield* registrations.register(
        { type: "anonymous", requested_credential_type: "mcp_write_token", agent_label: "claimed agent" },
        "192.0.2.11"
      ).pipe(Effect.orDie)
      if (registration.registration_type !== "anonymous") return yield* Effect.dieMessage("expected anonymous")
      const email = `bearer-claim-${unique()}@example.com`
      yield* registrations.claim({ claim_token: registration.registration_id, email }).pipe(Effect.orDie)
      const code = /[0-9]{6}/.exec((yield* mail.to(email))[0]!.text)![0]
      const claimed = yield* registrations.claim({ claim_token: registration.registration_id, otp: code }).pipe(
        Effect.orDie
      )
      if (!("bucket" in claimed)) return yield* Effect.dieMessage("expected a claimed sandbox")

      const reply = yield* whoami(bearer(registration.credential))
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({
        userId: claimed.account.id,
        username: claimed.account.username,
        tokenId: registration.token_id,
        scopes: ["mcp:read", "mcp:write"],
        allowedBucketIds: [registration.sandbox_bucket.id],
        sandbox: false,
        agentLabel: "claimed agent"
      })
    }))

  it.effect("revoking a token makes the very next request 401", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const tokens = yield* Tokens
      const created = yield* tokenFor(user.id)
      expect((yield* whoami(bearer(created.token))).status).toBe(200)
      const revoked = yield* tokens.revoke(created.id)
      expect(revoked.revoked_at).not.toBeNull()
      expectUnauthorized(yield* whoami(bearer(created.token)), true)
    }))

  it.effect("an expiry takes effect on the very next request", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const sql = yield* SqlClient.SqlClient
      const created = yield* tokenFor(user.id)
      expect((yield* whoami(bearer(created.token))).status).toBe(200)
      yield* sql`update tokens set expires_at = ${new Date(Date.now() - 1)} where id = ${created.id}`
      expectUnauthorized(yield* whoami(bearer(created.token)), true)
    }))

  it.effect("the per-token request limit (3 per minute): the 4th request is 429 with Retry-After", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const created = yield* tokenFor(user.id)
      const other = yield* tokenFor(user.id)
      yield* awayFromWindowEnd("1 minute", "10 seconds")
      for (let n = 0; n < REQUESTS_PER_MINUTE; n++) expect((yield* whoami(bearer(created.token))).status).toBe(200)
      const limited = yield* whoami(bearer(created.token))
      expect(limited.status).toBe(429)
      expect(limited.headers["retry-after"]).toMatch(/^[1-9][0-9]*$/)
      expect(Number(limited.headers["retry-after"])).toBeLessThanOrEqual(60)
      expect(limited.json).toEqual({
        error: {
          code: "rate_limited",
          status: 429,
          message: expect.stringContaining("Too many requests with this token"),
          retry_after_seconds: Number(limited.headers["retry-after"]),
          details: expect.anything()
        }
      })
      // The limit is per token: another token of the same user is unaffected.
      expect((yield* whoami(bearer(other.token))).status).toBe(200)
    }))
})
