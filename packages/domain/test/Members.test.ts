// Operator grants (Members): add, list and remove by Dock id or owner/slug and by user email, username or id;
// re-adding changes the role; the owner cannot be a member; unknown Docks and users are not_found; a bare slug
// is not precise enough for an operator; and what a grant means to the policy (viewers and editors read a
// private Dock; only the owner changes it).
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  type Dock,
  type DockRef,
  Docks,
  errorBody,
  Members,
  type NotFound,
  type User,
  userPrincipal,
  type ValidationError
} from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"
import {
  as,
  createDock,
  newUser,
  NOT_FOUND_BODY,
  pathOf,
  resolvedAt,
  storedOwnerGrant,
  unique
} from "./support/Fixtures.ts"

const add = (dock: string, user: string, role: "editor" | "viewer") =>
  Effect.flatMap(Members, (service) => service.add(dock, user, role))
/** What a caller that bypasses the wire schema could pass: the port must refuse it itself. */
const addOwner = (dock: string, user: string) =>
  Effect.flatMap(Members, (service) => service.add(dock, user, "owner" as unknown as "editor"))
const list = (dock: string) => Effect.flatMap(Members, (service) => service.list(dock))
const removeMember = (dock: string, user: string) => Effect.flatMap(Members, (service) => service.remove(dock, user))

/** add, list and remove for one Dock name, each as an Effect of nothing but its failure. */
const everyCall = (
  dock: string,
  user: string,
  role: "editor" | "viewer"
): ReadonlyArray<Effect.Effect<void, NotFound | ValidationError, Members>> => [
  Effect.asVoid(add(dock, user, role)),
  Effect.asVoid(list(dock)),
  Effect.asVoid(removeMember(dock, user))
]

const byId = (dock: Dock): DockRef => ({ _tag: "ById", id: dock.id })

const grantRows = (dock: Dock) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ user_id: string; role: string }>`select user_id, role from dock_members where dock_id = ${dock.id}
      order by user_id`
  )

const memberOf = (dock: Dock, user: User, role: string) => ({
  bucket_id: dock.id,
  user_id: user.id,
  username: user.username,
  role
})

const sortByUser = <A extends { readonly user_id: string }>(rows: ReadonlyArray<A>) =>
  [...rows].sort((a, b) => a.user_id.localeCompare(b.user_id))

const scenario = Effect.gen(function*() {
  const owner = yield* newUser("members")
  const alice = yield* newUser("members")
  const bob = yield* newUser("members")
  const dock = yield* createDock(owner, { title: "Team", slug: `team-${unique()}` })
  return { owner, alice, bob, dock }
})

layer(DomainTest)("Members", (it) => {
  it.effect("adds, lists and removes grants, naming Docks and users every way an operator can", () =>
    Effect.gen(function*() {
      const { alice, bob, dock } = yield* scenario
      const added = yield* add(pathOf(dock), alice.email!, "editor")
      expect({ ...added }).toEqual(memberOf(dock, alice, "editor"))
      expect({ ...(yield* add(dock.id, bob.username, "viewer")) }).toEqual(memberOf(dock, bob, "viewer"))

      for (const name of [dock.id, dock.id.toUpperCase(), pathOf(dock)]) {
        const listed = sortByUser(yield* list(name))
        expect(listed.map((member) => ({ ...member }))).toEqual(
          sortByUser([memberOf(dock, alice, "editor"), memberOf(dock, bob, "viewer")])
        )
      }
      expect(yield* grantRows(dock)).toEqual(
        sortByUser([{ user_id: alice.id, role: "editor" }, { user_id: bob.id, role: "viewer" }])
      )

      const removed = yield* removeMember(dock.id, alice.id)
      expect({ ...removed }).toEqual(memberOf(dock, alice, "editor"))
      expect({ ...(yield* removeMember(pathOf(dock), bob.email!.toUpperCase())) }).toEqual(
        memberOf(dock, bob, "viewer")
      )
      expect(yield* list(dock.id)).toEqual([])
      expect(yield* grantRows(dock)).toEqual([])
    }))

  it.effect("re-adding a member changes the role; there is still one grant", () =>
    Effect.gen(function*() {
      const { alice, dock } = yield* scenario
      yield* add(dock.id, alice.username, "viewer")
      const changed = yield* add(pathOf(dock), alice.email!, "editor")
      expect(changed.role).toBe("editor")
      expect((yield* list(dock.id)).map((member) => [member.user_id, member.role])).toEqual([[alice.id, "editor"]])
    }))

  it.effect("an owner grant is refused (validation_error on the role) and changes nothing", () =>
    Effect.gen(function*() {
      const { alice, bob, dock } = yield* scenario
      yield* add(dock.id, alice.username, "viewer")
      for (const user of [alice.username, bob.email!]) {
        const error = yield* Effect.flip(addOwner(dock.id, user))
        expect(error.code).toBe("validation_error")
        expect(error.details).toEqual({ field: "role" })
      }
      expect(yield* grantRows(dock)).toEqual([{ user_id: alice.id, role: "viewer" }])
    }))

  it.effect("granting the Dock's owner is a validation_error on the user", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* scenario
      for (const role of ["editor", "viewer"] as const) {
        const error = yield* Effect.flip(add(dock.id, owner.username, role))
        expect(error.code).toBe("validation_error")
        expect(error.details).toEqual({ field: "user" })
      }
      expect(yield* grantRows(dock)).toEqual([])
    }))

  it.effect("an unknown user or Dock is not_found, naming the field", () =>
    Effect.gen(function*() {
      const { alice, dock, owner } = yield* scenario
      for (const user of [`nobody-${unique()}`, `nobody-${unique()}@example.com`, crypto.randomUUID()]) {
        const error = yield* Effect.flip(add(dock.id, user, "editor"))
        expect(error.code).toBe("not_found")
        expect(error.details).toEqual({ field: "user" })
        expect((yield* Effect.flip(removeMember(dock.id, user))).details).toEqual({ field: "user" })
      }
      for (
        const name of [
          crypto.randomUUID(),
          `${owner.username}/no-such-${unique()}`,
          `nobody-${unique()}/${dock.slug}`,
          `${alice.username}/${dock.slug}`
        ]
      ) {
        for (const attempt of everyCall(name, alice.username, "editor")) {
          const error = yield* Effect.flip(attempt)
          expect(error.code, name).toBe("not_found")
          expect(error.status).toBe(404)
          expect(error.details).toEqual({ field: "dock" })
        }
      }
      expect(yield* grantRows(dock)).toEqual([])
    }))

  it.effect("a bare slug (or anything that is neither an id nor owner/slug) is a validation_error on the Dock", () =>
    Effect.gen(function*() {
      const { alice, dock } = yield* scenario
      for (const name of [dock.slug, "not-a-uuid", ""]) {
        for (const attempt of everyCall(name, alice.username, "viewer")) {
          const error = yield* Effect.flip(attempt)
          expect(error.code, name).toBe("validation_error")
          expect(error.details).toEqual({ field: "dock" })
        }
      }
      expect(yield* grantRows(dock)).toEqual([])
    }))

  it.effect("removing a user who has no grant is not_found", () =>
    Effect.gen(function*() {
      const { alice, bob, dock, owner } = yield* scenario
      yield* add(dock.id, bob.username, "viewer")
      for (const user of [alice, owner]) {
        const error = yield* Effect.flip(removeMember(dock.id, user.username))
        expect(error.code).toBe("not_found")
        expect(error.status).toBe(404)
      }
      // a grant on another Dock of the same owner is not a grant on this one
      const other = yield* createDock(owner, { title: "Other" })
      expect((yield* Effect.flip(removeMember(other.id, bob.username))).code).toBe("not_found")
      expect(yield* grantRows(dock)).toEqual([{ user_id: bob.id, role: "viewer" }])
    }))

  it.effect("viewers and editors can read the private Dock; only the owner can change it; removal hides it", () =>
    Effect.gen(function*() {
      const { alice, bob, dock, owner } = yield* scenario
      const docks = yield* Docks
      const stranger = yield* newUser("members")
      yield* add(dock.id, alice.username, "editor")
      yield* add(dock.id, bob.username, "viewer")
      for (const [user, role] of [[alice, "editor"], [bob, "viewer"]] as const) {
        expect(yield* Effect.map(resolvedAt(byId(dock)), (resolved) => resolved.dock).pipe(as(userPrincipal(user))))
          .toEqual(dock)
        expect(
          (yield* Effect.map(resolvedAt(byId(dock)), (resolved) => resolved.access).pipe(as(userPrincipal(user)))).grant
        ).toBe(role)
        const update = yield* Effect.flip(
          Effect.flatMap(resolvedAt(byId(dock)), (resolved) => docks.update(resolved, { title: "Changed" })).pipe(
            as(userPrincipal(user))
          )
        )
        expect(update.code).toBe("permission_denied")
        const remove = yield* Effect.flip(
          Effect.flatMap(resolvedAt(byId(dock)), docks.remove).pipe(as(userPrincipal(user)))
        )
        expect(remove.code).toBe("permission_denied")
      }
      expect(
        errorBody(
          yield* Effect.flip(
            Effect.map(resolvedAt(byId(dock)), (resolved) => resolved.dock).pipe(as(userPrincipal(stranger)))
          )
        )
      ).toEqual(NOT_FOUND_BODY)
      expect(
        (yield* Effect.flatMap(
          resolvedAt(byId(dock)),
          (resolved) => docks.update(resolved, { title: "Owner's change" })
        ).pipe(as(userPrincipal(owner)))).title
      )
        .toBe("Owner's change")

      yield* removeMember(dock.id, alice.username)
      expect(
        errorBody(
          yield* Effect.flip(
            Effect.map(resolvedAt(byId(dock)), (resolved) => resolved.dock).pipe(as(userPrincipal(alice)))
          )
        )
      ).toEqual(NOT_FOUND_BODY)
      expect(
        (yield* Effect.map(resolvedAt(byId(dock)), (resolved) => resolved.dock).pipe(as(userPrincipal(bob)))).title
      ).toBe("Owner's change")
    }))

  it.effect("a stored owner-role grant gives no owner powers: an editor's at most", () =>
    Effect.gen(function*() {
      const { alice, bob, dock } = yield* scenario
      const docks = yield* Docks
      const members = yield* Members
      yield* storedOwnerGrant(dock, alice)
      const resolved = yield* resolvedAt(byId(dock)).pipe(as(userPrincipal(alice)))
      expect(resolved.role).toBe("editor")
      // listed as what it acts as
      expect((yield* list(dock.id)).map((member) => member.role)).toEqual(["editor"])
      // it cannot delete the Dock, change its visibility nor grant
      expect((yield* Effect.flip(docks.remove(resolved).pipe(as(userPrincipal(alice))))).code).toBe(
        "permission_denied"
      )
      expect(
        (yield* Effect.flip(docks.update(resolved, { visibility: "public" }).pipe(as(userPrincipal(alice))))).code
      ).toBe("permission_denied")
      expect((yield* Effect.flip(members.grant(resolved, bob.username, "viewer").pipe(as(userPrincipal(alice))))).code)
        .toBe("permission_denied")
      expect((yield* Effect.flip(members.revoke(resolved, alice.username).pipe(as(userPrincipal(alice))))).code)
        .toBe("permission_denied")
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`select id, visibility from docks where id = ${dock.id}`).toEqual([
        { id: dock.id, visibility: "private" }
      ])
      expect(yield* grantRows(dock)).toEqual([{ user_id: alice.id, role: "owner" }])
    }))

  it.effect("the owner grants and revokes by username or email; others, sandboxes and owner roles cannot", () =>
    Effect.gen(function*() {
      const { alice, bob, dock, owner } = yield* scenario
      const members = yield* Members
      const resolved = yield* resolvedAt(byId(dock)).pipe(as(userPrincipal(owner)))
      const asOwner = as(userPrincipal(owner))
      expect({ ...(yield* members.grant(resolved, alice.username, "viewer").pipe(asOwner)) }).toEqual(
        memberOf(dock, alice, "viewer")
      )
      expect({ ...(yield* members.grant(resolved, bob.email!.toUpperCase(), "editor").pipe(asOwner)) }).toEqual(
        memberOf(dock, bob, "editor")
      )
      expect(sortByUser(yield* members.members(resolved).pipe(asOwner)).map((m) => m.role)).toEqual(
        sortByUser([memberOf(dock, alice, "viewer"), memberOf(dock, bob, "editor")]).map((m) => m.role)
      )
      const unknown = yield* Effect.flip(
        members.grant(resolved, `nobody-${unique()}@example.com`, "viewer").pipe(asOwner)
      )
      expect(unknown.code).toBe("not_found")
      expect(unknown.message).toContain("sign in to Dock once")
      const ownerRole = yield* Effect.flip(
        members.grant(resolved, alice.username, "owner" as unknown as "editor").pipe(asOwner)
      )
      expect(ownerRole.code).toBe("validation_error")
      // an editor cannot grant; a read-only token of the owner cannot either
      const asBob = yield* resolvedAt(byId(dock)).pipe(as(userPrincipal(bob)))
      expect((yield* Effect.flip(members.grant(asBob, `x${unique()}`, "viewer").pipe(as(userPrincipal(bob))))).code)
        .toBe("permission_denied")
      const readOnly = userPrincipal(owner, { scopes: ["mcp:read"] })
      expect((yield* Effect.flip(members.grant(resolved, alice.username, "editor").pipe(as(readOnly)))).code).toBe(
        "permission_denied"
      )
      expect({ ...(yield* members.revoke(resolved, alice.email!).pipe(asOwner)) }).toEqual(
        memberOf(dock, alice, "viewer")
      )
      expect((yield* Effect.flip(members.revoke(resolved, alice.username).pipe(asOwner))).code).toBe("not_found")
      expect(yield* grantRows(dock)).toEqual([{ user_id: bob.id, role: "editor" }])
    }))

  it.effect("an unclaimed sandbox Dock gets no grants, from the operator, its owner or a sandbox token", () =>
    Effect.gen(function*() {
      const { alice, dock, owner } = yield* scenario
      const members = yield* Members
      const sql = yield* SqlClient.SqlClient
      yield* sql`update docks set sandbox = true where id = ${dock.id}`
      const byOperator = yield* Effect.flip(add(dock.id, alice.username, "viewer"))
      expect(byOperator.code).toBe("validation_error")
      expect(byOperator.details).toEqual({ field: "dock" })
      for (
        const principal of [userPrincipal(owner), userPrincipal(owner, { sandbox: true, allowedBucketIds: [dock.id] })]
      ) {
        const resolved = yield* resolvedAt(byId(dock)).pipe(as(principal))
        const error = yield* Effect.flip(members.grant(resolved, alice.username, "viewer").pipe(as(principal)))
        expect(error.code).toBe("permission_denied")
      }
      expect(yield* grantRows(dock)).toEqual([])
    }))

  it.effect("grants on a deleted Dock are gone and the Dock is not_found for members", () =>
    Effect.gen(function*() {
      const { alice, dock, owner } = yield* scenario
      yield* add(dock.id, alice.username, "editor")
      yield* Effect.flatMap(Docks, (docks) => Effect.flatMap(resolvedAt(byId(dock)), docks.remove)).pipe(
        as(userPrincipal(owner))
      )
      const error = yield* Effect.flip(list(dock.id))
      expect(error.code).toBe("not_found")
      expect(yield* grantRows(dock)).toEqual([])
    }))
})
