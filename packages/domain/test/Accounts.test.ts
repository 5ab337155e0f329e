// Accounts over a real database: usernames and emails, lookups, listing, and races between parallel creates.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { Accounts, CurrentPrincipal, type DockId, Docks, type UserId, userPrincipal } from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"

/** Lowercase letters and digits, unique per call: keeps data apart between tests sharing one database. */
const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)

const person = (email: string | null, username?: string) =>
  Effect.flatMap(Accounts, (accounts) =>
    accounts.create({
      email,
      ...(username === undefined ? {} : { username }),
      kind: email === null ? "anonymous" : "person",
      confirmed: true
    }))

layer(DomainTest)("Accounts", (it) => {
  it.effect("creates a confirmed person with a private default Dock", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const user = yield* accounts.create({ email: "Ada.Lovelace@Example.com", kind: "person", confirmed: true })
      expect(user.username).toBe("ada-lovelace")
      expect(user.email).toBe("ada.lovelace@example.com")
      expect(user.confirmed).toBe(true)
      expect(user.default_bucket_id).not.toBeNull()
      const dock = yield* (yield* Docks).byId(user.default_bucket_id! as DockId).pipe(
        Effect.map((resolved) => resolved.dock)
      ).pipe(
        Effect.provideService(CurrentPrincipal, userPrincipal(user))
      )
      expect(dock.owner.username).toBe("ada-lovelace")
      expect(dock.visibility).toBe("private")
      expect(dock.slug).toBe("ada-lovelace")
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ action: string }>`select action from activity where dock_id = ${dock.id}`
      expect(rows).toEqual([])
    }))

  it.effect("rejects a duplicate email with conflict, whatever its case", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const id = unique()
      yield* accounts.create({ email: `dup-${id}@example.com`, kind: "person", confirmed: true })
      const error = yield* Effect.flip(
        accounts.create({ email: `DUP-${id}@Example.COM`, kind: "person", confirmed: true })
      )
      expect(error.code).toBe("conflict")
      expect(error.status).toBe(409)
      expect(error.details).toEqual({ field: "email" })
    }))

  it.effect("derives the username from the email's local part", () =>
    Effect.gen(function*() {
      const id = unique()
      const user = yield* person(`Grace.Hopper+${id}@Navy.example`)
      expect(user.username).toBe(`grace-hopper-${id}`)
      expect(user.email).toBe(`grace.hopper+${id}@navy.example`)
      expect(user.kind).toBe("person")
    }))

  it.effect("keeps a derived username within 32 characters, suffix included", () =>
    Effect.gen(function*() {
      const id = unique()
      const local = `${id}${"x".repeat(60)}`
      const first = yield* person(`${local}@one.example`)
      expect(first.username).toBe(local.slice(0, 27))
      const second = yield* person(`${local}@two.example`)
      expect(second.username).toMatch(new RegExp(`^${local.slice(0, 27)}-\\d{4}$`))
      expect(second.username.length).toBeLessThanOrEqual(32)
    }))

  it.effect("never derives a reserved name, and falls back when the local part has no letters", () =>
    Effect.gen(function*() {
      const admin = yield* person(`admin@${unique()}.example`)
      expect(admin.username).toMatch(/^admin-user(-\d{4})?$/)
      const symbols = yield* person(`+++@${unique()}.example`)
      expect(symbols.username).toMatch(/^user(-\d{4})?$/)
      const agent = yield* person(null)
      expect(agent.username).toMatch(/^agent-user(-\d{4})?$/)
      expect(agent.email).toBeNull()
      expect(agent.kind).toBe("anonymous")
    }))

  it.effect("gives a colliding derived username a numeric suffix, and the default Dock the same slug", () =>
    Effect.gen(function*() {
      const id = unique()
      const first = yield* person(`sam-${id}@one.example`)
      const second = yield* person(`sam-${id}@two.example`)
      expect(first.username).toBe(`sam-${id}`)
      expect(second.username).toMatch(new RegExp(`^sam-${id}-\\d{4}$`))
      const dock = yield* (yield* Docks).byId(second.default_bucket_id! as DockId).pipe(
        Effect.map((resolved) => resolved.dock)
      ).pipe(
        Effect.provideService(CurrentPrincipal, userPrincipal(second))
      )
      expect(dock.slug).toBe(second.username)
      expect(dock.owner.id).toBe(second.id)
    }))

  it.effect("accepts a valid explicit username, trimmed", () =>
    Effect.gen(function*() {
      const id = unique()
      const user = yield* person(`explicit-${id}@example.com`, `  chosen-${id}  `)
      expect(user.username).toBe(`chosen-${id}`)
    }))

  it.effect.each([
    ["uppercase", "Ada"],
    ["a space", "ada lovelace"],
    ["an underscore", "ada_lovelace"],
    ["a leading hyphen", "-ada"],
    ["a double hyphen", "ada--l"],
    ["the reserved name admin", "admin"],
    ["the reserved name api", "api"],
    ["33 characters", "a".repeat(33)],
    ["nothing", "   "]
  ])("rejects an explicit username with %s", ([, username]) =>
    Effect.gen(function*() {
      const email = `bad-name-${unique()}@example.com`
      const error = yield* Effect.flip(person(email, username))
      expect(error.code).toBe("validation_error")
      expect(error.details).toMatchObject({ field: "username" })
      const accounts = yield* Accounts
      expect((yield* Effect.flip(accounts.findByIdentifier(email))).code).toBe("not_found")
    }))

  it.effect("accepts an explicit username of exactly 32 characters", () =>
    Effect.gen(function*() {
      const username = `${unique()}${"z".repeat(22)}`
      expect(username).toHaveLength(32)
      expect((yield* person(`${unique()}@example.com`, username)).username).toBe(username)
    }))

  it.effect("rejects an explicit username that is taken with conflict", () =>
    Effect.gen(function*() {
      const name = `taken-${unique()}`
      yield* person(`${unique()}@example.com`, name)
      const error = yield* Effect.flip(person(`${unique()}@example.com`, name))
      expect(error.code).toBe("conflict")
      expect(error.details).toEqual({ field: "username" })
    }))

  it.effect.each(["not-an-email", "a@b", "a b@c.example", "@c.example", "a@", "", "a@b@c.example"])(
    "rejects the email %j with validation_error",
    (email) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(person(email))
        expect(error.code).toBe("validation_error")
        expect(error.details).toEqual({ field: "email" })
      })
  )

  it.effect("rejects an email longer than 254 characters", () =>
    Effect.gen(function*() {
      const email = `${unique()}${"e".repeat(240)}@example.com`
      expect(email.length).toBeGreaterThan(254)
      expect((yield* Effect.flip(person(email))).code).toBe("validation_error")
    }))

  it.effect("finds a user by username or by email, in any case and with stray spaces", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const id = unique()
      const user = yield* person(`Find.Me-${id}@Example.com`)
      expect(user.username).toBe(`find-me-${id}`)
      for (
        const identifier of [
          user.username,
          user.username.toUpperCase(),
          `  ${user.username} `,
          `find.me-${id}@example.com`,
          `FIND.ME-${id}@EXAMPLE.COM`,
          ` Find.Me-${id}@Example.com `
        ]
      ) {
        expect((yield* accounts.findByIdentifier(identifier)).id).toBe(user.id)
      }
      expect(yield* accounts.findById(user.id)).toEqual(user)
    }))

  it.effect("answers not_found for unknown identifiers and ids", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      for (const identifier of [`nobody-${unique()}`, `nobody-${unique()}@example.com`, ""]) {
        const error = yield* Effect.flip(accounts.findByIdentifier(identifier))
        expect(error.code).toBe("not_found")
      }
      for (const id of ["not-a-uuid", "", "'; drop table users; --", crypto.randomUUID()]) {
        const error = yield* Effect.flip(accounts.findById(id as UserId))
        expect(error.code).toBe("not_found")
        expect(error.message).toBe("User not found")
      }
    }))

  it.effect("lists users oldest first, with limit and offset", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      // Far after any other test's clock, one second apart: these three are the newest users, in this order.
      yield* TestClock.setTime(Date.UTC(2200, 0, 1))
      const created: Array<UserId> = []
      for (let n = 0; n < 3; n++) {
        created.push((yield* person(`listed-${n}-${unique()}@example.com`)).id)
        yield* TestClock.adjust("1 second")
      }
      const all = yield* accounts.list({ limit: 1000 })
      expect(all.length).toBeGreaterThanOrEqual(3)
      expect(all.slice(-3).map((user) => user.id)).toEqual(created)

      const sql = yield* SqlClient.SqlClient
      const ordered = yield* sql<{ id: UserId }>`select id from users order by created_at, id limit 1000`
      expect(all.map((user) => user.id)).toEqual(ordered.map((row) => row.id))

      expect(yield* accounts.list({ limit: 2 })).toEqual(all.slice(0, 2))
      expect(yield* accounts.list({ limit: 2, offset: 1 })).toEqual(all.slice(1, 3))
      expect(yield* accounts.list({ limit: 0 })).toEqual(all.slice(0, 1))
      expect(yield* accounts.list({ limit: 1, offset: -5 })).toEqual(all.slice(0, 1))
      expect(yield* accounts.list({ limit: 10, offset: all.length })).toEqual([])
    }))

  it.effect("lets exactly one of several parallel creates with the same email succeed", () =>
    Effect.gen(function*() {
      const email = `race-${unique()}@example.com`
      const results = yield* Effect.all(
        Array.from({ length: 6 }, () => Effect.either(person(email))),
        { concurrency: "unbounded" }
      )
      const created = results.filter((result) => result._tag === "Right")
      const refused = results.filter((result) => result._tag === "Left")
      expect(created).toHaveLength(1)
      expect(refused.map((result) => result.left.code)).toEqual(Array(5).fill("conflict"))
      // Racing losers learn that the email is taken, never a made-up username clash.
      expect(refused.map((result) => (result.left.details as { field: string }).field)).toEqual(Array(5).fill("email"))

      const sql = yield* SqlClient.SqlClient
      const users = yield* sql<{ id: UserId }>`select id from users where email = ${email}`
      expect(users).toHaveLength(1)
      const docks = yield* sql<{ n: number }>`select count(*)::int as n from docks where owner_id = ${users[0]!.id}`
      expect(docks).toEqual([{ n: 1 }])
    }))

  it.effect("reports the email, not the explicit username, when parallel creates share only the email", () =>
    Effect.gen(function*() {
      const email = `race-${unique()}@example.com`
      const results = yield* Effect.all(
        Array.from({ length: 6 }, (_, n) => Effect.either(person(email, `u${n}-${unique()}`))),
        { concurrency: "unbounded" }
      )
      const refused = results.flatMap((result) => result._tag === "Left" ? [result.left] : [])
      expect(refused).toHaveLength(5)
      expect(refused.map((error) => [error.code, (error.details as { field: string }).field])).toEqual(
        Array(5).fill(["conflict", "email"])
      )
    }))

  it.effect("lets exactly one of several parallel creates with the same explicit username succeed", () =>
    Effect.gen(function*() {
      const username = `race-${unique()}`
      const results = yield* Effect.all(
        Array.from({ length: 6 }, () => Effect.either(person(`${unique()}@example.com`, username))),
        { concurrency: "unbounded" }
      )
      expect(results.filter((result) => result._tag === "Right")).toHaveLength(1)
      expect(results.flatMap((result) => result._tag === "Left" ? [result.left.code] : [])).toEqual(
        Array(5).fill("conflict")
      )
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`select id from users where username = ${username}`).toHaveLength(1)
    }))

  it.effect("gives parallel creates with the same derived username distinct usernames", () =>
    Effect.gen(function*() {
      const id = unique()
      const users = yield* Effect.all(
        Array.from({ length: 5 }, (_, n) => person(`same-${id}@host${n}.example`)),
        { concurrency: "unbounded" }
      )
      const usernames = users.map((user) => user.username)
      expect(new Set(usernames).size).toBe(5)
      expect(usernames).toContain(`same-${id}`)
      for (const username of usernames) expect(username).toMatch(new RegExp(`^same-${id}(-\\d{4})?$`))
    }))
})
