// The one resolver (Docks.resolve): every targeting form (bucket as UUID, owner/slug or bare slug; legacy
// bucket_id, bucket_path, bucket_slug with or without owner_username) names one readable Dock; a bare slug is
// looked up among the caller's own Docks, then collaborations, then public Docks; ambiguity and contradictions
// are bad_request; what the caller cannot read does not exist; no form at all is None.
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import {
  Accounts,
  anonymousPrincipal,
  type Dock,
  type DockTarget,
  errorBody,
  Members,
  type Principal,
  userPrincipal
} from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"
import { createDock, grant, newUser, NOT_FOUND_BODY, pathOf, resolveAs, unique } from "./support/Fixtures.ts"

/** Every targeting form that names `dock` (the bare slug ones only when the slug is unambiguous for the caller). */
const everyForm = (dock: Dock): ReadonlyArray<DockTarget> => [
  { bucket: dock.id },
  { bucket: dock.id.toUpperCase() },
  { bucket: `  ${dock.id}  ` },
  { bucket: pathOf(dock) },
  { bucket: `${dock.owner.username.toUpperCase()}/${dock.slug}` },
  { bucket: dock.slug },
  { bucket_id: dock.id },
  { bucket_id: dock.id.toUpperCase() },
  { bucket_path: pathOf(dock) },
  { bucket_slug: dock.slug },
  { bucket_slug: dock.slug, owner_username: dock.owner.username },
  { bucket: dock.slug, bucket_id: dock.id, bucket_path: pathOf(dock), bucket_slug: dock.slug },
  { bucket: pathOf(dock), bucket_slug: dock.slug, owner_username: dock.owner.username }
]

/** The Dock a target resolves to, failing the test when it resolves to nothing. */
const resolved = (principal: Principal, target: DockTarget) =>
  Effect.map(resolveAs(principal, target), (found) => {
    expect(Option.isSome(found), JSON.stringify(target)).toBe(true)
    return Option.getOrThrow(found)
  })

const failure = (principal: Principal, target: DockTarget) => Effect.flip(resolveAs(principal, target))

layer(DomainTest)("Docks.resolve", (it) => {
  it.effect("resolves every targeting form to the same Dock for its owner, with the owner's access", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("resolver")
      const dock = yield* createDock(owner, { title: "Every form", slug: `every-${unique()}`, tags: ["t"] })
      for (const target of everyForm(dock)) {
        const found = yield* resolved(userPrincipal(owner), target)
        expect(found.dock, JSON.stringify(target)).toEqual(dock)
        expect(found.access).toEqual({ dockId: dock.id, ownerId: owner.id, visibility: "private", grant: null })
      }
    }))

  it.effect("resolves every targeting form of a private Dock for a viewer and an editor, with their grant", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("resolver")
      const viewer = yield* newUser("resolver")
      const editor = yield* newUser("resolver")
      const dock = yield* createDock(owner, { title: "Shared", slug: `shared-${unique()}` })
      yield* grant(dock, viewer, "viewer")
      yield* grant(dock, editor, "editor")
      for (const [user, role] of [[viewer, "viewer"], [editor, "editor"]] as const) {
        for (const target of everyForm(dock)) {
          const found = yield* resolved(userPrincipal(user), target)
          expect(found.dock.id, JSON.stringify(target)).toBe(dock.id)
          expect(found.access.grant).toBe(role)
        }
      }
    }))

  it.effect("resolves every targeting form of a public Dock for strangers and anonymous readers", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("resolver")
      const stranger = yield* newUser("resolver")
      const dock = yield* createDock(owner, { title: "Open", slug: `open-${unique()}`, visibility: "public" })
      for (const principal of [userPrincipal(stranger), anonymousPrincipal]) {
        for (const target of everyForm(dock)) {
          const found = yield* resolved(principal, target)
          expect(found.dock, JSON.stringify(target)).toEqual(dock)
          expect(found.access).toEqual({ dockId: dock.id, ownerId: owner.id, visibility: "public", grant: null })
        }
      }
    }))

  it.effect("a bare slug prefers the caller's own Dock, then a collaboration, then a public Dock", () =>
    Effect.gen(function*() {
      const slug = `tiers-${unique()}`
      const me = yield* newUser("tiers")
      const collaborator = yield* newUser("tiers")
      const publisher = yield* newUser("tiers")
      const stranger = yield* newUser("tiers")
      const mine = yield* createDock(me, { title: "Mine", slug })
      const shared = yield* createDock(collaborator, { title: "Shared with me", slug })
      const open = yield* createDock(publisher, { title: "Public", slug, visibility: "public" })
      yield* grant(shared, me, "viewer")

      for (const target of [{ bucket: slug }, { bucket_slug: slug }] satisfies ReadonlyArray<DockTarget>) {
        // own beats collaboration and public
        expect((yield* resolved(userPrincipal(me), target)).dock.id).toBe(mine.id)
        // each owner gets their own, even the collaborator whose Dock is private
        expect((yield* resolved(userPrincipal(collaborator), target)).dock.id).toBe(shared.id)
        expect((yield* resolved(userPrincipal(publisher), target)).dock.id).toBe(open.id)
        // nobody else can read the private ones: the public Dock is the only match
        expect((yield* resolved(userPrincipal(stranger), target)).dock.id).toBe(open.id)
        expect((yield* resolved(anonymousPrincipal, target)).dock.id).toBe(open.id)
      }

      // Without a Dock of their own with this slug, a collaboration beats the public Dock, whatever the role.
      const viewer = yield* newUser("tiers")
      const editor = yield* newUser("tiers")
      yield* grant(shared, viewer, "viewer")
      yield* grant(shared, editor, "editor")
      for (const user of [viewer, editor]) {
        const found = yield* resolved(userPrincipal(user), { bucket: slug })
        expect(found.dock.id).toBe(shared.id)
        expect(found.access.grant).toBe(user === viewer ? "viewer" : "editor")
      }
      // A collaboration on a public Dock still counts as a collaboration.
      const slug2 = `tiers-${unique()}`
      const sharedPublic = yield* createDock(collaborator, {
        title: "Shared public",
        slug: slug2,
        visibility: "public"
      })
      yield* createDock(publisher, { title: "Other public", slug: slug2, visibility: "public" })
      yield* grant(sharedPublic, viewer, "viewer")
      expect((yield* resolved(userPrincipal(viewer), { bucket: slug2 })).dock.id).toBe(sharedPublic.id)
    }))

  it.effect("two public Docks with the same slug are bad_request, naming both as owner/slug candidates", () =>
    Effect.gen(function*() {
      const slug = `twin-${unique()}`
      const first = yield* createDock(yield* newUser("twin"), { title: "Twin one", slug, visibility: "public" })
      const second = yield* createDock(yield* newUser("twin"), { title: "Twin two", slug, visibility: "public" })
      // A private Dock with the same slug is not a candidate for anyone who cannot read it.
      const hidden = yield* createDock(yield* newUser("twin"), { title: "Hidden twin", slug })
      const stranger = yield* newUser("twin")
      for (const principal of [userPrincipal(stranger), anonymousPrincipal]) {
        for (const target of [{ bucket: slug }, { bucket_slug: slug }] satisfies ReadonlyArray<DockTarget>) {
          const error = yield* failure(principal, target)
          expect(error.code).toBe("bad_request")
          expect(error.status).toBe(400)
          const candidates = (error.details as { candidates: Array<string> }).candidates
          expect([...candidates].sort()).toEqual([pathOf(first), pathOf(second)].sort())
          expect(candidates).not.toContain(pathOf(hidden))
          expect(JSON.stringify(errorBody(error))).not.toContain(hidden.owner.username)
        }
        // owner/slug and ids still name exactly one
        expect((yield* resolved(principal, { bucket: pathOf(first) })).dock.id).toBe(first.id)
        expect((yield* resolved(principal, { bucket_slug: slug, owner_username: second.owner.username })).dock.id)
          .toBe(second.id)
      }
      // the owner of one of them is not in doubt: own Docks come first
      expect((yield* resolved(userPrincipal(yield* accountOf(first)), { bucket: slug })).dock.id).toBe(first.id)
    }))

  it.effect("two collaborations with the same slug are bad_request even when a public Dock also matches", () =>
    Effect.gen(function*() {
      const slug = `collab-twin-${unique()}`
      const me = yield* newUser("twin")
      const a = yield* createDock(yield* newUser("twin"), { title: "A", slug })
      const b = yield* createDock(yield* newUser("twin"), { title: "B", slug })
      yield* createDock(yield* newUser("twin"), { title: "Public", slug, visibility: "public" })
      yield* grant(a, me, "editor")
      yield* grant(b, me, "viewer")
      const error = yield* failure(userPrincipal(me), { bucket: slug })
      expect(error.code).toBe("bad_request")
      expect([...(error.details as { candidates: Array<string> }).candidates].sort()).toEqual(
        [pathOf(a), pathOf(b)].sort()
      )
    }))

  it.effect("forms naming different Docks are bad_request", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("contra")
      const one = yield* createDock(owner, { title: "One", slug: `one-${unique()}` })
      const two = yield* createDock(owner, { title: "Two", slug: `two-${unique()}`, visibility: "public" })
      const targets: ReadonlyArray<DockTarget> = [
        { bucket: one.id, bucket_id: two.id },
        { bucket: pathOf(one), bucket_path: pathOf(two) },
        { bucket: one.slug, bucket_slug: two.slug },
        { bucket_id: one.id, bucket_slug: two.slug, owner_username: owner.username },
        { bucket_path: pathOf(one), bucket_slug: two.slug },
        { bucket: one.id, bucket_id: one.id, bucket_path: pathOf(two) }
      ]
      for (const target of targets) {
        const error = yield* failure(userPrincipal(owner), target)
        expect(error.code, JSON.stringify(target)).toBe("bad_request")
        expect(error.status).toBe(400)
        expect(error.details).toEqual({ fields: Object.keys(target) })
      }
    }))

  it.effect("owner_username without bucket_slug is bad_request rather than silently ignored", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("lone")
      const dock = yield* createDock(owner, { title: "Lone", slug: `lone-${unique()}` })
      for (const target of [{ owner_username: owner.username }, { bucket: dock.id, owner_username: owner.username }]) {
        const error = yield* failure(userPrincipal(owner), target)
        expect(error.code, JSON.stringify(target)).toBe("bad_request")
        expect(error.details).toEqual({ fields: ["owner_username"] })
      }
    }))

  it.effect("a private Dock of someone else is not_found through every form, with the body of a missing one", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("private")
      const stranger = yield* newUser("private")
      const secret = yield* createDock(owner, { title: "Secret", slug: `secret-${unique()}` })
      const mine = yield* createDock(stranger, { title: "Mine", slug: `mine-${unique()}` })
      const missing = errorBody(yield* failure(userPrincipal(stranger), { bucket: crypto.randomUUID() }))
      expect(missing).toEqual(NOT_FOUND_BODY)
      for (const principal of [userPrincipal(stranger), anonymousPrincipal]) {
        for (const target of everyForm(secret)) {
          const error = yield* failure(principal, target)
          expect(errorBody(error), JSON.stringify(target)).toEqual(missing)
        }
        // next to a Dock the caller can read it is still missing, not a contradiction
        if (principal !== anonymousPrincipal) {
          for (
            const target of [
              { bucket: mine.id, bucket_id: secret.id },
              { bucket: pathOf(secret), bucket_id: mine.id }
            ] satisfies ReadonlyArray<DockTarget>
          ) {
            expect(errorBody(yield* failure(principal, target))).toEqual(missing)
          }
        }
      }
      // a revoked grant hides it again
      yield* grant(secret, stranger, "viewer")
      expect((yield* resolved(userPrincipal(stranger), { bucket: secret.slug })).dock.id).toBe(secret.id)
      yield* Effect.flatMap(Members, (members) => members.remove(secret.id, stranger.id))
      expect(errorBody(yield* failure(userPrincipal(stranger), { bucket: secret.slug }))).toEqual(missing)
    }))

  it.effect("unknown and malformed references are not_found", () =>
    Effect.gen(function*() {
      const user = yield* newUser("unknown")
      const dock = yield* createDock(user, { title: "Known", slug: `known-${unique()}` })
      const targets: ReadonlyArray<DockTarget> = [
        { bucket: crypto.randomUUID() },
        { bucket_id: crypto.randomUUID() },
        { bucket_id: "not-a-uuid" },
        { bucket_id: "" },
        { bucket_id: `${dock.id}0` },
        { bucket_id: dock.id.slice(0, -1) },
        { bucket: `no-such-${unique()}` },
        { bucket: "" },
        { bucket: `${user.username}/no-such-${unique()}` },
        { bucket: `nobody-${unique()}/${dock.slug}` },
        { bucket: `${user.username}/${dock.slug}/extra` },
        { bucket_path: `nobody-${unique()}/${dock.slug}` },
        { bucket_slug: `no-such-${unique()}` },
        { bucket_slug: dock.slug, owner_username: `nobody-${unique()}` }
      ]
      for (const target of targets) {
        expect(errorBody(yield* failure(userPrincipal(user), target)), JSON.stringify(target)).toEqual(NOT_FOUND_BODY)
      }
    }))

  it.effect("no targeting form at all is None", () =>
    Effect.gen(function*() {
      const user = yield* newUser("none")
      for (const principal of [userPrincipal(user), anonymousPrincipal]) {
        expect(yield* resolveAs(principal, {})).toEqual(Option.none())
        expect(yield* resolveAs(principal, { bucket: undefined, bucket_id: undefined })).toEqual(Option.none())
      }
    }))
})

/** The owner of a Dock as a User, for acting as them. */
const accountOf = (dock: Dock) => Effect.flatMap(Accounts, (accounts) => accounts.findById(dock.owner.id))
