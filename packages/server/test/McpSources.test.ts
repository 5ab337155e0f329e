/**
 * list_sources and read_source over the wire with real MCP clients (every era for a smoke test, the modern v2
 * client for the rest): sources added through the admin API, the `{ bucket, sources }` / `{ bucket, source }`
 * shapes with the Dock object of architecture §14, every targeting form (bucket, bucket_slug + owner_username, the
 * grounding and default Docks), archived and unknown sources, another Dock's source, tenancy across users (a
 * private Dock's sources invisible by every route, members see them), sandbox tokens, /mcp/public on a public
 * Dock, 401 without a token, what tools/list advertises, and pages citing sources end to end.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { connectMcp, type Era, ERAS } from "./support/McpClients.ts"
import {
  actor,
  call,
  connect,
  connectPublic,
  createBucket,
  DOCK_KEYS,
  grant,
  listedTool,
  NOT_FOUND,
  ok,
  pathOf,
  pushed,
  rawToolCall,
  tokenFor,
  toolError as error
} from "./support/McpTools.ts"
import { addSource, archiveSource, SOURCE_KEYS, type SourceBody } from "./support/Sources.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"

/** The not_found body of read_source for any source this Dock does not list. */
const noSource = (id: string) => ({
  code: "not_found",
  status: 404,
  message: `No source "${id}" in this Dock`,
  details: { field: "source_id" }
})

const rawCall = rawToolCall

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the MCP source tools", (it) => {
  for (const era of ERAS) {
    it.scoped(`${era}: list_sources and read_source answer { bucket, sources } and { bucket, source }`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const source = yield* addSource(owner.user.default_bucket_id, { title: "Tides", content: "High water at six." })
        const listed = ok(yield* call(owner.client, "list_sources", { bucket: owner.user.default_bucket_id }))
        expect(Object.keys(listed).sort()).toEqual(["bucket", "sources"])
        expect(Object.keys(listed.bucket).sort()).toEqual(DOCK_KEYS)
        expect(listed.bucket).toMatchObject({
          id: owner.user.default_bucket_id,
          owner: { id: owner.user.id, username: owner.user.username }
        })
        expect(listed.sources).toEqual([source])
        const read = ok(yield* call(owner.client, "read_source", { source_id: source.source_id }))
        expect(Object.keys(read).sort()).toEqual(["bucket", "source"])
        expect(read.bucket).toEqual(listed.bucket)
        expect(Object.keys(read.source).sort()).toEqual([...SOURCE_KEYS, "text"].sort())
        expect(read.source).toEqual({ ...source, text: "High water at six." })
        // a client on /mcp/public of the same era reads nothing private
        const anonymous = yield* connectPublic(era)
        expect(yield* error(anonymous, "list_sources", { bucket: owner.user.default_bucket_id })).toEqual(
          NOT_FOUND.error
        )
      }))
  }

  it.scoped("list_sources: oldest first, archived ones left out; the Dock named every way, else grounding, else default", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Research", slug: `research-${unique()}` })
      const first = yield* addSource(dock.id, { title: "First", origin: "a.txt" })
      const second = yield* addSource(dock.id, {
        title: "Second",
        origin: "https://example.com/b.html",
        media_type: "text/html",
        content: "<p>B</p>"
      })
      const third = yield* addSource(dock.id, {
        title: "Third",
        origin: "c.md",
        media_type: "text/markdown",
        content: "# C\n"
      })
      expect((yield* archiveSource(second.source_id)).status).toBe(200)

      const expected = [first, third]
      for (
        const target of [
          { bucket: dock.id },
          { bucket: pathOf(owner.user, dock) },
          { bucket: dock.slug },
          { bucket_slug: dock.slug },
          { bucket_slug: dock.slug, owner_username: owner.user.username },
          { bucket: dock.id, bucket_slug: dock.slug, owner_username: owner.user.username }
        ]
      ) {
        const listed = ok(yield* call(owner.client, "list_sources", target))
        expect(listed.bucket.id, JSON.stringify(target)).toBe(dock.id)
        expect(listed.sources, JSON.stringify(target)).toEqual(expected)
      }
      // archived sources are listed nowhere and read as unknown
      expect(yield* error(owner.client, "read_source", { bucket: dock.id, source_id: second.source_id })).toEqual(
        noSource(second.source_id)
      )

      // no Dock named: the default Dock (empty), then the grounding Dock once set
      const untargeted = ok(yield* call(owner.client, "list_sources", {}))
      expect(untargeted).toMatchObject({ bucket: { id: owner.user.default_bucket_id }, sources: [] })
      ok(yield* call(owner.client, "set_grounding_bucket", { bucket_path: pathOf(owner.user, dock) }))
      expect(ok(yield* call(owner.client, "list_sources", {})).sources).toEqual(expected)
      expect(ok(yield* call(owner.client, "read_source", { source_id: third.source_id })).source.text).toBe("# C\n")
      // a named Dock beats the grounding
      expect(ok(yield* call(owner.client, "list_sources", { bucket: owner.user.default_bucket_id })).sources).toEqual(
        []
      )

      // forms naming different Docks, and owner_username alone, are bad_request
      expect(yield* error(owner.client, "list_sources", { bucket: dock.id, bucket_slug: owner.user.username }))
        .toMatchObject({
          code: "bad_request",
          status: 400
        })
      expect(yield* error(owner.client, "list_sources", { owner_username: owner.user.username })).toMatchObject({
        code: "bad_request"
      })
      expect(yield* error(owner.client, "list_sources", { bucket: `${owner.user.username}/no-such-${unique()}` }))
        .toEqual(NOT_FOUND.error)
    }))

  it.scoped("read_source: the full text; unknown, malformed, archived and other Docks' ids are one not_found", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Reading", slug: `reading-${unique()}` })
      const other = yield* createBucket(owner.client, { title: "Other", slug: `other-${unique()}` })
      const body = `${"A long line of reference text. ".repeat(4000)}\nThe end.`
      const source = yield* addSource(dock.id, { title: "Long", content: body })
      const elsewhere = yield* addSource(other.id, { title: "Elsewhere" })

      const read = ok(yield* call(owner.client, "read_source", { bucket: dock.id, source_id: source.source_id }))
      expect(read.source.text).toBe(body)
      expect(read.source.size_bytes).toBe(Buffer.byteLength(body))
      expect(read.bucket.id).toBe(dock.id)
      // the id in capitals and with spaces around it is the same source
      expect(
        ok(
          yield* call(owner.client, "read_source", {
            bucket: dock.id,
            source_id: ` ${source.source_id.toUpperCase()} `
          })
        ).source.source_id
      )
        .toBe(source.source_id)

      // another Dock's source, named with this Dock, reads exactly like an unknown one
      expect(yield* error(owner.client, "read_source", { bucket: dock.id, source_id: elsewhere.source_id })).toEqual(
        noSource(elsewhere.source_id)
      )
      const unknownId = crypto.randomUUID()
      expect(yield* error(owner.client, "read_source", { bucket: dock.id, source_id: unknownId })).toEqual(
        noSource(unknownId)
      )
      for (const id of ["not-a-uuid", "", "' or 1=1 --"]) {
        expect(yield* error(owner.client, "read_source", { bucket: dock.id, source_id: id })).toEqual(
          noSource(id.trim())
        )
      }
      // archived: gone from reads; its own Dock's lists too
      expect((yield* archiveSource(source.source_id)).status).toBe(200)
      expect(yield* error(owner.client, "read_source", { bucket: dock.id, source_id: source.source_id })).toEqual(
        noSource(source.source_id)
      )
      expect(ok(yield* call(owner.client, "list_sources", { bucket: dock.id })).sources).toEqual([])

      // source_id is required and bounded
      expect(yield* error(owner.client, "read_source", { bucket: dock.id })).toMatchObject({ code: "validation_error" })
      expect(yield* error(owner.client, "read_source", { bucket: dock.id, source_id: "x".repeat(201) })).toMatchObject({
        code: "validation_error"
      })
      expect(yield* error(owner.client, "list_sources", { bucket: dock.id, extra: true })).toMatchObject({
        code: "validation_error"
      })
    }))

  it.scoped("tenancy: a private Dock's sources are invisible to another user by every route; members see them", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const outsider = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Private", slug: `private-${unique()}` })
      const source = yield* addSource(dock.id, { title: "Secret", content: "The secret text." })
      const ownSource = yield* addSource(outsider.user.default_bucket_id, { title: "Mine" })

      const routes: ReadonlyArray<Record<string, string>> = [
        { bucket: dock.id },
        { bucket: pathOf(owner.user, dock) },
        { bucket_slug: dock.slug, owner_username: owner.user.username }
      ]
      for (const target of routes) {
        expect(yield* error(outsider.client, "list_sources", target), JSON.stringify(target)).toEqual(NOT_FOUND.error)
        expect(yield* error(outsider.client, "read_source", { ...target, source_id: source.source_id })).toEqual(
          NOT_FOUND.error
        )
      }
      // a bare slug is resolved among the caller's own Docks first: the outsider has none of that name
      expect(yield* error(outsider.client, "list_sources", { bucket: dock.slug })).toEqual(NOT_FOUND.error)
      // the owner's source id through the outsider's own (default) Dock, or grounding, is unknown there
      expect(yield* error(outsider.client, "read_source", { source_id: source.source_id })).toEqual(
        noSource(source.source_id)
      )
      expect(yield* error(outsider.client, "set_grounding_bucket", { bucket_path: pathOf(owner.user, dock) }))
        .toMatchObject({
          code: "not_found"
        })
      expect(ok(yield* call(outsider.client, "list_sources", {})).sources).toEqual([ownSource])
      // and the other way round
      expect(
        yield* error(owner.client, "read_source", {
          bucket: outsider.user.default_bucket_id,
          source_id: ownSource.source_id
        })
      )
        .toEqual(NOT_FOUND.error)

      // a viewer grant makes them readable; a read-only token of the viewer too
      yield* grant(dock.id, outsider.user, "viewer")
      expect(ok(yield* call(outsider.client, "list_sources", { bucket: dock.id })).sources).toEqual([source])
      const readOnly = yield* connect(yield* tokenFor(outsider.user, { scopes: ["mcp:read"] }), "v2 legacy")
      expect(
        ok(yield* call(readOnly, "read_source", { bucket: pathOf(owner.user, dock), source_id: source.source_id }))
          .source.text
      )
        .toBe("The secret text.")
    }))

  it.scoped("a sandbox token reads its sandbox's sources and no other Dock's, public ones included", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor(MODERN)
      const open = yield* createBucket(owner.client, { title: "Open", slug: `open-${unique()}`, visibility: "public" })
      const openSource = yield* addSource(open.id)
      const registration = yield* register(server.url)
      expect(registration.status).toBe(201)
      const sandboxId = registration.json.sandbox_bucket.id as string
      const inSandbox = yield* addSource(sandboxId, { title: "Sandbox notes" })
      const agent = yield* connectMcp(server.url, registration.json.credential as string, MODERN)

      expect(ok(yield* call(agent, "list_sources", {})).sources).toEqual([inSandbox])
      expect(ok(yield* call(agent, "read_source", { bucket: sandboxId, source_id: inSandbox.source_id })).source.title)
        .toBe("Sandbox notes")
      expect(yield* error(agent, "list_sources", { bucket: open.id })).toEqual(NOT_FOUND.error)
      expect(yield* error(agent, "read_source", { source_id: openSource.source_id })).toEqual(
        noSource(openSource.source_id)
      )
    }))

  it.scoped("/mcp/public: anyone lists and reads a public Dock's sources; private Docks are not_found; no Dock is bad_request", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const open = yield* createBucket(owner.client, { title: "Open", slug: `open-${unique()}`, visibility: "public" })
      const closed = yield* createBucket(owner.client, { title: "Closed", slug: `closed-${unique()}` })
      const shown = yield* addSource(open.id, {
        title: "Shown",
        media_type: "text/markdown",
        content: "---\ntitle: x\n---\nPublic text\n"
      })
      const hidden = yield* addSource(closed.id, { title: "Hidden" })

      for (const era of ERAS) {
        const anonymous = yield* connectPublic(era)
        for (
          const target of [{ bucket: open.id }, { bucket: pathOf(owner.user, open) }, {
            bucket_slug: open.slug,
            owner_username: owner.user.username
          }]
        ) {
          const listed = ok(yield* call(anonymous, "list_sources", target))
          expect(listed.bucket).toMatchObject({ id: open.id, visibility: "public" })
          expect(listed.sources).toEqual([shown])
        }
        expect(ok(yield* call(anonymous, "read_source", { bucket: open.id, source_id: shown.source_id })).source)
          .toEqual({ ...shown, text: "Public text\n" })
        expect(yield* error(anonymous, "list_sources", { bucket: closed.id })).toEqual(NOT_FOUND.error)
        expect(yield* error(anonymous, "read_source", { bucket: closed.id, source_id: hidden.source_id })).toEqual(
          NOT_FOUND.error
        )
        expect(yield* error(anonymous, "read_source", { bucket: open.id, source_id: hidden.source_id })).toEqual(
          noSource(hidden.source_id)
        )
        expect(yield* error(anonymous, "list_sources", {})).toMatchObject({ code: "bad_request", status: 400 })
      }

      // making the Dock private hides its sources from the public at once
      ok(yield* call(owner.client, "update_bucket", { bucket: open.id, visibility: "private" }))
      const anonymous = yield* connectPublic(MODERN)
      expect(yield* error(anonymous, "list_sources", { bucket: open.id })).toEqual(NOT_FOUND.error)
      expect(yield* error(anonymous, "read_source", { bucket: open.id, source_id: shown.source_id })).toEqual(
        NOT_FOUND.error
      )
    }))

  it.scoped("on /mcp without a valid token both tools are 401 unauthorized with the challenge", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor(MODERN)
      const source = yield* addSource(owner.user.default_bucket_id)
      for (const headers of [{}, bearer("dock_mcp_not-a-real-token"), bearer(server.adminToken)]) {
        for (
          const [name, args] of [
            ["list_sources", { bucket: owner.user.default_bucket_id }],
            ["read_source", { bucket: owner.user.default_bucket_id, source_id: source.source_id }]
          ] as const
        ) {
          const reply = yield* rawCall("/mcp", name, args, headers)
          expect(reply.status, `${name} ${JSON.stringify(headers)}`).toBe(401)
          expect(reply.headers["www-authenticate"]).toContain("Bearer resource_metadata=")
          expect(reply.json.error).toMatchObject({ code: "unauthorized", status: 401 })
          expect(reply.text).not.toContain("Some reference text.")
        }
      }
    }))

  it.scoped("tools/list advertises both tools as read-only with the spec's parameters, on /mcp and /mcp/public", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const anonymous = yield* connectPublic(MODERN)
      for (const client of [owner.client, anonymous]) {
        const list = yield* listedTool(client, "list_sources")
        const read = yield* listedTool(client, "read_source")
        expect(list).toBeDefined()
        expect(read).toBeDefined()
        expect(Object.keys(list!.inputSchema.properties ?? {}).sort()).toEqual([
          "bucket",
          "bucket_slug",
          "owner_username"
        ])
        expect(list!.inputSchema.required ?? []).toEqual([])
        expect(Object.keys(read!.inputSchema.properties ?? {}).sort()).toEqual([
          "bucket",
          "bucket_slug",
          "owner_username",
          "source_id"
        ])
        expect(read!.inputSchema.required).toEqual(["source_id"])
        for (const tool of [list!, read!]) {
          expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true })
        }
      }
    }))

  it.scoped("pages cite sources: an added source's id in front matter is get_web_page's grounding.sources, and reads back", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Cited", slug: `cited-${unique()}` })
      const tides: SourceBody = yield* addSource(dock.id, { title: "Tide tables", content: "High water 06:10." })
      const charts: SourceBody = yield* addSource(dock.id, {
        title: "Charts",
        media_type: "text/html",
        content: "<p>Chart</p>"
      })
      const page = [
        "---",
        "title: Harbour facts",
        `sources: [${tides.source_id}, ${charts.source_id}, not-a-source-id]`,
        "claims:",
        `  - text: High water is at 06:10`,
        `    source: ${tides.source_id}`,
        "---",
        "The harbour floods at dawn."
      ].join("\n")
      const saved = yield* pushed(owner.client, "push_markdown_file", { bucket: dock.id, page_content: page })
      const read = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: saved.part.id }))
      // kept as written (an id that names no source stays: grounding records what the page claims)
      expect(read.grounding.sources).toEqual([tides.source_id, charts.source_id, "not-a-source-id"])
      // every cited id that is a source of the Dock reads back with read_source
      for (const id of read.grounding.sources.slice(0, 2)) {
        const cited = ok(yield* call(owner.client, "read_source", { bucket: dock.id, source_id: id })).source
        expect(cited.source_id).toBe(id)
      }
      expect(ok(yield* call(owner.client, "read_source", { bucket: dock.id, source_id: tides.source_id })).source.text)
        .toBe("High water 06:10.")
      expect(yield* error(owner.client, "read_source", { bucket: dock.id, source_id: "not-a-source-id" })).toEqual(
        noSource("not-a-source-id")
      )
      // get_bucket counts the Dock's listed sources
      expect(ok(yield* call(owner.client, "get_bucket", { bucket: dock.id })).bucket.source_count).toBe(2)
      expect((yield* archiveSource(charts.source_id)).status).toBe(200)
      expect(ok(yield* call(owner.client, "get_bucket", { bucket: dock.id })).bucket.source_count).toBe(1)
    }))
})
