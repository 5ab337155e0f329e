// A person's own tokens (Tokens/OwnTokens.ts, Tokens.rotate) over a real database: only the principal's own tokens
// are listed, revoked and rotated (another user's id is NotFound and stays as it was); rotation revokes the old
// secret and keeps label, kind, scopes, Docks and expiry; an agent with a token cannot manage tokens; chosen Docks
// must be writable; lifetimes are the offered ones.
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, TestClock } from "effect"
import {
  Accounts,
  CurrentPrincipal,
  Docks,
  issueOwnToken,
  listOwnTokens,
  revokeOwnToken,
  rotateOwnToken,
  Tokens,
  type User,
  userPrincipal
} from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)
const T0 = Date.UTC(2031, 5, 1, 12, 0, 0)

const newUser = Effect.flatMap(
  Accounts,
  (accounts) => accounts.create({ email: `own-${unique()}@example.com`, kind: "person", confirmed: true })
)

const as = (user: User) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, CurrentPrincipal, userPrincipal(user))

const errorOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.match(exit, { onFailure: (cause) => JSON.stringify(cause), onSuccess: () => "success" })

layer(DomainTest)("own tokens", (it) => {
  it.effect("a person lists, rotates and revokes only their own tokens", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const tokens = yield* Tokens
      const alice = yield* newUser
      const bob = yield* newUser
      const made = yield* issueOwnToken({ label: "laptop", write: false, expiresInDays: 30 }).pipe(as(alice))
      expect(made.scopes).toEqual(["mcp:read"])
      expect(made.expires_at).toBe(new Date(T0 + 30 * 86_400_000).toISOString())
      expect((yield* listOwnTokens().pipe(as(alice))).map((token) => token.id)).toEqual([made.id])
      expect(yield* listOwnTokens().pipe(as(bob))).toEqual([])

      expect(errorOf(yield* Effect.exit(revokeOwnToken(made.id).pipe(as(bob))))).toContain("NotFound")
      expect(errorOf(yield* Effect.exit(rotateOwnToken(made.id).pipe(as(bob))))).toContain("NotFound")
      yield* tokens.authenticate(made.token)

      const rotated = yield* rotateOwnToken(made.id).pipe(as(alice))
      expect(rotated.id).not.toBe(made.id)
      expect(rotated.token).not.toBe(made.token)
      expect({ ...rotated, id: "", token: "" }).toEqual({ ...made, id: "", token: "" })
      expect(errorOf(yield* Effect.exit(tokens.authenticate(made.token)))).toContain("Unauthorized")
      yield* tokens.authenticate(rotated.token)
      // The old token is gone for good: it cannot be rotated again.
      expect(errorOf(yield* Effect.exit(rotateOwnToken(made.id).pipe(as(alice))))).toContain("NotFound")

      yield* revokeOwnToken(rotated.id).pipe(as(alice))
      expect(errorOf(yield* Effect.exit(tokens.authenticate(rotated.token)))).toContain("Unauthorized")
    }))

  it.effect("an agent holding a token cannot manage tokens; chosen Docks must be writable; lifetimes are offered ones", () =>
    Effect.gen(function*() {
      const alice = yield* newUser
      const bob = yield* newUser
      const agent = userPrincipal(alice, { tokenId: crypto.randomUUID() as never })
      const denied = yield* Effect.exit(
        issueOwnToken({ label: "minted", write: true, expiresInDays: 30 }).pipe(
          Effect.provideService(CurrentPrincipal, agent)
        )
      )
      expect(errorOf(denied)).toContain("PermissionDenied")

      const bobsDock = yield* Effect.flatMap(Docks, (docks) => docks.create({ title: `Bob ${unique()}` })).pipe(as(bob))
      const foreign = yield* Effect.exit(
        issueOwnToken({ label: "theirs", write: true, dockIds: [bobsDock.id], expiresInDays: 30 }).pipe(as(alice))
      )
      expect(errorOf(foreign)).toContain("You cannot write to one of the chosen Docks")
      const odd = yield* Effect.exit(issueOwnToken({ label: "odd", write: true, expiresInDays: 7 }).pipe(as(alice)))
      expect(errorOf(odd)).toContain("Choose an expiry")
      const never = yield* issueOwnToken({ label: "forever", write: true, dockIds: [], expiresInDays: null }).pipe(
        as(alice)
      )
      expect(never.expires_at).toBeNull()
      expect(never.allowed_bucket_ids).toBeNull()
      expect((yield* listOwnTokens().pipe(as(alice))).map((token) => token.label)).toEqual(["forever"])
    }))
})
