/**
 * The operator's sources API over real HTTP (in-process server): POST /admin/sources for each media type with its
 * extraction (stored text, title, size, the Dock's content bytes, the activity row), unsupported types and bad
 * fields refused with the error body, unknown Docks 404, archiving (idempotent, 404 for unknown ids),
 * GET /admin/sources with archived ones, the 5 MiB bound through a body larger than the usual 1 MiB JSON limit,
 * and the admin bearer (401 without it).
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, postJson, unique } from "./support/Http.ts"
import { type AdminUser, newUser } from "./support/McpTools.ts"
import {
  addSource,
  archiveSource,
  listSourcesAdmin,
  postSource,
  SOURCE_KEYS,
  type SourceBody
} from "./support/Sources.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MIB = 1024 * 1024
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const storedRow = (id: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<
        {
          dock_id: string
          title: string
          origin: string
          media_type: string
          body_text: string
          archived_at: Date | null
        }
      >`
      select dock_id, title, origin, media_type, body_text, archived_at from sources where id = ${id}`.pipe(
        Effect.map((rows) => rows[0])
      )
  )

const dockBytes = (dockId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ bytes: string }>`select bytes from dock_usage where dock_id = ${dockId}`.pipe(
        Effect.map((rows) => Number(rows[0]?.bytes ?? 0))
      )
  )

const activityOf = (sourceId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<
        {
          dock_id: string
          user_id: string | null
          token_id: string | null
          agent_label: string | null
          action: string
          details: any
        }
      >`
      select dock_id, user_id, token_id, agent_label, action, details from activity where subject_id = ${sourceId}
      order by seq`
  )

const pathOf = (user: AdminUser) => `${user.username}/${user.username}`

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the admin sources API", (it) => {
  it.effect("plain text: 201 with the source, the text stored as is, its bytes counted, the activity recorded", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const before = yield* dockBytes(owner.default_bucket_id)
      const content = "Tide tables for the harbour.\r\n  Indented <b>not markup</b>\n"
      const reply = yield* postSource({
        dock: owner.default_bucket_id,
        title: "  Tide tables  ",
        origin: "tides.txt",
        media_type: "text/plain; charset=utf-8",
        content
      })
      expect(reply.status, reply.text).toBe(201)
      const source = reply.json as SourceBody
      expect(Object.keys(source).sort()).toEqual(SOURCE_KEYS)
      expect(source).toEqual({
        source_id: expect.stringMatching(UUID),
        bucket_id: owner.default_bucket_id,
        title: "Tide tables",
        origin: "tides.txt",
        media_type: "text/plain",
        size_bytes: Buffer.byteLength(content),
        archived: false,
        created_at: expect.any(String)
      })
      expect(Date.parse(source.created_at)).not.toBeNaN()
      expect(yield* storedRow(source.source_id)).toEqual({
        dock_id: owner.default_bucket_id,
        title: "Tide tables",
        origin: "tides.txt",
        media_type: "text/plain",
        body_text: content,
        archived_at: null
      })
      expect(yield* dockBytes(owner.default_bucket_id)).toBe(before + Buffer.byteLength(content))
      expect(yield* activityOf(source.source_id)).toEqual([{
        dock_id: owner.default_bucket_id,
        user_id: null,
        token_id: null,
        agent_label: "operator",
        action: "source.added",
        details: { title: "Tide tables", media_type: "text/plain", size_bytes: Buffer.byteLength(content) }
      }])
    }))

  it.effect("Markdown: front matter dropped, the Markdown kept, the front matter title used; the Dock as owner/slug", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const source = yield* addSource(pathOf(owner), {
        origin: "https://example.com/guides/harbour.md",
        media_type: "text/markdown",
        content:
          "---\ntitle: Harbour guide\nvisibility: public\nbucket: someone-else\n---\n\n# Harbour\n\nBoats *leave* at dawn.\n"
      })
      expect(source).toMatchObject({
        bucket_id: owner.default_bucket_id,
        title: "Harbour guide",
        origin: "https://example.com/guides/harbour.md",
        media_type: "text/markdown"
      })
      expect((yield* storedRow(source.source_id))!.body_text).toBe("# Harbour\n\nBoats *leave* at dawn.\n")
      // front matter is data: it never moves the source or changes the Dock
      const server = yield* TestServer
      const [dock] = yield* server.sql<
        { visibility: string }
      >`select visibility from docks where id = ${owner.default_bucket_id}`
      expect(dock!.visibility).toBe("private")

      // without a title anywhere, the file name the origin ends with
      const untitled = yield* addSource(owner.default_bucket_id, {
        origin: "notes/plain-notes.md",
        media_type: "text/x-markdown",
        content: "Just text\n"
      })
      expect(untitled).toMatchObject({ title: "plain-notes.md", media_type: "text/markdown" })
    }))

  it.effect("HTML: sanitized, tags stripped, blocks on their own lines, script and style content gone", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const source = yield* addSource(owner.default_bucket_id, {
        origin: "page.html",
        media_type: "text/html",
        content: "<html><head><title>T</title><style>p{color:red}</style><script>steal()</script></head><body>" +
          "<h1>Tides</h1><p>High water at <b>06:10</b>.</p><ul><li>Dover</li><li>Calais</li></ul>" +
          "<img src=x onerror=alert(1)><p>Low &amp; slack</p></body></html>"
      })
      const text = (yield* storedRow(source.source_id))!.body_text
      expect(text).toBe("Tides\n\nHigh water at 06:10.\n\nDover\nCalais\n\nLow & slack")
      expect(source.size_bytes).toBe(Buffer.byteLength(text))
      expect(source.title).toBe("page.html")
    }))

  it.effect("an unsupported media type is 400 validation_error naming the supported ones; nothing is stored", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      for (const media_type of ["application/pdf", "image/png", "text/csv"]) {
        const reply = yield* postSource({ dock: owner.default_bucket_id, origin: "x", media_type, content: "%PDF-1.7" })
        expect(reply.status).toBe(400)
        expect(reply.json).toEqual({
          error: {
            code: "validation_error",
            status: 400,
            message: `media_type "${media_type}" is not supported: a source is text/plain, text/markdown or text/html`,
            details: { field: "media_type", value: media_type, supported: ["text/plain", "text/markdown", "text/html"] }
          }
        })
      }
      expect((yield* listSourcesAdmin(owner.default_bucket_id)).json).toEqual([])
    }))

  it.effect("bad fields are 400: empty text, a NUL, a long title, no origin, bad front matter, missing fields", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const dock = owner.default_bucket_id
      const cases: ReadonlyArray<[unknown, string, unknown]> = [
        [{ dock, origin: "a.txt", media_type: "text/plain", content: "  \n" }, "validation_error", {
          field: "content"
        }],
        [{ dock, origin: "a.txt", media_type: "text/plain", content: "a\u0000b" }, "validation_error", {
          field: "content"
        }],
        [{ dock, origin: "a.html", media_type: "text/html", content: "<script>x()</script>" }, "validation_error", {
          field: "content"
        }],
        [
          { dock, origin: "a.txt", media_type: "text/plain", content: "x", title: "t".repeat(301) },
          "validation_error",
          { field: "title", limit: 300 }
        ],
        [{ dock, origin: "  ", media_type: "text/plain", content: "x" }, "validation_error", {
          field: "origin",
          limit: 2048
        }],
        [
          { dock, origin: "a.md", media_type: "text/markdown", content: "---\ntitle: [x\n---\nBody" },
          "invalid_front_matter",
          undefined
        ],
        [{ dock, origin: "a.txt", media_type: "text/plain" }, "validation_error", undefined],
        [{ dock, media_type: "text/plain", content: "x" }, "validation_error", undefined]
      ]
      for (const [body, code, details] of cases) {
        const reply = yield* postSource(body)
        expect(reply.status, JSON.stringify(body).slice(0, 100)).toBe(400)
        expect(reply.json.error).toMatchObject({ code, status: 400 })
        if (details !== undefined) expect(reply.json.error.details).toEqual(details)
      }
      expect((yield* listSourcesAdmin(dock)).json).toEqual([])
    }))

  it.effect("an unknown Dock is 404 not_found; a bare slug is 400", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      for (const dock of [crypto.randomUUID(), `${owner.username}/no-such-${unique()}`, `nobody-${unique()}/x`]) {
        const body = {
          error: { code: "not_found", status: 404, message: `No Dock "${dock}"`, details: { field: "dock" } }
        }
        const added = yield* postSource({ dock, origin: "a.txt", media_type: "text/plain", content: "x" })
        expect(added.status).toBe(404)
        expect(added.json).toEqual(body)
        const listed = yield* listSourcesAdmin(dock)
        expect(listed.status).toBe(404)
        expect(listed.json).toEqual(body)
      }
      const bare = yield* postSource({ dock: owner.username, origin: "a.txt", media_type: "text/plain", content: "x" })
      expect(bare.status).toBe(400)
      expect(bare.json.error).toMatchObject({ code: "validation_error", details: { field: "dock" } })
    }))

  it.effect("archive: 200 with archived true, once recorded; again is the same answer; unknown ids are 404", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const kept = yield* addSource(owner.default_bucket_id, { title: "Kept" })
      const gone = yield* addSource(owner.default_bucket_id, { title: "Gone" })
      const bytes = yield* dockBytes(owner.default_bucket_id)

      const archived = yield* archiveSource(gone.source_id)
      expect(archived.status, archived.text).toBe(200)
      expect(archived.json).toEqual({ ...gone, archived: true })
      expect((yield* storedRow(gone.source_id))!.archived_at).toBeInstanceOf(Date)
      const again = yield* archiveSource(gone.source_id.toUpperCase())
      expect(again.status).toBe(200)
      expect(again.json).toEqual(archived.json)
      expect((yield* activityOf(gone.source_id)).map((row) => [row.action, row.agent_label])).toEqual([
        ["source.added", "operator"],
        ["source.archived", "operator"]
      ])
      // archived text stays stored, and counted
      expect(yield* dockBytes(owner.default_bucket_id)).toBe(bytes)

      const listed = yield* listSourcesAdmin(pathOf(owner))
      expect(listed.status).toBe(200)
      expect(listed.json).toEqual([kept, { ...gone, archived: true }])

      for (const id of [crypto.randomUUID(), "not-a-uuid", "' or 1=1 --"]) {
        const reply = yield* archiveSource(id)
        expect(reply.status, id).toBe(404)
        expect(reply.json).toEqual({
          error: { code: "not_found", status: 404, message: `No source "${id}"`, details: { field: "source_id" } }
        })
      }
    }))

  it.effect("5 MiB of text goes through (a body over the usual 1 MiB limit); one byte more is 400; a far larger body 413", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const content = `${"line of text\n".repeat(Math.floor(5 * MIB / 13))}`.padEnd(5 * MIB, "x")
      expect(Buffer.byteLength(content)).toBe(5 * MIB)
      const big = yield* addSource(owner.default_bucket_id, { content, origin: "big.txt" })
      expect(big.size_bytes).toBe(5 * MIB)

      const over = yield* postSource({
        dock: owner.default_bucket_id,
        origin: "big.txt",
        media_type: "text/plain",
        content: `${content}x`
      })
      expect(over.status).toBe(400)
      expect(over.json.error).toMatchObject({
        code: "validation_error",
        details: { field: "content", bytes: 5 * MIB + 1, limit: 5 * MIB }
      })

      const server = yield* TestServer
      const huge = yield* postJson(`${server.url}/admin/sources`, {
        dock: owner.default_bucket_id,
        origin: "x",
        media_type: "text/plain",
        content: "\"".repeat(6 * MIB)
      }, bearer(server.adminToken))
      expect(huge.status).toBe(413)
      expect(huge.json.error).toMatchObject({ code: "payload_too_large", status: 413 })
      // other admin routes keep the 1 MiB limit
      const members = yield* postJson(
        `${server.url}/admin/members`,
        { dock: "x/y", user: "u".repeat(2 * MIB) },
        bearer(server.adminToken)
      )
      expect(members.status).toBe(413)
    }))

  it.effect("every sources endpoint needs the admin token: 401 with the admin challenge", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const source = yield* addSource(owner.default_bucket_id)
      for (const headers of [{}, bearer("dock_admin_wrong"), bearer("dock_mcp_not-an-admin-token")]) {
        const replies = [
          yield* postSource(
            { dock: owner.default_bucket_id, origin: "a.txt", media_type: "text/plain", content: "x" },
            headers
          ),
          yield* listSourcesAdmin(owner.default_bucket_id, headers),
          yield* archiveSource(source.source_id, headers)
        ]
        for (const reply of replies) {
          expect(reply.status).toBe(401)
          expect(reply.headers["www-authenticate"]).toBe(`Bearer realm="dock-admin"`)
          expect(reply.json.error).toMatchObject({ code: "unauthorized", status: 401 })
        }
      }
      expect((yield* listSourcesAdmin(owner.default_bucket_id)).json).toEqual([source])
    }))
})
