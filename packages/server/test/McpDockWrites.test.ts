/**
 * The Dock write tools fork_bucket, update_bucket_metadata, set_cover_web_page and set_grounding_bucket over the
 * wire, with the real v2 client (pinned to the modern era and in the legacy era) and the v1 SDK client: success
 * shapes checked against the stored rows, every error the spec lists for each tool as an `isError` result with
 * its error body (unauthorized, for a revoked token, as the endpoint's 401), activity rows attributed to the
 * user, token and agent label, fork tracking through get_bucket, the grounding Dock of untargeted get_bucket
 * calls, and the plan's Dock cap on a server configured with DOCK_PLAN_MAX_DOCKS=2.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { bearer, postJson, unique } from "./support/Http.ts"
import { awayFromWindowEnd, register } from "./support/Identity.ts"
import { type AnyClient, type Era, ERAS } from "./support/McpClients.ts"
import {
  actor,
  type AdminUser,
  call,
  connect,
  createBucket,
  DOCK_KEYS,
  grant,
  labelledToken,
  newUser,
  NOT_FOUND,
  ok,
  refused,
  revokeToken,
  seedPage,
  tokenFor
} from "./support/McpTools.ts"
import { startTestServer, TestServer, TestServerLive } from "./support/TestServer.ts"

const DAY = 24 * 60 * 60 * 1000

const pathOf = (owner: { readonly username: string }, dock: { readonly slug: string }) =>
  `${owner.username}/${dock.slug}`

/** Clients of the user with a read-only token and with a token restricted to the user's default Dock. */
const limitedClients = (user: AdminUser, era: Era) =>
  Effect.gen(function*() {
    const reader = yield* connect(yield* tokenFor(user, { scopes: ["mcp:read"] }), era)
    const restricted = yield* connect(yield* tokenFor(user, { docks: [user.default_bucket_id] }), era)
    return { reader, restricted }
  })

/** A user whose write token carries an agent label, and a client of the era sending it. */
const agent = (era: Era) =>
  Effect.gen(function*() {
    const user = yield* newUser
    const label = `agent-${unique()}`
    const { id: tokenId, token } = yield* labelledToken(user, label)
    return { user, token, tokenId, label, client: yield* connect(token, era) }
  })

/** A public Dock whose owner allows forks: create_bucket, then update_bucket_metadata with allow_forks. */
const forkable = (client: AnyClient, owner: AdminUser, fields: Record<string, unknown>) =>
  Effect.gen(function*() {
    const dock = yield* createBucket(client, { visibility: "public", ...fields })
    const updated = ok(
      yield* call(client, "update_bucket_metadata", { bucket_path: pathOf(owner, dock), allow_forks: true })
    )
    expect(updated.bucket).toMatchObject({ id: dock.id, visibility: "public", allow_forks: true })
    return dock
  })

interface DockRowShape {
  readonly owner_id: string
  readonly slug: string
  readonly title: string
  readonly description: string | null
  readonly visibility: string
  readonly discoverable: boolean
  readonly allow_forks: boolean
  readonly tags: Array<string>
  readonly topics: Array<string>
  readonly cover_part_id: string | null
  readonly forked_from_id: string | null
  readonly forked_from_path: string | null
  readonly forked_at: Date | null
  readonly forked_page_count: number | null
}

const dockRow = (id: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<DockRowShape>`select owner_id, slug, title, description, visibility, discoverable, allow_forks, tags,
        topics, cover_part_id, forked_from_id, forked_from_path, forked_at, forked_page_count
      from docks where id = ${id}`.pipe(Effect.map((rows) => rows[0]))
  )

/** The activity rows of one action on one Dock, oldest first. */
const activityOf = (dockId: string, action: string) =>
  Effect.flatMap(TestServer, (server) =>
    server.sql<{
      user_id: string | null
      token_id: string | null
      agent_label: string | null
      subject_type: string | null
      subject_id: string | null
      details: any
    }>`select user_id, token_id, agent_label, subject_type, subject_id, details from activity
      where dock_id = ${dockId} and action = ${action} order by created_at, id`)

/** How many Docks the user owns. */
const ownedCount = (userId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ n: number }>`select count(*)::int as n from docks where owner_id = ${userId}`.pipe(
        Effect.map((rows) => rows[0]!.n)
      )
  )

/** Activity rows of one action made by one user, over all Docks. */
const actionsBy = (userId: string, action: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<
        { n: number }
      >`select count(*)::int as n from activity where user_id = ${userId} and action = ${action}`
        .pipe(Effect.map((rows) => rows[0]!.n))
  )

/** get_bucket's Dock. */
const details = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(call(client, "get_bucket", args), (result) => ok(result).bucket)

const groundingRows = (tokenId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ dock_id: string; expires_at: Date; updated_at: Date }>`select dock_id, expires_at, updated_at
      from grounding where token_id = ${tokenId}`
  )

/** A tools/call JSON-RPC request straight to /mcp, as a client would send it (no session). */
const rawToolCall = (token: string, name: string, args: Record<string, unknown>) =>
  Effect.flatMap(TestServer, (server) =>
    postJson(
      `${server.url}/mcp`,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
      { ...bearer(token), accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" }
    ))

/** Whether the client's call rejected (a transport failure) rather than returning a result, and why. */
const outcomeOf = (client: AnyClient, name: string, args: Record<string, unknown>) =>
  Effect.promise(() =>
    client.callTool({ name, arguments: args }).then(
      (value) => ({ rejected: false, value: JSON.stringify(value) }),
      (error: unknown) => ({ rejected: true, value: String(error) })
    )
  )

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the MCP Dock write tools", (it) => {
  for (const era of ERAS) {
    // ---------------------------------------------------------------- fork_bucket

    it.scoped(`${era}: fork_bucket copies every page into a new private Dock of the caller, attributed to the token`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor(era)
        const forker = yield* agent(era)
        const upstream = yield* forkable(owner.client, owner.user, {
          title: "Field guide",
          slug: `guide-${unique()}`,
          description: "Birds of the coast",
          tags: ["birds"],
          topic_tag_slugs: ["nature"]
        })
        const alpha = yield* seedPage(owner.user, upstream.id, "alpha")
        yield* seedPage(owner.user, upstream.id, "alpha", { content: "<p>alpha again</p>", bodyText: "alpha again" })
        const beta = yield* seedPage(owner.user, upstream.id, "beta", {
          pageKind: "markdown_file",
          contentType: "markdown",
          content: "# Beta",
          bodyText: "Beta"
        })

        const result = ok(
          yield* call(forker.client, "fork_bucket", {
            bucket_path: pathOf(owner.user, upstream),
            new_name: "My guide"
          })
        )
        expect(Object.keys(result)).toEqual(["bucket"])
        const fork = result.bucket
        expect(Object.keys(fork).sort()).toEqual(DOCK_KEYS)
        expect(fork).toMatchObject({
          slug: "my-guide",
          title: "My guide",
          owner: { id: forker.user.id, username: forker.user.username },
          visibility: "private",
          discoverable: false,
          allow_forks: false,
          description: "Birds of the coast",
          tags: ["birds"],
          topics: ["nature"],
          cover_page_id: null,
          forked_from: { id: upstream.id, path: pathOf(owner.user, upstream) }
        })
        expect(fork.id).not.toBe(upstream.id)

        const row = yield* dockRow(fork.id)
        expect(row).toMatchObject({
          owner_id: forker.user.id,
          slug: "my-guide",
          title: "My guide",
          visibility: "private",
          forked_from_id: upstream.id,
          forked_from_path: pathOf(owner.user, upstream),
          forked_page_count: 2
        })
        expect(row!.forked_at).toBeInstanceOf(Date)
        expect(Math.abs(row!.forked_at!.getTime() - Date.now())).toBeLessThan(60_000)

        // Every page is copied as version 1 of the forker, remembering its upstream page and version.
        const copies = yield* server.sql`select slug, version, owner_id, page_kind, content, upstream_part_id,
            upstream_version from parts where dock_id = ${fork.id} order by slug`
        expect(copies).toEqual([
          {
            slug: "alpha",
            version: 1,
            owner_id: forker.user.id,
            page_kind: "web_page",
            content: "<p>alpha again</p>",
            upstream_part_id: alpha.part.id,
            upstream_version: 2
          },
          {
            slug: "beta",
            version: 1,
            owner_id: forker.user.id,
            page_kind: "markdown_file",
            content: "# Beta",
            upstream_part_id: beta.part.id,
            upstream_version: 1
          }
        ])
        const versions = yield* server.sql`select p.slug, v.version, v.reason, v.user_id, v.token_id, v.agent_label
          from part_versions v join parts p on p.id = v.part_id where p.dock_id = ${fork.id} order by p.slug`
        expect(versions).toEqual(["alpha", "beta"].map((slug) => ({
          slug,
          version: 1,
          reason: "forked",
          user_id: forker.user.id,
          token_id: forker.tokenId,
          agent_label: forker.label
        })))
        // The upstream is untouched.
        const upstreamParts = yield* server
          .sql`select slug, version from parts where dock_id = ${upstream.id} order by slug`
        expect(upstreamParts).toEqual([{ slug: "alpha", version: 2 }, { slug: "beta", version: 1 }])

        expect(yield* activityOf(fork.id, "dock.forked")).toEqual([{
          user_id: forker.user.id,
          token_id: forker.tokenId,
          agent_label: forker.label,
          subject_type: "dock",
          subject_id: fork.id,
          details: { upstream_id: upstream.id, upstream_path: pathOf(owner.user, upstream), pages: 2 }
        }])

        // The forker reads the fork like any Dock of theirs.
        const read = yield* details(forker.client, { bucket: fork.id })
        expect(read).toMatchObject({
          id: fork.id,
          page_count: 2,
          page_kind_breakdown: { web_page: 1, markdown_file: 1 }
        })
      }))

    it.scoped(`${era}: fork_bucket titles the fork after the upstream without new_name (or with null) and honours visibility`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const forker = yield* actor(era)
        const title = `Recipes ${unique()}`
        const upstream = yield* forkable(owner.client, owner.user, { title, slug: `recipes-${unique()}` })
        const path = pathOf(owner.user, upstream)

        const first = ok(yield* call(forker.client, "fork_bucket", { bucket_path: path, visibility: "public" })).bucket
        expect(first).toMatchObject({
          title,
          visibility: "public",
          discoverable: false,
          forked_from: { id: upstream.id, path }
        })
        const slug = title.toLowerCase().replace(" ", "-")
        expect(first.slug).toBe(slug)

        // new_name null, and the legacy bucket_id naming the same Dock: a second fork under the next free slug
        const second =
          ok(yield* call(forker.client, "fork_bucket", { bucket_path: path, bucket_id: upstream.id, new_name: null }))
            .bucket
        expect(second).toMatchObject({
          title,
          slug: `${slug}-2`,
          visibility: "private",
          forked_from: { id: upstream.id, path }
        })
        expect((yield* dockRow(second.id))?.visibility).toBe("private")

        // Parameters naming two different Docks are refused.
        const other = yield* forkable(owner.client, owner.user, { title: "Other" })
        const contradictory = refused(
          yield* call(forker.client, "fork_bucket", { bucket_path: path, bucket_id: other.id })
        )
        expect(contradictory.error).toMatchObject({ code: "bad_request", status: 400 })
        expect(yield* ownedCount(forker.user.id)).toBe(3)
      }))

    it.scoped(`${era}: fork_bucket refuses what it cannot fork: not_found, forbidden, validation_error; nothing is made`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const forker = yield* actor(era)
        const upstream = yield* forkable(owner.client, owner.user, { title: "Open", slug: `open-${unique()}` })
        // private, although its owner allows forks
        const hidden = yield* createBucket(owner.client, { title: "Hidden", slug: `hidden-${unique()}` })
        ok(
          yield* call(owner.client, "update_bucket_metadata", {
            bucket_path: pathOf(owner.user, hidden),
            allow_forks: true
          })
        )
        // public, but forks are not allowed
        const closed = yield* createBucket(owner.client, {
          title: "Closed",
          slug: `closed-${unique()}`,
          visibility: "public"
        })
        const before = yield* ownedCount(forker.user.id)

        // not_found: missing, or not readable — the same body
        const missing = refused(
          yield* call(forker.client, "fork_bucket", { bucket_path: `nobody-${unique()}/nothing` })
        )
        expect(missing).toEqual(NOT_FOUND)
        expect(refused(yield* call(forker.client, "fork_bucket", { bucket_path: pathOf(owner.user, hidden) }))).toEqual(
          NOT_FOUND
        )
        expect(
          refused(
            yield* call(forker.client, "fork_bucket", {
              bucket_path: pathOf(owner.user, upstream),
              bucket_id: hidden.id
            })
          )
        ).toEqual(NOT_FOUND)
        expect(
          refused(
            yield* call(forker.client, "fork_bucket", {
              bucket_path: pathOf(owner.user, upstream),
              bucket_id: crypto.randomUUID()
            })
          )
        ).toEqual(NOT_FOUND)

        // forbidden: public without allow_forks; private with allow_forks (even for its owner)
        const notAllowed = refused(
          yield* call(forker.client, "fork_bucket", { bucket_path: pathOf(owner.user, closed) })
        )
        expect(notAllowed.error).toMatchObject({ code: "forbidden", status: 403 })
        const notPublic = refused(yield* call(owner.client, "fork_bucket", { bucket_path: pathOf(owner.user, hidden) }))
        expect(notPublic.error).toMatchObject({ code: "forbidden", status: 403 })
        // a Dock made private again cannot be forked any more
        ok(
          yield* call(owner.client, "update_bucket_metadata", {
            bucket_path: pathOf(owner.user, closed),
            allow_forks: true
          })
        )
        ok(
          yield* call(owner.client, "update_bucket_metadata", {
            bucket_path: pathOf(owner.user, closed),
            visibility: "private"
          })
        )
        expect(refused(yield* call(forker.client, "fork_bucket", { bucket_path: pathOf(owner.user, closed) }))).toEqual(
          NOT_FOUND
        )
        expect(refused(yield* call(owner.client, "fork_bucket", { bucket_path: pathOf(owner.user, closed) })).error)
          .toMatchObject({ code: "forbidden", status: 403 })

        // validation_error: a blank or too long new_name, a bad visibility, an unknown parameter
        const path = pathOf(owner.user, upstream)
        for (
          const args of [
            { bucket_path: path, new_name: "   " },
            { bucket_path: path, new_name: "x".repeat(201) },
            { bucket_path: path, visibility: "secret" },
            { bucket_path: path, name: "Renamed" }
          ]
        ) {
          const body = refused(yield* call(forker.client, "fork_bucket", args))
          expect(body.error, JSON.stringify(args)).toMatchObject({ code: "validation_error", status: 400 })
        }
        // No Dock named at all (bucket_path, bucket and bucket_id each name one: issue 18).
        expect(refused(yield* call(forker.client, "fork_bucket", { new_name: "Nothing" })).error)
          .toMatchObject({ code: "bad_request", status: 400 })

        expect(yield* ownedCount(forker.user.id)).toBe(before)
        expect(yield* actionsBy(forker.user.id, "dock.forked")).toBe(0)
        expect(yield* actionsBy(owner.user.id, "dock.forked")).toBe(0)
      }))

    it.scoped(`${era}: fork_bucket with a read-only or a Dock-restricted token is permission_denied with status 403`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const upstream = yield* forkable(owner.client, owner.user, { title: "Shared", slug: `shared-${unique()}` })
        const user = yield* newUser
        const reader = yield* connect(yield* tokenFor(user, { scopes: ["mcp:read"] }), era)
        const restricted = yield* connect(yield* tokenFor(user, { docks: [user.default_bucket_id] }), era)
        for (const client of [reader, restricted]) {
          const body = refused(yield* call(client, "fork_bucket", { bucket_path: pathOf(owner.user, upstream) }))
          expect(body.error).toMatchObject({ code: "permission_denied", status: 403 })
        }
        // The read-only token still reads the upstream.
        expect((yield* details(reader, { bucket: upstream.id })).id).toBe(upstream.id)
        expect(yield* ownedCount(user.id)).toBe(1)
      }))

    it.scoped(`${era}: get_bucket on a fork tracks changed, added and removed upstream pages and keeps the attribution`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor(era)
        const forker = yield* actor(era)
        const upstream = yield* forkable(owner.client, owner.user, { title: "Atlas", slug: `atlas-${unique()}` })
        const path = pathOf(owner.user, upstream)
        yield* seedPage(owner.user, upstream.id, "a")
        yield* seedPage(owner.user, upstream.id, "b")
        const c = yield* seedPage(owner.user, upstream.id, "c")
        const fork = ok(yield* call(forker.client, "fork_bucket", { bucket_path: path, new_name: "Atlas copy" })).bucket
        const upstreamUrl = (yield* details(owner.client, { bucket: upstream.id })).url

        const tracking = (expected: Record<string, number>) =>
          Effect.gen(function*() {
            const bucket = yield* details(forker.client, { bucket: fork.id })
            expect(bucket.forked_from).toEqual({ id: upstream.id, path })
            expect(bucket.fork).toEqual({
              upstream: { id: upstream.id, path, title: "Atlas", url: upstreamUrl },
              upstream_path: path,
              forked_at: expect.any(String),
              pages_at_fork: 3,
              changed_since_fork: 0,
              added_since_fork: 0,
              removed_since_fork: 0,
              ...expected
            })
            return bucket
          })

        const fresh = yield* tracking({})
        expect(new Date(fresh.fork.forked_at).getTime()).toBe((yield* dockRow(fork.id))!.forked_at!.getTime())
        expect(fresh.page_count).toBe(3)

        // an upstream page gets a new version
        expect(
          (yield* seedPage(owner.user, upstream.id, "a", { content: "<p>a, revised</p>", bodyText: "a revised" }))
            .action
        )
          .toBe("updated")
        yield* tracking({ changed_since_fork: 1 })
        // the fork's own edit of its copy is no upstream change
        yield* seedPage(forker.user, fork.id, "b", { content: "<p>b, my way</p>", bodyText: "b my way" })
        yield* tracking({ changed_since_fork: 1 })
        // a new upstream page
        yield* seedPage(owner.user, upstream.id, "d")
        yield* tracking({ changed_since_fork: 1, added_since_fork: 1 })
        // an upstream page is deleted
        yield* server.sql`delete from parts where id = ${c.part.id}`
        const latest = yield* tracking({ changed_since_fork: 1, added_since_fork: 1, removed_since_fork: 1 })
        expect(latest.page_count).toBe(3)

        // The upstream made private: the forker no longer sees it, the attribution stays.
        ok(yield* call(owner.client, "update_bucket_metadata", { bucket_path: path, visibility: "private" }))
        const hidden = yield* details(forker.client, { bucket: fork.id })
        expect(hidden.forked_from).toEqual({ id: upstream.id, path })
        expect(hidden.fork).toMatchObject({ upstream: null, upstream_path: path, pages_at_fork: 3 })

        // The upstream deleted: the fork keeps its path.
        expect(ok(yield* call(owner.client, "delete_bucket", { bucket: upstream.id }))).toEqual({ ok: true })
        const orphan = yield* details(forker.client, { bucket: fork.id })
        expect(orphan.forked_from).toEqual({ id: null, path })
        expect(orphan.fork).toMatchObject({ upstream: null, upstream_path: path, pages_at_fork: 3 })
        expect(yield* dockRow(fork.id)).toMatchObject({ forked_from_id: null, forked_from_path: path })
        expect(orphan.page_count).toBe(3)
      }))

    // ---------------------------------------------------------------- update_bucket_metadata

    it.scoped(`${era}: update_bucket_metadata by the owner changes the metadata, returns { bucket } and records activity`, () =>
      Effect.gen(function*() {
        const owner = yield* agent(era)
        const dock = yield* createBucket(owner.client, {
          title: "Before",
          slug: `meta-${unique()}`,
          description: "Old",
          topic_tag_slugs: ["alpha", "beta"]
        })
        const path = pathOf(owner.user, dock)

        const first = ok(
          yield* call(owner.client, "update_bucket_metadata", {
            bucket_path: path,
            name: "After",
            description: "New words",
            visibility: "public",
            discoverable: true,
            allow_forks: true,
            add_topics: ["gamma", "Delta"],
            remove_topics: ["alpha"]
          })
        )
        expect(Object.keys(first)).toEqual(["bucket"])
        expect(Object.keys(first.bucket).sort()).toEqual(DOCK_KEYS)
        expect(first.bucket).toMatchObject({
          id: dock.id,
          slug: dock.slug,
          title: "After",
          description: "New words",
          visibility: "public",
          discoverable: true,
          allow_forks: true,
          topics: ["beta", "gamma", "delta"],
          owner: { id: owner.user.id, username: owner.user.username },
          forked_from: null
        })
        expect(yield* dockRow(dock.id)).toMatchObject({
          title: "After",
          description: "New words",
          visibility: "public",
          discoverable: true,
          allow_forks: true,
          topics: ["beta", "gamma", "delta"]
        })

        // description null clears it; what is not given stays; the legacy bucket_id may name the same Dock
        const second = ok(
          yield* call(owner.client, "update_bucket_metadata", {
            bucket_path: path,
            bucket_id: dock.id,
            description: null,
            allow_forks: false,
            remove_topics: ["gamma", "delta"]
          })
        )
        expect(second.bucket).toMatchObject({
          title: "After",
          description: null,
          visibility: "public",
          discoverable: true,
          allow_forks: false,
          topics: ["beta"]
        })
        expect(yield* dockRow(dock.id)).toMatchObject({
          title: "After",
          description: null,
          visibility: "public",
          discoverable: true,
          allow_forks: false,
          topics: ["beta"]
        })

        const activity = yield* activityOf(dock.id, "dock.updated")
        expect(activity).toHaveLength(2)
        for (const entry of activity) {
          expect(entry).toMatchObject({
            user_id: owner.user.id,
            token_id: owner.tokenId,
            agent_label: owner.label,
            subject_type: "dock",
            subject_id: dock.id
          })
        }
        // The owner's get_bucket shows who did it, with the token.
        const recent = (yield* details(owner.client, { bucket: dock.id })).recent_activity
        expect(recent[0]).toMatchObject({
          action: "dock.updated",
          actor: { username: owner.user.username, agent_label: owner.label },
          token_id: owner.tokenId
        })
      }))

    it.scoped(`${era}: update_bucket_metadata refuses: not_found, permission_denied, validation_error; nothing changes`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const editor = yield* actor(era)
        const viewer = yield* actor(era)
        const stranger = yield* actor(era)
        const secret = yield* createBucket(owner.client, { title: "Secret", slug: `secret-${unique()}` })
        const open = yield* createBucket(owner.client, {
          title: "Open",
          slug: `open-${unique()}`,
          visibility: "public"
        })
        yield* grant(secret.id, editor.user, "editor")
        yield* grant(secret.id, viewer.user, "viewer")
        const before = { secret: yield* dockRow(secret.id), open: yield* dockRow(open.id) }

        // not_found: missing, or private and not shared — the same body
        expect(
          refused(
            yield* call(stranger.client, "update_bucket_metadata", {
              bucket_path: `nobody-${unique()}/none`,
              name: "x"
            })
          )
        )
          .toEqual(NOT_FOUND)
        expect(
          refused(
            yield* call(stranger.client, "update_bucket_metadata", {
              bucket_path: pathOf(owner.user, secret),
              name: "x"
            })
          )
        )
          .toEqual(NOT_FOUND)
        expect(
          refused(
            yield* call(owner.client, "update_bucket_metadata", {
              bucket_path: pathOf(owner.user, secret),
              bucket_id: crypto.randomUUID()
            })
          )
        ).toEqual(NOT_FOUND)

        // permission_denied: collaborators, an outsider on a public Dock, read-only and restricted tokens
        const { reader, restricted } = yield* limitedClients(owner.user, era)
        for (
          const [client, dock] of [
            [editor.client, secret],
            [viewer.client, secret],
            [stranger.client, open],
            [reader, secret],
            [restricted, secret],
            [restricted, open]
          ] as const
        ) {
          const body = refused(
            yield* call(client, "update_bucket_metadata", {
              bucket_path: pathOf(owner.user, dock),
              name: "Taken over",
              allow_forks: true
            })
          )
          expect(body.error).toMatchObject({ code: "permission_denied", status: 403 })
        }

        // validation_error: a bad topic slug, a blank name, a bad visibility, an unknown parameter; no Dock: bad_request
        const path = pathOf(owner.user, secret)
        for (
          const args of [
            { bucket_path: path, add_topics: ["Not A Slug!"] },
            { bucket_path: path, name: "   " },
            { bucket_path: path, visibility: "secret" },
            { bucket_path: path, discoverable: "yes" },
            { bucket_path: path, title: "Wrong parameter" }
          ]
        ) {
          const body = refused(yield* call(owner.client, "update_bucket_metadata", args))
          expect(body.error, JSON.stringify(args)).toMatchObject({ code: "validation_error", status: 400 })
        }
        expect(refused(yield* call(owner.client, "update_bucket_metadata", { name: "No Dock" })).error)
          .toMatchObject({ code: "bad_request", status: 400 })

        expect(yield* dockRow(secret.id)).toEqual(before.secret)
        expect(yield* dockRow(open.id)).toEqual(before.open)
        expect(yield* activityOf(secret.id, "dock.updated")).toEqual([])
        expect(yield* activityOf(open.id, "dock.updated")).toEqual([])
      }))

    // ---------------------------------------------------------------- set_cover_web_page

    it.scoped(`${era}: set_cover_web_page by the owner, by page slug or UUID, returns { bucket } with cover_page_id`, () =>
      Effect.gen(function*() {
        const owner = yield* agent(era)
        const dock = yield* createBucket(owner.client, { title: "Covered", slug: `covered-${unique()}` })
        const intro = yield* seedPage(owner.user, dock.id, "intro", { title: "Introduction" })
        const notes = yield* seedPage(owner.user, dock.id, "notes", {
          title: "Notes",
          pageKind: "markdown_file",
          contentType: "markdown",
          content: "# Notes"
        })

        const bySlug = ok(yield* call(owner.client, "set_cover_web_page", { bucket: dock.id, web_page: "intro" }))
        expect(Object.keys(bySlug)).toEqual(["bucket"])
        expect(Object.keys(bySlug.bucket).sort()).toEqual(DOCK_KEYS)
        expect(bySlug.bucket).toMatchObject({ id: dock.id, slug: dock.slug, cover_page_id: intro.part.id })
        expect((yield* dockRow(dock.id))?.cover_part_id).toBe(intro.part.id)
        expect((yield* details(owner.client, { bucket: dock.id })).cover_web_page).toEqual({
          id: intro.part.id,
          slug: "intro",
          title: "Introduction"
        })

        // by UUID, a Markdown file, with the Dock as owner/slug and as a bare slug
        const byId = ok(
          yield* call(owner.client, "set_cover_web_page", {
            bucket: pathOf(owner.user, dock),
            web_page: notes.part.id
          })
        )
        expect(byId.bucket.cover_page_id).toBe(notes.part.id)
        expect(
          ok(yield* call(owner.client, "set_cover_web_page", { bucket: dock.slug, web_page: "notes" })).bucket
            .cover_page_id
        )
          .toBe(notes.part.id)
        expect((yield* dockRow(dock.id))?.cover_part_id).toBe(notes.part.id)
        expect((yield* details(owner.client, { bucket: dock.id })).cover_web_page).toEqual({
          id: notes.part.id,
          slug: "notes",
          title: "Notes"
        })

        const activity = yield* activityOf(dock.id, "dock.cover_set")
        expect(activity.map((entry) => entry.subject_id)).toEqual([intro.part.id, notes.part.id, notes.part.id])
        for (const entry of activity) {
          expect(entry).toMatchObject({
            user_id: owner.user.id,
            token_id: owner.tokenId,
            agent_label: owner.label,
            subject_type: "page"
          })
        }
      }))

    it.scoped(`${era}: set_cover_web_page refuses: not_found for a missing Dock or page, permission_denied for non-owners`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const editor = yield* actor(era)
        const viewer = yield* actor(era)
        const stranger = yield* actor(era)
        const secret = yield* createBucket(owner.client, { title: "Secret", slug: `secret-${unique()}` })
        const open = yield* createBucket(owner.client, {
          title: "Open",
          slug: `open-${unique()}`,
          visibility: "public"
        })
        const elsewhere = yield* createBucket(owner.client, { title: "Elsewhere", slug: `elsewhere-${unique()}` })
        yield* grant(secret.id, editor.user, "editor")
        yield* grant(secret.id, viewer.user, "viewer")
        const page = yield* seedPage(owner.user, secret.id, "page")
        yield* seedPage(owner.user, open.id, "page")
        const foreign = yield* seedPage(owner.user, elsewhere.id, "foreign")
        const table = yield* seedPage(owner.user, secret.id, "tables", {
          pageKind: "micro_db",
          contentType: "json",
          content: "{}"
        })

        // not_found: the Dock
        expect(
          refused(yield* call(stranger.client, "set_cover_web_page", { bucket: crypto.randomUUID(), web_page: "page" }))
        )
          .toEqual(NOT_FOUND)
        expect(refused(yield* call(stranger.client, "set_cover_web_page", { bucket: secret.id, web_page: "page" })))
          .toEqual(
            NOT_FOUND
          )
        expect(
          refused(
            yield* call(stranger.client, "set_cover_web_page", {
              bucket: pathOf(owner.user, secret),
              web_page: page.part.id
            })
          )
        )
          .toEqual(NOT_FOUND)
        // not_found: the page — missing, in another Dock, or the Micro DB
        for (
          const web_page of ["no-such-page", crypto.randomUUID(), foreign.part.id, "foreign", table.part.id, "tables"]
        ) {
          const body = refused(yield* call(owner.client, "set_cover_web_page", { bucket: secret.id, web_page }))
          expect(body.error, web_page).toMatchObject({ code: "not_found", status: 404 })
        }

        // permission_denied: collaborators, an outsider on a public Dock, read-only and restricted tokens
        const { reader, restricted } = yield* limitedClients(owner.user, era)
        for (
          const [client, dock] of [
            [editor.client, secret],
            [viewer.client, secret],
            [stranger.client, open],
            [reader, secret],
            [restricted, secret]
          ] as const
        ) {
          const body = refused(yield* call(client, "set_cover_web_page", { bucket: dock.id, web_page: "page" }))
          expect(body.error).toMatchObject({ code: "permission_denied", status: 403 })
        }

        for (const dock of [secret, open, elsewhere]) {
          expect((yield* dockRow(dock.id))?.cover_part_id).toBeNull()
          expect(yield* activityOf(dock.id, "dock.cover_set")).toEqual([])
        }
      }))

    // ---------------------------------------------------------------- set_grounding_bucket

    it.scoped(`${era}: set_grounding_bucket sets the Dock of this token's untargeted get_bucket, until it cannot be read`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const me = yield* newUser
        const a = yield* labelledToken(me, "agent-a")
        const b = yield* labelledToken(me, "agent-b")
        const clientA = yield* connect(a.token, era)
        const clientB = yield* connect(b.token, era)
        const other = yield* actor(era)
        const mine = yield* createBucket(clientA, { title: "Grounded", slug: `grounded-${unique()}` })
        const theirs = yield* createBucket(other.client, {
          title: "Theirs",
          slug: `theirs-${unique()}`,
          visibility: "public"
        })

        // Before any grounding: the default Dock.
        expect((yield* details(clientA, {})).id).toBe(me.default_bucket_id)

        const set = ok(yield* call(clientA, "set_grounding_bucket", { bucket_path: pathOf(me, mine) }))
        expect(set).toEqual({ activeWorkspacePath: pathOf(me, mine) })
        const rows = yield* groundingRows(a.id)
        expect(rows).toHaveLength(1)
        expect(rows[0]!.dock_id).toBe(mine.id)
        expect(rows[0]!.expires_at.getTime() - rows[0]!.updated_at.getTime()).toBe(DAY)
        expect(Math.abs(rows[0]!.updated_at.getTime() - Date.now())).toBeLessThan(60_000)

        // for this token only
        expect(yield* details(clientA, {})).toMatchObject({ id: mine.id, title: "Grounded" })
        expect((yield* details(clientB, {})).id).toBe(me.default_bucket_id)
        expect(yield* groundingRows(b.id)).toEqual([])
        // a named Dock still wins
        expect((yield* details(clientA, { bucket: me.default_bucket_id })).id).toBe(me.default_bucket_id)

        // Someone else's public Dock (bucket_path with a matching bucket_id) replaces it.
        const again = ok(
          yield* call(clientA, "set_grounding_bucket", {
            bucket_path: pathOf(other.user, theirs),
            bucket_id: theirs.id
          })
        )
        expect(again).toEqual({ activeWorkspacePath: pathOf(other.user, theirs) })
        expect((yield* groundingRows(a.id)).map((row) => row.dock_id)).toEqual([theirs.id])
        expect(yield* details(clientA, {})).toMatchObject({ id: theirs.id, owner: { username: other.user.username } })

        // Its owner makes it private: the grounding no longer reads, so the default Dock is used.
        ok(
          yield* call(other.client, "update_bucket_metadata", {
            bucket_path: pathOf(other.user, theirs),
            visibility: "private"
          })
        )
        expect((yield* details(clientA, {})).id).toBe(me.default_bucket_id)
        expect(refused(yield* call(clientA, "get_bucket", { bucket: theirs.id }))).toEqual(NOT_FOUND)

        // A grounding lasts 24 hours: once expired, the default Dock is used again.
        ok(yield* call(clientA, "set_grounding_bucket", { bucket_path: pathOf(me, mine) }))
        expect((yield* details(clientA, {})).id).toBe(mine.id)
        yield* server.sql`update grounding set expires_at = ${new Date(Date.now() - 60_000)} where token_id = ${a.id}`
        expect((yield* details(clientA, {})).id).toBe(me.default_bucket_id)
      }))

    it.scoped(`${era}: set_grounding_bucket refuses: not_found for what cannot be read, permission_denied for a read-only token`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const me = yield* newUser
        const writer = yield* labelledToken(me, "writer")
        const reader = yield* labelledToken(me, "reader", { scopes: ["mcp:read"] })
        const client = yield* connect(writer.token, era)
        const readOnly = yield* connect(reader.token, era)
        const secret = yield* createBucket(owner.client, { title: "Secret", slug: `secret-${unique()}` })
        const open = yield* createBucket(owner.client, {
          title: "Open",
          slug: `open-${unique()}`,
          visibility: "public"
        })

        expect(refused(yield* call(client, "set_grounding_bucket", { bucket_path: `nobody-${unique()}/none` })))
          .toEqual(NOT_FOUND)
        expect(refused(yield* call(client, "set_grounding_bucket", { bucket_path: pathOf(owner.user, secret) })))
          .toEqual(NOT_FOUND)
        expect(
          refused(
            yield* call(client, "set_grounding_bucket", {
              bucket_path: pathOf(owner.user, open),
              bucket_id: crypto.randomUUID()
            })
          )
        ).toEqual(NOT_FOUND)
        const unnamed = refused(yield* call(client, "set_grounding_bucket", {}))
        expect(unnamed.error).toMatchObject({ code: "bad_request", status: 400 })

        const denied = refused(yield* call(readOnly, "set_grounding_bucket", { bucket_path: pathOf(owner.user, open) }))
        expect(denied.error).toMatchObject({ code: "permission_denied", status: 403 })

        expect(yield* groundingRows(writer.id)).toEqual([])
        expect(yield* groundingRows(reader.id)).toEqual([])
        expect((yield* details(client, {})).id).toBe(me.default_bucket_id)
        expect((yield* details(readOnly, {})).id).toBe(me.default_bucket_id)
      }))

    // ---------------------------------------------------------------- unauthorized

    it.scoped(`${era}: a revoked token gets 401 unauthorized from each write tool, and nothing is written`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const upstream = yield* forkable(owner.client, owner.user, { title: "Upstream", slug: `up-${unique()}` })
        const me = yield* newUser
        const { id, token } = yield* labelledToken(me, "doomed")
        const client = yield* connect(token, era)
        const mine = yield* createBucket(client, { title: "Mine", slug: `mine-${unique()}` })
        yield* seedPage(me, mine.id, "page")
        yield* revokeToken(id)

        const calls: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
          ["fork_bucket", { bucket_path: pathOf(owner.user, upstream) }],
          ["update_bucket_metadata", { bucket_path: pathOf(me, mine), name: "Changed" }],
          ["set_cover_web_page", { bucket: mine.id, web_page: "page" }],
          ["set_grounding_bucket", { bucket_path: pathOf(me, mine) }]
        ]
        for (const [name, args] of calls) {
          // The connected client's next request is refused by the endpoint.
          const outcome = yield* outcomeOf(client, name, args)
          expect(outcome.rejected, `${name}: ${outcome.value}`).toBe(true)
          // What it was refused with: a 401 challenge carrying the unauthorized error body.
          const reply = yield* rawToolCall(token, name, args)
          expect(reply.status, name).toBe(401)
          expect(reply.headers["www-authenticate"]).toMatch(/^Bearer /)
          expect(reply.json.error).toMatchObject({ code: "unauthorized", status: 401 })
        }

        expect(yield* ownedCount(me.id)).toBe(2)
        expect(yield* dockRow(mine.id)).toMatchObject({ title: "Mine", cover_part_id: null })
        expect(yield* groundingRows(id)).toEqual([])
      }))
  }

  // ---------------------------------------------------------------- sandbox tokens

  it.scoped("a sandbox token cannot fork, publish or ground outside its sandbox; it may ground and cover inside it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor("v2 modern")
      const upstream = yield* forkable(owner.client, owner.user, { title: "Public", slug: `public-${unique()}` })
      const registration = yield* register(server.url)
      expect(registration.status).toBe(201)
      const sandboxId = registration.json.sandbox_bucket.id as string
      const credential = registration.json.credential as string

      for (const era of ERAS) {
        const client = yield* connect(credential, era)
        const sandbox = yield* details(client, { bucket: sandboxId })
        const sandboxPath = pathOf(sandbox.owner, sandbox)

        const fork = refused(yield* call(client, "fork_bucket", { bucket_path: pathOf(owner.user, upstream) }))
        expect(fork.error, era).toMatchObject({ code: "permission_denied", status: 403 })
        // allow_forks would let anyone copy the sandbox once it is public: a publishing setting like the others.
        for (const patch of [{ visibility: "public" }, { discoverable: true }, { allow_forks: true }]) {
          const body = refused(yield* call(client, "update_bucket_metadata", { bucket_path: sandboxPath, ...patch }))
          expect(body.error, era).toMatchObject({ code: "permission_denied", status: 403 })
        }
        expect(yield* dockRow(sandboxId)).toMatchObject({
          visibility: "private",
          discoverable: false,
          allow_forks: false
        })

        // Outside its sandbox nothing can be read, so nothing can be grounded.
        expect(refused(yield* call(client, "set_grounding_bucket", { bucket_path: pathOf(owner.user, upstream) })))
          .toEqual(
            NOT_FOUND
          )
        expect(ok(yield* call(client, "set_grounding_bucket", { bucket_path: sandboxPath }))).toEqual({
          activeWorkspacePath: sandboxPath
        })
        expect((yield* details(client, {})).id).toBe(sandboxId)

        // Inside it, the owner's metadata and cover changes are allowed.
        const renamed = ok(
          yield* call(client, "update_bucket_metadata", { bucket_path: sandboxPath, name: `Sandbox ${era}` })
        )
        expect(renamed.bucket).toMatchObject({ id: sandboxId, title: `Sandbox ${era}`, visibility: "private" })
      }
      const sandbox = yield* details(yield* connect(credential, "v1"), { bucket: sandboxId })
      const page = yield* seedPage(sandbox.owner, sandboxId, "cover")
      const client = yield* connect(credential, "v2 legacy")
      expect(
        ok(yield* call(client, "set_cover_web_page", { bucket: sandboxId, web_page: "cover" })).bucket.cover_page_id
      )
        .toBe(page.part.id)
      expect(yield* ownedCount(sandbox.owner.id)).toBe(1)
    }))

  // ---------------------------------------------------------------- private pages

  it.scoped("fork_bucket does not copy the upstream's private pages, and tracking does not count them", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor("v2 modern")
      const forker = yield* actor("v1")
      const upstream = yield* forkable(owner.client, owner.user, { title: "Mixed", slug: `mixed-${unique()}` })
      yield* seedPage(owner.user, upstream.id, "open")
      const secret = yield* seedPage(owner.user, upstream.id, "secret", {
        content: "<p>do not copy</p>",
        bodyText: "nope"
      })
      yield* server.sql`update parts set visibility = 'private' where id = ${secret.part.id}`
      // What an outsider sees of the upstream: one page.
      expect((yield* details(forker.client, { bucket: upstream.id })).page_count).toBe(1)

      const fork = ok(yield* call(forker.client, "fork_bucket", { bucket_path: pathOf(owner.user, upstream) })).bucket
      const copies = yield* server.sql<
        { slug: string }
      >`select slug from parts where dock_id = ${fork.id} order by slug`
      expect(copies).toEqual([{ slug: "open" }])
      expect(yield* server.sql`select 1 from parts where dock_id = ${fork.id} and content like '%do not copy%'`)
        .toEqual([])
      expect((yield* dockRow(fork.id))?.forked_page_count).toBe(1)
      const read = yield* details(forker.client, { bucket: fork.id })
      expect(read.page_count).toBe(1)
      expect(read.fork).toMatchObject({
        pages_at_fork: 1,
        changed_since_fork: 0,
        added_since_fork: 0,
        removed_since_fork: 0
      })
    }))
})

layer(Layer.scoped(TestServer, startTestServer({ DOCK_PLAN_MAX_DOCKS: "2" })), {
  excludeTestServices: true,
  timeout: 120_000
})("fork_bucket and create_bucket under a plan of two Docks per user", (it) => {
  for (const era of ERAS) {
    it.scoped(`${era}: a fork past the plan's Dock count is tier_limit_exceeded; deleting a Dock makes room`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        // the owner's default Dock and this one: the owner is at the cap, which does not stop others forking
        const upstream = yield* forkable(owner.client, owner.user, { title: "Popular", slug: `popular-${unique()}` })
        const path = pathOf(owner.user, upstream)
        const forker = yield* agent(era)

        const first = ok(yield* call(forker.client, "fork_bucket", { bucket_path: path })).bucket
        expect(yield* ownedCount(forker.user.id)).toBe(2)

        const body = refused(yield* call(forker.client, "fork_bucket", { bucket_path: path, new_name: "Again" }))
        expect(body.error).toMatchObject({ code: "tier_limit_exceeded", status: 403, details: { limit: 2, used: 2 } })
        expect(yield* ownedCount(forker.user.id)).toBe(2)
        expect(yield* actionsBy(forker.user.id, "dock.forked")).toBe(1)

        // the owner at the cap cannot fork their own Dock either
        const own = refused(yield* call(owner.client, "fork_bucket", { bucket_path: path }))
        expect(own.error).toMatchObject({ code: "tier_limit_exceeded", status: 403 })

        expect(ok(yield* call(forker.client, "delete_bucket", { bucket: first.id }))).toEqual({ ok: true })
        const second = ok(yield* call(forker.client, "fork_bucket", { bucket_path: path, new_name: "Again" })).bucket
        expect(second).toMatchObject({ title: "Again", forked_from: { id: upstream.id, path } })
        expect(yield* ownedCount(forker.user.id)).toBe(2)
      }))

    it.scoped(`${era}: create_bucket past the plan's Dock count is tier_limit_exceeded and creates nothing`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        // the default Dock and this one make two
        const second = ok(yield* call(owner.client, "create_bucket", { title: "Second" })).bucket
        const body = refused(yield* call(owner.client, "create_bucket", { title: "Third" }))
        expect(body.error).toMatchObject({ code: "tier_limit_exceeded", status: 403, details: { limit: 2, used: 2 } })
        expect(yield* ownedCount(owner.user.id)).toBe(2)
        expect(ok(yield* call(owner.client, "delete_bucket", { bucket: second.id }))).toEqual({ ok: true })
        expect(ok(yield* call(owner.client, "create_bucket", { title: "Third" })).bucket.title).toBe("Third")
      }))
  }
})

layer(Layer.scoped(TestServer, startTestServer({ DOCK_TOKEN_WRITES_PER_MINUTE: "2" })), {
  excludeTestServices: true,
  timeout: 120_000
})("Dock writes under a per-token write rate of two a minute", (it) => {
  it.scoped("the third write of the minute is a rate_limited tool result with retry_after_seconds; reads go on", () =>
    Effect.gen(function*() {
      yield* awayFromWindowEnd("1 minute")
      const owner = yield* actor("v2 modern")
      ok(yield* call(owner.client, "create_bucket", { title: "One" }))
      ok(yield* call(owner.client, "create_bucket", { title: "Two" }))
      const body = refused(yield* call(owner.client, "create_bucket", { title: "Three" }))
      expect(body.error).toMatchObject({ code: "rate_limited", status: 429 })
      expect((body.error as { retry_after_seconds?: number }).retry_after_seconds).toBeGreaterThan(0)
      expect(yield* ownedCount(owner.user.id)).toBe(3)
      // reads are not writes
      expect(ok(yield* call(owner.client, "list_buckets", { owned_by_me: true })).buckets).toHaveLength(3)
    }))
})
