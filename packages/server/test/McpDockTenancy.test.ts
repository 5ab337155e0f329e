/**
 * Tenancy of the eleven MCP Dock tools over the wire (security.md "Tenancy"), with the v2 client in the modern
 * era. One world: an owner A with a private and a public Dock (both granted to a viewer and an editor), an
 * outsider B, a token of A restricted (allowed_bucket_ids) to another Dock of A, a read-only token of A and an
 * anonymous sandbox token. Each Dock-targeting tool runs a table of cases — every targeting form it accepts
 * (`bucket` as UUID, owner/slug and bare slug, `bucket_id`, `bucket_path`, `bucket_slug` + `owner_username`) ×
 * both Docks × every actor — and each case names its expected outcome. A refusal must leave the Dock, the
 * caller's Docks and grounding untouched; not_found must be byte for byte the body of a Dock that does not
 * exist. All mismatches of one tool are collected and reported together.
 */
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import type { AnyClient } from "./support/McpClients.ts"
import {
  type AdminUser,
  call,
  connect,
  createBucket,
  grant,
  newUser,
  NOT_FOUND,
  ok,
  refused,
  seedPage,
  tokenFor,
  type ToolResult
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const ERA = "v2 modern" as const

/** What an outsider gets for a Dock it may not see: exactly what a Dock that does not exist gives. */

type ActorName = "owner" | "outsider" | "viewer" | "editor" | "restricted" | "readOnly" | "sandbox"
const ACTORS: ReadonlyArray<ActorName> = ["owner", "outsider", "viewer", "editor", "restricted", "readOnly", "sandbox"]

type DockName = "private" | "public"
const TARGET_DOCKS: ReadonlyArray<DockName> = ["private", "public"]

type Outcome = "ok" | "not_found" | "permission_denied" | "forbidden" | "bad_request"

interface Actor {
  readonly name: ActorName
  readonly client: AnyClient
  /** Whose Docks this actor's token acts for (the anonymous user behind the sandbox token for `sandbox`). */
  readonly userId: string
}

interface Target {
  readonly id: string
  readonly slug: string
  readonly title: string
  readonly owner: string
  /** owner_username/dock_slug */
  readonly path: string
  /** A web page in the Dock, for set_cover_web_page. */
  readonly pageId: string
}

interface WorldShape {
  /** A word in the title of every Dock the world makes, for search. */
  readonly word: string
  readonly a: AdminUser
  readonly b: AdminUser
  readonly viewer: AdminUser
  readonly editor: AdminUser
  readonly actors: Readonly<Record<ActorName, Actor>>
  /** A's Docks: private, public (discoverable, forks allowed), public but unlisted, and the restricted token's one. */
  readonly docks: Readonly<Record<DockName | "unlisted" | "allowed", Target>>
  /** B's own private Dock. */
  readonly outsiderDock: Target
  readonly sandboxDock: Target
  /** A private page (visibility 'private') inside A's public Dock. */
  readonly secretPageId: string
}

class World extends Context.Tag("@dock/server/test/McpDockTenancy/World")<World, WorldShape>() {}

const target = (dock: { id: string; slug: string; title: string }, owner: string, pageId = ""): Target => ({
  id: dock.id,
  slug: dock.slug,
  title: dock.title,
  owner,
  path: `${owner}/${dock.slug}`,
  pageId
})

const WorldLive = Layer.scoped(
  World,
  Effect.gen(function*() {
    const server = yield* TestServer
    const word = `tenancy${unique()}`

    const a = yield* newUser
    const ownerClient = yield* connect(yield* tokenFor(a), ERA)
    const make = (label: string, args: Record<string, unknown>) =>
      Effect.gen(function*() {
        const dock = yield* createBucket(ownerClient, {
          title: `${label} ${word}`,
          slug: `${label}-${unique()}`,
          ...args
        })
        const page = yield* seedPage(a, dock.id, "cover", { entities: ["OpenEntity"] })
        return target(dock, a.username, page.part.id)
      })
    const priv = yield* make("private", {})
    const pub = yield* make("public", { visibility: "public", discoverable: true })
    ok(yield* call(ownerClient, "update_bucket_metadata", { bucket_path: pub.path, allow_forks: true }))
    const unlisted = yield* make("unlisted", { visibility: "public", discoverable: false })
    const allowed = yield* make("allowed", {})
    const secret = yield* seedPage(a, pub.id, "secret", { entities: ["SecretEntity"] })
    yield* server.sql`update parts set visibility = 'private' where id = ${secret.part.id}`

    const b = yield* newUser
    const outsiderClient = yield* connect(yield* tokenFor(b), ERA)
    const outsiderDock = target(
      yield* createBucket(outsiderClient, { title: `Outsider ${word}`, slug: `outsider-${unique()}` }),
      b.username
    )

    const viewer = yield* newUser
    const editor = yield* newUser
    for (const dock of [priv, pub]) {
      yield* grant(dock.id, viewer, "viewer")
      yield* grant(dock.id, editor, "editor")
    }

    const registration = yield* register(server.url)
    expect(registration.status, registration.text).toBe(201)
    const sandboxClient = yield* connect(registration.json.credential as string, ERA)
    const sandboxId = registration.json.sandbox_bucket.id as string
    const retitled = ok(yield* call(sandboxClient, "update_bucket", { bucket: sandboxId, title: `Sandbox ${word}` }))
      .bucket as { id: string; slug: string; title: string; owner: { id: string; username: string } }
    const sandboxPage = yield* seedPage(
      { id: retitled.owner.id, username: retitled.owner.username, email: "", default_bucket_id: sandboxId },
      sandboxId,
      "cover"
    )

    const actor = (name: ActorName, client: AnyClient, userId: string): Actor => ({ name, client, userId })
    return {
      word,
      a,
      b,
      viewer,
      editor,
      actors: {
        owner: actor("owner", ownerClient, a.id),
        outsider: actor("outsider", outsiderClient, b.id),
        viewer: actor("viewer", yield* connect(yield* tokenFor(viewer), ERA), viewer.id),
        editor: actor("editor", yield* connect(yield* tokenFor(editor), ERA), editor.id),
        restricted: actor("restricted", yield* connect(yield* tokenFor(a, { docks: [allowed.id] }), ERA), a.id),
        readOnly: actor("readOnly", yield* connect(yield* tokenFor(a, { scopes: ["mcp:read"] }), ERA), a.id),
        sandbox: actor("sandbox", sandboxClient, retitled.owner.id)
      },
      docks: { private: priv, public: pub, unlisted, allowed },
      outsiderDock,
      sandboxDock: target(retitled, retitled.owner.username, sandboxPage.part.id),
      secretPageId: secret.part.id
    } satisfies WorldShape
  })
)

// ---------------------------------------------------------------------------------------------------------
// Targeting forms

interface Form {
  readonly name: string
  readonly args: (dock: Target) => Record<string, unknown>
}

/** `bucket` of update_bucket, delete_bucket, set_cover_web_page (and get_bucket). */
const BUCKET_FORMS: ReadonlyArray<Form> = [
  { name: "bucket as UUID", args: (dock) => ({ bucket: dock.id }) },
  { name: "bucket as owner/slug", args: (dock) => ({ bucket: dock.path }) },
  { name: "bucket as bare slug", args: (dock) => ({ bucket: dock.slug }) }
]

/** get_bucket: `bucket`, and the deprecated `bucket_slug` with or without `owner_username`. */
const GET_FORMS: ReadonlyArray<Form> = [
  ...BUCKET_FORMS,
  { name: "bucket_slug + owner_username", args: (dock) => ({ bucket_slug: dock.slug, owner_username: dock.owner }) },
  { name: "bucket_slug alone", args: (dock) => ({ bucket_slug: dock.slug }) }
]

/** fork_bucket, update_bucket_metadata, set_grounding_bucket: `bucket_path`, `bucket` or `bucket_id`, alone or together. */
const PATH_FORMS: ReadonlyArray<Form> = [
  ...BUCKET_FORMS,
  { name: "bucket_id", args: (dock) => ({ bucket_id: dock.id }) },
  { name: "bucket_path as owner/slug", args: (dock) => ({ bucket_path: dock.path }) },
  { name: "bucket_path as bare slug", args: (dock) => ({ bucket_path: dock.slug }) },
  { name: "bucket_path + bucket_id", args: (dock) => ({ bucket_path: dock.path, bucket_id: dock.id }) },
  { name: "bucket_path + bucket as UUID", args: (dock) => ({ bucket_path: dock.path, bucket: dock.id }) },
  { name: "bucket_path + bucket as bare slug", args: (dock) => ({ bucket_path: dock.path, bucket: dock.slug }) }
]

// ---------------------------------------------------------------------------------------------------------
// Expected outcomes

/** Reading: the sandbox sees only its sandbox; an outsider sees public Docks; members and A's tokens see both. */
const readOutcome = (actor: ActorName, dock: DockName): Outcome =>
  actor === "sandbox" || (actor === "outsider" && dock === "private") ? "not_found" : "ok"

/** update_bucket, update_bucket_metadata, delete_bucket, set_cover_web_page. */
const ownerOnlyOutcome = (actor: ActorName, dock: DockName): Outcome => {
  if (actor === "readOnly") return "permission_denied"
  const read = readOutcome(actor, dock)
  if (read !== "ok") return read
  return actor === "owner" ? "ok" : "permission_denied"
}

/** fork_bucket: never from sandbox, restricted or read-only tokens; only public Docks that allow forks. */
const forkOutcome = (actor: ActorName, dock: DockName): Outcome => {
  if (actor === "readOnly" || actor === "restricted" || actor === "sandbox") return "permission_denied"
  const read = readOutcome(actor, dock)
  if (read !== "ok") return read
  return dock === "public" ? "ok" : "forbidden"
}

/**
 * set_grounding_bucket: needs mcp:write and a Dock the caller can read. It changes no Dock, only which Dock the
 * token's later untargeted reads use, so a Dock-restricted token may ground on any Dock it can read (spec §5.5:
 * "Read tools are unaffected").
 */
const groundingOutcome = (actor: ActorName, dock: DockName): Outcome =>
  actor === "readOnly" ? "permission_denied" : readOutcome(actor, dock)

// ---------------------------------------------------------------------------------------------------------
// The case runner

interface CaseContext {
  readonly world: WorldShape
  readonly actor: Actor
  readonly dock: Target
  readonly dockName: DockName | "other"
}

interface Case {
  readonly label: string
  readonly actor: Actor
  readonly tool: string
  readonly args: Record<string, unknown>
  readonly expected: Outcome
  /** Docks a refusal must leave exactly as they were. */
  readonly untouched: ReadonlyArray<string>
  /** Extra checks of a successful result (expect-style; a throw is reported as a mismatch). */
  readonly onSuccess?: (body: any) => void
}

/** Everything a refused call must not change: the Docks' rows, their grounding and the caller's owned Docks. */
const snapshot = (dockIds: ReadonlyArray<string>, userId: string) =>
  Effect.flatMap(TestServer, (server) =>
    Effect.gen(function*() {
      const docks = yield* Effect.forEach(dockIds, (id) =>
        server.sql<{ row: string | null; grounded: number }>`select
            (select row_to_json(d)::text from docks d where d.id = ${id}) as row,
            (select count(*)::int from grounding g where g.dock_id = ${id}) as grounded`.pipe(
          Effect.map((rows) => rows[0])
        ))
      const owned = yield* server.sql<{ n: number }>`select count(*)::int as n from docks where owner_id = ${userId}`
      return JSON.stringify({ docks, owned: owned[0]?.n })
    }).pipe(Effect.orDie))

const describeResult = (result: ToolResult) => {
  const text = JSON.stringify(result.structuredContent)
  return text.length > 400 ? `${text.slice(0, 400)}…` : text
}

/** Runs every case, then fails once with the list of cases whose outcome differs from the expected one. */
const runCases = (cases: ReadonlyArray<Case>) =>
  Effect.gen(function*() {
    const mismatches: Array<string> = []
    for (const item of cases) {
      const before = yield* snapshot(item.untouched, item.actor.userId)
      const result = yield* call(item.actor.client, item.tool, item.args)
      const after = yield* snapshot(item.untouched, item.actor.userId)
      try {
        expect(JSON.parse(result.content[0]!.text), "text content = structured content").toEqual(
          result.structuredContent
        )
        if (item.expected === "ok") {
          expect(result.isError, describeResult(result)).not.toBe(true)
          item.onSuccess?.(result.structuredContent)
        } else {
          expect(result.isError, `expected ${item.expected}, got ${describeResult(result)}`).toBe(true)
          const body = result.structuredContent as { error: { code: string; status: number } }
          if (item.expected === "not_found") {
            expect(body).toEqual(NOT_FOUND)
          } else {
            const status = item.expected === "bad_request" ? 400 : 403
            expect(body.error, describeResult(result)).toMatchObject({ code: item.expected, status })
          }
          expect(after, "a refused call changed something").toBe(before)
        }
      } catch (error) {
        mismatches.push(`${item.label} ${JSON.stringify(item.args)}: ${(error as Error).message.split("\n")[0]}`)
      }
    }
    expect(mismatches, `${mismatches.length} of ${cases.length} cases differ`).toEqual([])
    return cases.length
  })

interface ToolSpec {
  readonly tool: string
  readonly forms: ReadonlyArray<Form>
  readonly expected: (actor: ActorName, dock: DockName) => Outcome | "skip"
  readonly extra?: (context: CaseContext) => Record<string, unknown>
  readonly onSuccess?: (body: any, context: CaseContext) => void
}

/** The cross product: both of A's Docks × every targeting form × every actor. */
const matrix = (world: WorldShape, spec: ToolSpec): ReadonlyArray<Case> =>
  TARGET_DOCKS.flatMap((dockName) =>
    spec.forms.flatMap((form) =>
      ACTORS.flatMap((actorName): ReadonlyArray<Case> => {
        const expected = spec.expected(actorName, dockName)
        if (expected === "skip") return []
        const context: CaseContext = { world, actor: world.actors[actorName], dock: world.docks[dockName], dockName }
        return [{
          label: `${spec.tool} by ${actorName} on A's ${dockName} Dock (${form.name}) → ${expected}:`,
          actor: context.actor,
          tool: spec.tool,
          args: { ...form.args(context.dock), ...spec.extra?.(context) },
          expected,
          untouched: [context.dock.id],
          ...(spec.onSuccess ? { onSuccess: (body: any) => spec.onSuccess!(body, context) } : {})
        }]
      })
    )
  )

const ids = (buckets: ReadonlyArray<{ id: string }>) => buckets.map((bucket) => bucket.id).sort()

// ---------------------------------------------------------------------------------------------------------

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("tenancy of the MCP Dock tools", (it) => {
  it.layer(WorldLive, { timeout: 120_000 })((it) => {
    it.scoped("get_bucket: every form on A's private and public Dock, for every actor", () =>
      Effect.gen(function*() {
        const world = yield* World
        // Pages each kind of reader should count: members all of them, outsiders not those marked private.
        const server = yield* TestServer
        const pageCounts = yield* server.sql<{ dock_id: string; total: number; visible: number }>`select dock_id,
            count(*)::int as total, (count(*) filter (where visibility is distinct from 'private'))::int as visible
          from parts where dock_id in (${world.docks.private.id}, ${world.docks.public.id}) group by dock_id`
        const counted = (dockId: string, member: boolean) => {
          const row = pageCounts.find((entry) => entry.dock_id === dockId)!
          return member ? row.total : row.visible
        }
        expect(counted(world.docks.public.id, false)).toBeLessThan(counted(world.docks.public.id, true))
        const count = yield* runCases(matrix(world, {
          tool: "get_bucket",
          forms: GET_FORMS,
          expected: readOutcome,
          onSuccess: (body, { actor, dock, dockName }) => {
            expect(Object.keys(body)).toEqual(["bucket"])
            expect(body.bucket).toMatchObject({ id: dock.id, slug: dock.slug, owner: { username: dock.owner } })
            // Derived data inherits visibility: the private page of the public Dock is for members only.
            const member = actor.name !== "outsider"
            const hidden = dockName === "public" && !member
            expect(body.bucket.page_count).toBe(counted(dock.id, member))
            const entities = body.bucket.top_entities.map((entry: { name: string }) => entry.name)
            expect(entities.includes("SecretEntity")).toBe(dockName === "public" && member)
            const subjects = body.bucket.recent_activity.map((item: { subject_id: string | null }) => item.subject_id)
            if (hidden) expect(subjects).not.toContain(world.secretPageId)
            // token ids in the activity are for the owner only
            const withToken = body.bucket.recent_activity.filter((item: object) => "token_id" in item)
            if (actor.userId !== world.a.id) expect(withToken).toEqual([])
          }
        }))
        expect(count).toBe(2 * GET_FORMS.length * ACTORS.length)

        // With no target (fresh tokens, so no grounding): the default Dock of the token's user — even for a token
        // restricted to another Dock, since reads are unaffected — and the sandbox for the sandbox token.
        const defaults: ReadonlyArray<[string, AnyClient, string]> = [
          ["owner", yield* connect(yield* tokenFor(world.a), ERA), world.a.default_bucket_id],
          [
            "restricted",
            yield* connect(yield* tokenFor(world.a, { docks: [world.docks.allowed.id] }), ERA),
            world.a.default_bucket_id
          ],
          [
            "readOnly",
            yield* connect(yield* tokenFor(world.a, { scopes: ["mcp:read"] }), ERA),
            world.a.default_bucket_id
          ],
          ["outsider", yield* connect(yield* tokenFor(world.b), ERA), world.b.default_bucket_id],
          ["viewer", yield* connect(yield* tokenFor(world.viewer), ERA), world.viewer.default_bucket_id]
        ]
        for (const [name, client, id] of defaults) {
          expect(ok(yield* call(client, "get_bucket", {})).bucket.id, name).toBe(id)
        }
        // the sandbox's only Dock is its sandbox, grounded or not
        expect(ok(yield* call(world.actors.sandbox.client, "get_bucket", {})).bucket.id).toBe(world.sandboxDock.id)
        // A Dock that does not exist, through every form, gives the same body as A's private Dock to B.
        const missing = target({ id: crypto.randomUUID(), slug: `missing-${unique()}`, title: "" }, world.a.username)
        for (const form of GET_FORMS) {
          expect(refused(yield* call(world.actors.outsider.client, "get_bucket", form.args(missing)))).toEqual(
            NOT_FOUND
          )
        }
      }))

    it.scoped("update_bucket: owner only; outsiders never learn a private Dock exists", () =>
      Effect.gen(function*() {
        const world = yield* World
        yield* runCases(matrix(world, {
          tool: "update_bucket",
          forms: BUCKET_FORMS,
          expected: ownerOnlyOutcome,
          extra: ({ actor }) => ({ description: `set by ${actor.name}` }),
          onSuccess: (body, { dock }) =>
            expect(body.bucket).toMatchObject({ id: dock.id, title: dock.title, description: "set by owner" })
        }))
        // Nothing a refused caller sent reached either Dock.
        const server = yield* TestServer
        const rows = yield* server.sql<
          { description: string | null; visibility: string }
        >`select description, visibility
          from docks where id in (${world.docks.private.id}, ${world.docks.public.id}) order by visibility`
        expect(rows).toEqual([
          { description: "set by owner", visibility: "private" },
          { description: "set by owner", visibility: "public" }
        ])
      }))

    it.scoped("update_bucket_metadata: owner only, through bucket_path alone or joined by bucket / bucket_id", () =>
      Effect.gen(function*() {
        const world = yield* World
        yield* runCases(matrix(world, {
          tool: "update_bucket_metadata",
          forms: PATH_FORMS,
          expected: ownerOnlyOutcome,
          extra: ({ actor }) => ({
            description: `metadata by ${actor.name}`,
            add_topics: [`by-${actor.name.toLowerCase()}`]
          }),
          onSuccess: (body, { dock }) =>
            expect(body.bucket).toMatchObject({ id: dock.id, description: "metadata by owner", topics: ["by-owner"] })
        }))
        // Trying to flip visibility, discoverability or forks is refused the same way.
        const flips = [{ visibility: "private" }, { discoverable: false }, { allow_forks: false }, {
          visibility: "public"
        }]
        yield* runCases(
          TARGET_DOCKS.flatMap((dockName) =>
            (["outsider", "viewer", "editor", "restricted", "readOnly", "sandbox"] as const).flatMap((name) =>
              flips.map((flip): Case => ({
                label: `update_bucket_metadata ${JSON.stringify(flip)} by ${name} on A's ${dockName} Dock:`,
                actor: world.actors[name],
                tool: "update_bucket_metadata",
                args: { bucket_path: world.docks[dockName].path, ...flip },
                expected: ownerOnlyOutcome(name, dockName),
                untouched: [world.docks[dockName].id]
              }))
            )
          )
        )
      }))

    it.scoped("set_cover_web_page: owner only; an editor may write pages but not choose the cover", () =>
      Effect.gen(function*() {
        const world = yield* World
        // The editor grant is real: the editor can save a page into A's private Dock.
        const byEditor = yield* seedPage(world.editor, world.docks.private.id, "by-editor")
        yield* runCases(matrix(world, {
          tool: "set_cover_web_page",
          forms: BUCKET_FORMS,
          expected: ownerOnlyOutcome,
          extra: ({ actor, dock, dockName }) => ({
            web_page: actor.name === "editor" && dockName === "private" ? byEditor.part.id : dock.pageId
          }),
          onSuccess: (body, { dock }) => expect(body.bucket).toMatchObject({ id: dock.id, cover_page_id: dock.pageId })
        }))
        // A cover that is a private page is the owner's business: outsiders see no cover, not even its id.
        const pub = world.docks.public
        ok(yield* call(world.actors.owner.client, "set_cover_web_page", { bucket: pub.id, web_page: "secret" }))
        const member = ok(yield* call(world.actors.viewer.client, "get_bucket", { bucket: pub.id })).bucket
        expect(member.cover_web_page).toMatchObject({ id: world.secretPageId, slug: "secret" })
        const seen = [
          ok(yield* call(world.actors.outsider.client, "get_bucket", { bucket: pub.id })).bucket,
          ...ok(yield* call(world.actors.outsider.client, "search_buckets", { query: world.word })).buckets,
          ...ok(yield* call(world.actors.outsider.client, "list_buckets", { visibility: "public" })).buckets
        ].filter((dock: { id: string }) => dock.id === pub.id)
        ok(yield* call(world.actors.owner.client, "set_cover_web_page", { bucket: pub.id, web_page: pub.pageId }))
        expect(seen.length).toBe(3)
        for (const dock of seen) {
          expect(dock.cover_web_page ?? null).toBeNull()
          expect(dock.cover_page_id, "cover_page_id of a private cover page, as an outsider sees it").toBeNull()
          expect(JSON.stringify(dock)).not.toContain(world.secretPageId)
        }

        // A page slug of A's private Dock names nothing in the outsider's eyes either.
        const body = refused(
          yield* call(world.actors.outsider.client, "set_cover_web_page", {
            bucket: world.docks.private.id,
            web_page: "cover"
          })
        )
        expect(body).toEqual(NOT_FOUND)
      }))

    it.scoped("set_grounding_bucket: any Dock the caller can read, nothing else; refusals leave grounding alone", () =>
      Effect.gen(function*() {
        const world = yield* World
        yield* runCases(matrix(world, {
          tool: "set_grounding_bucket",
          forms: PATH_FORMS,
          expected: groundingOutcome,
          onSuccess: (body, { dock }) => expect(body).toEqual({ activeWorkspacePath: dock.path })
        }))
        // After the matrix every successful actor is grounded on A's public Dock; a refused one is not.
        for (const name of ["owner", "outsider", "viewer", "editor", "restricted"] as const) {
          expect(ok(yield* call(world.actors[name].client, "get_bucket", {})).bucket.id, name).toBe(
            world.docks.public.id
          )
        }
        expect(ok(yield* call(world.actors.readOnly.client, "get_bucket", {})).bucket.id).toBe(
          world.a.default_bucket_id
        )
        expect(ok(yield* call(world.actors.sandbox.client, "get_bucket", {})).bucket.id).toBe(world.sandboxDock.id)

        // A grounding Dock that stops being readable is no longer used: the caller falls back to its own default.
        const owner = world.actors.owner.client
        const fading = yield* createBucket(owner, { title: `Fading ${world.word}`, visibility: "public" })
        const fadingPath = `${world.a.username}/${fading.slug}`
        expect(ok(yield* call(world.actors.outsider.client, "set_grounding_bucket", { bucket_path: fadingPath })))
          .toEqual({
            activeWorkspacePath: fadingPath
          })
        expect(ok(yield* call(world.actors.outsider.client, "get_bucket", {})).bucket.id).toBe(fading.id)
        ok(yield* call(owner, "update_bucket", { bucket: fading.id, visibility: "private" }))
        const after = ok(yield* call(world.actors.outsider.client, "get_bucket", {}))
        expect(after.bucket.id).toBe(world.b.default_bucket_id)
        expect(JSON.stringify(after)).not.toContain(fading.id)
        // and grounding on it again is not_found
        expect(refused(yield* call(world.actors.outsider.client, "set_grounding_bucket", { bucket_path: fadingPath })))
          .toEqual(NOT_FOUND)
      }))

    it.scoped("fork_bucket: public Docks that allow forks; never from sandbox, restricted or read-only tokens", () =>
      Effect.gen(function*() {
        const world = yield* World
        yield* runCases(matrix(world, {
          tool: "fork_bucket",
          forms: PATH_FORMS,
          expected: forkOutcome,
          extra: ({ actor }) => ({ new_name: `Fork by ${actor.name} ${unique()}` }),
          onSuccess: (body, { actor, dock }) => {
            expect(body.bucket).toMatchObject({
              owner: { id: actor.userId },
              visibility: "private",
              forked_from: { id: dock.id, path: dock.path }
            })
            expect(body.bucket.id).not.toBe(dock.id)
          }
        }))
        // A public Dock that does not allow forks is forbidden; the sandbox cannot fork even its own sandbox.
        const more: ReadonlyArray<Case> = [
          ...(["owner", "outsider", "viewer", "editor"] as const).map((name): Case => ({
            label: `fork_bucket by ${name} of A's unlisted public Dock without allow_forks:`,
            actor: world.actors[name],
            tool: "fork_bucket",
            args: { bucket_path: world.docks.unlisted.path },
            expected: "forbidden",
            untouched: [world.docks.unlisted.id]
          })),
          ...[{ bucket_path: world.sandboxDock.path }, { bucket_path: world.sandboxDock.path, visibility: "public" }]
            .map((
              args
            ): Case => ({
              label: "fork_bucket by the sandbox of its own sandbox:",
              actor: world.actors.sandbox,
              tool: "fork_bucket",
              args,
              expected: "permission_denied",
              untouched: [world.sandboxDock.id]
            }))
        ]
        yield* runCases(more)

        // A fork copies the upstream's pages but not those marked private: the outsider's forks of A's public Dock
        // must not hand it A's private page (its content, or its entities through get_bucket).
        const server = yield* TestServer
        const forks = yield* server.sql<{ id: string; owner_id: string; slugs: Array<string> }>`select d.id, d.owner_id,
            coalesce(array_agg(p.slug order by p.slug) filter (where p.id is not null), '{}') as slugs
          from docks d left join parts p on p.dock_id = d.id
          where d.forked_from_id = ${world.docks.public.id} group by d.id, d.owner_id`
        expect(forks.length).toBe(4 * PATH_FORMS.length)
        const outsiderForks = forks.filter((fork) => fork.owner_id === world.b.id)
        expect(outsiderForks.length).toBe(PATH_FORMS.length)
        for (const fork of outsiderForks) {
          expect(fork.slugs, "pages of the outsider's fork").toEqual(["cover"])
          const details = ok(yield* call(world.actors.outsider.client, "get_bucket", { bucket: fork.id })).bucket
          expect(details.top_entities.map((entry: { name: string }) => entry.name)).not.toContain("SecretEntity")
          expect(details.page_count).toBe(1)
        }
        // Members' forks follow the same rule (behaviour: "copies all pages, not visibility 'private' ones").
        for (const fork of forks) expect(fork.slugs, `pages of the fork ${fork.id}`).toEqual(["cover"])
      }))

    it.scoped("create_bucket: refused for restricted, read-only and sandbox tokens, and nothing is created", () =>
      Effect.gen(function*() {
        const world = yield* World
        const expected: Record<ActorName, Outcome> = {
          owner: "ok",
          outsider: "ok",
          viewer: "ok",
          editor: "ok",
          restricted: "permission_denied",
          readOnly: "permission_denied",
          sandbox: "permission_denied"
        }
        const variants: ReadonlyArray<Record<string, unknown>> = [{}, { visibility: "public", discoverable: true }]
        const cases = ACTORS.flatMap((name) =>
          variants.map((variant): Case => {
            const title = `Created by ${name} ${unique()}`
            return {
              label: `create_bucket ${JSON.stringify(variant)} by ${name}:`,
              actor: world.actors[name],
              tool: "create_bucket",
              args: { title, ...variant },
              expected: expected[name],
              untouched: [],
              onSuccess: (body) =>
                expect(body.bucket).toMatchObject({ title, owner: { id: world.actors[name].userId } })
            }
          })
        )
        yield* runCases(cases)
        const server = yield* TestServer
        const strays = yield* server.sql<{ title: string }>`select title from docks
          where title like 'Created by restricted %' or title like 'Created by readOnly %' or title like 'Created by sandbox %'`
        expect(strays).toEqual([])
      }))

    it.scoped("list_my_buckets: own and editor Docks only, inside the token's restriction and the sandbox", () =>
      Effect.gen(function*() {
        const world = yield* World
        const { allowed, private: priv, public: pub, unlisted } = world.docks
        const list = (name: ActorName, args: Record<string, unknown>) =>
          Effect.map(call(world.actors[name].client, "list_my_buckets", args), (result) => ids(ok(result).buckets))

        for (const args of [{}, { include_collaborations: true }]) {
          const owner = yield* list("owner", args)
          expect(owner).toEqual(
            expect.arrayContaining([priv.id, pub.id, unlisted.id, allowed.id, world.a.default_bucket_id])
          )
          expect(yield* list("restricted", args)).toEqual([allowed.id])
          expect(yield* list("sandbox", args)).toEqual([world.sandboxDock.id])
          for (const name of ["outsider", "viewer"] as const) {
            const listed = yield* list(name, args)
            for (const dock of [priv, pub, unlisted, allowed]) expect(listed, name).not.toContain(dock.id)
          }
          const editor = yield* list("editor", args)
          for (const dock of [priv, pub]) expect(editor.includes(dock.id)).toBe(args.include_collaborations === true)
          for (const dock of [unlisted, allowed]) expect(editor).not.toContain(dock.id)
        }
        expect(refused(yield* call(world.actors.readOnly.client, "list_my_buckets", {})).error).toMatchObject({
          code: "permission_denied",
          status: 403
        })
      }))

    it.scoped("search_buckets and list_buckets: never a Dock the caller cannot read, the sandbox sees only itself", () =>
      Effect.gen(function*() {
        const world = yield* World
        const { private: priv, public: pub, unlisted, allowed } = world.docks
        const grants: Record<ActorName, ReadonlyArray<string>> = {
          owner: [],
          outsider: [],
          viewer: [priv.id, pub.id],
          editor: [priv.id, pub.id],
          restricted: [],
          readOnly: [],
          sandbox: []
        }
        // What each caller must find among the world's Docks by the word in their titles.
        const mustFind: Record<ActorName, ReadonlyArray<string>> = {
          owner: [priv.id, pub.id, unlisted.id, allowed.id],
          restricted: [priv.id, pub.id, unlisted.id, allowed.id],
          readOnly: [priv.id, pub.id, unlisted.id, allowed.id],
          outsider: [pub.id, world.outsiderDock.id],
          viewer: [priv.id, pub.id],
          editor: [priv.id, pub.id],
          sandbox: [world.sandboxDock.id]
        }
        const mustNotFind: Record<ActorName, ReadonlyArray<string>> = {
          owner: [world.outsiderDock.id, world.sandboxDock.id],
          restricted: [world.outsiderDock.id, world.sandboxDock.id],
          readOnly: [world.outsiderDock.id, world.sandboxDock.id],
          outsider: [priv.id, unlisted.id, allowed.id, world.sandboxDock.id],
          viewer: [unlisted.id, allowed.id, world.outsiderDock.id, world.sandboxDock.id],
          editor: [unlisted.id, allowed.id, world.outsiderDock.id, world.sandboxDock.id],
          sandbox: [priv.id, pub.id, unlisted.id, allowed.id, world.outsiderDock.id]
        }
        const username: Record<ActorName, string> = {
          owner: world.a.username,
          restricted: world.a.username,
          readOnly: world.a.username,
          outsider: world.b.username,
          viewer: world.viewer.username,
          editor: world.editor.username,
          sandbox: world.sandboxDock.owner
        }
        const known = [priv, pub, unlisted, allowed, world.outsiderDock, world.sandboxDock]
        type Listed = { id: string; visibility: string; discoverable: boolean; owner: { id: string } }
        const problems: Array<string> = []
        for (const name of ACTORS) {
          const actor = world.actors[name]
          const checked = new Set<string>()
          const findable = (dock: Listed) =>
            dock.owner.id === actor.userId || grants[name].includes(dock.id) ||
            (name !== "sandbox" && dock.visibility === "public" && dock.discoverable)
          const queries: ReadonlyArray<[string, Record<string, unknown>]> = [
            ["search_buckets", { query: world.word, limit: 50 }],
            ["list_buckets", {}],
            ["list_buckets", { visibility: "all" }],
            ["list_buckets", { visibility: "public" }],
            ["list_buckets", { visibility: "private" }],
            ["list_buckets", { owned_by_me: true }]
          ]
          for (const [tool, args] of queries) {
            const label = `${tool} ${JSON.stringify(args)} by ${name}`
            const result = yield* call(actor.client, tool, args)
            if (result.isError) {
              problems.push(`${label}: ${describeResult(result)}`)
              continue
            }
            const buckets = result.structuredContent.buckets as ReadonlyArray<Listed>
            const found = buckets.map((dock) => dock.id)
            for (const dock of buckets) {
              if (!findable(dock)) problems.push(`${label}: found ${dock.id}, which it should not find`)
              if (args.visibility === "private" && (dock.owner.id !== actor.userId || dock.visibility !== "private")) {
                problems.push(`${label}: ${dock.id} is not one of its own private Docks`)
              }
              if (args.visibility === "public" && dock.visibility !== "public") {
                problems.push(`${label}: ${dock.id} is private`)
              }
              if (args.owned_by_me === true && dock.owner.id !== actor.userId) {
                problems.push(`${label}: ${dock.id} is not its own`)
              }
              // every Dock listed can be read by the caller
              if (checked.has(dock.id)) continue
              checked.add(dock.id)
              const read = yield* call(actor.client, "get_bucket", { bucket: dock.id })
              if (read.isError) problems.push(`${label}: listed ${dock.id} but get_bucket says ${describeResult(read)}`)
            }
            for (const id of mustNotFind[name]) if (found.includes(id)) problems.push(`${label}: found ${id}`)
            const wanted = mustFind[name].filter((id) => {
              const dock = known.find((candidate) => candidate.id === id)!
              const visibility = id === pub.id || id === unlisted.id ? "public" : "private"
              const own = dock.owner === username[name]
              if (args.visibility === "public" && visibility !== "public") return false
              if (args.visibility === "private" && (visibility !== "private" || !own)) return false
              if (args.owned_by_me === true && !own) return false
              return true
            })
            for (const id of wanted) if (!found.includes(id)) problems.push(`${label}: missed ${id}`)
            if (name === "sandbox") {
              const only = args.visibility === "public" ? [] : [world.sandboxDock.id]
              if (JSON.stringify(found) !== JSON.stringify(only)) problems.push(`${label}: ${JSON.stringify(found)}`)
            }
          }
        }
        expect(problems).toEqual([])
      }))

    it.scoped("a restricted token may do inside its allowed Dock what the owner may (so its refusals are the restriction)", () =>
      Effect.gen(function*() {
        const world = yield* World
        const { allowed } = world.docks
        const actor = world.actors.restricted
        const inside = (tool: string, forms: ReadonlyArray<Form>, extra: Record<string, unknown>, expected: Outcome) =>
          forms.map((form): Case => ({
            label: `${tool} by the restricted token inside its allowed Dock (${form.name}):`,
            actor,
            tool,
            args: { ...form.args(allowed), ...extra },
            expected,
            untouched: [allowed.id]
          }))
        yield* runCases([
          ...inside("get_bucket", GET_FORMS, {}, "ok"),
          ...inside("update_bucket", BUCKET_FORMS, { description: "restricted" }, "ok"),
          ...inside("update_bucket_metadata", PATH_FORMS, { description: "restricted metadata" }, "ok"),
          ...inside("set_cover_web_page", BUCKET_FORMS, { web_page: allowed.pageId }, "ok"),
          ...inside("set_grounding_bucket", PATH_FORMS, {}, "ok"),
          // a fork is a new Dock: outside any allowed set
          ...inside("fork_bucket", PATH_FORMS, {}, "permission_denied")
        ])
        // The restricted refusal says so, with status 403 in the body.
        const body = refused(
          yield* call(actor.client, "update_bucket", { bucket: world.docks.private.id, title: "No" })
        )
        expect(body.error).toMatchObject({
          code: "permission_denied",
          status: 403,
          details: { allowed_bucket_ids: [allowed.id] }
        })
      }))

    it.scoped("a sandbox token inside its own sandbox: authoring yes, publishing, forking and new Docks no", () =>
      Effect.gen(function*() {
        const world = yield* World
        const sandbox = world.sandboxDock
        const actor = world.actors.sandbox
        const one = (tool: string, args: Record<string, unknown>, expected: Outcome): Case => ({
          label: `${tool} by the sandbox on its sandbox:`,
          actor,
          tool,
          args,
          expected,
          untouched: [sandbox.id]
        })
        yield* runCases([
          ...GET_FORMS.map((form) => one("get_bucket", form.args(sandbox), "ok")),
          ...BUCKET_FORMS.map((form) => one("update_bucket", { ...form.args(sandbox), description: "mine" }, "ok")),
          ...BUCKET_FORMS.map((form) =>
            one("update_bucket", { ...form.args(sandbox), visibility: "public" }, "permission_denied")
          ),
          ...BUCKET_FORMS.map((form) => one("set_cover_web_page", { ...form.args(sandbox), web_page: "cover" }, "ok")),
          ...PATH_FORMS.map((form) =>
            one("update_bucket_metadata", { ...form.args(sandbox), name: sandbox.title }, "ok")
          ),
          ...PATH_FORMS.flatMap((form) => [
            one("update_bucket_metadata", { ...form.args(sandbox), visibility: "public" }, "permission_denied"),
            one("update_bucket_metadata", { ...form.args(sandbox), discoverable: true }, "permission_denied"),
            one(
              "update_bucket_metadata",
              { ...form.args(sandbox), visibility: "public", discoverable: true },
              "permission_denied"
            ),
            one("set_grounding_bucket", form.args(sandbox), "ok")
          ])
        ])
        const server = yield* TestServer
        const rows = yield* server.sql<{ visibility: string; discoverable: boolean }>`select visibility, discoverable
          from docks where id = ${sandbox.id}`
        expect(rows).toEqual([{ visibility: "private", discoverable: false }])
      }))

    it.scoped("mixed targets cannot smuggle in a Dock: an unreadable one anywhere in the target is not_found", () =>
      Effect.gen(function*() {
        const world = yield* World
        const { allowed, private: priv, public: pub } = world.docks
        const own = world.outsiderDock
        const sandbox = world.sandboxDock
        const mixed = (
          name: ActorName,
          tool: string,
          args: Record<string, unknown>,
          expected: Outcome,
          untouched: ReadonlyArray<string> = []
        ): Case => ({
          label: `${tool} by ${name} with mixed targets:`,
          actor: world.actors[name],
          tool,
          args,
          expected,
          untouched
        })
        const a = world.a.username
        yield* runCases([
          mixed("outsider", "get_bucket", { bucket: own.id, bucket_slug: priv.slug, owner_username: a }, "not_found"),
          mixed("outsider", "get_bucket", { bucket: pub.id, bucket_slug: priv.slug, owner_username: a }, "not_found"),
          mixed("outsider", "get_bucket", { bucket: priv.path, bucket_slug: own.slug }, "not_found"),
          mixed(
            "outsider",
            "update_bucket_metadata",
            { bucket_path: own.path, bucket_id: priv.id, name: "x" },
            "not_found",
            [
              own.id,
              priv.id
            ]
          ),
          mixed(
            "outsider",
            "update_bucket_metadata",
            { bucket_path: own.path, bucket: priv.path, name: "x" },
            "not_found",
            [
              own.id,
              priv.id
            ]
          ),
          mixed(
            "outsider",
            "update_bucket_metadata",
            { bucket_path: priv.path, bucket: own.id, name: "x" },
            "not_found",
            [
              own.id,
              priv.id
            ]
          ),
          mixed("outsider", "set_grounding_bucket", { bucket_path: own.path, bucket_id: priv.id }, "not_found", [
            own.id,
            priv.id
          ]),
          mixed("outsider", "set_grounding_bucket", { bucket_path: pub.path, bucket: priv.slug }, "not_found", [
            pub.id,
            priv.id
          ]),
          mixed("outsider", "fork_bucket", { bucket_path: pub.path, bucket_id: priv.id }, "not_found", [
            pub.id,
            priv.id
          ]),
          mixed(
            "sandbox",
            "update_bucket_metadata",
            { bucket_path: sandbox.path, bucket_id: pub.id, name: "x" },
            "not_found",
            [
              sandbox.id,
              pub.id
            ]
          ),
          mixed("sandbox", "set_grounding_bucket", { bucket_path: sandbox.path, bucket: priv.id }, "not_found", [
            sandbox.id,
            priv.id
          ]),
          mixed("sandbox", "get_bucket", { bucket: sandbox.id, bucket_slug: pub.slug, owner_username: a }, "not_found"),
          // Both readable but different: refused as contradictory, and neither changes.
          mixed(
            "restricted",
            "update_bucket_metadata",
            { bucket_path: allowed.path, bucket_id: priv.id, name: "x" },
            "bad_request",
            [
              allowed.id,
              priv.id
            ]
          ),
          mixed(
            "owner",
            "update_bucket_metadata",
            { bucket_path: priv.path, bucket: pub.id, name: "x" },
            "bad_request",
            [
              priv.id,
              pub.id
            ]
          )
        ])
      }))

    it.scoped("a bare slug shared by other users' public Docks is not_found for the sandbox, not a list of candidates", () =>
      Effect.gen(function*() {
        const world = yield* World
        const slug = `shared-${unique()}`
        const first = yield* createBucket(world.actors.owner.client, { title: "Shared A", slug, visibility: "public" })
        const second = yield* createBucket(world.actors.outsider.client, {
          title: "Shared B",
          slug,
          visibility: "public"
        })
        // Someone who may read both is told to choose (they can see both anyway)…
        const viewerBody = refused(yield* call(world.actors.viewer.client, "get_bucket", { bucket: slug }))
        expect(viewerBody.error).toMatchObject({ code: "bad_request", status: 400 })
        // …but the sandbox sees neither: the answer must not name them.
        for (const args of [{ bucket: slug }, { bucket_slug: slug }]) {
          const body = refused(yield* call(world.actors.sandbox.client, "get_bucket", args))
          expect(body).toEqual(NOT_FOUND)
        }
        for (const tool of ["update_bucket", "delete_bucket"]) {
          const body = refused(yield* call(world.actors.sandbox.client, tool, { bucket: slug }))
          expect(body).toEqual(NOT_FOUND)
        }
        const body = refused(yield* call(world.actors.sandbox.client, "set_grounding_bucket", { bucket_path: slug }))
        expect(body).toEqual(NOT_FOUND)
        expect(JSON.stringify(body)).not.toContain(first.id)
        expect(JSON.stringify(body)).not.toContain(second.id)
      }))

    it.scoped("delete_bucket: owner only through every form; refusals leave the Dock in place", () =>
      Effect.gen(function*() {
        const world = yield* World
        yield* runCases(matrix(world, {
          tool: "delete_bucket",
          forms: BUCKET_FORMS,
          expected: (actor, dock) => actor === "owner" ? "skip" : ownerOnlyOutcome(actor, dock)
        }))
        const server = yield* TestServer
        const exists = (id: string) =>
          Effect.map(
            server.sql<{ n: number }>`select count(*)::int as n from docks where id = ${id}`,
            (rows) => rows[0]!.n === 1
          )
        for (const dock of Object.values(world.docks)) expect(yield* exists(dock.id)).toBe(true)
        expect(yield* exists(world.sandboxDock.id)).toBe(true)

        // The owner deletes fresh private and public Docks through each form; a restricted token only its own one.
        const owner = world.actors.owner.client
        for (const visibility of ["private", "public"] as const) {
          for (const form of BUCKET_FORMS) {
            const dock = target(
              yield* createBucket(owner, { title: `Doomed ${visibility}`, slug: `doomed-${unique()}`, visibility }),
              world.a.username
            )
            expect(ok(yield* call(owner, "delete_bucket", form.args(dock))), form.name).toEqual({ ok: true })
            expect(yield* exists(dock.id)).toBe(false)
            expect(refused(yield* call(owner, "delete_bucket", form.args(dock)))).toEqual(NOT_FOUND)
          }
        }
        const kept = yield* createBucket(owner, { title: "Kept", slug: `kept-${unique()}` })
        const mine = yield* createBucket(owner, { title: "Restricted's", slug: `mine-${unique()}` })
        const restricted = yield* connect(yield* tokenFor(world.a, { docks: [mine.id] }), ERA)
        for (const bucket of [kept.id, `${world.a.username}/${kept.slug}`, kept.slug]) {
          const body = refused(yield* call(restricted, "delete_bucket", { bucket }))
          expect(body.error).toMatchObject({ code: "permission_denied", status: 403 })
        }
        expect(yield* exists(kept.id)).toBe(true)
        expect(ok(yield* call(restricted, "delete_bucket", { bucket: mine.slug }))).toEqual({ ok: true })
        expect(yield* exists(mine.id)).toBe(false)
      }))
  })
})
