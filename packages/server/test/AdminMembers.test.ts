/**
 * The operator's members API over real HTTP (in-process server): POST /admin/members (201, role editor by
 * default), GET /admin/members?dock=, POST /admin/members/remove, with the error body for unknown Docks and users
 * (404), bare slugs, owners and malformed input (400), and the admin bearer (401 without it).
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, fetchReply, postJson, unique } from "./support/Http.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

interface AdminUser {
  readonly id: string
  readonly username: string
  readonly email: string
  readonly default_bucket_id: string
}

/** A person made through the admin API; their default Dock is `username/username`. */
const newUser = Effect.gen(function*() {
  const server = yield* TestServer
  const reply = yield* postJson(
    `${server.url}/admin/users`,
    { email: `members-${unique()}@example.com` },
    bearer(server.adminToken)
  )
  expect(reply.status).toBe(201)
  return reply.json as AdminUser
})

const admin = Effect.map(TestServer, (server) => ({ url: server.url, headers: bearer(server.adminToken) }))

const addMember = (body: unknown, headers?: Record<string, string>) =>
  Effect.flatMap(admin, (a) => postJson(`${a.url}/admin/members`, body, headers ?? a.headers))

const listMembers = (dock: string | undefined, headers?: Record<string, string>) =>
  Effect.flatMap(
    admin,
    (a) =>
      fetchReply(`${a.url}/admin/members${dock === undefined ? "" : `?dock=${encodeURIComponent(dock)}`}`, {
        headers: headers ?? a.headers
      })
  )

const removeMember = (body: unknown, headers?: Record<string, string>) =>
  Effect.flatMap(admin, (a) => postJson(`${a.url}/admin/members/remove`, body, headers ?? a.headers))

const grantRows = (dockId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ user_id: string; role: string }>`select user_id, role from dock_members where dock_id = ${dockId}
      order by user_id`
  )

const member = (owner: AdminUser, user: AdminUser, role: string) => ({
  bucket_id: owner.default_bucket_id,
  user_id: user.id,
  username: user.username,
  role
})

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the admin members API", (it) => {
  it.effect("POST /admin/members grants editor by default (201), GET lists, POST /admin/members/remove removes", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const editor = yield* newUser
      const viewer = yield* newUser
      const path = `${owner.username}/${owner.username}`

      const added = yield* addMember({ dock: path, user: editor.email })
      expect(added.status).toBe(201)
      expect(added.json).toEqual(member(owner, editor, "editor"))
      const viewerAdded = yield* addMember({ dock: owner.default_bucket_id, user: viewer.id, role: "viewer" })
      expect(viewerAdded.status).toBe(201)
      expect(viewerAdded.json).toEqual(member(owner, viewer, "viewer"))

      for (const dock of [path, owner.default_bucket_id]) {
        const listed = yield* listMembers(dock)
        expect(listed.status).toBe(200)
        expect([...listed.json].sort((a: any, b: any) => a.user_id.localeCompare(b.user_id))).toEqual(
          [member(owner, editor, "editor"), member(owner, viewer, "viewer")].sort((a, b) =>
            a.user_id.localeCompare(b.user_id)
          )
        )
      }

      const removed = yield* removeMember({ dock: path, user: editor.username })
      expect(removed.status).toBe(200)
      expect(removed.json).toEqual(member(owner, editor, "editor"))
      expect(yield* grantRows(owner.default_bucket_id)).toEqual([{ user_id: viewer.id, role: "viewer" }])

      // removing again: there is no grant any more
      const again = yield* removeMember({ dock: path, user: editor.username })
      expect(again.status).toBe(404)
      expect(again.json.error).toMatchObject({ code: "not_found", status: 404 })
    }))

  it.effect("re-adding changes the role and answers 201 with the new role", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const user = yield* newUser
      expect((yield* addMember({ dock: owner.default_bucket_id, user: user.username, role: "viewer" })).status).toBe(
        201
      )
      const changed = yield* addMember({ dock: owner.default_bucket_id, user: user.username, role: "editor" })
      expect(changed.status).toBe(201)
      expect(changed.json.role).toBe("editor")
      expect(yield* grantRows(owner.default_bucket_id)).toEqual([{ user_id: user.id, role: "editor" }])
      expect((yield* listMembers(owner.default_bucket_id)).json).toEqual([member(owner, user, "editor")])
    }))

  it.effect("an empty Dock lists as []", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const listed = yield* listMembers(owner.default_bucket_id)
      expect(listed.status).toBe(200)
      expect(listed.json).toEqual([])
    }))

  it.effect("unknown Docks and users are 404 not_found with the error body", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const user = yield* newUser
      const unknownDocks = [
        crypto.randomUUID(),
        `${owner.username}/no-such-${unique()}`,
        `nobody-${unique()}/${owner.username}`
      ]
      for (const dock of unknownDocks) {
        for (
          const reply of [
            yield* addMember({ dock, user: user.username }),
            yield* listMembers(dock),
            yield* removeMember({ dock, user: user.username })
          ]
        ) {
          expect(reply.status, dock).toBe(404)
          expect(reply.json).toEqual({
            error: { code: "not_found", status: 404, message: `No Dock "${dock}"`, details: { field: "dock" } }
          })
        }
      }
      const nobody = `nobody-${unique()}@example.com`
      for (
        const reply of [
          yield* addMember({ dock: owner.default_bucket_id, user: nobody }),
          yield* removeMember({ dock: owner.default_bucket_id, user: nobody })
        ]
      ) {
        expect(reply.status).toBe(404)
        expect(reply.json).toEqual({
          error: { code: "not_found", status: 404, message: `No user "${nobody}"`, details: { field: "user" } }
        })
      }
      expect(yield* grantRows(owner.default_bucket_id)).toEqual([])
    }))

  it.effect("a bare slug, the owner as member, a bad role and missing fields are 400", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const user = yield* newUser
      for (
        const reply of [
          yield* addMember({ dock: owner.username, user: user.username }),
          yield* listMembers(owner.username),
          yield* removeMember({ dock: owner.username, user: user.username })
        ]
      ) {
        expect(reply.status).toBe(400)
        expect(reply.json.error).toMatchObject({ code: "validation_error", status: 400, details: { field: "dock" } })
      }
      const ownerGrant = yield* addMember({ dock: owner.default_bucket_id, user: owner.email, role: "viewer" })
      expect(ownerGrant.status).toBe(400)
      expect(ownerGrant.json.error).toMatchObject({ code: "validation_error", status: 400, details: { field: "user" } })

      for (
        const reply of [
          yield* addMember({ dock: owner.default_bucket_id, user: user.username, role: "admin" }),
          // only the Dock's owner is ever owner: an owner grant is refused
          yield* addMember({ dock: owner.default_bucket_id, user: user.username, role: "owner" }),
          yield* addMember({ dock: owner.default_bucket_id }),
          yield* addMember({ user: user.username }),
          yield* listMembers(undefined),
          yield* removeMember({ dock: owner.default_bucket_id })
        ]
      ) {
        expect(reply.status).toBe(400)
        expect(reply.json.error).toMatchObject({ code: "validation_error", status: 400 })
      }
      const notJson = yield* addMember("{not json")
      expect(notJson.status).toBe(400)
      expect(notJson.json).toEqual({
        error: { code: "bad_request", status: 400, message: "The request body is not valid JSON" }
      })
      expect(yield* grantRows(owner.default_bucket_id)).toEqual([])
    }))

  it.effect("every members endpoint needs the admin bearer: 401 without it or with a wrong one", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const user = yield* newUser
      const body = { dock: owner.default_bucket_id, user: user.username, role: "editor" }
      for (const headers of [{}, bearer("dock_admin_wrong"), { authorization: `Basic ${btoa("admin:admin")}` }]) {
        for (
          const reply of [
            yield* addMember(body, headers),
            yield* listMembers(owner.default_bucket_id, headers),
            yield* removeMember(body, headers)
          ]
        ) {
          expect(reply.status).toBe(401)
          expect(reply.json.error).toMatchObject({ code: "unauthorized", status: 401 })
          expect(reply.headers["www-authenticate"]).toBe(`Bearer realm="dock-admin"`)
        }
      }
      // an MCP token is not an admin token either
      const token = yield* Effect.flatMap(
        admin,
        (a) => postJson(`${a.url}/admin/tokens`, { user: owner.email }, a.headers)
      )
      expect((yield* addMember(body, bearer(token.json.token))).status).toBe(401)
      expect(yield* grantRows(owner.default_bucket_id)).toEqual([])
    }))
})
