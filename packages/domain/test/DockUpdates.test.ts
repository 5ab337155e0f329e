// Changing and deleting Docks (Docks.update, Docks.remove) and listing the Docks a caller can push to
// (Docks.listWritable): owner-only changes attributed in the activity log, collaborators refused with
// permission_denied, strangers on private Docks answered not_found, sandbox tokens never making anything public,
// validation before anything is written, and token restrictions (allowed_bucket_ids) respected.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import {
  anonymousPrincipal,
  type Dock,
  type DockPatch,
  type DockRef,
  Docks,
  errorBody,
  type Principal,
  type TokenId,
  userPrincipal,
  type WritableFilter
} from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"
import {
  as,
  createDock,
  grant,
  newUser,
  NOT_FOUND_BODY,
  resolvedAt,
  storedOwnerGrant,
  unique
} from "./support/Fixtures.ts"

const byId = (dock: Dock): DockRef => ({ _tag: "ById", id: dock.id })
const byPath = (dock: Dock): DockRef => ({ _tag: "ByPath", owner: dock.owner.username, slug: dock.slug })
const bySlug = (dock: Dock): DockRef => ({ _tag: "BySlug", slug: dock.slug })

const update = (principal: Principal, ref: DockRef, patch: DockPatch) =>
  Effect.flatMap(Docks, (docks) => Effect.flatMap(resolvedAt(ref), (dock) => docks.update(dock, patch))).pipe(
    as(principal)
  )

const remove = (principal: Principal, ref: DockRef) =>
  Effect.flatMap(Docks, (docks) => Effect.flatMap(resolvedAt(ref), docks.remove)).pipe(as(principal))

const get = (principal: Principal, ref: DockRef) =>
  Effect.map(resolvedAt(ref), (resolved) => resolved.dock).pipe(as(principal))

const listWritable = (principal: Principal, filter: WritableFilter = {}) =>
  Effect.flatMap(Docks, (docks) => docks.listWritable(filter)).pipe(as(principal))

/** The Dock's row as stored, or undefined when it is gone. */
const row = (dock: Dock) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ title: string; description: string | null; visibility: string; tags: Array<string> }>`select title,
        description, visibility, tags from docks where id = ${dock.id}`.pipe(Effect.map((rows) => rows[0]))
  )

const actions = (dock: Dock) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ action: string }>`select action from activity where dock_id = ${dock.id} order by created_at, action`.pipe(
        Effect.map((rows) => rows.map((r) => r.action))
      )
  )

const memberRows = (dock: Dock) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: number }>`select count(*)::int as n from dock_members where dock_id = ${dock.id}`.pipe(
        Effect.map((rows) => rows[0]!.n)
      )
  )

const ids = (docks: ReadonlyArray<Dock>) => docks.map((dock) => dock.id).sort()

/** A private Dock with an editor and a viewer. */
const sharedDock = Effect.gen(function*() {
  const owner = yield* newUser("upd")
  const editor = yield* newUser("upd")
  const viewer = yield* newUser("upd")
  const dock = yield* createDock(owner, {
    title: "Before",
    slug: `shared-${unique()}`,
    description: "Old description",
    tags: ["old"]
  })
  yield* grant(dock, editor, "editor")
  yield* grant(dock, viewer, "viewer")
  return { owner, editor, viewer, dock }
})

const unchanged = (dock: Dock) =>
  Effect.gen(function*() {
    expect(yield* row(dock)).toEqual({
      title: dock.title,
      description: dock.description,
      visibility: dock.visibility,
      tags: [...dock.tags]
    })
  })

layer(DomainTest)("Docks.update", (it) => {
  it.effect("the owner changes title, description, visibility and tags; dock.updated is recorded", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* sharedDock
      yield* TestClock.adjust("90 seconds")
      const tokenId = crypto.randomUUID() as TokenId
      const principal = userPrincipal(owner, { tokenId, agentLabel: "updater" })
      const updated = yield* update(principal, byId(dock), {
        title: "  After  ",
        description: "  New description ",
        visibility: "public",
        tags: [" a ", "b", "a", ""]
      })
      expect(updated).toMatchObject({
        id: dock.id,
        slug: dock.slug,
        title: "After",
        description: "New description",
        visibility: "public",
        tags: ["a", "b"],
        owner: { id: owner.id, username: owner.username },
        created_at: dock.created_at
      })
      expect(Date.parse(updated.updated_at) - Date.parse(dock.created_at)).toBe(90_000)
      expect(yield* row(dock)).toEqual({
        title: "After",
        description: "New description",
        visibility: "public",
        tags: ["a", "b"]
      })
      expect(yield* get(userPrincipal(owner), byId(dock))).toEqual(updated)

      const sql = yield* SqlClient.SqlClient
      const activity = yield* sql<
        { user_id: string; token_id: string; agent_label: string; subject_id: string; details: unknown }
      >`
        select user_id, token_id, agent_label, subject_id, details from activity
        where dock_id = ${dock.id} and action = 'dock.updated'`
      expect(activity).toEqual([{
        user_id: owner.id,
        token_id: tokenId,
        agent_label: "updater",
        subject_id: dock.id,
        details: { fields: ["title", "description", "visibility", "tags"] }
      }])
      expect(yield* actions(dock)).toEqual(["dock.created", "dock.updated"])
    }))

  it.effect("leaves fields that are not given as they were; null or blank description clears it", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* sharedDock
      const retitled = yield* update(userPrincipal(owner), byPath(dock), { title: "Only the title" })
      expect(retitled).toMatchObject({
        title: "Only the title",
        description: "Old description",
        visibility: "private",
        tags: ["old"]
      })
      const cleared = yield* update(userPrincipal(owner), bySlug(dock), { description: null, tags: [] })
      expect(cleared).toMatchObject({ title: "Only the title", description: null, tags: [] })
      yield* update(userPrincipal(owner), byId(dock), { description: "again" })
      expect((yield* update(userPrincipal(owner), byId(dock), { description: "   " })).description).toBeNull()
      // back to private
      yield* update(userPrincipal(owner), byId(dock), { visibility: "public" })
      expect((yield* update(userPrincipal(owner), byId(dock), { visibility: "private" })).visibility).toBe("private")
      expect(yield* actions(dock)).toEqual(["dock.created", ...Array(6).fill("dock.updated")])
    }))

  it.effect("an editor and a viewer get permission_denied and nothing changes", () =>
    Effect.gen(function*() {
      const { dock, editor, viewer } = yield* sharedDock
      for (const user of [editor, viewer]) {
        for (const patch of [{ title: "Hijacked" }, { visibility: "public" as const }, { tags: ["x"] }]) {
          const error = yield* Effect.flip(update(userPrincipal(user), byId(dock), patch))
          expect(error.code).toBe("permission_denied")
          expect(error.status).toBe(403)
        }
      }
      yield* unchanged(dock)
      expect(yield* actions(dock)).toEqual(["dock.created"])
    }))

  it.effect("a stranger gets not_found on a private Dock (like a missing one) and permission_denied on a public one", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* sharedDock
      const stranger = yield* newUser("upd")
      for (const ref of [byId(dock), byPath(dock), bySlug(dock)]) {
        expect(errorBody(yield* Effect.flip(update(userPrincipal(stranger), ref, { title: "Mine now" })))).toEqual(
          NOT_FOUND_BODY
        )
      }
      expect(errorBody(yield* Effect.flip(update(anonymousPrincipal, byId(dock), { title: "x" })))).toEqual(
        NOT_FOUND_BODY
      )
      expect(
        errorBody(yield* Effect.flip(update(userPrincipal(stranger), { _tag: "ById", id: crypto.randomUUID() }, {})))
      )
        .toEqual(NOT_FOUND_BODY)
      yield* unchanged(dock)

      const open = yield* createDock(owner, { title: "Open", visibility: "public" })
      const error = yield* Effect.flip(update(userPrincipal(stranger), byId(open), { title: "Mine now" }))
      expect(error.code).toBe("permission_denied")
      expect((yield* Effect.flip(update(anonymousPrincipal, byId(open), { title: "x" }))).code).toBe("unauthorized")
      yield* unchanged(open)
    }))

  it.effect("a sandbox principal cannot make its own Dock public, but can retitle it", () =>
    Effect.gen(function*() {
      const user = yield* newUser("sandbox")
      const dock = yield* createDock(user, { title: "Sandbox", slug: `sandbox-${unique()}` })
      const sandbox = userPrincipal(user, {
        sandbox: true,
        allowedBucketIds: [dock.id],
        tokenId: crypto.randomUUID() as TokenId
      })
      const error = yield* Effect.flip(update(sandbox, byId(dock), { visibility: "public" }))
      expect(error.code).toBe("permission_denied")
      expect(error.status).toBe(403)
      expect(error.details).toEqual({ sandbox: true })
      const both = yield* Effect.flip(update(sandbox, byId(dock), { title: "Sneaky", visibility: "public" }))
      expect(both.code).toBe("permission_denied")
      yield* unchanged(dock)

      const retitled = yield* update(sandbox, byId(dock), { title: "Still private", visibility: "private" })
      expect(retitled).toMatchObject({ title: "Still private", visibility: "private" })
      // and the sandbox token cannot touch the user's other Docks: to it they do not exist
      const other = yield* Effect.flip(update(sandbox, { _tag: "ById", id: user.default_bucket_id! }, { title: "x" }))
      expect(other.code).toBe("not_found")
    }))

  it.effect("read-only and restricted tokens get permission_denied on the owner's Dock", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* sharedDock
      const tokenId = crypto.randomUUID() as TokenId
      const readOnly = userPrincipal(owner, { tokenId, scopes: ["mcp:read"] })
      const restricted = userPrincipal(owner, { tokenId, allowedBucketIds: [owner.default_bucket_id!] })
      for (const principal of [readOnly, restricted]) {
        const error = yield* Effect.flip(update(principal, byId(dock), { title: "No" }))
        expect(error.code).toBe("permission_denied")
        expect(yield* Effect.flip(remove(principal, byId(dock)))).toMatchObject({ code: "permission_denied" })
      }
      const allowed = userPrincipal(owner, { tokenId, allowedBucketIds: [dock.id] })
      expect((yield* update(allowed, byId(dock), { title: "Yes" })).title).toBe("Yes")
    }))

  it.effect.each<[string, DockPatch, string]>([
    ["an empty title", { title: "" }, "title"],
    ["a blank title", { title: "  \t " }, "title"],
    ["a title of 201 characters", { title: "t".repeat(201) }, "title"],
    ["a description of 5001 characters", { description: "d".repeat(5001) }, "description"],
    ["33 tags", { tags: Array.from({ length: 33 }, (_, n) => `tag${n}`) }, "tags"],
    ["a tag of 65 characters", { tags: ["x".repeat(65)] }, "tags"]
  ])("refuses %s with validation_error and changes nothing", ([, patch, field]) =>
    Effect.gen(function*() {
      const { dock, owner } = yield* sharedDock
      const error = yield* Effect.flip(update(userPrincipal(owner), byId(dock), { ...patch, visibility: "public" }))
      expect(error.code).toBe("validation_error")
      expect(error.status).toBe(400)
      expect(error.details).toEqual({ field })
      yield* unchanged(dock)
      expect(yield* actions(dock)).toEqual(["dock.created"])
    }))
})

layer(DomainTest)("Docks.remove", (it) => {
  it.effect("the owner deletes the Dock with its members and activity; afterwards it does not exist", () =>
    Effect.gen(function*() {
      const { dock, editor, owner } = yield* sharedDock
      expect(yield* memberRows(dock)).toBe(2)
      yield* remove(userPrincipal(owner), byPath(dock))
      expect(yield* row(dock)).toBeUndefined()
      expect(yield* memberRows(dock)).toBe(0)
      expect(yield* actions(dock)).toEqual([])
      for (const principal of [userPrincipal(owner), userPrincipal(editor)]) {
        expect(errorBody(yield* Effect.flip(get(principal, byId(dock))))).toEqual(NOT_FOUND_BODY)
        expect(errorBody(yield* Effect.flip(remove(principal, byId(dock))))).toEqual(NOT_FOUND_BODY)
      }
      // the owner's other Docks are untouched
      expect((yield* get(userPrincipal(owner), { _tag: "ById", id: owner.default_bucket_id! })).id).toBe(
        owner.default_bucket_id
      )
    }))

  it.effect("by bare slug and by id", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("rm")
      const a = yield* createDock(owner, { title: "A", slug: `a-${unique()}` })
      const b = yield* createDock(owner, { title: "B", slug: `b-${unique()}` })
      yield* remove(userPrincipal(owner), bySlug(a))
      yield* remove(userPrincipal(owner), byId(b))
      expect(yield* row(a)).toBeUndefined()
      expect(yield* row(b)).toBeUndefined()
    }))

  it.effect("collaborators get permission_denied, strangers not_found on private and permission_denied on public", () =>
    Effect.gen(function*() {
      const { dock, editor, owner, viewer } = yield* sharedDock
      const stranger = yield* newUser("rm")
      for (const user of [editor, viewer]) {
        const error = yield* Effect.flip(remove(userPrincipal(user), byId(dock)))
        expect(error.code).toBe("permission_denied")
        expect(error.status).toBe(403)
      }
      expect(errorBody(yield* Effect.flip(remove(userPrincipal(stranger), byId(dock))))).toEqual(NOT_FOUND_BODY)
      expect(errorBody(yield* Effect.flip(remove(anonymousPrincipal, byId(dock))))).toEqual(NOT_FOUND_BODY)
      yield* unchanged(dock)
      expect(yield* memberRows(dock)).toBe(2)

      const open = yield* createDock(owner, { title: "Public", visibility: "public" })
      expect((yield* Effect.flip(remove(userPrincipal(stranger), byId(open)))).code).toBe("permission_denied")
      expect((yield* Effect.flip(remove(anonymousPrincipal, byId(open)))).code).toBe("unauthorized")
      expect((yield* row(open))?.title).toBe("Public")
    }))
})

layer(DomainTest)("Docks.listWritable", (it) => {
  /** An owner with two extra Docks and grants on two Docks of someone else. */
  const setup = Effect.gen(function*() {
    const me = yield* newUser("list")
    const other = yield* newUser("list")
    const tag = `tag-${unique()}`
    const privateOwn = yield* createDock(me, { title: "Own private", tags: [tag] })
    const publicOwn = yield* createDock(me, { title: "Own public", visibility: "public" })
    const edited = yield* createDock(other, { title: "I edit", tags: [tag] })
    const viewed = yield* createDock(other, { title: "I view", visibility: "public", tags: [tag] })
    const unrelated = yield* createDock(other, { title: "Not mine", visibility: "public" })
    yield* grant(edited, me, "editor")
    yield* grant(viewed, me, "viewer")
    return { me, other, tag, privateOwn, publicOwn, edited, viewed, unrelated }
  })

  it.effect("lists owned Docks; editor collaborations only with includeCollaborations; viewer grants never", () =>
    Effect.gen(function*() {
      const { edited, me, other, privateOwn, publicOwn } = yield* setup
      const owned = [me.default_bucket_id!, privateOwn.id, publicOwn.id].sort()
      expect(ids(yield* listWritable(userPrincipal(me)))).toEqual(owned)
      expect(ids(yield* listWritable(userPrincipal(me), { includeCollaborations: false }))).toEqual(owned)
      const withCollaborations = yield* listWritable(userPrincipal(me), { includeCollaborations: true })
      expect(ids(withCollaborations)).toEqual([...owned, edited.id].sort())
      expect(withCollaborations.find((dock) => dock.id === edited.id)).toMatchObject({
        title: "I edit",
        owner: { id: other.id, username: other.username }
      })
      // the other user's list holds their own Docks only
      expect(
        (yield* listWritable(userPrincipal(other), { includeCollaborations: true })).every((dock) =>
          dock.owner.id === other.id
        )
      )
        .toBe(true)
    }))

  it.effect("a stored owner-role grant shows up as a collaboration (an editor's); a removed grant no longer does", () =>
    Effect.gen(function*() {
      const { edited, me, other } = yield* setup
      const coOwned = yield* createDock(other, { title: "Co-owned" })
      yield* storedOwnerGrant(coOwned, me)
      const listed = ids(yield* listWritable(userPrincipal(me), { includeCollaborations: true }))
      expect(listed).toContain(coOwned.id)
      expect(listed).toContain(edited.id)
      // downgrading the editor to viewer drops it
      yield* grant(edited, me, "viewer")
      expect(ids(yield* listWritable(userPrincipal(me), { includeCollaborations: true }))).not.toContain(edited.id)
    }))

  it.effect("filters by visibility and by tag", () =>
    Effect.gen(function*() {
      const { edited, me, privateOwn, publicOwn, tag } = yield* setup
      expect(ids(yield* listWritable(userPrincipal(me), { visibility: "public" }))).toEqual([publicOwn.id])
      expect(ids(yield* listWritable(userPrincipal(me), { includeCollaborations: true, visibility: "private" })))
        .toEqual(
          [me.default_bucket_id!, privateOwn.id, edited.id].sort()
        )
      expect(ids(yield* listWritable(userPrincipal(me), { tag }))).toEqual([privateOwn.id])
      expect(ids(yield* listWritable(userPrincipal(me), { includeCollaborations: true, tag }))).toEqual(
        [privateOwn.id, edited.id].sort()
      )
      expect(yield* listWritable(userPrincipal(me), { includeCollaborations: true, tag, visibility: "public" }))
        .toEqual([])
      expect(yield* listWritable(userPrincipal(me), { tag: `none-${unique()}` })).toEqual([])
    }))

  it.effect("respects the principal's allowedBucketIds, for owned Docks and collaborations", () =>
    Effect.gen(function*() {
      const { edited, me, privateOwn, viewed } = yield* setup
      const tokenId = crypto.randomUUID() as TokenId
      const restricted = userPrincipal(me, { tokenId, allowedBucketIds: [privateOwn.id, edited.id, viewed.id] })
      expect(ids(yield* listWritable(restricted))).toEqual([privateOwn.id])
      expect(ids(yield* listWritable(restricted, { includeCollaborations: true }))).toEqual(
        [privateOwn.id, edited.id].sort()
      )
      const sandbox = userPrincipal(me, { tokenId, sandbox: true, allowedBucketIds: [me.default_bucket_id!] })
      expect(ids(yield* listWritable(sandbox, { includeCollaborations: true }))).toEqual([me.default_bucket_id!])
    }))

  it.effect("returns full Dock objects and refuses anonymous callers", () =>
    Effect.gen(function*() {
      const { me, privateOwn } = yield* setup
      const listed = (yield* listWritable(userPrincipal(me))).find((dock) => dock.id === privateOwn.id)
      expect(listed).toEqual(privateOwn)
      const error = yield* Effect.flip(listWritable(anonymousPrincipal))
      expect(error.code).toBe("unauthorized")
    }))

  it.effect("does not list deleted Docks", () =>
    Effect.gen(function*() {
      const { edited, me, other, privateOwn } = yield* setup
      yield* remove(userPrincipal(me), byId(privateOwn))
      yield* remove(userPrincipal(other), byId(edited))
      const listed = ids(yield* listWritable(userPrincipal(me), { includeCollaborations: true }))
      expect(listed).not.toContain(privateOwn.id)
      expect(listed).not.toContain(edited.id)
    }))
})
