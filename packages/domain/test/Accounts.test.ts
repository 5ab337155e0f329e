import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Exit } from "effect"
import { Accounts, CurrentPrincipal, Docks, userPrincipal } from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"

layer(DomainTest)("Accounts", (it) => {
  it.effect("creates a confirmed person with a private default Dock", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const user = yield* accounts.create({ email: "Ada.Lovelace@Example.com", kind: "person", confirmed: true })
      expect(user.username).toBe("ada-lovelace")
      expect(user.email).toBe("ada.lovelace@example.com")
      expect(user.confirmed).toBe(true)
      expect(user.default_bucket_id).not.toBeNull()
      const dock = yield* (yield* Docks).get({ _tag: "ById", id: user.default_bucket_id! }).pipe(
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
      yield* accounts.create({ email: "dup@example.com", kind: "person", confirmed: true })
      const exit = yield* Effect.exit(accounts.create({ email: "DUP@example.com", kind: "person", confirmed: true }))
      expect(exit).toStrictEqual(Exit.fail(expect.anything()))
      if (Exit.isFailure(exit)) {
        const error = (exit.cause as any).error
        expect(error.code).toBe("conflict")
      }
    }))
})
