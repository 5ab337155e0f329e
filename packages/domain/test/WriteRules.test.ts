// The rules every content write passes: sandbox confinement, the per-token write rate (sandbox and ordinary
// tokens), and the content caps of sandboxes and plans, reserved atomically.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import {
  Accounts,
  AnonymousRegistration,
  CapturedMail,
  type DockId,
  Limits,
  Parts,
  Policy,
  type Principal,
  Registrations,
  type TokenId,
  type UserId,
  userPrincipal,
  WriteRules
} from "../src/index.ts"
import type { Exposure } from "../src/Policy.ts"
import { domainTestWith } from "../src/testing.ts"

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)

const MINUTE_START = Date.UTC(2031, 6, 1, 12, 0, 0)

const principal = (options: { sandbox: boolean; tokenId?: TokenId | null }): Principal =>
  userPrincipal({ id: crypto.randomUUID() as UserId, username: `writer-${unique()}` }, {
    sandbox: options.sandbox,
    tokenId: options.tokenId === undefined ? crypto.randomUUID() as TokenId : options.tokenId
  })

const admit = (who: Principal) => Effect.flatMap(WriteRules, (rules) => rules.admitWrite(who))
const reserve = (dockId: DockId, artifacts: number, bytes: number) =>
  Effect.flatMap(Parts, (parts) => parts.reserve(dockId, { artifacts, bytes }))

const registerSandbox = Effect.gen(function*() {
  const registration = yield* (yield* Registrations).register(
    { type: "anonymous", requested_credential_type: "mcp_write_token" },
    `192.0.2.${unique()}`
  )
  if (!(registration instanceof AnonymousRegistration)) throw new Error("expected an anonymous registration")
  return registration
})

const usage = (dockId: DockId) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ artifacts: number; bytes: string }>`select artifacts, bytes from dock_usage where dock_id = ${dockId}`.pipe(
        Effect.map((rows) => ({ artifacts: rows[0]!.artifacts, bytes: Number(rows[0]!.bytes) }))
      )
  )

const exposures: ReadonlyArray<readonly [string, Exposure]> = [
  ["public visibility", { visibility: "public" }],
  ["discoverable", { discoverable: true }],
  ["publish", { publish: true }],
  ["share", { share: true }],
  ["grant", { grant: true }],
  ["fork", { fork: true }],
  ["createDock", { createDock: true }]
]

layer(domainTestWith({ sandboxWritesPerMinute: 3, tokenWritesPerMinute: 5 }))("WriteRules", (it) => {
  it.effect.each(exposures)("refuses a sandbox principal: %s", ([, exposure]) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Policy.checkSandboxExposure(principal({ sandbox: true }), exposure))
      expect(error.code).toBe("permission_denied")
      expect(error.status).toBe(403)
      expect(error.details).toEqual({ sandbox: true })
      expect(error.message).toContain("claim the sandbox first")
    }))

  it.effect("names everything a combined exposure would do", () =>
    Effect.gen(function*() {
      const all = Object.assign({}, ...exposures.map(([, exposure]) => exposure)) as Exposure
      const error = yield* Effect.flip(Policy.checkSandboxExposure(principal({ sandbox: true }), all))
      for (const what of ["public", "discoverable", "publish", "share links", "grant", "fork", "create Docks"]) {
        expect(error.message).toContain(what)
      }
    }))

  it.effect("lets a sandbox principal do what exposes nothing", () =>
    Effect.gen(function*() {
      const sandbox = principal({ sandbox: true })
      for (
        const exposure of [
          {},
          { visibility: "private" },
          { discoverable: false },
          { publish: false, share: false, grant: false, fork: false, createDock: false }
        ] satisfies ReadonlyArray<Exposure>
      ) {
        yield* Policy.checkSandboxExposure(sandbox, exposure)
      }
    }))

  it.effect("allows every exposure for a normal principal", () =>
    Effect.gen(function*() {
      const normal = principal({ sandbox: false })
      for (const [, exposure] of exposures) yield* Policy.checkSandboxExposure(normal, exposure)
      yield* Policy.checkSandboxExposure(normal, Object.assign({}, ...exposures.map(([, exposure]) => exposure)))
    }))

  it.effect("admits sandboxWritesPerMinute writes from a sandbox token", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MINUTE_START + 20_000)
      const sandbox = principal({ sandbox: true })
      for (let n = 0; n < 3; n++) yield* admit(sandbox)
      const error = yield* Effect.flip(admit(sandbox))
      expect(error.code).toBe("rate_limited")
      expect(error.retry_after_seconds).toBe(40)
      expect(error.message).toContain("sandbox")
      // Another sandbox token has its own allowance.
      yield* admit(principal({ sandbox: true }))
      // The next minute admits three more.
      yield* TestClock.adjust("40 seconds")
      for (let n = 0; n < 3; n++) yield* admit(sandbox)
      expect((yield* Effect.flip(admit(sandbox))).code).toBe("rate_limited")
    }))

  it.effect("admits tokenWritesPerMinute writes from an ordinary token", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MINUTE_START)
      const normal = principal({ sandbox: false })
      for (let n = 0; n < 5; n++) yield* admit(normal)
      const error = yield* Effect.flip(admit(normal))
      expect(error.code).toBe("rate_limited")
      expect(error.retry_after_seconds).toBe(60)
    }))

  it.effect("admits exactly the allowance from a parallel burst", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MINUTE_START)
      const sandbox = principal({ sandbox: true })
      const normal = principal({ sandbox: false })
      const burst = (who: Principal) =>
        Effect.all(Array.from({ length: 30 }, () => Effect.either(admit(who))), { concurrency: "unbounded" }).pipe(
          Effect.map((results) => results.filter((result) => result._tag === "Right").length)
        )
      expect(yield* burst(sandbox)).toBe(3)
      expect(yield* burst(normal)).toBe(5)
    }))

  it.effect("does not limit writes without a token (app sessions, operators)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MINUTE_START)
      const session = principal({ sandbox: false, tokenId: null })
      for (let n = 0; n < 20; n++) yield* admit(session)
    }))

  it.effect("creates a sandbox Dock whose usage starts at zero", () =>
    Effect.gen(function*() {
      const registration = yield* registerSandbox
      expect(yield* usage(registration.sandbox_bucket.id)).toEqual({ artifacts: 0, bytes: 0 })
    }))

  it.effect("caps a sandbox at 25 artifacts with tier_limit_exceeded and details", () =>
    Effect.gen(function*() {
      const limits = yield* Limits
      const dock = (yield* registerSandbox).sandbox_bucket.id
      for (let n = 0; n < 25; n++) yield* reserve(dock, 1, 100)
      const error = yield* Effect.flip(reserve(dock, 1, 100))
      expect(error.code).toBe("tier_limit_exceeded")
      expect(error.status).toBe(403)
      expect(error.message).toBe("An anonymous sandbox holds at most 25 artifacts")
      expect(error.details).toEqual({
        max_artifacts: 25,
        max_bytes: limits.sandboxMaxBytes,
        used: { artifacts: 25, bytes: 2500 },
        sandbox: true
      })
      expect(yield* usage(dock)).toEqual({ artifacts: 25, bytes: 2500 })
      // Editing an existing artifact (no new artifact) still fits.
      yield* reserve(dock, 0, 1_000)
      expect(yield* usage(dock)).toEqual({ artifacts: 25, bytes: 3500 })
    }))

  it.effect("caps a sandbox at sandboxMaxBytes of content", () =>
    Effect.gen(function*() {
      const limits = yield* Limits
      expect(limits.sandboxMaxBytes).toBe(10 * 1024 * 1024)
      const dock = (yield* registerSandbox).sandbox_bucket.id
      yield* reserve(dock, 1, limits.sandboxMaxBytes - 10)
      yield* reserve(dock, 0, 10)
      const error = yield* Effect.flip(reserve(dock, 0, 1))
      expect(error.code).toBe("tier_limit_exceeded")
      expect(error.message).toBe(`An anonymous sandbox holds at most ${limits.sandboxMaxBytes} bytes of content`)
      expect(error.details).toEqual({
        max_artifacts: 25,
        max_bytes: limits.sandboxMaxBytes,
        used: { artifacts: 1, bytes: limits.sandboxMaxBytes },
        sandbox: true
      })
      const tooBig = yield* Effect.flip(
        reserve((yield* registerSandbox).sandbox_bucket.id, 1, limits.sandboxMaxBytes + 1)
      )
      expect(tooBig.code).toBe("tier_limit_exceeded")
    }))

  it.effect("lets exactly 25 of 50 parallel single-artifact reservations through", () =>
    Effect.gen(function*() {
      const dock = (yield* registerSandbox).sandbox_bucket.id
      const results = yield* Effect.all(
        Array.from({ length: 50 }, () => Effect.either(reserve(dock, 1, 10))),
        { concurrency: "unbounded" }
      )
      expect(results.filter((result) => result._tag === "Right")).toHaveLength(25)
      expect(results.flatMap((result) => (result._tag === "Left" ? [result.left.code] : []))).toEqual(
        Array(25).fill("tier_limit_exceeded")
      )
      expect(yield* usage(dock)).toEqual({ artifacts: 25, bytes: 250 })
    }))

  it.effect("releases space with negative changes, never below zero", () =>
    Effect.gen(function*() {
      const dock = (yield* registerSandbox).sandbox_bucket.id
      for (let n = 0; n < 25; n++) yield* reserve(dock, 1, 1_000)
      expect((yield* Effect.flip(reserve(dock, 1, 1_000))).code).toBe("tier_limit_exceeded")
      yield* reserve(dock, -1, -1_000)
      expect(yield* usage(dock)).toEqual({ artifacts: 24, bytes: 24_000 })
      yield* reserve(dock, 1, 1_000)
      expect((yield* Effect.flip(reserve(dock, 1, 1_000))).code).toBe("tier_limit_exceeded")
      yield* reserve(dock, -100, -1_000_000)
      expect(yield* usage(dock)).toEqual({ artifacts: 0, bytes: 0 })
      for (let n = 0; n < 25; n++) yield* reserve(dock, 1, 1)
      expect(yield* usage(dock)).toEqual({ artifacts: 25, bytes: 25 })
    }))

  it.effect("rolls a reservation back with its write's transaction", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const dock = (yield* registerSandbox).sandbox_bucket.id
      yield* reserve(dock, 1, 10)
      const failed = yield* Effect.flip(
        sql.withTransaction(Effect.zipRight(reserve(dock, 5, 50), Effect.fail("write failed")))
      )
      expect(failed).toBe("write failed")
      expect(yield* usage(dock)).toEqual({ artifacts: 1, bytes: 10 })
    }))

  it.effect("applies the plan limits to a normal Dock", () =>
    Effect.gen(function*() {
      const limits = yield* Limits
      const user = yield* (yield* Accounts).create({
        email: `plan-${unique()}@example.com`,
        kind: "person",
        confirmed: true
      })
      const dock = user.default_bucket_id as DockId
      // Far beyond the sandbox cap: 26 artifacts and 11 MB are fine.
      for (let n = 0; n < 26; n++) yield* reserve(dock, 1, 0)
      yield* reserve(dock, 0, 11 * 1024 * 1024)
      yield* reserve(dock, limits.planMaxArtifactsPerDock - 26, 0)
      const error = yield* Effect.flip(reserve(dock, 1, 0))
      expect(error.code).toBe("tier_limit_exceeded")
      expect(error.message).toBe(`A Dock on the free plan holds at most ${limits.planMaxArtifactsPerDock} artifacts`)
      expect(error.details).toEqual({
        max_artifacts: limits.planMaxArtifactsPerDock,
        max_bytes: limits.planMaxDockBytes,
        used: { artifacts: limits.planMaxArtifactsPerDock, bytes: 11 * 1024 * 1024 },
        sandbox: false
      })
      yield* reserve(dock, 0, limits.planMaxDockBytes - 11 * 1024 * 1024)
      const bytes = yield* Effect.flip(reserve(dock, 0, 1))
      expect(bytes.message).toBe(`A Dock on the free plan holds at most ${limits.planMaxDockBytes} bytes of content`)
    }))

  it.effect("lifts the sandbox caps once the sandbox is claimed", () =>
    Effect.gen(function*() {
      const registrations = yield* Registrations
      const registration = yield* registerSandbox
      const dock = registration.sandbox_bucket.id
      for (let n = 0; n < 25; n++) yield* reserve(dock, 1, 1)
      expect((yield* Effect.flip(reserve(dock, 1, 1))).code).toBe("tier_limit_exceeded")

      const email = `claimer-${unique()}@example.com`
      yield* registrations.claim({ claim_token: registration.registration_id, email })
      const mail = yield* Effect.flatMap(CapturedMail, (captured) => captured.to(email))
      const otp = mail[0]!.text.match(/\b\d{6}\b/)![0]
      yield* registrations.claim({ claim_token: registration.registration_id, otp })

      yield* reserve(dock, 1, 1)
      expect(yield* usage(dock)).toEqual({ artifacts: 26, bytes: 26 })
    }))
})

layer(domainTestWith({ sandboxWritesPerMinute: 0, tokenWritesPerMinute: 0 }))("WriteRules with 0 = unlimited", (it) => {
  it.effect("admits any number of writes from sandbox and ordinary tokens", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(MINUTE_START)
      for (const who of [principal({ sandbox: true }), principal({ sandbox: false })]) {
        for (let n = 0; n < 150; n++) yield* admit(who)
        const burst = yield* Effect.all(Array.from({ length: 50 }, () => Effect.either(admit(who))), {
          concurrency: "unbounded"
        })
        expect(burst.every((result) => result._tag === "Right")).toBe(true)
      }
    }))
})
