// Tokens over a real database: the secret shown once and stored as SHA-256, scopes, the principal behind a
// bearer value, revocation and expiry on the very next call, last-use bookkeeping at minute resolution, and the
// request counted in the bearer check itself (exact under a parallel burst, nothing counted for a refused token).
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { createHash } from "node:crypto"
import {
  Accounts,
  type DockId,
  type NewToken,
  newToken,
  type TokenId,
  tokenRequestRate,
  Tokens,
  type User
} from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** A known instant for tests that read times back. */
const T0 = Date.UTC(2031, 2, 14, 9, 30, 0)

const newUser = Effect.flatMap(
  Accounts,
  (accounts) => accounts.create({ email: `tokens-${unique()}@example.com`, kind: "person", confirmed: true })
)

const createToken = (user: User, input: Partial<NewToken> = {}) =>
  Effect.flatMap(Tokens, (tokens) => tokens.create({ userId: user.id, kind: "personal", ...input }))

const authenticate = (secret: string) => Effect.flatMap(Tokens, (tokens) => tokens.authenticate(secret))

const tokenRow = (id: TokenId) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<Record<string, unknown>>`select * from tokens where id = ${id}`.pipe(Effect.map((rows) => rows[0]!))
  )

const stringify = (value: unknown): string =>
  value instanceof Date ? value.toISOString() : typeof value === "string" ? value : JSON.stringify(value) ?? ""

layer(DomainTest)("Tokens", (it) => {
  it.effect("returns the secret once and stores only its SHA-256", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const user = yield* newUser
      const created = yield* createToken(user, { label: "stored-bot" })
      expect(created.token).toMatch(/^dock_mcp_[0-9A-Za-z]{49}$/)
      expect(created.label).toBe("stored-bot")
      expect(created.expires_at).toBeNull()
      expect(created.allowed_bucket_ids).toBeNull()

      const row = yield* tokenRow(created.id)
      expect(row.secret_hash).toBe(sha256(created.token))
      expect(row.user_id).toBe(user.id)
      expect(row.kind).toBe("personal")
      expect((row.created_at as Date).getTime()).toBe(T0)
      for (const [column, value] of Object.entries(row)) {
        // Neither the secret nor any long piece of it is stored anywhere.
        expect(stringify(value), column).not.toContain(created.token)
        expect(stringify(value), column).not.toContain(created.token.slice(9, 40))
      }
    }))

  it.effect("never lists a secret or its hash", () =>
    Effect.gen(function*() {
      const tokens = yield* Tokens
      const user = yield* newUser
      const other = yield* newUser
      const first = yield* createToken(user, { label: "one" })
      yield* TestClock.adjust("1 second") // listed oldest first
      const second = yield* createToken(user, { label: "two", scopes: ["mcp:read"] })
      const foreign = yield* createToken(other)

      const mine = yield* tokens.list(user.id)
      expect(mine.map((token) => token.id)).toEqual([first.id, second.id])
      expect(mine.map((token) => token.label)).toEqual(["one", "two"])
      for (const token of mine) {
        expect(Object.keys(token).sort()).toEqual([
          "allowed_bucket_ids",
          "created_at",
          "expires_at",
          "id",
          "kind",
          "label",
          "last_used_at",
          "revoked_at",
          "scopes",
          "user_id"
        ])
      }
      const everything = yield* tokens.list()
      expect(everything.map((token) => token.id)).toEqual(expect.arrayContaining([first.id, second.id, foreign.id]))
      const json = JSON.stringify(everything)
      for (const secret of [first.token, second.token, foreign.token]) {
        expect(json).not.toContain(secret)
        expect(json).not.toContain(sha256(secret))
      }
    }))

  it.effect("normalizes scopes: write implies read, read-only stays read-only", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const cases = [
        [undefined, ["mcp:read", "mcp:write"]],
        [["mcp:write"], ["mcp:read", "mcp:write"]],
        [["mcp:write", "mcp:read", "mcp:write"], ["mcp:read", "mcp:write"]],
        [["mcp:read"], ["mcp:read"]],
        [["mcp:read", "mcp:read"], ["mcp:read"]]
      ] as const
      for (const [scopes, expected] of cases) {
        const created = yield* createToken(user, { scopes })
        expect(created.scopes).toEqual(expected)
        expect((yield* tokenRow(created.id)).scopes).toEqual(expected)
        expect((yield* authenticate(created.token)).scopes).toEqual(expected)
      }
    }))

  it.effect("authenticates to the principal behind the token", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const user = yield* newUser
      const dock = user.default_bucket_id as DockId
      const created = yield* createToken(user, {
        label: "  research-agent  ",
        scopes: ["mcp:write"],
        allowedBucketIds: [dock, dock],
        expiresAt: new Date(T0 + Duration.toMillis("30 days"))
      })
      expect(created.label).toBe("research-agent")
      expect(created.allowed_bucket_ids).toEqual([dock])
      expect(created.expires_at).toBe(new Date(T0 + Duration.toMillis("30 days")).toISOString())
      const principal = yield* authenticate(created.token)
      expect(principal).toEqual({
        userId: user.id,
        username: user.username,
        tokenId: created.id,
        scopes: ["mcp:read", "mcp:write"],
        allowedBucketIds: [dock],
        sandbox: false,
        agentLabel: "research-agent"
      })
    }))

  it.effect("marks only anonymous tokens as sandbox principals", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      for (const kind of ["personal", "anonymous", "claimed_from_anonymous", "oauth"] as const) {
        const created = yield* createToken(user, { kind })
        const principal = yield* authenticate(created.token)
        expect(principal.sandbox, kind).toBe(kind === "anonymous")
        expect((yield* tokenRow(created.id)).kind).toBe(kind)
      }
    }))

  it.effect("gives a token without a label a null agent label", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      for (const label of [undefined, null, "", "   "]) {
        const created = yield* createToken(user, { label })
        expect(created.label).toBeNull()
        expect((yield* authenticate(created.token)).agentLabel).toBeNull()
      }
    }))

  it.effect("refuses malformed and unknown values with unauthorized, alike", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const created = yield* createToken(user)
      const changed = created.token.slice(0, 20) + (created.token[20] === "a" ? "b" : "a") + created.token.slice(21)
      const values = [
        "",
        "garbage",
        `Bearer ${created.token}`,
        created.token.toUpperCase(),
        ` ${created.token}`,
        created.token.slice(0, -1),
        changed,
        newToken(),
        sha256(created.token)
      ]
      const errors = []
      for (const value of values) errors.push(yield* Effect.flip(authenticate(value)))
      for (const error of errors) {
        expect(error.code).toBe("unauthorized")
        expect(error.status).toBe(401)
        expect(error.message).toBe(errors[0]!.message)
      }
      // The genuine value still works after all that.
      expect((yield* authenticate(created.token)).tokenId).toBe(created.id)
    }))

  it.effect("revocation takes effect on the very next call, and the first revocation time stays", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const tokens = yield* Tokens
      const user = yield* newUser
      const created = yield* createToken(user)
      const kept = yield* createToken(user)
      expect((yield* authenticate(created.token)).tokenId).toBe(created.id)

      const revoked = yield* tokens.revoke(created.id)
      expect(revoked.id).toBe(created.id)
      expect(revoked.revoked_at).toBe(new Date(T0).toISOString())
      const error = yield* Effect.flip(authenticate(created.token))
      expect(error.code).toBe("unauthorized")
      // Same answer as an unknown token: a revoked token reveals nothing.
      expect(error.message).toBe((yield* Effect.flip(authenticate(newToken()))).message)

      yield* TestClock.adjust("1 hour")
      const again = yield* tokens.revoke(created.id)
      expect(again.revoked_at).toBe(new Date(T0).toISOString())
      expect((yield* Effect.flip(authenticate(created.token))).code).toBe("unauthorized")

      // Other tokens of the same user are unaffected.
      expect((yield* authenticate(kept.token)).tokenId).toBe(kept.id)
      const listed = (yield* tokens.list(user.id)).find((token) => token.id === created.id)!
      expect(listed.revoked_at).toBe(new Date(T0).toISOString())
    }))

  it.effect("expiry takes effect on the very next call", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const user = yield* newUser
      const created = yield* createToken(user, { expiresAt: new Date(T0 + Duration.toMillis("1 hour")) })
      expect((yield* authenticate(created.token)).tokenId).toBe(created.id)
      yield* TestClock.adjust(Duration.toMillis("1 hour") - 1)
      expect((yield* authenticate(created.token)).tokenId).toBe(created.id)
      yield* TestClock.adjust(1)
      const error = yield* Effect.flip(authenticate(created.token))
      expect(error.code).toBe("unauthorized")
      expect(error.message).toBe((yield* Effect.flip(authenticate(newToken()))).message)
      yield* TestClock.adjust("10 days")
      expect((yield* Effect.flip(authenticate(created.token))).code).toBe("unauthorized")
    }))

  it.effect("records last use on first use and then at most once a minute", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const tokens = yield* Tokens
      const user = yield* newUser
      const created = yield* createToken(user)
      const lastUsed = Effect.map(tokenRow(created.id), (row) => (row.last_used_at as Date | null)?.getTime() ?? null)
      expect(yield* lastUsed).toBeNull()

      yield* TestClock.adjust("5 seconds")
      yield* authenticate(created.token)
      expect(yield* lastUsed).toBe(T0 + 5_000)

      yield* TestClock.adjust("30 seconds")
      yield* authenticate(created.token)
      yield* TestClock.adjust("29 seconds")
      yield* authenticate(created.token)
      expect(yield* lastUsed).toBe(T0 + 5_000)

      yield* TestClock.adjust("2 seconds") // 61 seconds after the first use
      yield* authenticate(created.token)
      expect(yield* lastUsed).toBe(T0 + 66_000)
      const listed = (yield* tokens.list(user.id)).find((token) => token.id === created.id)!
      expect(listed.last_used_at).toBe(new Date(T0 + 66_000).toISOString())
    }))

  it.effect("writes last use once for a burst of parallel calls", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const user = yield* newUser
      const created = yield* createToken(user)
      yield* authenticate(created.token)
      yield* TestClock.adjust("61 seconds")
      const principals = yield* Effect.all(Array.from({ length: 10 }, () => authenticate(created.token)), {
        concurrency: "unbounded"
      })
      expect(principals.map((principal) => principal.tokenId)).toEqual(Array(10).fill(created.id))
      expect(((yield* tokenRow(created.id)).last_used_at as Date).getTime()).toBe(T0 + 61_000)
    }))

  it.effect("does not record last use for a refused call", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const tokens = yield* Tokens
      const user = yield* newUser
      const created = yield* createToken(user)
      yield* tokens.revoke(created.id)
      yield* Effect.flip(authenticate(created.token))
      expect((yield* tokenRow(created.id)).last_used_at).toBeNull()
    }))

  it.effect("counts the request in the bearer check: exactly the limit of 30 parallel checks pass", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 30_000) // half a minute before the window ends
      const sql = yield* SqlClient.SqlClient
      const tokens = yield* Tokens
      const user = yield* newUser
      const created = yield* createToken(user)
      const rate = tokenRequestRate(1, { tokenRequestsPerMinute: 7 })
      const results = yield* Effect.all(
        Array.from({ length: 30 }, () => Effect.either(tokens.authenticate(created.token, rate))),
        { concurrency: "unbounded" }
      )
      expect(results.filter((result) => result._tag === "Right")).toHaveLength(7)
      for (const result of results) {
        if (result._tag === "Right") expect(result.right.tokenId).toBe(created.id)
        else expect(result.left).toMatchObject({ code: "rate_limited", retry_after_seconds: 30 })
      }
      // In the UNLOGGED per-minute counters, one row for the window; nothing in the durable ones.
      const key = `token-requests:${created.id}`
      expect(yield* sql<{ count: number }>`select count from request_counters where key = ${key}`).toEqual([{
        count: 30
      }])
      expect(yield* sql`select 1 from rate_limit_counters where key = ${key}`).toEqual([])
      // The next minute starts afresh.
      yield* TestClock.adjust("30 seconds")
      expect((yield* tokens.authenticate(created.token, rate)).tokenId).toBe(created.id)
    }))

  it.effect("counts nothing for a token that does not authenticate, and nothing with a limit of 0", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const sql = yield* SqlClient.SqlClient
      const tokens = yield* Tokens
      const user = yield* newUser
      const revoked = yield* createToken(user)
      yield* tokens.revoke(revoked.id)
      const rate = tokenRequestRate(1, { tokenRequestsPerMinute: 5 })
      expect((yield* Effect.flip(tokens.authenticate(revoked.token, rate))).code).toBe("unauthorized")
      const unlimited = yield* createToken(user)
      yield* tokens.authenticate(unlimited.token, tokenRequestRate(1, { tokenRequestsPerMinute: 0 }))
      const keys = [`token-requests:${revoked.id}`, `token-requests:${unlimited.id}`]
      expect(yield* sql`select key from request_counters where key in ${sql.in(keys)}`).toEqual([])
    }))

  it.effect("answers not_found when revoking an unknown or malformed id", () =>
    Effect.gen(function*() {
      const tokens = yield* Tokens
      for (const id of [crypto.randomUUID(), "not-a-uuid", "", "'; delete from tokens; --", newToken()]) {
        const error = yield* Effect.flip(tokens.revoke(id))
        expect(error.code).toBe("not_found")
        expect(error.status).toBe(404)
      }
    }))

  it.effect("refuses an expiry that is not in the future with validation_error", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const tokens = yield* Tokens
      const user = yield* newUser
      const before = (yield* tokens.list(user.id)).length
      for (const expiresAt of [new Date(T0 - 1), new Date(T0), new Date(0)]) {
        const error = yield* Effect.flip(createToken(user, { expiresAt }))
        expect(error.code).toBe("validation_error")
        expect(error.status).toBe(400)
      }
      expect((yield* tokens.list(user.id)).length).toBe(before)
      const ok = yield* createToken(user, { expiresAt: new Date(T0 + 1) })
      expect(ok.expires_at).toBe(new Date(T0 + 1).toISOString())
    }))

  it.effect("refuses a label longer than 100 characters with validation_error", () =>
    Effect.gen(function*() {
      const tokens = yield* Tokens
      const user = yield* newUser
      const error = yield* Effect.flip(createToken(user, { label: "x".repeat(101) }))
      expect(error.code).toBe("validation_error")
      expect(error.details).toEqual({ field: "label" })
      expect(yield* tokens.list(user.id)).toEqual([])
      const ok = yield* createToken(user, { label: "y".repeat(100) })
      expect(ok.label).toBe("y".repeat(100))
      // Surrounding spaces do not count towards the limit.
      const padded = yield* createToken(user, { label: ` ${"z".repeat(100)} ` })
      expect(padded.label).toBe("z".repeat(100))
    }))
})
