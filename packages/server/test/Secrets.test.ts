/**
 * Secrets at rest and in logs (spec §2 "Tokens", security "Tokens and codes"): after a full register,
 * claim-start and claim-complete over HTTP, neither the credential, the claim token (registration id) nor the
 * code is found in any value of any table, nor in anything the server logged.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { bearer, fetchReply, unique } from "./support/Http.ts"
import { claim, onlyCodeTo, otherCode, register } from "./support/Identity.ts"
import { spawnServer } from "./support/ServerProcess.ts"
import { scopedTempDir, startTestServer, TestServer } from "./support/TestServer.ts"

/** `needle` standing alone: not as a part of a longer run of letters and digits (a hash or a uuid). */
const standsAlone = (haystack: string, needle: string) =>
  new RegExp(`(?<![0-9A-Za-z])${needle.replace(/[^0-9A-Za-z]/g, "\\$&")}(?![0-9A-Za-z])`).test(haystack)

layer(Layer.scoped(TestServer, startTestServer({ DOCK_VERIFIED_EMAIL_REGISTRATION: "true" })), {
  excludeTestServices: true
})("secrets at rest and in logs", (it) => {
  it.effect("no table and no log line holds the credential, the claim token or the code", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = yield* register(server.url, { agent_label: "secret keeper" })
      expect(registration.status).toBe(201)
      const { credential, registration_id: claimToken } = registration.json
      const email = `secrets-${unique()}@example.com`
      expect((yield* claim(server.url, { claim_token: claimToken, email })).status).toBe(200)
      const code = yield* onlyCodeTo(server.config.dataDir, email)
      expect((yield* claim(server.url, { claim_token: claimToken, otp: otherCode(code) })).status).toBe(400)
      expect((yield* claim(server.url, { claim_token: claimToken, otp: code })).status).toBe(200)

      // The verified-email flow too: its claim token, code and issued credential.
      const verifiedEmail = `verified-secrets-${unique()}@example.com`
      const verified = yield* register(server.url, { type: "verified_email", email: verifiedEmail })
      expect(verified.status).toBe(202)
      const verifiedCode = yield* onlyCodeTo(server.config.dataDir, verifiedEmail)
      const issued = yield* claim(server.url, { claim_token: verified.json.registration_id, otp: verifiedCode })
      expect(issued.status).toBe(200)

      const secrets: ReadonlyArray<[string, string]> = [
        ["credential", credential],
        ["claim token", claimToken],
        ["code", code],
        ["verified-email claim token", verified.json.registration_id],
        ["verified-email code", verifiedCode],
        ["verified-email credential", issued.json.credential]
      ]

      const tables = yield* server.sql<{ table_name: string }>`
        select table_name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`
      const names = tables.map((table) => table.table_name)
      expect(names).toEqual(
        expect.arrayContaining(["registrations", "otp_codes", "tokens", "users", "rate_limit_counters"])
      )
      let dump = ""
      for (const name of names) {
        const rows = yield* server.sql.unsafe<{ row: string }>(`select row_to_json(t)::text as row from "${name}" t`)
        dump += `${name}\n${rows.map((row) => row.row).join("\n")}\n`
      }
      // The dump is of the rows this flow wrote.
      for (const [table, minimum] of [["registrations", 2], ["otp_codes", 2], ["tokens", 2]] as const) {
        const rows = yield* server.sql.unsafe<{ n: string | number }>(`select count(*) as n from ${table}`)
        expect(Number(rows[0]!.n), table).toBeGreaterThanOrEqual(minimum)
      }
      expect(dump).toContain(email)
      for (const [what, secret] of secrets) expect(standsAlone(dump, secret), `${what} in the database`).toBe(false)

      const logs = server.logs().map((entry) =>
        `${entry.message} ${JSON.stringify(entry.annotations)} ${entry.cause ?? ""}`
      )
      expect(logs.length).toBeGreaterThan(0)
      expect(logs.some((line) => line.includes("POST /agent/auth/claim"))).toBe(true)
      for (const [what, secret] of secrets) {
        const leaking = logs.filter((line) => standsAlone(line, secret))
        expect(leaking, `${what} in the logs`).toEqual([])
      }
    }))
})

describe("secrets in the output of the server process", () => {
  it.live(
    "stdout and stderr hold no credential, claim token or code, even when a client puts a token in the URL",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* scopedTempDir("dock-secrets-")
        const adminToken = `dock_admin_${unique()}${unique()}`
        const server = yield* spawnServer({ DOCK_DATA_DIR: dataDir, DOCK_ADMIN_TOKEN: adminToken })
        const registration = yield* register(server.url, { agent_label: "process secrets" })
        expect(registration.status).toBe(201)
        const { credential, registration_id: claimToken } = registration.json
        const email = `process-secrets-${unique()}@example.com`
        expect((yield* claim(server.url, { claim_token: claimToken, email })).status).toBe(200)
        const code = yield* onlyCodeTo(dataDir, email)
        expect((yield* claim(server.url, { claim_token: claimToken, otp: otherCode(code) })).status).toBe(400)
        expect((yield* claim(server.url, { claim_token: claimToken, otp: code })).status).toBe(200)
        // Careless clients: the token and the claim token in URLs, the admin token as a bearer.
        const inUrl = yield* fetchReply(`${server.url}/mcp?access_token=${credential}&claim=${claimToken}`)
        expect(inUrl.status).toBe(401) // a token in the query string is never accepted
        expect((yield* fetchReply(`${server.url}/admin/sandboxes`, { headers: bearer(adminToken) })).status).toBe(200)

        const output = server.stdout() + server.stderr()
        expect(output).toContain("/agent/auth/claim")
        expect(output).toContain("/mcp?access_token=dock_mcp_[REDACTED]")
        for (
          const [what, secret] of [["credential", credential], ["claim token", claimToken], ["code", code], [
            "admin token",
            adminToken
          ]]
        ) {
          expect(standsAlone(output, secret!), `${what} in the process output`).toBe(false)
        }
      }).pipe(Effect.scoped),
    120_000
  )
})
