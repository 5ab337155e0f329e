/**
 * The Dock tools list_my_buckets, update_bucket and delete_bucket over the wire, with the real v2 client (pinned
 * to the modern era and in the legacy era) and the v1 SDK client: what tools/list advertises, success shapes
 * (`{ buckets }`, `{ bucket }`, `{ ok: true }`) checked against the rows, and refusals as `isError` results
 * carrying the error body (permission_denied 403 for collaborators, restricted and sandbox tokens; not_found
 * for what the caller cannot see). Users, tokens and grants are made through the admin API.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { ERAS } from "./support/McpClients.ts"
import {
  actor,
  call,
  connect,
  createBucket,
  grant,
  newUser,
  ok,
  ownInputSchema,
  refused,
  tokenFor
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const dockRow = (id: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ title: string; description: string | null; visibility: string; tags: Array<string> }>`select title,
        description, visibility, tags from docks where id = ${id}`.pipe(Effect.map((rows) => rows[0]))
  )

const ids = (buckets: ReadonlyArray<{ id: string }>) => buckets.map((bucket) => bucket.id).sort()

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the MCP Dock tools", (it) => {
  for (const era of ERAS) {
    it.scoped(`${era}: tools/list shows the Dock tools' required parameters and annotations`, () =>
      Effect.gen(function*() {
        const { client } = yield* actor(era)
        const { tools } = yield* Effect.promise(() => client.listTools())
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
        for (const name of ["list_my_buckets", "create_bucket", "update_bucket", "delete_bucket"]) {
          expect(byName[name], name).toBeDefined()
        }
        const list = byName["list_my_buckets"]!
        expect(list.inputSchema.required ?? []).toEqual([])
        expect(list.inputSchema).toMatchObject({
          type: "object",
          properties: {
            include_collaborations: { type: "boolean" },
            visibility: { type: "string", enum: ["private", "public"] },
            tag: { type: "string" }
          }
        })
        expect(list.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })

        const update = byName["update_bucket"]!
        expect(update.inputSchema.required).toEqual(["bucket"])
        expect(Object.keys(ownInputSchema(update.inputSchema).properties!).sort()).toEqual(
          ["bucket", "description", "tags", "title", "visibility"]
        )
        expect(update.inputSchema).toMatchObject({
          additionalProperties: false,
          properties: { bucket: { type: "string" }, visibility: { enum: ["private", "public"] } }
        })
        expect(update.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true })

        const remove = byName["delete_bucket"]!
        expect(remove.inputSchema.required).toEqual(["bucket"])
        expect(Object.keys(ownInputSchema(remove.inputSchema).properties!)).toEqual(["bucket"])
        expect(remove.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true })

        expect(byName["create_bucket"]!.inputSchema.required ?? []).toEqual([])
      }))

    it.scoped(`${era}: update_bucket by the owner, with bucket as UUID, owner/slug and bare slug, returns { bucket }`, () =>
      Effect.gen(function*() {
        const { client, user } = yield* actor(era)
        const dock = yield* createBucket(client, { title: "Before", slug: `upd-${unique()}`, tags: ["old"] })

        const first = ok(
          yield* call(client, "update_bucket", {
            bucket: dock.id,
            title: "By id",
            description: "Described",
            tags: ["a", "b"]
          })
        )
        expect(Object.keys(first)).toEqual(["bucket"])
        expect(first.bucket).toMatchObject({
          id: dock.id,
          slug: dock.slug,
          title: "By id",
          description: "Described",
          visibility: "private",
          tags: ["a", "b"],
          owner: { id: user.id, username: user.username }
        })

        const second = ok(
          yield* call(client, "update_bucket", { bucket: `${user.username}/${dock.slug}`, visibility: "public" })
        )
        expect(second.bucket).toMatchObject({ id: dock.id, title: "By id", visibility: "public", tags: ["a", "b"] })

        const third = ok(
          yield* call(client, "update_bucket", { bucket: dock.slug, title: "By slug", description: null })
        )
        expect(third.bucket).toMatchObject({ id: dock.id, title: "By slug", description: null, visibility: "public" })

        expect(yield* dockRow(dock.id)).toEqual({
          title: "By slug",
          description: null,
          visibility: "public",
          tags: ["a", "b"]
        })
        const server = yield* TestServer
        const activity = yield* server.sql<{ n: number }>`select count(*)::int as n from activity
          where dock_id = ${dock.id} and action = 'dock.updated' and user_id = ${user.id}`
        expect(activity).toEqual([{ n: 3 }])
      }))

    it.scoped(`${era}: delete_bucket by the owner returns { ok: true } and the row is gone; others are refused`, () =>
      Effect.gen(function*() {
        const { client, user } = yield* actor(era)
        const editor = yield* actor(era)
        const stranger = yield* actor(era)
        const doomed = yield* createBucket(client, { title: "Doomed", slug: `doomed-${unique()}` })
        const kept = yield* createBucket(client, { title: "Kept", slug: `kept-${unique()}` })
        yield* grant(kept.id, editor.user, "editor")

        const byEditor = refused(yield* call(editor.client, "delete_bucket", { bucket: kept.id }))
        expect(byEditor.error).toMatchObject({ code: "permission_denied", status: 403 })
        const byStranger = refused(yield* call(stranger.client, "delete_bucket", { bucket: kept.id }))
        expect(byStranger).toEqual({ error: { code: "not_found", status: 404, message: "Dock not found" } })
        expect((yield* dockRow(kept.id))?.title).toBe("Kept")

        expect(ok(yield* call(client, "delete_bucket", { bucket: `${user.username}/${doomed.slug}` }))).toEqual({
          ok: true
        })
        expect(yield* dockRow(doomed.id)).toBeUndefined()
        // deleting it again: it no longer exists
        const again = refused(yield* call(client, "delete_bucket", { bucket: doomed.id }))
        expect(again.error.code).toBe("not_found")
      }))

    it.scoped(`${era}: list_my_buckets lists owned Docks; include_collaborations adds editor grants, not viewer ones`, () =>
      Effect.gen(function*() {
        const { client, user } = yield* actor(era)
        const other = yield* actor(era)
        const tag = `tag-${unique()}`
        const mine = yield* createBucket(client, { title: "Mine", visibility: "public", tags: [tag] })
        const edited = yield* createBucket(other.client, { title: "Edited", tags: [tag] })
        const viewed = yield* createBucket(other.client, { title: "Viewed", tags: [tag] })
        yield* grant(edited.id, user, "editor")
        yield* grant(viewed.id, user, "viewer")

        const owned = ok(yield* call(client, "list_my_buckets", {}))
        expect(Object.keys(owned)).toEqual(["buckets"])
        expect(ids(owned.buckets)).toEqual([user.default_bucket_id, mine.id].sort())
        expect(owned.buckets.find((bucket: { id: string }) => bucket.id === mine.id)).toMatchObject({
          title: "Mine",
          visibility: "public",
          owner: { id: user.id, username: user.username }
        })
        expect(ids(ok(yield* call(client, "list_my_buckets", { include_collaborations: false })).buckets)).toEqual(
          ids(owned.buckets)
        )
        const all = ok(yield* call(client, "list_my_buckets", { include_collaborations: true }))
        expect(ids(all.buckets)).toEqual([user.default_bucket_id, mine.id, edited.id].sort())
        expect(ids(ok(yield* call(client, "list_my_buckets", { include_collaborations: true, tag })).buckets)).toEqual(
          [mine.id, edited.id].sort()
        )
        expect(
          ids(
            ok(yield* call(client, "list_my_buckets", { include_collaborations: true, visibility: "private" })).buckets
          )
        ).toEqual([user.default_bucket_id, edited.id].sort())
      }))
  }

  it.scoped("update_bucket by an editor or a viewer is permission_denied with status 403, and nothing changes", () =>
    Effect.gen(function*() {
      const owner = yield* actor("v2 modern")
      const editor = yield* actor("v2 legacy")
      const viewer = yield* actor("v1")
      const dock = yield* createBucket(owner.client, { title: "Owned", slug: `owned-${unique()}` })
      yield* grant(dock.id, editor.user, "editor")
      yield* grant(dock.id, viewer.user, "viewer")
      for (const { client } of [editor, viewer]) {
        for (const bucket of [dock.id, `${owner.user.username}/${dock.slug}`, dock.slug]) {
          const body = refused(yield* call(client, "update_bucket", { bucket, title: "Taken over" }))
          expect(body.error).toMatchObject({ code: "permission_denied", status: 403 })
        }
      }
      expect(yield* dockRow(dock.id)).toEqual({ title: "Owned", description: null, visibility: "private", tags: [] })
    }))

  it.scoped("update_bucket on another user's private Dock is not_found, exactly like a Dock that does not exist", () =>
    Effect.gen(function*() {
      const owner = yield* actor("v2 modern")
      const stranger = yield* actor("v2 modern")
      const dock = yield* createBucket(owner.client, { title: "Private", slug: `private-${unique()}` })
      const missing = refused(
        yield* call(stranger.client, "update_bucket", { bucket: crypto.randomUUID(), title: "x" })
      )
      expect(missing).toEqual({ error: { code: "not_found", status: 404, message: "Dock not found" } })
      for (const bucket of [dock.id, `${owner.user.username}/${dock.slug}`, dock.slug]) {
        expect(refused(yield* call(stranger.client, "update_bucket", { bucket, title: "x" }))).toEqual(missing)
        expect(refused(yield* call(stranger.client, "delete_bucket", { bucket }))).toEqual(missing)
      }
      expect((yield* dockRow(dock.id))?.title).toBe("Private")
    }))

  it.scoped("a sandbox token cannot make its sandbox public (permission_denied 403) but can retitle it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = yield* register(server.url)
      expect(registration.status).toBe(201)
      const sandboxId = registration.json.sandbox_bucket.id as string
      const client = yield* connect(registration.json.credential, "v2 modern")

      const body = refused(yield* call(client, "update_bucket", { bucket: sandboxId, visibility: "public" }))
      expect(body.error).toMatchObject({ code: "permission_denied", status: 403 })
      expect((yield* dockRow(sandboxId))?.visibility).toBe("private")

      const retitled = ok(yield* call(client, "update_bucket", { bucket: sandboxId, title: "My sandbox" }))
      expect(retitled.bucket).toMatchObject({ id: sandboxId, title: "My sandbox", visibility: "private" })
      const listed = ok(yield* call(client, "list_my_buckets", { include_collaborations: true }))
      expect(ids(listed.buckets)).toEqual([sandboxId])
    }))

  it.scoped("a token restricted by allowed_bucket_ids lists only those Docks and cannot change the others", () =>
    Effect.gen(function*() {
      const { client: ownerClient, user } = yield* actor("v2 legacy")
      const other = yield* actor("v2 legacy")
      const allowed = yield* createBucket(ownerClient, { title: "Allowed", slug: `allowed-${unique()}` })
      const outside = yield* createBucket(ownerClient, { title: "Outside", slug: `outside-${unique()}` })
      const shared = yield* createBucket(other.client, { title: "Shared" })
      yield* grant(shared.id, user, "editor")
      const token = yield* tokenFor(user, { docks: [allowed.id, `${other.user.username}/${shared.slug}`] })
      const client = yield* connect(token, "v1")

      expect(ids(ok(yield* call(client, "list_my_buckets", {})).buckets)).toEqual([allowed.id])
      expect(ids(ok(yield* call(client, "list_my_buckets", { include_collaborations: true })).buckets)).toEqual(
        [allowed.id, shared.id].sort()
      )
      // without the restriction, the same user sees every owned Dock
      expect(ids(ok(yield* call(ownerClient, "list_my_buckets", {})).buckets)).toEqual(
        [user.default_bucket_id, allowed.id, outside.id].sort()
      )

      for (
        const [name, args] of [["update_bucket", { bucket: outside.id, title: "No" }], ["delete_bucket", {
          bucket: outside.id
        }]] as const
      ) {
        const body = refused(yield* call(client, name, args))
        expect(body.error).toMatchObject({ code: "permission_denied", status: 403 })
      }
      expect((yield* dockRow(outside.id))?.title).toBe("Outside")
      expect(ok(yield* call(client, "update_bucket", { bucket: allowed.id, title: "Yes" })).bucket.title).toBe("Yes")
    }))

  it.scoped("a read-only token gets permission_denied from every Dock write tool", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const client = yield* connect(yield* tokenFor(user, { scopes: ["mcp:read"] }), "v2 modern")
      for (
        const [name, args] of [
          ["list_my_buckets", {}],
          ["update_bucket", { bucket: user.default_bucket_id, title: "No" }],
          ["delete_bucket", { bucket: user.default_bucket_id }]
        ] as const
      ) {
        expect(refused(yield* call(client, name, args)).error).toMatchObject({ code: "permission_denied", status: 403 })
      }
      expect(yield* dockRow(user.default_bucket_id)).toMatchObject({ visibility: "private" })
    }))

  it.scoped("update_bucket refuses an invalid title with validation_error and an ambiguous bare slug with bad_request", () =>
    Effect.gen(function*() {
      const { client, user } = yield* actor("v2 modern")
      const dock = yield* createBucket(client, { title: "Valid", slug: `valid-${unique()}` })
      const blank = refused(yield* call(client, "update_bucket", { bucket: dock.id, title: "   " }))
      expect(blank.error).toMatchObject({ code: "validation_error", status: 400, details: { field: "title" } })
      expect((yield* dockRow(dock.id))?.title).toBe("Valid")

      const slug = `twin-${unique()}`
      const a = yield* actor("v2 modern")
      const b = yield* actor("v2 modern")
      const first = yield* createBucket(a.client, { title: "A", slug })
      const second = yield* createBucket(b.client, { title: "B", slug })
      yield* grant(first.id, user, "editor")
      yield* grant(second.id, user, "editor")
      const ambiguous = refused(yield* call(client, "update_bucket", { bucket: slug, title: "Which?" }))
      expect(ambiguous.error).toMatchObject({ code: "bad_request", status: 400 })
      expect([...(ambiguous.error.details as { candidates: Array<string> }).candidates].sort()).toEqual(
        [`${a.user.username}/${slug}`, `${b.user.username}/${slug}`].sort()
      )
    }))
})
