// Edge cases of registration and claim found in review: labels, races between claims of one new email, what a
// sweep counts, and what is left of the anonymous user after a claim.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Either, TestClock } from "effect"
import { AnonymousRegistration, CapturedMail, Limits, Registrations } from "../src/index.ts"
import { DomainTest, domainTestWith } from "../src/testing.ts"

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)

const register = (label?: string) =>
  Effect.flatMap(Registrations, (registrations) =>
    registrations.register(
      {
        type: "anonymous",
        requested_credential_type: "mcp_write_token",
        ...(label === undefined ? {} : { agent_label: label })
      },
      `203.0.113.${unique()}`
    ))

const anonymous = (label?: string) =>
  Effect.map(register(label), (registration) => {
    if (!(registration instanceof AnonymousRegistration)) throw new Error("expected an anonymous registration")
    return registration
  })

/** claim-start, then the code out of the captured mail (the last one sent to that address). */
const mailedCode = (claimToken: string, email: string) =>
  Effect.gen(function*() {
    yield* (yield* Registrations).claim({ claim_token: claimToken, email })
    const mails = yield* (yield* CapturedMail).to(email)
    return /\b(\d{6})\b/.exec(mails.at(-1)!.text)![1]!
  })

layer(DomainTest)("registration edges", (it) => {
  it.effect("trims the agent label for the sandbox title and the token label", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const padded = yield* anonymous("  bot  ")
      const blank = yield* anonymous("   ")
      const titles = yield* sql<{ id: string; title: string }>`select id, title from docks
        where id in (${padded.sandbox_bucket.id}, ${blank.sandbox_bucket.id})`
      const byId = new Map(titles.map((row) => [row.id, row.title]))
      expect(byId.get(padded.sandbox_bucket.id)).toBe("Sandbox of bot")
      expect(byId.get(blank.sandbox_bucket.id)).toBe("Anonymous sandbox")
    }))

  it.effect("refuses an over-long label with validation_error, not a crash", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(register("x".repeat(101)))
      expect(Either.isLeft(result) && result.left.code).toBe("validation_error")
    }))

  it.effect("two sandboxes claimed at once by the same new person both land in one account", () =>
    Effect.gen(function*() {
      const email = `same-${unique()}@example.com`
      const first = yield* anonymous("one")
      const second = yield* anonymous("two")
      const firstCode = yield* mailedCode(first.registration_id, email)
      const secondCode = yield* mailedCode(second.registration_id, email)
      const registrations = yield* Registrations
      const [a, b] = yield* Effect.all([
        registrations.claim({ claim_token: first.registration_id, otp: firstCode }),
        registrations.claim({ claim_token: second.registration_id, otp: secondCode })
      ], { concurrency: "unbounded" })
      expect("account" in a && "account" in b && a.account.id === b.account.id).toBe(true)
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`select id from users where email = ${email}`).toHaveLength(1)
    }))

  it.effect("leaves the anonymous user without a default Dock once its sandbox is claimed", () =>
    Effect.gen(function*() {
      const registration = yield* anonymous("leaver")
      const email = `leaver-${unique()}@example.com`
      const otp = yield* mailedCode(registration.registration_id, email)
      yield* (yield* Registrations).claim({ claim_token: registration.registration_id, otp })
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ kind: string; default_dock_id: string | null }>`select u.kind, u.default_dock_id
        from registrations r join users u on u.id = r.user_id where r.dock_id = ${registration.sandbox_bucket.id}`
      expect(rows).toEqual([{ kind: "anonymous", default_dock_id: null }])
      const owner = yield* sql<{ email: string }>`select u.email from docks d join users u on u.id = d.owner_id
        where d.id = ${registration.sandbox_bucket.id}`
      expect(owner).toEqual([{ email }])
    }))
})

layer(domainTestWith({}))("what a sweep counts", (it) => {
  it.effect("counts sandboxes only, not lapsed verified-email claim tokens", () =>
    Effect.gen(function*() {
      const registrations = yield* Registrations
      yield* anonymous("a")
      yield* anonymous("b")
      yield* registrations.register(
        { type: "verified_email", requested_credential_type: "mcp_write_token", email: `v-${unique()}@example.com` },
        "203.0.113.9"
      )
      yield* TestClock.adjust(Duration.sum(Limits.defaults.sandboxClaimWindow, "1 second"))
      expect(yield* registrations.sweep).toMatchObject({ expired: 2, purged: 0 })
      yield* TestClock.adjust(Duration.sum(Limits.defaults.sandboxRetention, "1 second"))
      expect(yield* registrations.sweep).toMatchObject({ expired: 0, purged: 2 })
      // Purged means gone: neither the sandboxes nor the lapsed verified-email registration remain.
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`select id from registrations`).toEqual([])
      expect(yield* sql`select id from docks where sandbox`).toEqual([])
    }))
})
