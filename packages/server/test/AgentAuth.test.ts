/**
 * Agent registration and claim over real HTTP against the in-process server (spec §2 "Anonymous registration",
 * §3, §4.2, §7, §8; architecture §8, §14): the registration object, input validation, the feature flags, the
 * per-IP and global caps (with and without DOCK_TRUST_PROXY), the claim flow with codes read from the outbox,
 * send caps, the claim window, parallel claims, and the verified-email preview flow.
 */
import { sha256 } from "@dock/domain"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { bearer, fetchReply, postJson, type Reply, unique } from "./support/Http.ts"
import {
  awayFromWindowEnd,
  claim,
  codeIn,
  MCP_TOKEN,
  onlyCodeTo,
  otherCode,
  outboxTo,
  register,
  statusCounts,
  UUID
} from "./support/Identity.ts"
import { type RunningServer, startTestServer, TestServer } from "./support/TestServer.ts"

const serverWith = (env: Record<string, string>) => Layer.scoped(TestServer, startTestServer(env))

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const DAY = 24 * 60 * 60 * 1000

const count = (server: RunningServer, table: string, where = "true") =>
  Effect.map(
    server.sql.unsafe<{ n: string | number }>(`select count(*) as n from ${table} where ${where}`),
    (rows) => Number(rows[0]!.n)
  ).pipe(Effect.orDie)

const registrationRow = (server: RunningServer, claimToken: string) =>
  Effect.map(
    server.sql<{ id: string; status: string; requester_ip: string; agent_label: string | null }>`
      select id, status, requester_ip, agent_label from registrations where secret_hash = ${sha256(claimToken)}`,
    (rows) => rows[0]
  ).pipe(Effect.orDie)

const admin = (server: RunningServer, path: string) =>
  fetchReply(`${server.url}${path}`, { headers: bearer(server.adminToken) })

const expectRateLimited = (reply: Reply) => {
  expect(reply.status).toBe(429)
  expect(reply.headers["retry-after"]).toMatch(/^[1-9][0-9]*$/)
  expect(reply.json).toEqual({
    error: {
      code: "rate_limited",
      status: 429,
      message: expect.any(String),
      retry_after_seconds: Number(reply.headers["retry-after"]),
      details: expect.anything()
    }
  })
}

/** Registers anonymously and starts a claim for a fresh address; returns what the claim-complete needs. */
const registerAndStart = (server: RunningServer) =>
  Effect.gen(function*() {
    const registration = yield* register(server.url, { agent_label: `agent-${unique()}` })
    expect(registration.status).toBe(201)
    const email = `claimer-${unique()}@example.com`
    const started = yield* claim(server.url, { claim_token: registration.json.registration_id, email })
    expect(started.status).toBe(200)
    const code = yield* onlyCodeTo(server.config.dataDir, email)
    return { registration: registration.json, email, code }
  })

layer(
  serverWith({
    DOCK_REGISTRATIONS_PER_IP_PER_DAY: "1000",
    DOCK_REGISTRATIONS_PER_HOUR: "1000",
    DOCK_OTP_SENDS_PER_HOUR: "2",
    DOCK_VERIFIED_EMAIL_REGISTRATION: "true"
  }),
  { excludeTestServices: true }
)("POST /agent/auth and /agent/auth/claim", (it) => {
  it.effect("an anonymous registration is 201 with every field of the registration object", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const label = `helper-${unique()}`
      const before = Date.now()
      const reply = yield* register(server.url, { agent_label: label })
      expect(reply.status).toBe(201)
      expect(reply.headers["content-type"]).toMatch(/^application\/json/)
      const body = reply.json
      expect(Object.keys(body).sort()).toEqual([
        "claim_instructions",
        "claim_url",
        "credential",
        "credential_type",
        "expires_at",
        "registration_id",
        "registration_type",
        "sandbox_bucket",
        "scopes",
        "status",
        "token_id"
      ])
      expect(body).toEqual({
        registration_id: expect.any(String),
        registration_type: "anonymous",
        credential_type: "mcp_write_token",
        credential: expect.stringMatching(MCP_TOKEN),
        token_id: expect.stringMatching(UUID),
        expires_at: expect.stringMatching(ISO),
        scopes: ["mcp:read", "mcp:write"],
        sandbox_bucket: {
          id: expect.stringMatching(UUID),
          slug: expect.stringMatching(/^anonymous-sandbox-[0-9a-z]+$/)
        },
        status: "unclaimed",
        claim_url: `${server.config.baseUrl}/agent/auth/claim`,
        claim_instructions: expect.any(String)
      })
      // The claim token is a secret of at least 128 bits, and nowhere in the sandbox's name.
      expect(body.registration_id.length).toBeGreaterThanOrEqual(22)
      expect(body.sandbox_bucket.slug).not.toContain(body.registration_id)
      expect(body.claim_instructions).toContain(body.claim_url)
      expect(body.claim_instructions).toContain(body.registration_id)
      // The 14-day claim window starts now.
      const expires = Date.parse(body.expires_at)
      expect(expires).toBeGreaterThanOrEqual(before + 14 * DAY - 1000)
      expect(expires).toBeLessThanOrEqual(Date.now() + 14 * DAY + 1000)

      // The token is the agent's sandbox-confined write token, labelled with its name.
      const tokens = yield* admin(server, "/admin/tokens")
      expect(tokens.status).toBe(200)
      expect(tokens.json.find((token: { id: string }) => token.id === body.token_id)).toMatchObject({
        label,
        kind: "anonymous",
        scopes: ["mcp:read", "mcp:write"],
        allowed_bucket_ids: [body.sandbox_bucket.id],
        expires_at: body.expires_at,
        revoked_at: null
      })
      const row = yield* registrationRow(server, body.registration_id)
      expect(row).toMatchObject({ status: "unclaimed", requester_ip: "127.0.0.1", agent_label: label })
      const sandboxes = yield* admin(server, "/admin/sandboxes?status=unclaimed")
      expect(sandboxes.json).toContainEqual({
        bucket_id: body.sandbox_bucket.id,
        bucket_slug: body.sandbox_bucket.slug,
        status: "unclaimed",
        created_at: expect.stringMatching(ISO),
        expires_at: body.expires_at
      })
    }))

  it.effect("each registration gets its own sandbox, token and claim token; agent_label is optional", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const [a, b] = [yield* register(server.url), yield* register(server.url)]
      expect([a.status, b.status]).toEqual([201, 201])
      for (const field of ["registration_id", "credential", "token_id"]) expect(a.json[field]).not.toBe(b.json[field])
      expect(a.json.sandbox_bucket.id).not.toBe(b.json.sandbox_bucket.id)
      expect(a.json.sandbox_bucket.slug).not.toBe(b.json.sandbox_bucket.slug)
    }))

  it.effect("bodies of the wrong shape are 400 validation_error and create nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const rowsBefore = yield* count(server, "registrations")
      const cases: ReadonlyArray<unknown> = [
        {},
        { requested_credential_type: "mcp_write_token" },
        { type: "nope", requested_credential_type: "mcp_write_token" },
        { type: "anonymous" },
        { type: "anonymous", requested_credential_type: "api_key" },
        { type: "anonymous", requested_credential_type: "mcp_write_token", agent_label: 42 },
        { type: "anonymous", requested_credential_type: "mcp_write_token", agent_label: null },
        { type: "anonymous", requested_credential_type: "mcp_write_token", agent_label: "x".repeat(101) },
        [],
        "null"
      ]
      for (const body of cases) {
        const reply = yield* postJson(
          `${server.url}/agent/auth`,
          typeof body === "string" ? body : JSON.stringify(body)
        )
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.json.error, JSON.stringify(body)).toMatchObject({ code: "validation_error", status: 400 })
        expect(reply.json.error.message).toMatch(/^Invalid /)
      }
      expect(yield* count(server, "registrations")).toBe(rowsBefore)
    }))

  it.effect("a body that is not JSON is 400 bad_request", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (const url of [`${server.url}/agent/auth`, `${server.url}/agent/auth/claim`]) {
        const reply = yield* postJson(url, `{"type": "anonymous",`)
        expect(reply.status).toBe(400)
        expect(reply.json).toEqual({
          error: { code: "bad_request", status: 400, message: "The request body is not valid JSON" }
        })
      }
    }))

  it.effect("the claim: start mails a code, a wrong code is refused, the right one claims, a used one is refused", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = (yield* register(server.url, { agent_label: "claim-flow" })).json
      const email = `Person.${unique()}@Example.com`
      const normalized = email.toLowerCase()

      const unknown = yield* claim(server.url, { claim_token: `dock_reg_${unique()}${unique()}`, email })
      expect(unknown.status).toBe(404)
      expect(unknown.json).toEqual({ error: { code: "not_found", status: 404, message: expect.any(String) } })

      const badEmail = yield* claim(server.url, { claim_token: registration.registration_id, email: "not-an-address" })
      expect(badEmail.status).toBe(400)
      expect(badEmail.json.error.code).toBe("validation_error")
      expect(yield* outboxTo(server.config.dataDir, "not-an-address")).toEqual([])

      const started = yield* claim(server.url, { claim_token: registration.registration_id, email })
      expect(started.status).toBe(200)
      expect(started.json).toEqual({
        status: "otp_sent",
        registration_id: registration.registration_id,
        claim_token_expires: registration.expires_at
      })
      const mails = yield* outboxTo(server.config.dataDir, normalized)
      expect(mails).toHaveLength(1)
      const code = yield* onlyCodeTo(server.config.dataDir, normalized)
      expect(code).toMatch(/^\d{6}$/)

      const wrong = yield* claim(server.url, { claim_token: registration.registration_id, otp: otherCode(code) })
      expect(wrong.status).toBe(400)
      expect(wrong.json).toEqual({
        error: {
          code: "validation_error",
          status: 400,
          message: "The code is wrong, expired or already used. Request a new one with claim-start.",
          details: { field: "otp" }
        }
      })
      const notDigits = yield* claim(server.url, { claim_token: registration.registration_id, otp: "abcdef" })
      expect(notDigits.status).toBe(400)
      expect(notDigits.json).toEqual(wrong.json)
      const unknownComplete = yield* claim(server.url, { claim_token: `dock_reg_${unique()}${unique()}`, otp: code })
      expect(unknownComplete.status).toBe(404)

      const before = Date.now()
      const claimed = yield* claim(server.url, { claim_token: registration.registration_id, otp: code })
      expect(claimed.status).toBe(200)
      expect(Object.keys(claimed.json).sort()).toEqual(["account", "bucket", "registration_id", "status", "token"])
      expect(claimed.json).toMatchObject({
        status: "claimed",
        registration_id: registration.registration_id,
        bucket: { id: registration.sandbox_bucket.id, slug: registration.sandbox_bucket.slug, visibility: "private" },
        account: { id: expect.stringMatching(UUID), username: expect.any(String), email: normalized },
        token: { id: registration.token_id, expires_at: expect.stringMatching(ISO) }
      })
      expect(Object.keys(claimed.json.account).sort()).toEqual(["email", "id", "username"])
      expect(Object.keys(claimed.json.token).sort()).toEqual(["expires_at", "id"])
      expect(claimed.json.bucket.owner).toMatchObject({
        id: claimed.json.account.id,
        username: claimed.json.account.username
      })
      // The same token now lives 90 days.
      const tokenExpiry = Date.parse(claimed.json.token.expires_at)
      expect(tokenExpiry).toBeGreaterThanOrEqual(before + 90 * DAY - 1000)
      expect(tokenExpiry).toBeLessThanOrEqual(Date.now() + 90 * DAY + 1000)

      // The used code after the claim says the registration is claimed, not to request a code claim-start refuses.
      const again = yield* claim(server.url, { claim_token: registration.registration_id, otp: code })
      expect(again.status).toBe(400)
      expect(again.json).toEqual({
        error: {
          code: "validation_error",
          status: 400,
          message: "This registration has already been claimed: its code was used, and there is nothing left to claim",
          details: { field: "otp" }
        }
      })
      expect(again.json.error.message).not.toContain("claim-start")
      const restart = yield* claim(server.url, { claim_token: registration.registration_id, email })
      expect(restart.status).toBe(403)

      // The person's account holds the sandbox and the agent's (same) token.
      const tokens = yield* admin(server, `/admin/tokens?user=${encodeURIComponent(normalized)}`)
      expect(tokens.status).toBe(200)
      expect(tokens.json).toEqual([
        expect.objectContaining({
          id: registration.token_id,
          user_id: claimed.json.account.id,
          kind: "claimed_from_anonymous",
          allowed_bucket_ids: [registration.sandbox_bucket.id],
          expires_at: claimed.json.token.expires_at,
          revoked_at: null
        })
      ])
      const users = yield* admin(server, "/admin/users?limit=1000")
      expect(users.json).toContainEqual(expect.objectContaining({
        id: claimed.json.account.id,
        email: normalized,
        kind: "person",
        confirmed: true
      }))
      const sandboxes = yield* admin(server, "/admin/sandboxes?status=claimed")
      expect(sandboxes.json).toContainEqual(expect.objectContaining({
        bucket_id: registration.sandbox_bucket.id,
        status: "claimed"
      }))
      expect((yield* registrationRow(server, registration.registration_id))?.status).toBe("claimed")
    }))

  it.effect("claim bodies of the wrong shape are 400 validation_error", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = (yield* register(server.url)).json
      const cases: ReadonlyArray<unknown> = [
        {},
        { claim_token: registration.registration_id },
        { email: "someone@example.com" },
        { claim_token: 42, email: "someone@example.com" },
        { claim_token: registration.registration_id, otp: 123456 },
        { claim_token: registration.registration_id, email: null }
      ]
      for (const body of cases) {
        const reply = yield* claim(server.url, body)
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.json.error, JSON.stringify(body)).toMatchObject({ code: "validation_error", status: 400 })
      }

      // the claim token alone says what to send next
      const alone = yield* claim(server.url, { claim_token: registration.registration_id })
      expect(alone.json.error).toEqual({
        code: "validation_error",
        status: 400,
        message: "Send the claim_token with an `email` to start the claim (a six-digit code is mailed to it), or " +
          "with `otp` (that code) to finish it",
        details: { fields: ["email", "otp"] }
      })
    }))

  it.effect("claim-complete before any code was mailed gets the same answer as a wrong code", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = (yield* register(server.url)).json
      const reply = yield* claim(server.url, { claim_token: registration.registration_id, otp: "123456" })
      expect(reply.status).toBe(400)
      expect(reply.json).toEqual({
        error: {
          code: "validation_error",
          status: 400,
          message: "The code is wrong, expired or already used. Request a new one with claim-start.",
          details: { field: "otp" }
        }
      })
      expect((yield* registrationRow(server, registration.registration_id))?.status).toBe("unclaimed")
    }))

  it.effect("after 5 wrong codes the right one is refused too, even when the guesses come in parallel", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { code, registration } = yield* registerAndStart(server)
      const guesses = Array.from({ length: 8 }, (_, n) => String((Number(code) + 1 + n) % 1_000_000).padStart(6, "0"))
      const replies = yield* Effect.all(
        guesses.map((otp) => claim(server.url, { claim_token: registration.registration_id, otp })),
        { concurrency: "unbounded" }
      )
      expect(statusCounts(replies)).toEqual({ 400: 8 })
      const right = yield* claim(server.url, { claim_token: registration.registration_id, otp: code })
      expect(right.status).toBe(400)
      expect(right.json).toEqual(replies[0]!.json)
      const row = yield* registrationRow(server, registration.registration_id)
      expect(row?.status).toBe("unclaimed")
      // Every guess was counted, none was lost to a race.
      const tries = yield* server.sql<
        { wrong_tries: number }
      >`select wrong_tries from otp_codes where registration_id = ${row!.id}`
      expect(tries.map((t) => Number(t.wrong_tries))).toEqual([8])
    }))

  it.effect("a claim binds to the existing account of that email", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const email = `existing-${unique()}@example.com`
      const user = yield* postJson(`${server.url}/admin/users`, { email }, bearer(server.adminToken))
      expect(user.status).toBe(201)
      const registration = (yield* register(server.url)).json
      expect((yield* claim(server.url, { claim_token: registration.registration_id, email })).status).toBe(200)
      const code = yield* onlyCodeTo(server.config.dataDir, email)
      const claimed = yield* claim(server.url, { claim_token: registration.registration_id, otp: code })
      expect(claimed.status).toBe(200)
      expect(claimed.json.account).toEqual({ id: user.json.id, username: user.json.username, email })
      expect(yield* count(server, "users", `email = '${email}'`)).toBe(1)
    }))

  it.effect("two sandboxes claimed at once by one new address end up with one account", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const email = `twice-${unique()}@example.com`
      const first = (yield* register(server.url)).json
      const second = (yield* register(server.url)).json
      expect((yield* claim(server.url, { claim_token: first.registration_id, email })).status).toBe(200)
      const [firstMail] = yield* outboxTo(server.config.dataDir, email)
      expect((yield* claim(server.url, { claim_token: second.registration_id, email })).status).toBe(200)
      const secondMails = (yield* outboxTo(server.config.dataDir, email)).filter((mail) =>
        mail.file !== firstMail!.file
      )
      expect(secondMails).toHaveLength(1)

      const [a, b] = yield* Effect.all([
        claim(server.url, { claim_token: first.registration_id, otp: codeIn(firstMail!.text) }),
        claim(server.url, { claim_token: second.registration_id, otp: codeIn(secondMails[0]!.text) })
      ], { concurrency: "unbounded" })
      expect([a.status, b.status]).toEqual([200, 200])
      expect(a.json.account.email).toBe(email)
      expect(b.json.account).toEqual(a.json.account)
      expect(yield* count(server, "users", `email = '${email}'`)).toBe(1)
    }))

  it.effect("a new code voids the old one", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = (yield* register(server.url)).json
      const first = `first-${unique()}@example.com`
      const second = `second-${unique()}@example.com`
      expect((yield* claim(server.url, { claim_token: registration.registration_id, email: first })).status).toBe(200)
      expect((yield* claim(server.url, { claim_token: registration.registration_id, email: second })).status).toBe(200)
      const old = yield* onlyCodeTo(server.config.dataDir, first)
      const current = yield* onlyCodeTo(server.config.dataDir, second)
      if (old !== current) {
        const voided = yield* claim(server.url, { claim_token: registration.registration_id, otp: old })
        expect(voided.status).toBe(400)
        expect(voided.json.error.code).toBe("validation_error")
      }
      const claimed = yield* claim(server.url, { claim_token: registration.registration_id, otp: current })
      expect(claimed.status).toBe(200)
      expect(claimed.json.account.email).toBe(second)
    }))

  it.effect("codes mailed per registration and per email are capped (DOCK_OTP_SENDS_PER_HOUR=2): 429 with Retry-After", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* awayFromWindowEnd("1 hour")
      const email = `capped-${unique()}@example.com`
      const registration = (yield* register(server.url)).json
      const start = (claimToken: string, to: string) => claim(server.url, { claim_token: claimToken, email: to })
      expect((yield* start(registration.registration_id, email)).status).toBe(200)
      expect((yield* start(registration.registration_id, email)).status).toBe(200)
      const third = yield* start(registration.registration_id, email)
      expectRateLimited(third)
      expect(third.json.error.retry_after_seconds).toBeLessThanOrEqual(3600)
      expect(third.json.error.message).toMatch(/registration/)
      expect(yield* outboxTo(server.config.dataDir, email)).toHaveLength(2)

      // Per registration: another address for the same registration is refused too.
      const elsewhere = yield* start(registration.registration_id, `other-${unique()}@example.com`)
      expectRateLimited(elsewhere)

      // Per email: another registration mailing the same address is refused.
      const other = (yield* register(server.url)).json
      const sameEmail = yield* start(other.registration_id, email)
      expectRateLimited(sameEmail)
      expect(sameEmail.json.error.message).toMatch(/email/)
      expect(yield* outboxTo(server.config.dataDir, email)).toHaveLength(2)
      // Refused sends store no code.
      const otherRow = yield* registrationRow(server, other.registration_id)
      expect(yield* count(server, "otp_codes", `registration_id = '${otherRow!.id}'`)).toBe(0)
    }))

  it.effect("exactly one of 10 parallel claim-completes with the right code succeeds", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { code, registration } = yield* registerAndStart(server)
      const replies = yield* Effect.all(
        Array.from({ length: 10 }, () => claim(server.url, { claim_token: registration.registration_id, otp: code })),
        { concurrency: "unbounded" }
      )
      expect(statusCounts(replies)).toEqual({ 200: 1, 400: 9 })
      const refused = replies.filter((reply) => reply.status === 400)
      for (const reply of refused) {
        // the losers waited for the winner's claim: the registration is claimed, the code spent
        expect(reply.json).toEqual({
          error: {
            code: "validation_error",
            status: 400,
            message:
              "This registration has already been claimed: its code was used, and there is nothing left to claim",
            details: { field: "otp" }
          }
        })
      }
      const row = yield* registrationRow(server, registration.registration_id)
      expect(row?.status).toBe("claimed")
      expect(yield* count(server, "otp_codes", `registration_id = '${row!.id}' and used_at is not null`)).toBe(1)
    }))

  it.effect("verified email: 202 without a credential, then the mailed code issues a working token", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const email = `verified-${unique()}@example.com`
      const before = Date.now()
      const reply = yield* register(server.url, { type: "verified_email", email, agent_label: "verified agent" })
      expect(reply.status).toBe(202)
      expect(reply.json).not.toHaveProperty("credential")
      expect(reply.json).not.toHaveProperty("token_id")
      expect(reply.json).toEqual({
        registration_id: expect.any(String),
        registration_type: "verified_email",
        credential_type: "mcp_write_token",
        status: "otp_sent",
        email,
        claim_token_expires: expect.stringMatching(ISO),
        claim_url: `${server.config.baseUrl}/agent/auth/claim`,
        claim_instructions: expect.any(String)
      })
      expect(Date.parse(reply.json.claim_token_expires)).toBeGreaterThan(before)
      expect(reply.json.claim_instructions).toContain(reply.json.claim_url)
      // No token exists before the code is given.
      const none = yield* admin(server, `/admin/tokens?user=${encodeURIComponent(email)}`)
      expect(none.status).toBe(404)

      const code = yield* onlyCodeTo(server.config.dataDir, email)
      const wrong = yield* claim(server.url, { claim_token: reply.json.registration_id, otp: otherCode(code) })
      expect(wrong.status).toBe(400)
      expect(wrong.json.error.code).toBe("validation_error")

      const issued = yield* claim(server.url, { claim_token: reply.json.registration_id, otp: code })
      expect(issued.status).toBe(200)
      expect(issued.json).toMatchObject({
        status: "claimed",
        registration_id: reply.json.registration_id,
        credential_type: "mcp_write_token",
        credential: expect.stringMatching(MCP_TOKEN),
        account: { id: expect.stringMatching(UUID), username: expect.any(String), email },
        token: {
          id: expect.stringMatching(UUID),
          label: "verified agent",
          scopes: ["mcp:read", "mcp:write"],
          allowed_bucket_ids: null,
          expires_at: expect.stringMatching(ISO)
        }
      })
      const tokens = yield* admin(server, `/admin/tokens?user=${encodeURIComponent(email)}`)
      expect(tokens.status).toBe(200)
      expect(tokens.json).toEqual([
        expect.objectContaining({
          id: issued.json.token.id,
          user_id: issued.json.account.id,
          kind: "personal",
          revoked_at: null,
          expires_at: issued.json.token.expires_at
        })
      ])
      // The credential is returned once: the same code again is refused, saying the registration is claimed.
      const again = yield* claim(server.url, { claim_token: reply.json.registration_id, otp: code })
      expect(again.status).toBe(400)
      expect(again.json.error).toMatchObject({ code: wrong.json.error.code, details: { field: "otp" } })
      expect(again.json.error.message).toMatch(/^This registration has already been claimed/)
    }))

  it.effect("verified email: a bad address is 400 validation_error and mails nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const missing = yield* register(server.url, { type: "verified_email" })
      expect(missing.status).toBe(400)
      expect(missing.json.error.code).toBe("validation_error")
      const bad = yield* register(server.url, { type: "verified_email", email: "nobody" })
      expect(bad.status).toBe(400)
      expect(bad.json.error).toMatchObject({ code: "validation_error", details: { field: "email" } })
      expect(yield* outboxTo(server.config.dataDir, "nobody")).toEqual([])
    }))
})

layer(serverWith({ ANONYMOUS_REGISTRATION_ENABLED: "false" }), { excludeTestServices: true })(
  "registration flags off",
  (it) => {
    it.effect("ANONYMOUS_REGISTRATION_ENABLED=false: anonymous registration is 403 forbidden", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const reply = yield* register(server.url, { agent_label: "refused" })
        expect(reply.status).toBe(403)
        expect(reply.json).toEqual({
          error: { code: "forbidden", status: 403, message: "Anonymous registration is disabled on this server" }
        })
        expect(yield* count(server, "registrations")).toBe(0)
        expect(yield* count(server, "tokens")).toBe(0)
      }))

    it.effect("DOCK_VERIFIED_EMAIL_REGISTRATION off (the default): verified-email registration is 403 forbidden", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const email = `flag-off-${unique()}@example.com`
        const reply = yield* register(server.url, { type: "verified_email", email })
        expect(reply.status).toBe(403)
        expect(reply.json).toEqual({
          error: {
            code: "forbidden",
            status: 403,
            message: "Verified-email registration is not enabled on this server"
          }
        })
        expect(yield* outboxTo(server.config.dataDir, email)).toEqual([])
        expect(yield* count(server, "registrations")).toBe(0)
      }))
  }
)

layer(serverWith({ DOCK_REGISTRATIONS_PER_IP_PER_DAY: "3", DOCK_TRUST_PROXY: "true" }), { excludeTestServices: true })(
  "per-IP registration cap behind a trusted proxy",
  (it) => {
    it.effect("the 4th registration from one address is 429 with Retry-After; other forwarded addresses count apart", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* awayFromWindowEnd("1 day")
        const from = (address: string) => ({ "x-forwarded-for": address })
        for (let n = 0; n < 3; n++) expect((yield* register(server.url, {}, from("203.0.113.7"))).status).toBe(201)
        const fourth = yield* register(server.url, {}, from("203.0.113.7"))
        expectRateLimited(fourth)
        expect(fourth.json.error.retry_after_seconds).toBeLessThanOrEqual(24 * 60 * 60)
        expect(fourth.json.error.message).toMatch(/address/)
        expect((yield* register(server.url, {}, from("203.0.113.8"))).status).toBe(201)
        expect((yield* register(server.url, {}, from("198.51.100.1"))).status).toBe(201)
        // Without the header, the socket's address counts.
        expect((yield* register(server.url)).status).toBe(201)
        // What the client wrote before the proxy's own entry is not believed: the last hop counts.
        expectRateLimited(yield* register(server.url, {}, from("192.0.2.55, 203.0.113.7")))

        const rows = yield* server.sql<{ requester_ip: string; n: string | number }>`
          select requester_ip, count(*) as n from registrations group by requester_ip order by requester_ip`
        expect(rows.map((row) => [row.requester_ip, Number(row.n)])).toEqual([
          ["127.0.0.1", 1],
          ["198.51.100.1", 1],
          ["203.0.113.7", 3],
          ["203.0.113.8", 1]
        ])
      }))
  }
)

layer(serverWith({ DOCK_REGISTRATIONS_PER_IP_PER_DAY: "3" }), { excludeTestServices: true })(
  "per-IP registration cap without DOCK_TRUST_PROXY",
  (it) => {
    it.effect("X-Forwarded-For is ignored: the socket's address is capped", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        expect(server.config.trustProxy).toBe(false)
        yield* awayFromWindowEnd("1 day")
        for (let n = 0; n < 3; n++) {
          expect((yield* register(server.url, {}, { "x-forwarded-for": `203.0.113.${n + 1}` })).status).toBe(201)
        }
        expectRateLimited(yield* register(server.url, {}, { "x-forwarded-for": "203.0.113.99" }))
        expectRateLimited(yield* register(server.url))
        const rows = yield* server.sql<{ requester_ip: string }>`select distinct requester_ip from registrations`
        expect(rows).toEqual([{ requester_ip: "127.0.0.1" }])
      }))
  }
)

layer(serverWith({ DOCK_REGISTRATIONS_PER_HOUR: "20", DOCK_REGISTRATIONS_PER_IP_PER_DAY: "1000" }), {
  excludeTestServices: true
})("global registration cap", (it) => {
  it.effect("50 parallel registrations with DOCK_REGISTRATIONS_PER_HOUR=20: exactly 20 × 201 and 30 × 429", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* awayFromWindowEnd("1 hour", "30 seconds")
      const replies = yield* Effect.all(
        Array.from({ length: 50 }, (_, n) => register(server.url, { agent_label: `burst-${n}` })),
        { concurrency: "unbounded" }
      )
      expect(statusCounts(replies)).toEqual({ 201: 20, 429: 30 })
      for (const reply of replies.filter((reply) => reply.status === 429)) {
        expectRateLimited(reply)
        expect(reply.json.error.message).toMatch(/this server/)
      }
      const credentials = new Set(replies.filter((reply) => reply.status === 201).map((reply) => reply.json.credential))
      expect(credentials.size).toBe(20)
      // Refused registrations leave nothing behind.
      expect(yield* count(server, "registrations")).toBe(20)
      expect(yield* count(server, "tokens", "kind = 'anonymous'")).toBe(20)
      expect(yield* count(server, "users", "kind = 'anonymous'")).toBe(20)
      expect(yield* count(server, "docks", "sandbox")).toBe(20)
    }))
})

layer(
  serverWith({
    DOCK_SANDBOX_CLAIM_WINDOW: "3 seconds",
    DOCK_SANDBOX_RETENTION: "1 hour",
    DOCK_OTP_SENDS_PER_HOUR: "1000",
    DOCK_JOB_INTERVAL: "1 hour"
  }),
  { excludeTestServices: true }
)("the claim window", (it) => {
  it.effect("after the window (DOCK_SANDBOX_CLAIM_WINDOW=3 seconds) claim-start is 403 forbidden even before a sweep", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = (yield* register(server.url)).json
      const expires = Date.parse(registration.expires_at)
      const email = `late-${unique()}@example.com`
      // Poll claim-start until it stops succeeding (bounded), then look at how it answered.
      const deadline = Date.now() + 15_000
      let reply = yield* claim(server.url, { claim_token: registration.registration_id, email })
      while (reply.status === 200 && Date.now() < deadline) {
        yield* Effect.sleep("200 millis")
        reply = yield* claim(server.url, { claim_token: registration.registration_id, email })
      }
      expect(Date.now()).toBeGreaterThanOrEqual(expires)
      expect(reply.status).toBe(403)
      expect(reply.json).toEqual({
        error: { code: "forbidden", status: 403, message: "The claim window of this registration has ended" }
      })
      // A code mailed within the window cannot complete the claim now.
      const mails = yield* outboxTo(server.config.dataDir, email)
      expect(mails.length).toBeGreaterThanOrEqual(1)
      const late = yield* claim(server.url, {
        claim_token: registration.registration_id,
        otp: codeIn(mails.at(-1)!.text)
      })
      expect(late.status).toBe(403)
      expect(late.json.error.code).toBe("forbidden")
    }))

  it.effect("the sweep expires the sandbox: token revoked, status expired, claims 403", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = (yield* register(server.url)).json
      const email = `swept-${unique()}@example.com`
      const started = yield* claim(server.url, { claim_token: registration.registration_id, email })
      expect(started.status).toBe(200)
      const code = yield* onlyCodeTo(server.config.dataDir, email)

      // Sweep (bounded poll) until this registration has expired.
      const deadline = Date.now() + 15_000
      const expiredIds = () =>
        Effect.map(admin(server, "/admin/sandboxes?status=expired"), (reply) =>
          (reply.json as ReadonlyArray<{ bucket_id: string }>).map((sandbox) => sandbox.bucket_id))
      let expired: ReadonlyArray<string> = []
      while (!expired.includes(registration.sandbox_bucket.id) && Date.now() < deadline) {
        const sweep = yield* postJson(`${server.url}/admin/sandboxes/sweep`, {}, bearer(server.adminToken))
        expect(sweep.status).toBe(200)
        expect(sweep.json).toEqual({ expired: expect.any(Number), purged: 0 })
        expired = yield* expiredIds()
        if (!expired.includes(registration.sandbox_bucket.id)) {
          yield* Effect.sleep("200 millis")
        }
      }
      expect(expired).toContain(registration.sandbox_bucket.id)

      const start = yield* claim(server.url, { claim_token: registration.registration_id, email })
      expect(start.status).toBe(403)
      expect(start.json.error.code).toBe("forbidden")
      const complete = yield* claim(server.url, { claim_token: registration.registration_id, otp: code })
      expect(complete.status).toBe(403)
      expect(complete.json.error.code).toBe("forbidden")

      const tokens = yield* admin(server, "/admin/tokens")
      const token = tokens.json.find((t: { id: string }) =>
        t.id === registration.token_id
      )
      expect(token.revoked_at).toEqual(expect.stringMatching(ISO))
      const hidden = yield* server.sql<
        { hidden_at: Date | null }
      >`select hidden_at from docks where id = ${registration.sandbox_bucket.id}`
      expect(hidden[0]!.hidden_at).toBeInstanceOf(Date)
      expect((yield* registrationRow(server, registration.registration_id))?.status).toBe("expired")
    }))
})

layer(serverWith({ DOCK_OTP_TTL: "2 seconds" }), { excludeTestServices: true })("code lifetime", (it) => {
  it.effect("an expired code (DOCK_OTP_TTL=2 seconds) gets the same answer as a wrong one and claims nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { code, email, registration } = yield* registerAndStart(server)
      const mail = (yield* outboxTo(server.config.dataDir, email))[0]!
      expect(mail.text).toContain("2 seconds")
      const row = yield* registrationRow(server, registration.registration_id)
      const stored = yield* server.sql<{ expires_at: Date }>`select expires_at from otp_codes where registration_id = ${
        row!.id
      }`
      // Wait (bounded) until the code's own expiry has passed.
      const deadline = Date.now() + 10_000
      while (Date.now() <= stored[0]!.expires_at.getTime() && Date.now() < deadline) yield* Effect.sleep("100 millis")
      expect(Date.now()).toBeGreaterThan(stored[0]!.expires_at.getTime())

      const expired = yield* claim(server.url, { claim_token: registration.registration_id, otp: code })
      const wrong = yield* claim(server.url, { claim_token: registration.registration_id, otp: otherCode(code) })
      expect(expired.status).toBe(400)
      expect(expired.json).toEqual(wrong.json)
      expect(expired.json.error.code).toBe("validation_error")
      expect((yield* registrationRow(server, registration.registration_id))?.status).toBe("unclaimed")

      // A new code, used at once, still claims.
      const fresh = `fresh-${unique()}@example.com`
      expect((yield* claim(server.url, { claim_token: registration.registration_id, email: fresh })).status).toBe(200)
      const freshCode = yield* onlyCodeTo(server.config.dataDir, fresh)
      const claimed = yield* claim(server.url, { claim_token: registration.registration_id, otp: freshCode })
      expect(claimed.status).toBe(200)
    }))
})

layer(
  serverWith({
    DOCK_SANDBOX_CLAIM_WINDOW: "3 seconds",
    DOCK_SANDBOX_RETENTION: "1 second",
    DOCK_JOB_INTERVAL: "1 hour"
  }),
  { excludeTestServices: true }
)("retention", (it) => {
  it.effect("after the retention (DOCK_SANDBOX_RETENTION=1 second) the sweep deletes an unclaimed sandbox; a claimed one stays", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const abandoned = (yield* register(server.url, { agent_label: "abandoned" })).json
      const kept = yield* registerAndStart(server)
      const claimed = yield* claim(server.url, { claim_token: kept.registration.registration_id, otp: kept.code })
      expect(claimed.status).toBe(200)

      // Sweep (bounded poll) until the abandoned sandbox is gone from the list.
      const deadline = Date.now() + 20_000
      const listed = () =>
        Effect.map(
          admin(server, "/admin/sandboxes"),
          (reply) => reply.json as ReadonlyArray<{ bucket_id: string; status: string }>
        )
      let purged = 0
      let sandboxes = yield* listed()
      while (sandboxes.some((s) => s.bucket_id === abandoned.sandbox_bucket.id) && Date.now() < deadline) {
        yield* Effect.sleep("250 millis")
        const sweep = yield* postJson(`${server.url}/admin/sandboxes/sweep`, {}, bearer(server.adminToken))
        expect(sweep.status).toBe(200)
        purged += sweep.json.purged
        sandboxes = yield* listed()
      }
      expect(sandboxes.map((s) => s.bucket_id)).not.toContain(abandoned.sandbox_bucket.id)
      expect(purged).toBe(1)
      expect(yield* count(server, "docks", `id = '${abandoned.sandbox_bucket.id}'`)).toBe(0)
      expect(yield* count(server, "tokens", `id = '${abandoned.token_id}'`)).toBe(0)
      expect(yield* registrationRow(server, abandoned.registration_id)).toBeUndefined()
      const late = yield* claim(server.url, {
        claim_token: abandoned.registration_id,
        email: `late-${unique()}@example.com`
      })
      expect(late.status).toBe(404)

      // The claimed sandbox is permanent: listed, visible, its token alive.
      expect(sandboxes).toContainEqual(
        expect.objectContaining({ bucket_id: kept.registration.sandbox_bucket.id, status: "claimed" })
      )
      const dock = yield* server.sql<{ hidden_at: Date | null; sandbox: boolean }>`
        select hidden_at, sandbox from docks where id = ${kept.registration.sandbox_bucket.id}`
      expect(dock).toEqual([{ hidden_at: null, sandbox: false }])
      const tokens = yield* admin(server, `/admin/tokens?user=${encodeURIComponent(kept.email)}`)
      expect(tokens.json).toEqual([expect.objectContaining({ id: kept.registration.token_id, revoked_at: null })])
    }))
})
