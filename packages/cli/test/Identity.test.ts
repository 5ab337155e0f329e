/**
 * The identity commands of `dock` (architecture §12, §14) in real processes against an in-process server:
 * tokens create/list/revoke, register (with its 0600 credentials file), claim start/complete with the code from
 * the server's outbox, sandboxes list/sweep.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { adminOf, unique } from "./support/Admin.ts"
import { dock, failureLine, jsonOf } from "./support/Dock.ts"
import { cliTestServer, serverUrl } from "./support/Server.ts"

const ADMIN_TOKEN = "dock_admin_cli-identity-test-token"
const admin = adminOf(ADMIN_TOKEN, "cli")
const adminFlags = admin.flags
const createUser = admin.createUser
const MCP_TOKEN = /^dock_mcp_[0-9A-Za-z]{49}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const DAY = 24 * 60 * 60 * 1000
const TIMEOUT = 120_000

const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-cli-identity-home-"))
afterAll(() => {
  Fs.rmSync(scratch, { recursive: true, force: true })
})

const { config, dataDir, RunningServer } = (() => {
  const server = cliTestServer("identity", ADMIN_TOKEN)
  afterAll(() => Fs.rmSync(server.dataDir, { recursive: true, force: true }))
  return server
})()

/** The one six-digit code of the one mail the server's outbox holds for `email`. */
const codeMailedTo = (email: string) =>
  Effect.sync(() => {
    const directory = Path.join(dataDir, "outbox")
    const texts = Fs.readdirSync(directory)
      .map((name) => Fs.readFileSync(Path.join(directory, name), "utf8"))
      .filter((raw) => raw.split("\r\n").includes(`To: ${email}`))
    expect(texts).toHaveLength(1)
    const body = texts[0]!.slice(texts[0]!.indexOf("\r\n\r\n") + 4)
    const codes = body.match(/(?<![0-9])[0-9]{6}(?![0-9])/g) ?? []
    expect(codes).toHaveLength(1)
    return codes[0]!
  })

layer(RunningServer, { timeout: TIMEOUT, excludeTestServices: true })("dock tokens", (it) => {
  it.effect(
    "tokens create --json prints exactly {id, token, label, scopes, allowed_bucket_ids, expires_at}",
    () =>
      Effect.gen(function*() {
        const url = yield* serverUrl
        const user = yield* createUser(url)
        const before = Date.now()
        const created = jsonOf(
          yield* dock([
            "tokens",
            "create",
            "--user",
            user.username,
            "--label",
            "reader agent",
            "--scope",
            "mcp:read",
            "--dock",
            `${user.username}/${user.username}`,
            "--expires-in",
            "30 days",
            ...adminFlags(url),
            "--json"
          ])
        )
        expect(Object.keys(created).sort()).toEqual([
          "allowed_bucket_ids",
          "expires_at",
          "id",
          "label",
          "scopes",
          "token"
        ])
        expect(created).toEqual({
          id: expect.stringMatching(UUID),
          token: expect.stringMatching(MCP_TOKEN),
          label: "reader agent",
          scopes: ["mcp:read"],
          allowed_bucket_ids: [user.default_bucket_id],
          expires_at: expect.any(String)
        })
        const expires = Date.parse(created.expires_at)
        expect(expires).toBeGreaterThanOrEqual(before + 30 * DAY - 1000)
        expect(expires).toBeLessThanOrEqual(Date.now() + 30 * DAY + 1000)

        // list has the token's metadata and never a secret.
        const listRun = yield* dock(["tokens", "list", "--user", user.email, ...adminFlags(url), "--json"])
        const listed = jsonOf(listRun)
        expect(listRun.stdout).not.toContain(created.token)
        expect(listRun.stdout).not.toContain("dock_mcp_")
        expect(listed).toEqual([
          expect.objectContaining({
            id: created.id,
            user_id: user.id,
            label: "reader agent",
            kind: "personal",
            scopes: ["mcp:read"],
            allowed_bucket_ids: [user.default_bucket_id],
            expires_at: created.expires_at,
            revoked_at: null
          })
        ])
        for (const token of listed) {
          expect(token).not.toHaveProperty("token")
          expect(token).not.toHaveProperty("secret_hash")
        }

        // revoke, then list shows when.
        const revoked = jsonOf(yield* dock(["tokens", "revoke", created.id, ...adminFlags(url), "--json"]))
        expect(revoked).toMatchObject({ id: created.id, revoked_at: expect.any(String) })
        const after = jsonOf(yield* dock(["tokens", "list", "--user", user.username, ...adminFlags(url), "--json"]))
        expect(after).toEqual([expect.objectContaining({ id: created.id, revoked_at: revoked.revoked_at })])
        expect(Math.abs(Date.parse(revoked.revoked_at) - Date.now())).toBeLessThan(60_000)
      }),
    TIMEOUT
  )

  it.effect("tokens create for an unknown user is exit code 1 and one stderr line", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const nobody = `nobody-${unique()}`
      const line = failureLine(yield* dock(["tokens", "create", "--user", nobody, ...adminFlags(url), "--json"]))
      expect(line).toBe(`dock: not_found: No user "${nobody}"`)
      const list = failureLine(yield* dock(["tokens", "list", "--user", nobody, ...adminFlags(url), "--json"]))
      expect(list).toBe(`dock: not_found: No user "${nobody}"`)
    }), TIMEOUT)

  it.effect("tokens create --expires-in soon is exit code 1 with validation_error", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const user = yield* createUser(url)
      const line = failureLine(
        yield* dock(["tokens", "create", "--user", user.username, "--expires-in", "soon", ...adminFlags(url), "--json"])
      )
      expect(line).toMatch(/^dock: validation_error: /)
      expect(line).toContain("soon")
      // Nothing was issued.
      expect(jsonOf(yield* dock(["tokens", "list", "--user", user.username, ...adminFlags(url), "--json"]))).toEqual([])
    }), TIMEOUT)

  it.effect("tokens revoke of an unknown id is exit code 1 with not_found", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const line = failureLine(yield* dock(["tokens", "revoke", crypto.randomUUID(), ...adminFlags(url), "--json"]))
      expect(line).toBe("dock: not_found: Token not found")
    }), TIMEOUT)
})

layer(RunningServer, { timeout: TIMEOUT, excludeTestServices: true })("dock register, claim and sandboxes", (it) => {
  it.effect(
    "register saves the credential (mode 0600); claim start and complete with the mailed code; sandboxes list and sweep",
    () =>
      Effect.gen(function*() {
        const url = yield* serverUrl
        const credentialsFile = Path.join(scratch, `agent-${unique()}`, "credentials.json")
        const registered = jsonOf(
          yield* dock(["register", "--label", "cli agent", "--url", url, "--json"], {
            DOCK_CREDENTIALS_FILE: credentialsFile
          })
        )
        // --json prints the registration itself, nothing around it.
        const registration = registered
        expect(Object.keys(registration).sort()).toEqual([
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
        expect(registration).toMatchObject({
          registration_id: expect.any(String),
          registration_type: "anonymous",
          credential_type: "mcp_write_token",
          credential: expect.stringMatching(MCP_TOKEN),
          token_id: expect.stringMatching(UUID),
          scopes: ["mcp:read", "mcp:write"],
          sandbox_bucket: { id: expect.stringMatching(UUID), slug: expect.stringMatching(/^anonymous-sandbox-/) },
          status: "unclaimed",
          claim_url: `${config.baseUrl}/agent/auth/claim`
        })

        expect(Fs.statSync(credentialsFile).mode & 0o777).toBe(0o600)
        const saved = Fs.readFileSync(credentialsFile, "utf8")
        expect(saved).toContain(registration.credential)
        expect(saved).toContain(registration.registration_id)
        expect(JSON.parse(saved)).toBeTypeOf("object")

        // A second registration keeps the first one in the file.
        const second = jsonOf(
          yield* dock(["register", "--url", url, "--json"], { DOCK_CREDENTIALS_FILE: credentialsFile })
        )
        const secondRegistration = second
        const both = Fs.readFileSync(credentialsFile, "utf8")
        expect(both).toContain(registration.credential)
        expect(both).toContain(secondRegistration.credential)
        expect(Fs.statSync(credentialsFile).mode & 0o777).toBe(0o600)

        const email = `cli-claim-${unique()}@example.com`
        const started = jsonOf(
          yield* dock([
            "claim",
            "start",
            "--registration",
            registration.registration_id,
            "--email",
            email,
            "--url",
            url,
            "--json"
          ])
        )
        expect(started).toEqual({
          status: "otp_sent",
          registration_id: registration.registration_id,
          claim_token_expires: registration.expires_at
        })
        const code = yield* codeMailedTo(email)

        const wrong = failureLine(
          yield* dock([
            "claim",
            "complete",
            "--registration",
            registration.registration_id,
            "--otp",
            String((Number(code) + 1) % 1_000_000).padStart(6, "0"),
            "--url",
            url,
            "--json"
          ])
        )
        expect(wrong).toMatch(/^dock: validation_error: /)

        const claimed = jsonOf(
          yield* dock([
            "claim",
            "complete",
            "--registration",
            registration.registration_id,
            "--otp",
            code,
            "--url",
            url,
            "--json"
          ])
        )
        expect(claimed).toMatchObject({
          status: "claimed",
          registration_id: registration.registration_id,
          bucket: { id: registration.sandbox_bucket.id, slug: registration.sandbox_bucket.slug },
          account: { id: expect.stringMatching(UUID), username: expect.any(String), email },
          token: { id: registration.token_id, expires_at: expect.any(String) }
        })

        // sandboxes list: the operator's view, never a claim token.
        const listRun = yield* dock(["sandboxes", "list", ...adminFlags(url), "--json"])
        const sandboxes = jsonOf(listRun)
        expect(Array.isArray(sandboxes)).toBe(true)
        for (const sandbox of sandboxes) {
          expect(Object.keys(sandbox).sort()).toEqual([
            "bucket_id",
            "bucket_slug",
            "created_at",
            "expires_at",
            "status"
          ])
        }
        expect(sandboxes).toContainEqual({
          bucket_id: registration.sandbox_bucket.id,
          bucket_slug: registration.sandbox_bucket.slug,
          status: "claimed",
          created_at: expect.any(String),
          expires_at: registration.expires_at
        })
        expect(sandboxes).toContainEqual(expect.objectContaining({
          bucket_id: secondRegistration.sandbox_bucket.id,
          status: "unclaimed"
        }))
        for (
          const secret of [registration.registration_id, secondRegistration.registration_id, registration.credential]
        ) {
          expect(listRun.stdout).not.toContain(secret)
        }
        const unclaimed = jsonOf(
          yield* dock(["sandboxes", "list", "--status", "unclaimed", ...adminFlags(url), "--json"])
        )
        expect(unclaimed.every((sandbox: { status: string }) => sandbox.status === "unclaimed")).toBe(true)
        expect(unclaimed.map((sandbox: { bucket_id: string }) => sandbox.bucket_id)).toContain(
          secondRegistration.sandbox_bucket.id
        )
        expect(unclaimed.map((sandbox: { bucket_id: string }) => sandbox.bucket_id)).not.toContain(
          registration.sandbox_bucket.id
        )

        // sweep runs to completion and reports what it did (nothing is due within the 14-day window).
        const swept = jsonOf(yield* dock(["sandboxes", "sweep", ...adminFlags(url), "--json"]))
        expect(swept).toEqual({ expired: 0, purged: 0 })
      }),
    TIMEOUT
  )
})
