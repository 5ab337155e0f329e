/**
 * The Dock read tools search_buckets, list_buckets and get_bucket over the wire, with the real v2 client (pinned
 * to the modern era and in the legacy era) and the v1 SDK client, on `/mcp` with tokens and on `/mcp/public`
 * without one; and what tools/list advertises for all eleven Dock tools.
 *
 * Findability: a caller finds their own Docks, their collaborations and public discoverable Docks — never someone
 * else's private Dock nor a public Dock that is not discoverable (which is still readable when named). get_bucket
 * counts only what the caller may see: pages marked private are left out of an outsider's counts, names and
 * activity, and only the owner sees which token did what. Without a target it falls back to the token's
 * grounding Dock, then to the user's default Dock. Users, tokens and grants are made through the admin API;
 * pages are seeded through the domain's Pages service.
 */
import { publicCatalogue } from "@dock/mcp"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { type AnyClient, ERAS, type ToolInfo } from "./support/McpClients.ts"
import {
  actor,
  call,
  connect,
  connectPublic,
  createBucket,
  DOCK_KEYS,
  grant,
  labelledToken,
  newUser,
  NOT_FOUND,
  ok,
  ownInputSchema,
  rawToolCall,
  refused,
  seedPage,
  tokenFor
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

interface Bucket {
  readonly id: string
  readonly slug: string
  readonly visibility: string
  readonly discoverable: boolean
}

interface Activity {
  readonly action: string
  readonly subject_type: string | null
  readonly subject_id: string | null
  readonly actor: { readonly username: string | null; readonly agent_label: string | null }
  readonly token_id?: string | null
  readonly created_at: string
}

const DETAILS_KEYS = [
  ...DOCK_KEYS,
  "cover_web_page",
  "fork",
  "page_count",
  "page_kind_breakdown",
  "recent_activity",
  "source_count",
  "top_concepts",
  "top_entities"
].sort()

const ids = (buckets: ReadonlyArray<{ id: string }>) => buckets.map((bucket) => bucket.id).sort()

/** The `buckets` of a successful search_buckets / list_buckets call. */
const bucketsOf = (client: AnyClient, name: "search_buckets" | "list_buckets", args: Record<string, unknown>) =>
  Effect.map(call(client, name, args), (result) => {
    const content = ok(result)
    expect(Object.keys(content)).toEqual(["buckets"])
    return content.buckets as ReadonlyArray<Bucket>
  })

/** The `bucket` of a successful get_bucket call, checked to be a whole DockDetails. */
const details = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(call(client, "get_bucket", args), (result) => {
    const content = ok(result)
    expect(Object.keys(content)).toEqual(["bucket"])
    expect(Object.keys(content.bucket).sort()).toEqual(DETAILS_KEYS)
    return content.bucket
  })

/** The JSON-RPC answer to one raw POST, whether the server answered with JSON or with an SSE stream. */
const rpcAnswer = (text: string) => {
  const data = text.split("\n").find((line) => line.startsWith("data: "))
  return JSON.parse(data === undefined ? text : data.slice(6))
}

/** A raw JSON-RPC tools/call POST (no client, no initialize), to `/mcp/public` unless `path` says otherwise. */
const rawCall = (
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
  path = "/mcp/public"
) => rawToolCall(path, name, args, headers)

const setUpdatedAt = (dockId: string, at: string) =>
  Effect.flatMap(TestServer, (server) => server.sql`update docks set updated_at = ${new Date(at)} where id = ${dockId}`)

/** created_at never increases down the list: most recent first. */
const newestFirst = (items: ReadonlyArray<{ created_at: string }>) => {
  const times = items.map((item) => Date.parse(item.created_at))
  expect(times).toEqual([...times].sort((a, b) => b - a))
}

/** Activity items without their times: what happened, in the order listed. */
const withoutTimes = (items: ReadonlyArray<Partial<Activity>>) => items.map(({ created_at: _created, ...rest }) => rest)

// ---------------------------------------------------------------------------------------------------------------
// What tools/list advertises for every Dock tool.

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
const IDEMPOTENT = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }

const text = (max: number) => ({ type: "string", maxLength: max })
const described = (max: number) => ({ type: "string", maxLength: max, description: expect.any(String) })
const nullableText = (max: number) => ({ anyOf: [text(max), { type: "null" }] })
const strings = { type: "array", items: text(64), maxItems: 32 }
const visibility = { type: "string", enum: ["private", "public"] }
const boolean = { type: "boolean" }
const bucket = described(200)
const bucketPath = described(200)
const bucketId = {
  type: "string",
  format: "uuid",
  pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
  description: expect.any(String)
}

const DOCK_TOOLS: ReadonlyArray<{
  readonly name: string
  readonly required: ReadonlyArray<string>
  readonly properties: Record<string, unknown>
  readonly annotations: Record<string, boolean>
}> = [
  {
    name: "search_buckets",
    required: ["query"],
    properties: { query: text(500), limit: { type: "integer", minimum: 1, maximum: 50 } },
    annotations: READ
  },
  {
    name: "list_buckets",
    required: [],
    properties: { visibility: { type: "string", enum: ["public", "private", "all"] }, owned_by_me: boolean },
    annotations: READ
  },
  {
    name: "get_bucket",
    required: [],
    properties: { bucket, bucket_slug: described(64), owner_username: described(64) },
    annotations: READ
  },
  {
    name: "create_bucket",
    required: [],
    properties: {
      title: text(200),
      name: text(200),
      slug: text(64),
      visibility,
      discoverable: boolean,
      description: text(5_000),
      tags: strings,
      topic_tag_slugs: strings
    },
    annotations: WRITE
  },
  {
    name: "fork_bucket",
    required: [],
    properties: { bucket_path: bucketPath, bucket, bucket_id: bucketId, new_name: nullableText(200), visibility },
    annotations: WRITE
  },
  {
    name: "update_bucket_metadata",
    required: [],
    properties: {
      bucket_path: bucketPath,
      bucket,
      bucket_id: bucketId,
      name: text(200),
      description: nullableText(5_000),
      visibility,
      discoverable: boolean,
      allow_forks: boolean,
      add_topics: strings,
      remove_topics: strings
    },
    annotations: IDEMPOTENT
  },
  {
    name: "list_my_buckets",
    required: [],
    properties: { include_collaborations: boolean, visibility, tag: text(64) },
    annotations: READ
  },
  {
    name: "update_bucket",
    required: ["bucket"],
    properties: { bucket, title: text(200), description: nullableText(5_000), visibility, tags: strings },
    annotations: IDEMPOTENT
  },
  { name: "delete_bucket", required: ["bucket"], properties: { bucket }, annotations: DESTRUCTIVE },
  {
    name: "set_cover_web_page",
    required: ["bucket", "web_page"],
    properties: { bucket, web_page: text(200) },
    annotations: IDEMPOTENT
  },
  {
    name: "set_grounding_bucket",
    required: [],
    properties: { bucket_path: bucketPath, bucket, bucket_id: bucketId },
    annotations: IDEMPOTENT
  }
]

const READ_TOOLS = ["search_buckets", "list_buckets", "get_bucket"]

const checkAdvertised = (tools: ReadonlyArray<ToolInfo>, names: ReadonlyArray<string>) => {
  const byName = new Map(tools.map((tool) => [tool.name, tool as ToolInfo & Record<string, any>]))
  for (const expected of DOCK_TOOLS.filter((entry) => names.includes(entry.name))) {
    const tool = byName.get(expected.name)
    expect(tool, expected.name).toBeDefined()
    expect(typeof tool!.description, expected.name).toBe("string")
    expect(tool!.description.length, expected.name).toBeGreaterThan(20)
    expect(tool!.inputSchema.required ?? [], expected.name).toEqual(expected.required)
    const input = ownInputSchema(tool!.inputSchema)
    expect(Object.keys(input.properties ?? {}), expected.name).toEqual(Object.keys(expected.properties))
    expect(input, expected.name).toEqual({
      type: "object",
      properties: expected.properties,
      additionalProperties: false,
      ...(expected.required.length === 0 ? {} : { required: expected.required })
    })
    expect(tool!.annotations, expected.name).toEqual(expected.annotations)
    expect(JSON.stringify(tool!.inputSchema), expected.name).not.toContain("$ref")
    expect(tool!.outputSchema, expected.name).toMatchObject({ type: "object" })
  }
}

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the MCP Dock read tools", (it) => {
  for (const era of ERAS) {
    it.scoped(`${era}: tools/list advertises all eleven Dock tools with parameters, bounds and annotations`, () =>
      Effect.gen(function*() {
        const { client } = yield* actor(era)
        const { tools } = yield* Effect.promise(() => client.listTools())
        const names = tools.map((tool) => tool.name)
        const dockTools = DOCK_TOOLS.map((tool) => tool.name)
        expect(dockTools).toHaveLength(11)
        expect(names).toEqual(expect.arrayContaining(dockTools))
        // catalogue order: the Dock tools keep their order among whatever else is listed
        expect(names.filter((name) => dockTools.includes(name))).toEqual(dockTools)
        checkAdvertised(tools, dockTools)
      }))

    // -------------------------------------------------------------------------------------------------------------
    // search_buckets

    it.scoped(`${era}: search_buckets finds own Docks, collaborations and public discoverable Docks, best first`, () =>
      Effect.gen(function*() {
        const word = `zeb${unique()}`
        const me = yield* actor(era)
        const other = yield* actor(era)
        const stranger = yield* actor(era)
        const mineTitle = yield* createBucket(me.client, { title: `Notes on ${word}`, slug: `mine-${unique()}` })
        const mineDescribed = yield* createBucket(me.client, {
          title: "Described",
          slug: `described-${unique()}`,
          description: `All about ${word} and more`,
          visibility: "public"
        })
        const mineTagged = yield* createBucket(me.client, {
          title: "Tagged",
          slug: `tagged-${unique()}`,
          tags: [word.toUpperCase()]
        })
        yield* createBucket(me.client, { title: "Unrelated", slug: `unrelated-${unique()}` })
        const theirsPrivate = yield* createBucket(other.client, { title: `Their ${word}` })
        const theirsUnlisted = yield* createBucket(other.client, {
          title: `Their unlisted ${word}`,
          visibility: "public"
        })
        const theirsFindable = yield* createBucket(other.client, {
          title: `Their findable ${word}`,
          visibility: "public",
          discoverable: true
        })
        const theirsShared = yield* createBucket(other.client, { title: `Shared ${word}` })
        yield* grant(theirsShared.id, me.user, "viewer")

        const mine = yield* bucketsOf(me.client, "search_buckets", { query: word })
        expect(ids(mine)).toEqual(
          [mineTitle.id, mineDescribed.id, mineTagged.id, theirsFindable.id, theirsShared.id].sort()
        )
        // a title match (weight A) before a description match (B), and a tag-only match last
        expect(mine.slice(-2).map((dock) => dock.id)).toEqual([mineDescribed.id, mineTagged.id])
        expect(mine.find((dock) => dock.id === theirsShared.id)).toMatchObject({
          title: `Shared ${word}`,
          visibility: "private",
          owner: { id: other.user.id, username: other.user.username }
        })
        expect(Object.keys(mine[0]!).sort()).toEqual(DOCK_KEYS)

        expect(ids(yield* bucketsOf(other.client, "search_buckets", { query: word }))).toEqual(
          [theirsPrivate.id, theirsUnlisted.id, theirsFindable.id, theirsShared.id].sort()
        )
        expect(ids(yield* bucketsOf(stranger.client, "search_buckets", { query: word }))).toEqual([theirsFindable.id])
        // the query is trimmed; a word matches whatever its case
        expect(ids(yield* bucketsOf(stranger.client, "search_buckets", { query: `  ${word.toUpperCase()} ` }))).toEqual(
          [theirsFindable.id]
        )

        // limit keeps the best matches
        const two = yield* bucketsOf(me.client, "search_buckets", { query: word, limit: 2 })
        expect(two.map((dock) => dock.id)).toEqual(mine.slice(0, 2).map((dock) => dock.id))
        expect((yield* bucketsOf(me.client, "search_buckets", { query: word, limit: 1 })).map((dock) => dock.id))
          .toEqual(
            [mine[0]!.id]
          )
        expect(ids(yield* bucketsOf(me.client, "search_buckets", { query: word, limit: 50 }))).toEqual(ids(mine))

        // topics are matched too
        const topic = `topic-${unique()}`
        const topical = yield* createBucket(me.client, { title: "Topical", topic_tag_slugs: [topic] })
        expect(ids(yield* bucketsOf(me.client, "search_buckets", { query: topic }))).toEqual([topical.id])
        expect(yield* bucketsOf(me.client, "search_buckets", { query: `nothing${unique()}` })).toEqual([])
        // LIKE wildcards in the query are taken literally
        for (const query of ["%", "_", `${word.slice(0, 3)}%${word.slice(4)}`]) {
          const found = ids(yield* bucketsOf(me.client, "search_buckets", { query }))
          for (const dock of [mineTitle, mineDescribed, mineTagged, theirsFindable, theirsShared]) {
            expect(found, query).not.toContain(dock.id)
          }
        }
      }))

    it.scoped(`${era}: search_buckets refuses an empty query and a limit outside 1-50 with validation_error`, () =>
      Effect.gen(function*() {
        const { client } = yield* actor(era)
        for (const query of ["", "   "]) {
          const body = refused(yield* call(client, "search_buckets", { query }))
          expect(body.error).toMatchObject({ code: "validation_error", status: 400, details: { field: "query" } })
        }
        const paths = (args: Record<string, unknown>) =>
          Effect.map(call(client, "search_buckets", args), (result) => {
            const body = refused(result)
            expect(body.error).toMatchObject({ code: "validation_error", status: 400 })
            return (body.error.details as { issues: ReadonlyArray<{ path: ReadonlyArray<string> }> }).issues.map((
              issue
            ) => issue.path.join("."))
          })
        for (const limit of [0, 51, -1, 2.5, "10"]) {
          expect(yield* paths({ query: "anything", limit })).toEqual(["limit"])
        }
        expect(yield* paths({})).toEqual(["query"])
        expect(yield* paths({ query: 42 })).toEqual(["query"])
        expect(yield* paths({ query: "q".repeat(501) })).toEqual(["query"])
        expect(yield* paths({ query: "anything", extra: true })).toEqual(["extra"])
        // the bounds themselves are allowed
        for (const limit of [1, 50]) ok(yield* call(client, "search_buckets", { query: "anything", limit }))
      }))

    // -------------------------------------------------------------------------------------------------------------
    // list_buckets

    it.scoped(`${era}: list_buckets filters by visibility and owned_by_me, most recently updated first`, () =>
      Effect.gen(function*() {
        const me = yield* actor(era)
        const other = yield* actor(era)
        const stranger = yield* actor(era)
        const minePrivate = yield* createBucket(me.client, { title: "Mine private" })
        const minePublic = yield* createBucket(me.client, { title: "Mine public", visibility: "public" })
        const theirsShared = yield* createBucket(other.client, { title: "Theirs shared" })
        yield* grant(theirsShared.id, me.user, "viewer")
        const theirsFindable = yield* createBucket(other.client, {
          title: "Theirs findable",
          visibility: "public",
          discoverable: true
        })
        const theirsUnlisted = yield* createBucket(other.client, { title: "Theirs unlisted", visibility: "public" })
        const theirsPrivate = yield* createBucket(other.client, { title: "Theirs private" })
        yield* setUpdatedAt(me.user.default_bucket_id, "2031-01-01T00:00:00Z")
        yield* setUpdatedAt(minePublic.id, "2031-01-02T00:00:00Z")
        yield* setUpdatedAt(minePrivate.id, "2031-01-03T00:00:00Z")

        const all = yield* bucketsOf(me.client, "list_buckets", {})
        expect(ids(all)).toEqual(expect.arrayContaining(
          [me.user.default_bucket_id, minePrivate.id, minePublic.id, theirsShared.id, theirsFindable.id]
        ))
        expect(ids(all)).not.toContain(theirsUnlisted.id)
        expect(ids(all)).not.toContain(theirsPrivate.id)
        expect(ids(all)).not.toContain(other.user.default_bucket_id)
        expect(ids(yield* bucketsOf(me.client, "list_buckets", { visibility: "all" }))).toEqual(ids(all))
        const updated = all.map((dock) => Date.parse((dock as unknown as { updated_at: string }).updated_at))
        expect(updated).toEqual([...updated].sort((a, b) => b - a))

        const publicOnes = yield* bucketsOf(me.client, "list_buckets", { visibility: "public" })
        expect(ids(publicOnes)).toEqual(expect.arrayContaining([minePublic.id, theirsFindable.id]))
        expect(publicOnes.every((dock) => dock.visibility === "public")).toBe(true)
        expect(ids(publicOnes)).not.toContain(theirsUnlisted.id)
        // someone else's public Docks appear only when discoverable
        expect(publicOnes.filter((dock) => dock.id !== minePublic.id).every((dock) => dock.discoverable)).toBe(true)

        // private: the caller's own private Docks, not private collaborations
        expect((yield* bucketsOf(me.client, "list_buckets", { visibility: "private" })).map((dock) => dock.id)).toEqual(
          [minePrivate.id, me.user.default_bucket_id]
        )
        expect((yield* bucketsOf(me.client, "list_buckets", { owned_by_me: true })).map((dock) => dock.id)).toEqual(
          [minePrivate.id, minePublic.id, me.user.default_bucket_id]
        )
        expect(ids(yield* bucketsOf(me.client, "list_buckets", { owned_by_me: true, visibility: "public" }))).toEqual(
          [minePublic.id]
        )
        expect(ids(yield* bucketsOf(me.client, "list_buckets", { owned_by_me: true, visibility: "all" }))).toEqual(
          [me.user.default_bucket_id, minePrivate.id, minePublic.id].sort()
        )
        expect(ids(yield* bucketsOf(me.client, "list_buckets", { owned_by_me: false, visibility: "private" }))).toEqual(
          [me.user.default_bucket_id, minePrivate.id].sort()
        )

        const strangers = ids(yield* bucketsOf(stranger.client, "list_buckets", {}))
        expect(strangers).toContain(theirsFindable.id)
        expect(strangers).toContain(stranger.user.default_bucket_id)
        for (const hidden of [minePrivate.id, minePublic.id, theirsShared.id, theirsUnlisted.id, theirsPrivate.id]) {
          expect(strangers).not.toContain(hidden)
        }
        expect(ids(yield* bucketsOf(stranger.client, "list_buckets", { visibility: "private" }))).toEqual(
          [stranger.user.default_bucket_id]
        )

        for (const args of [{ visibility: "secret" }, { owned_by_me: "yes" }, { extra: 1 }]) {
          expect(refused(yield* call(me.client, "list_buckets", args)).error).toMatchObject({
            code: "validation_error",
            status: 400
          })
        }
      }))

    // -------------------------------------------------------------------------------------------------------------
    // get_bucket

    it.scoped(`${era}: get_bucket reports counts, names, cover and activity; outsiders see nothing of private pages`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* newUser
        const ownerToken = yield* labelledToken(owner, "reads-agent")
        const client = yield* connect(ownerToken.token, era)
        const viewer = yield* actor(era)
        const outsider = yield* actor(era)
        const anonymous = yield* connectPublic(era)
        const dock = yield* createBucket(client, {
          title: "Reading room",
          slug: `room-${unique()}`,
          visibility: "public",
          discoverable: true
        })
        yield* grant(dock.id, viewer.user, "viewer")

        const alpha = yield* seedPage(owner, dock.id, "alpha", {
          entities: ["Alice", "Bob", "Dave", "Alice"],
          concepts: ["Graphs"],
          tags: ["Graphs", "ML"]
        })
        const beta = yield* seedPage(owner, dock.id, "beta", {
          pageKind: "markdown_file",
          contentType: "markdown",
          content: "# beta",
          entities: ["alice", "Bob", "Carol"],
          concepts: ["ML", "Physics"],
          tags: ["ml"]
        })
        const gamma = yield* seedPage(owner, dock.id, "gamma", {
          pageKind: "micro_db",
          contentType: "json",
          content: "{}",
          entities: ["Alice", "   "],
          tags: ["Physics"]
        })
        const secret = yield* seedPage(owner, dock.id, "secret", {
          title: "Secret plans",
          entities: ["Secret", "Bob", "Alice"],
          concepts: ["Hidden"],
          tags: ["ML"]
        })
        yield* server.sql`update parts set visibility = 'private' where id = ${secret.part.id}`
        // a new version of the private page: its activity is private too
        yield* seedPage(owner, dock.id, "secret", {
          title: "Secret plans",
          content: "<p>secret v2</p>",
          entities: ["Secret", "Bob", "Alice"],
          concepts: ["Hidden"],
          tags: ["ML"]
        })
        yield* server.sql`insert into sources (dock_id, title, origin, media_type, body_text, archived_at, created_at)
          values (${dock.id}, 'one', 'https://example.com/1', 'text/html', 'one', null, now()),
                 (${dock.id}, 'two', 'https://example.com/2', 'text/html', 'two', null, now()),
                 (${dock.id}, 'old', 'https://example.com/3', 'text/html', 'old', now(), now())`
        ok(yield* call(client, "update_bucket", { bucket: dock.id, description: "Public reading" }))
        const covered = ok(yield* call(client, "set_cover_web_page", { bucket: dock.id, web_page: "beta" }))
        expect(covered.bucket.cover_page_id).toBe(beta.part.id)

        // -- the owner sees everything, with the token of each action
        const mine = yield* details(client, { bucket: dock.id })
        expect(mine).toMatchObject({
          id: dock.id,
          slug: dock.slug,
          title: "Reading room",
          description: "Public reading",
          visibility: "public",
          discoverable: true,
          owner: { id: owner.id, username: owner.username },
          cover_page_id: beta.part.id,
          forked_from: null,
          page_count: 4,
          source_count: 2,
          page_kind_breakdown: { web_page: 2, markdown_file: 1, micro_db: 1 },
          cover_web_page: { id: beta.part.id, slug: "beta", title: "beta" },
          fork: null
        })
        expect(mine.url).toBe(`${server.config.baseUrl}/b/${dock.slug}?owner=${owner.username}`)
        expect(mine.top_entities).toEqual([
          { name: "Alice", count: 4 },
          { name: "Bob", count: 3 },
          { name: "Carol", count: 1 },
          { name: "Dave", count: 1 },
          { name: "Secret", count: 1 }
        ])
        expect(mine.top_concepts).toEqual([
          { name: "ML", count: 3 },
          { name: "Physics", count: 2 },
          { name: "Graphs", count: 1 },
          { name: "Hidden", count: 1 }
        ])
        const byToken = { username: owner.username, agent_label: "reads-agent" }
        const bySeed = { username: owner.username, agent_label: null }
        const page = (action: string, id: string) => ({ action, subject_type: "page", subject_id: id, actor: bySeed })
        const ownerActivity = [
          {
            action: "dock.created",
            subject_type: "dock",
            subject_id: dock.id,
            actor: byToken,
            token_id: ownerToken.id
          },
          { ...page("page.created", alpha.part.id), token_id: null },
          { ...page("page.created", beta.part.id), token_id: null },
          { ...page("page.created", gamma.part.id), token_id: null },
          { ...page("page.created", secret.part.id), token_id: null },
          { ...page("page.updated", secret.part.id), token_id: null },
          {
            action: "dock.updated",
            subject_type: "dock",
            subject_id: dock.id,
            actor: byToken,
            token_id: ownerToken.id
          },
          {
            action: "dock.cover_set",
            subject_type: "page",
            subject_id: beta.part.id,
            actor: byToken,
            token_id: ownerToken.id
          }
        ]
        // newest first, in the order the events happened
        expect(withoutTimes(mine.recent_activity)).toEqual([...ownerActivity].reverse())
        newestFirst(mine.recent_activity)
        for (const item of mine.recent_activity as ReadonlyArray<Activity>) {
          expect(Number.isNaN(Date.parse(item.created_at))).toBe(false)
        }

        // -- a viewer is a member: private pages count, but which token acted is the owner's business
        const viewed = yield* details(viewer.client, { bucket: dock.id })
        expect(viewed).toMatchObject({
          page_count: 4,
          source_count: 2,
          page_kind_breakdown: { web_page: 2, markdown_file: 1, micro_db: 1 },
          cover_web_page: { id: beta.part.id, slug: "beta", title: "beta" }
        })
        expect(viewed.top_entities).toEqual(mine.top_entities)
        expect(viewed.top_concepts).toEqual(mine.top_concepts)
        expect(withoutTimes(viewed.recent_activity)).toEqual(
          ownerActivity.map(({ token_id: _token, ...item }) => item).reverse()
        )
        for (const item of viewed.recent_activity) expect(item).not.toHaveProperty("token_id")

        // -- an outsider: the private page is left out of counts, names and activity; no tokens; no cover_set
        const outside = yield* details(outsider.client, { bucket: dock.id })
        expect(outside).toMatchObject({
          id: dock.id,
          page_count: 3,
          source_count: 2,
          page_kind_breakdown: { web_page: 1, markdown_file: 1, micro_db: 1 },
          cover_page_id: beta.part.id,
          cover_web_page: { id: beta.part.id, slug: "beta", title: "beta" },
          fork: null
        })
        expect(outside.top_entities).toEqual([
          { name: "Alice", count: 3 },
          { name: "Bob", count: 2 },
          { name: "Carol", count: 1 },
          { name: "Dave", count: 1 }
        ])
        expect(outside.top_concepts).toEqual([
          { name: "ML", count: 2 },
          { name: "Physics", count: 2 },
          { name: "Graphs", count: 1 }
        ])
        expect(withoutTimes(outside.recent_activity)).toEqual([
          { action: "dock.updated", subject_type: "dock", subject_id: dock.id, actor: byToken },
          page("page.created", gamma.part.id),
          page("page.created", beta.part.id),
          page("page.created", alpha.part.id),
          { action: "dock.created", subject_type: "dock", subject_id: dock.id, actor: byToken }
        ])
        for (const item of outside.recent_activity) expect(item).not.toHaveProperty("token_id")
        newestFirst(outside.recent_activity)
        expect(JSON.stringify(outside)).not.toContain(secret.part.id)
        expect(JSON.stringify(outside)).not.toContain("Secret")

        // -- anonymously, through /mcp/public, exactly what an outsider sees
        expect(yield* details(anonymous, { bucket: dock.id })).toEqual(outside)
      }))

    it.scoped(`${era}: get_bucket names a Dock by UUID, owner/slug, bare slug or bucket_slug; refuses what it cannot`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const outsider = yield* actor(era)
        const slug = `target-${unique()}`
        const dock = yield* createBucket(owner.client, { title: "Target", slug, visibility: "public" })
        const hidden = yield* createBucket(owner.client, { title: "Hidden", slug: `hidden-${unique()}` })
        const path = `${owner.user.username}/${slug}`

        for (const client of [owner.client, outsider.client]) {
          for (
            const args of [
              { bucket: dock.id },
              { bucket: dock.id.toUpperCase() },
              { bucket: path },
              { bucket: `${owner.user.username.toUpperCase()}/${slug}` },
              { bucket: slug },
              { bucket_slug: slug, owner_username: owner.user.username },
              { bucket_slug: slug },
              // two names for the same Dock agree
              { bucket: dock.id, bucket_slug: slug, owner_username: owner.user.username }
            ]
          ) {
            expect((yield* details(client, args)).id, JSON.stringify(args)).toBe(dock.id)
          }
        }
        expect((yield* details(owner.client, { bucket: hidden.id })).visibility).toBe("private")
        expect((yield* details(owner.client, { bucket: hidden.slug })).id).toBe(hidden.id)

        // not readable looks exactly like not existing
        for (
          const args of [
            { bucket: hidden.id },
            { bucket: `${owner.user.username}/${hidden.slug}` },
            { bucket: hidden.slug },
            { bucket_slug: hidden.slug, owner_username: owner.user.username },
            { bucket: crypto.randomUUID() },
            { bucket: `${owner.user.username}/no-such-${unique()}` },
            { bucket: `nobody-${unique()}/${slug}` },
            { bucket: `no-such-${unique()}` }
          ]
        ) {
          expect(refused(yield* call(outsider.client, "get_bucket", args)), JSON.stringify(args)).toEqual(NOT_FOUND)
        }
        expect(refused(yield* call(owner.client, "get_bucket", { bucket: crypto.randomUUID() }))).toEqual(NOT_FOUND)

        // two names for two different Docks
        const contradictory = refused(
          yield* call(owner.client, "get_bucket", {
            bucket: dock.id,
            bucket_slug: hidden.slug,
            owner_username: owner.user.username
          })
        )
        expect(contradictory.error).toMatchObject({ code: "bad_request", status: 400 })

        // a bare slug readable in two Docks of the same rank
        const twin = `twin-${unique()}`
        const a = yield* actor(era)
        const b = yield* actor(era)
        const first = yield* createBucket(a.client, { title: "A", slug: twin, visibility: "public" })
        yield* createBucket(b.client, { title: "B", slug: twin, visibility: "public" })
        const ambiguous = refused(yield* call(outsider.client, "get_bucket", { bucket: twin }))
        expect(ambiguous.error).toMatchObject({ code: "bad_request", status: 400 })
        expect([...(ambiguous.error.details as { candidates: Array<string> }).candidates].sort()).toEqual(
          [`${a.user.username}/${twin}`, `${b.user.username}/${twin}`].sort()
        )
        expect(refused(yield* call(outsider.client, "get_bucket", { bucket_slug: twin })).error.code).toBe(
          "bad_request"
        )
        // the caller's own Dock outranks public ones
        expect((yield* details(a.client, { bucket: twin })).id).toBe(first.id)
        expect((yield* details(outsider.client, { bucket: `${a.user.username}/${twin}` })).id).toBe(first.id)

        for (
          const args of [{ bucket: "b".repeat(201) }, { bucket_slug: "s".repeat(65) }, { bucket: 7 }, { id: dock.id }]
        ) {
          expect(refused(yield* call(owner.client, "get_bucket", args)).error).toMatchObject({
            code: "validation_error",
            status: 400
          })
        }
      }))

    it.scoped(`${era}: get_bucket without a target reads the token's grounding Dock, else the default Dock`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const user = yield* newUser
        const first = yield* labelledToken(user, "first")
        const second = yield* labelledToken(user, "second")
        const firstClient = yield* connect(first.token, era)
        const secondClient = yield* connect(second.token, era)
        const other = yield* actor(era)

        const byDefault = yield* details(firstClient, {})
        expect(byDefault).toMatchObject({ id: user.default_bucket_id, owner: { id: user.id, username: user.username } })
        expect((yield* details(secondClient, {})).id).toBe(user.default_bucket_id)

        const mine = yield* createBucket(firstClient, { title: "Grounded", slug: `grounded-${unique()}` })
        expect(ok(yield* call(firstClient, "set_grounding_bucket", { bucket_path: `${user.username}/${mine.slug}` })))
          .toEqual({ activeWorkspacePath: `${user.username}/${mine.slug}` })
        expect((yield* details(firstClient, {})).id).toBe(mine.id)
        // grounding belongs to the token: the same user's other token still reads the default Dock
        expect((yield* details(secondClient, {})).id).toBe(user.default_bucket_id)
        // a named Dock beats the grounding
        expect((yield* details(firstClient, { bucket: user.default_bucket_id })).id).toBe(user.default_bucket_id)

        // grounded on someone else's public Dock, which then turns private: back to the default Dock
        const theirs = yield* createBucket(other.client, {
          title: "Theirs",
          slug: `theirs-${unique()}`,
          visibility: "public"
        })
        ok(yield* call(firstClient, "set_grounding_bucket", { bucket_path: `${other.user.username}/${theirs.slug}` }))
        const grounded = yield* details(firstClient, {})
        expect(grounded).toMatchObject({ id: theirs.id, page_count: 0 })
        for (const item of grounded.recent_activity) expect(item).not.toHaveProperty("token_id")
        ok(yield* call(other.client, "update_bucket", { bucket: theirs.id, visibility: "private" }))
        expect((yield* details(firstClient, {})).id).toBe(user.default_bucket_id)

        // an expired grounding no longer counts
        ok(yield* call(firstClient, "set_grounding_bucket", { bucket_path: `${user.username}/${mine.slug}` }))
        expect((yield* details(firstClient, {})).id).toBe(mine.id)
        yield* server.sql`update grounding set expires_at = ${new Date(
          Date.now() - 60_000
        )} where token_id = ${first.id}`
        expect((yield* details(firstClient, {})).id).toBe(user.default_bucket_id)

        // no grounding and no default Dock: bad_request
        expect(ok(yield* call(secondClient, "delete_bucket", { bucket: user.default_bucket_id }))).toEqual({ ok: true })
        for (const client of [firstClient, secondClient]) {
          expect(refused(yield* call(client, "get_bucket", {})).error).toMatchObject({
            code: "bad_request",
            status: 400
          })
        }
        ok(yield* call(firstClient, "set_grounding_bucket", { bucket_path: `${user.username}/${mine.slug}` }))
        expect((yield* details(firstClient, {})).id).toBe(mine.id)
        expect(refused(yield* call(secondClient, "get_bucket", {})).error.code).toBe("bad_request")
      }))

    // -------------------------------------------------------------------------------------------------------------
    // /mcp/public with a real client of each era

    it.scoped(`${era}: without a token, /mcp/public searches, lists and reads public Docks only`, () =>
      Effect.gen(function*() {
        const owner = yield* actor("v2 modern")
        const word = `pub${unique()}`
        const findable = yield* createBucket(owner.client, {
          title: `Open ${word}`,
          slug: `open-${unique()}`,
          visibility: "public",
          discoverable: true
        })
        const unlisted = yield* createBucket(owner.client, {
          title: `Unlisted ${word}`,
          slug: `unlisted-${unique()}`,
          visibility: "public"
        })
        const closed = yield* createBucket(owner.client, { title: `Closed ${word}`, slug: `closed-${unique()}` })
        const anonymous = yield* connectPublic(era)

        // Listed through a client of its own: the v1 SDK client (1.32.2), once it has listed the tools, checks
        // even an isError result's structuredContent against the tool's output schema and throws
        // (modelcontextprotocol/typescript-sdk#1943), which would hide the error bodies checked below.
        const lister = yield* connectPublic(era)
        const { tools } = yield* Effect.promise(() => lister.listTools())
        // Exactly the catalogue's read tools: the Dock ones below, plus the page read tools.
        expect(tools.map((tool) => tool.name)).toEqual(publicCatalogue.map((entry) => entry.name))
        expect(publicCatalogue.every((entry) => entry.scope === "mcp:read")).toBe(true)
        expect(tools.map((tool) => tool.name).filter((name) => name.includes("bucket"))).toEqual(READ_TOOLS)
        checkAdvertised(tools.filter((tool) => READ_TOOLS.includes(tool.name)), READ_TOOLS)

        expect(ids(yield* bucketsOf(anonymous, "search_buckets", { query: word }))).toEqual([findable.id])
        expect(ids(yield* bucketsOf(anonymous, "search_buckets", { query: word, limit: 1 }))).toEqual([findable.id])
        expect(refused(yield* call(anonymous, "search_buckets", { query: " " })).error).toMatchObject({
          code: "validation_error",
          status: 400
        })
        expect(refused(yield* call(anonymous, "search_buckets", { query: word, limit: 51 })).error).toMatchObject({
          code: "validation_error",
          status: 400
        })

        for (const args of [{}, { visibility: "all" }, { visibility: "public" }, { owned_by_me: false }]) {
          const listed = yield* bucketsOf(anonymous, "list_buckets", args)
          expect(ids(listed)).toContain(findable.id)
          expect(ids(listed)).not.toContain(unlisted.id)
          expect(ids(listed)).not.toContain(closed.id)
          expect(listed.every((dock) => dock.visibility === "public" && dock.discoverable)).toBe(true)
        }
        for (
          const args of [{ visibility: "private" }, { owned_by_me: true }, { visibility: "public", owned_by_me: true }]
        ) {
          expect(refused(yield* call(anonymous, "list_buckets", args)).error).toMatchObject({
            code: "unauthorized",
            status: 401
          })
        }

        // a public Dock is readable when named, discoverable or not
        expect((yield* details(anonymous, { bucket: findable.id })).id).toBe(findable.id)
        expect((yield* details(anonymous, { bucket: findable.slug })).id).toBe(findable.id)
        expect((yield* details(anonymous, { bucket: `${owner.user.username}/${unlisted.slug}` })).id).toBe(unlisted.id)
        expect(
          (yield* details(anonymous, { bucket_slug: unlisted.slug, owner_username: owner.user.username })).id
        ).toBe(unlisted.id)
        for (
          const args of [{ bucket: closed.id }, { bucket: `${owner.user.username}/${closed.slug}` }, {
            bucket: closed.slug
          }]
        ) {
          expect(refused(yield* call(anonymous, "get_bucket", args))).toEqual(NOT_FOUND)
        }
        // nothing to fall back on without a token
        expect(refused(yield* call(anonymous, "get_bucket", {})).error).toMatchObject({
          code: "bad_request",
          status: 400
        })
      }))
  }

  // -------------------------------------------------------------------------------------------------------------
  // Raw JSON-RPC, tokens of every kind, and the caps

  it.scoped("raw JSON-RPC tools/call on /mcp/public needs no token and ignores one that is sent", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const token = yield* tokenFor(owner)
      const client = yield* connect(token, "v1")
      const word = `raw${unique()}`
      const open = yield* createBucket(client, { title: `Open ${word}`, visibility: "public", discoverable: true })
      const closed = yield* createBucket(client, { title: `Closed ${word}` })

      const result = (reply: { status: number; text: string }) => {
        expect(reply.status, reply.text).toBe(200)
        const answer = rpcAnswer(reply.text)
        expect(answer).toMatchObject({ jsonrpc: "2.0", id: 1 })
        return answer.result as {
          isError?: boolean
          structuredContent: any
          content: Array<{ type: string; text: string }>
        }
      }
      for (const headers of [{}, bearer(token)]) {
        const searched = ok(result(yield* rawCall("search_buckets", { query: word }, headers)))
        expect(ids(searched.buckets)).toEqual([open.id])
        const listed = ok(result(yield* rawCall("list_buckets", { visibility: "public" }, headers)))
        expect(ids(listed.buckets)).toContain(open.id)
        expect(ids(listed.buckets)).not.toContain(closed.id)
        const got = ok(result(yield* rawCall("get_bucket", { bucket: open.id }, headers)))
        expect(got.bucket).toMatchObject({ id: open.id, page_count: 0, fork: null, cover_web_page: null })
        for (const item of got.bucket.recent_activity) expect(item).not.toHaveProperty("token_id")
        expect(refused(result(yield* rawCall("get_bucket", { bucket: closed.id }, headers)))).toEqual(NOT_FOUND)
        expect(refused(result(yield* rawCall("get_bucket", {}, headers))).error.code).toBe("bad_request")
        expect(refused(result(yield* rawCall("list_buckets", { owned_by_me: true }, headers))).error).toMatchObject({
          code: "unauthorized",
          status: 401
        })
      }
    }))

  it.effect("the read tools on /mcp without a valid token are refused with 401 unauthorized", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const user = yield* newUser
      for (const headers of [{}, bearer("dock_mcp_not-a-real-token"), bearer(server.adminToken)]) {
        for (
          const [name, args] of [
            ["get_bucket", { bucket: user.default_bucket_id }],
            ["search_buckets", { query: "x" }],
            ["list_buckets", {}]
          ] as const
        ) {
          const reply = yield* rawCall(name, args, headers, "/mcp")
          expect(reply.status, `${name} ${JSON.stringify(headers)}`).toBe(401)
          expect(reply.headers["www-authenticate"]).toContain("Bearer resource_metadata=")
          expect(reply.json.error).toMatchObject({ code: "unauthorized", status: 401 })
        }
      }
    }))

  it.scoped("read-only, Dock-restricted and sandbox tokens: reads are unaffected, except a sandbox sees only itself", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor("v2 modern")
      const word = `tok${unique()}`
      const open = yield* createBucket(owner.client, {
        title: `Open ${word}`,
        slug: `open-${unique()}`,
        visibility: "public",
        discoverable: true
      })
      const closed = yield* createBucket(owner.client, { title: `Closed ${word}`, slug: `closed-${unique()}` })

      // read-only token of the owner: every read tool works, private Docks included
      const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), "v2 legacy")
      expect(ids(yield* bucketsOf(readOnly, "search_buckets", { query: word }))).toEqual([open.id, closed.id].sort())
      expect(ids(yield* bucketsOf(readOnly, "list_buckets", { visibility: "private" }))).toEqual(
        [owner.user.default_bucket_id, closed.id].sort()
      )
      const readOnlyDetails = yield* details(readOnly, { bucket: closed.id })
      expect(readOnlyDetails.id).toBe(closed.id)
      // still the owner: token ids are shown
      expect(readOnlyDetails.recent_activity[0]).toHaveProperty("token_id")
      expect((yield* details(readOnly, {})).id).toBe(owner.user.default_bucket_id)

      // a token restricted to one Dock still reads everything its user can
      const restricted = yield* connect(yield* tokenFor(owner.user, { docks: [open.id] }), "v1")
      expect(ids(yield* bucketsOf(restricted, "search_buckets", { query: word }))).toEqual([open.id, closed.id].sort())
      expect(ids(yield* bucketsOf(restricted, "list_buckets", { owned_by_me: true }))).toEqual(
        [owner.user.default_bucket_id, open.id, closed.id].sort()
      )
      expect((yield* details(restricted, { bucket: closed.id })).id).toBe(closed.id)

      // a sandbox token finds and reads its sandbox, and nothing else — public Docks included
      const registration = yield* register(server.url)
      expect(registration.status).toBe(201)
      const sandboxId = registration.json.sandbox_bucket.id as string
      const sandbox = yield* connect(registration.json.credential, "v2 modern")
      const own = yield* details(sandbox, {})
      expect(own.id).toBe(sandboxId)
      expect((yield* details(sandbox, { bucket: sandboxId })).id).toBe(sandboxId)
      expect(ids(yield* bucketsOf(sandbox, "list_buckets", {}))).toEqual([sandboxId])
      expect(ids(yield* bucketsOf(sandbox, "list_buckets", { visibility: "public" }))).toEqual([])
      expect(ids(yield* bucketsOf(sandbox, "search_buckets", { query: word }))).toEqual([])
      expect(ids(yield* bucketsOf(sandbox, "search_buckets", { query: own.slug }))).toEqual([sandboxId])
      expect(refused(yield* call(sandbox, "get_bucket", { bucket: open.id }))).toEqual(NOT_FOUND)
      expect(refused(yield* call(sandbox, "get_bucket", { bucket: `${owner.user.username}/${open.slug}` }))).toEqual(
        NOT_FOUND
      )
    }))

  it.scoped("search_buckets returns twenty Docks unless limit says otherwise", () =>
    Effect.gen(function*() {
      const { client } = yield* actor("v1")
      const word = `many${unique()}`
      const made: Array<string> = []
      for (let i = 1; i <= 21; i++) made.push((yield* createBucket(client, { title: `Many ${word} ${i}` })).id)
      expect(yield* bucketsOf(client, "search_buckets", { query: word })).toHaveLength(20)
      expect(ids(yield* bucketsOf(client, "search_buckets", { query: word, limit: 50 }))).toEqual(made.sort())
      expect(yield* bucketsOf(client, "search_buckets", { query: word, limit: 7 })).toHaveLength(7)
    }))

  it.scoped("get_bucket lists the ten most frequent names, ties alphabetically, and the twenty latest events", () =>
    Effect.gen(function*() {
      const { client, user } = yield* actor("v2 legacy")
      const dock = yield* createBucket(client, { title: "Crowded", slug: `crowded-${unique()}` })
      const pad = (n: number) => String(n).padStart(2, "0")
      const pages: Array<string> = []
      for (let i = 1; i <= 22; i++) {
        const { part } = yield* seedPage(user, dock.id, `page-${pad(i)}`, {
          entities: Array.from({ length: Math.min(i, 12) }, (_, j) => `E${pad(j + 1)}`),
          concepts: ["Shared"],
          tags: [`T${pad(i)}`, "shared"]
        })
        pages.push(part.id)
      }
      const crowded = yield* details(client, { bucket: dock.id })
      expect(crowded.page_count).toBe(22)
      expect(crowded.page_kind_breakdown).toEqual({ web_page: 22, markdown_file: 0, micro_db: 0 })
      // E01 is on pages 1-22, E02 on 2-22, …: counts 22, 21, … for the first ten
      expect(crowded.top_entities).toEqual(
        Array.from({ length: 10 }, (_, j) => ({ name: `E${pad(j + 1)}`, count: 22 - j }))
      )
      // "Shared" and "shared" are one name on every page; then one-page tags, alphabetically
      expect(crowded.top_concepts).toEqual([
        { name: "Shared", count: 22 },
        ...Array.from({ length: 9 }, (_, j) => ({ name: `T${pad(j + 1)}`, count: 1 }))
      ])
      // 23 events (the Dock, 22 pages): the latest twenty, newest first
      expect(crowded.recent_activity).toHaveLength(20)
      newestFirst(crowded.recent_activity)
      expect(crowded.recent_activity.map((item: Activity) => `${item.action} ${item.subject_id}`)).toEqual(
        pages.slice(2).reverse().map((id) => `page.created ${id}`)
      )

      // ties and spellings do not depend on the database's collation: ties by the lowercased name in code-point
      // order ("alpha" before "Zeta"), and of two equally common spellings the first in code-point order ("ML")
      const mixed = yield* createBucket(client, { title: "Mixed case", slug: `mixed-${unique()}` })
      yield* seedPage(user, mixed.id, "one", { entities: ["Zeta", "alpha"], concepts: ["beta", "Gamma"] })
      yield* seedPage(user, mixed.id, "two", { entities: ["ml"], tags: ["Delta"] })
      yield* seedPage(user, mixed.id, "three", { entities: ["ML"], tags: ["delta"] })
      const ranked = yield* details(client, { bucket: mixed.id })
      expect(ranked.top_entities).toEqual([{ name: "ML", count: 2 }, { name: "alpha", count: 1 }, {
        name: "Zeta",
        count: 1
      }])
      expect(ranked.top_concepts).toEqual([{ name: "Delta", count: 2 }, { name: "beta", count: 1 }, {
        name: "Gamma",
        count: 1
      }])
    }))

  it.scoped("a private cover page stays hidden from outsiders: neither cover_web_page nor cover_page_id shows it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor("v2 modern")
      const outsider = yield* actor("v1")
      const anonymous = yield* connectPublic("v2 legacy")
      const word = `cov${unique()}`
      const dock = yield* createBucket(owner.client, {
        title: `Covered ${word}`,
        slug: `covered-${unique()}`,
        visibility: "public",
        discoverable: true
      })
      const hidden = yield* seedPage(owner.user, dock.id, "hidden-cover", { title: "Hidden cover" })
      yield* server.sql`update parts set visibility = 'private' where id = ${hidden.part.id}`
      ok(yield* call(owner.client, "set_cover_web_page", { bucket: dock.id, web_page: hidden.part.id }))
      // (whether the owner is shown a private cover is not asserted here: only that outsiders are not)
      const mine = yield* details(owner.client, { bucket: dock.id })
      expect(mine.page_count).toBe(1)
      expect(mine.recent_activity.map((item: Activity) => item.action)).toContain("dock.cover_set")

      for (const client of [outsider.client, anonymous]) {
        const theirs = yield* details(client, { bucket: dock.id })
        expect(theirs).toMatchObject({ page_count: 0, cover_web_page: null, cover_page_id: null })
        expect(theirs.recent_activity.map((item: Activity) => item.action)).not.toContain("dock.cover_set")
        expect(JSON.stringify(theirs)).not.toContain(hidden.part.id)
        const found = yield* bucketsOf(client, "search_buckets", { query: word })
        expect(found.map((bucket) => (bucket as unknown as { cover_page_id: string | null }).cover_page_id)).toEqual([
          null
        ])
      }
    }))
})
