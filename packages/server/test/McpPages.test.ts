/**
 * The page tools of spec §4.3 ("Web pages" and "Markdown files") over the wire with real MCP clients: the v2
 * client pinned to the modern era for the detailed tests, and a smoke subset on every era. Each tool's success
 * shape (the `part` object of architecture §14) is checked against the stored rows (parts, part_versions,
 * activity), and every error the spec lists for it is produced: HTML sanitized before storage, created →
 * unchanged → updated, the 1 MiB UTF-8 limit, slugs, front matter (required, never placement), standalone
 * Markdown, reads by UUID/slug/page_slug in both formats, anonymous public reads, the grounding Dock, list
 * sorting and limits, versions (listed, read, restored as a new version without rewriting history) and deletes,
 * for owners, editors, viewers, outsiders, read-only, Dock-restricted and sandbox tokens.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { type Era, ERAS } from "./support/McpClients.ts"
import {
  actor,
  call,
  cast as castOf,
  connect,
  connectPublic,
  createBucket,
  labelledToken,
  ok,
  PART_KEYS,
  pathOf,
  pushed as push,
  refused,
  seedPage,
  tokenFor,
  toolError as error
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"
const MIB = 1_048_576
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
interface PartRowShape {
  readonly dock_id: string | null
  readonly owner_id: string
  readonly slug: string | null
  readonly title: string | null
  readonly summary: string
  readonly content_type: string
  readonly page_kind: string
  readonly visibility: string | null
  readonly content: string
  readonly body_text: string
  readonly tags: Array<string>
  readonly entities: Array<string>
  readonly concepts: Array<string>
  readonly source_ids: Array<string>
  readonly claim_count: number
  readonly version: number
  readonly size_bytes: number
}

const partRow = (id: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<PartRowShape>`select dock_id, owner_id, slug, title, summary, content_type, page_kind, visibility,
        content, body_text, tags, entities, concepts, source_ids, claim_count, version, size_bytes
      from parts where id = ${id}`.pipe(Effect.map((rows) => rows[0]))
  )

const versionRows = (partId: string) =>
  Effect.flatMap(TestServer, (server) =>
    server.sql<{
      version: number
      title: string | null
      content: string
      reason: string
      restored_from: number | null
      user_id: string | null
      token_id: string | null
      agent_label: string | null
      size_bytes: number
    }>`select version, title, content, reason, restored_from, user_id, token_id, agent_label, size_bytes
      from part_versions where part_id = ${partId} order by version`)

/** Activity rows about one page, oldest first. */
const activityOf = (partId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ dock_id: string | null; user_id: string | null; action: string; details: any }>`select dock_id,
        user_id, action, details from activity where subject_id = ${partId} order by seq`
  )

const partsIn = (dockId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ n: number }>`select count(*)::int as n from parts where dock_id = ${dockId}`.pipe(
        Effect.map((rows) => rows[0]!.n)
      )
  )

const dockVisibility = (dockId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ visibility: string }>`select visibility from docks where id = ${dockId}`.pipe(
        Effect.map((rows) => rows[0]!.visibility)
      )
  )

/** An owner with a fresh private Dock, plus a viewer, an editor and an outsider, each with a modern client. */
const cast = castOf("Pages", MODERN)

const HARBOUR = [
  "---",
  "title: Harbour notes",
  "summary: What the harbour looks like at dawn",
  "slug: harbour-notes",
  "tags: [coast, boats]",
  "entities: [Lighthouse]",
  "concepts: [tides]",
  "claims:",
  "  - The tide turns twice a day",
  "  - text: Boats leave at dawn",
  "    source: src-1",
  "sources: [src-1, src-2]",
  "visibility: public",
  "bucket: other",
  "---",
  "# Harbour",
  "",
  "The [[Lighthouse keeper]] lights the lamp.",
  ""
].join("\n")

const expectPartShape = (part: any, withContent = false) => {
  expect(Object.keys(part).sort()).toEqual(withContent ? [...PART_KEYS, "content"].sort() : PART_KEYS)
  expect(part.id).toMatch(UUID)
  expect(part.url).toMatch(new RegExp(`/a/${part.public_slug}$`))
  expect(Number.isNaN(Date.parse(part.last_updated))).toBe(false)
}

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the MCP page tools", (it) => {
  // ---------------------------------------------------------------------------------------------------------
  // push_web_page

  it.scoped("push_web_page sanitizes HTML before storage, then answers created → unchanged → updated", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const html = `<h1>Tides</h1><p>Twice a day.</p><script>alert("x")</script><img src="/a.png" onerror="alert(1)">`
      const created = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_title: "Tides",
        page_content: html
      })
      expect(Object.keys(created).sort()).toEqual(["action", "part", "sanitization_warnings", "warnings"])
      expect(created.action).toBe("created")
      expect(created.sanitization_warnings!.length).toBeGreaterThan(0)
      expectPartShape(created.part)
      expect(created.part).toMatchObject({
        bucket_id: dock.id,
        slug: "tides",
        title: "Tides",
        content_type: "html",
        page_kind: "web_page",
        version: 1,
        claim_count: 0
      })

      const row = (yield* partRow(created.part.id))!
      expect(row).toMatchObject({ dock_id: dock.id, owner_id: owner.user.id, content_type: "html", version: 1 })
      expect(row.content).toContain("Twice a day.")
      expect(row.content.toLowerCase()).not.toContain("<script")
      expect(row.content.toLowerCase()).not.toContain("onerror")
      expect(row.content).not.toContain("alert")
      expect(row.body_text).toContain("Twice a day.")
      expect(yield* versionRows(created.part.id)).toMatchObject([{
        version: 1,
        reason: "created",
        user_id: owner.user.id
      }])
      expect((yield* versionRows(created.part.id))[0]!.content).toBe(row.content)

      // the very same push again: nothing new
      const again = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_title: "Tides",
        page_content: html
      })
      expect(again.action).toBe("unchanged")
      expect(again.part).toMatchObject({ id: created.part.id, version: 1 })
      expect((yield* versionRows(created.part.id)).length).toBe(1)

      // changed content: version 2, found by the slug derived from the title
      const updated = yield* push(owner.client, "push_web_page", {
        bucket: pathOf(owner.user, dock),
        page_title: "Tides",
        page_content: "<p>Four times a day here.</p>"
      })
      expect(updated.action).toBe("updated")
      expect(updated.part).toMatchObject({ id: created.part.id, version: 2, slug: "tides" })
      expect((yield* versionRows(created.part.id)).map((v) => [v.version, v.reason])).toEqual([[1, "created"], [
        2,
        "updated"
      ]])
      expect((yield* partRow(created.part.id))!.content).toContain("Four times")
      expect((yield* activityOf(created.part.id)).map((a) => a.action)).toEqual(["page.created", "page.updated"])
      expect((yield* activityOf(created.part.id))[0]).toMatchObject({ dock_id: dock.id, user_id: owner.user.id })
    }))

  it.scoped("push_web_page with content_type markdown stores Markdown; with no Dock named it lands in the default Dock", () =>
    Effect.gen(function*() {
      const { owner } = yield* actor(MODERN).pipe(Effect.map((owner) => ({ owner })))
      const markdown = yield* push(owner.client, "push_web_page", {
        content_type: "markdown",
        page_slug: "notes",
        page_content: "# Notes\n\nPlain *Markdown* <script>x()</script>"
      })
      expect(markdown.action).toBe("created")
      expect(markdown.part).toMatchObject({
        bucket_id: owner.user.default_bucket_id,
        slug: "notes",
        title: "Notes",
        content_type: "markdown",
        page_kind: "web_page"
      })
      const row = (yield* partRow(markdown.part.id))!
      expect(row).toMatchObject({
        dock_id: owner.user.default_bucket_id,
        content_type: "markdown",
        page_kind: "web_page"
      })

      const html = yield* push(owner.client, "push_web_page", { page_title: "Default", page_content: "<p>hi</p>" })
      expect(html.part.bucket_id).toBe(owner.user.default_bucket_id)
      const listed = ok(yield* call(owner.client, "list_web_pages", { bucket: owner.user.default_bucket_id })).parts
      expect(listed.map((p: any) => p.slug).sort()).toEqual(["default", "notes"])
    }))

  it.scoped("push_web_page counts page_content in UTF-8 bytes: exactly 1 MiB is accepted, one byte more is validation_error", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      // "€" is 3 bytes of UTF-8 and one UTF-16 unit: 349,523 of them plus "<p></p>" is 1,048,576 bytes in 349,530 chars
      const exact = `<p>${"€".repeat(349_523)}</p>`
      expect(new TextEncoder().encode(exact).byteLength).toBe(MIB)
      const accepted = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "big",
        page_content: exact
      })
      expect(accepted.action).toBe("created")
      expect((yield* partRow(accepted.part.id))!.size_bytes).toBe(MIB)

      const over = `<p>${"€".repeat(349_523)}a</p>`
      expect(over.length).toBeLessThan(MIB / 2)
      const body = yield* error(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "bigger",
        page_content: over
      })
      expect(body).toMatchObject({ code: "validation_error", status: 400 })
      expect(yield* partsIn(dock.id)).toBe(1)
      // Over the schema's own bound (UTF-16 units), the error names the limit without quoting the content back.
      const huge = yield* error(owner.client, "push_web_page", { bucket: dock.id, page_content: "a".repeat(MIB + 1) })
      expect(huge).toMatchObject({ code: "validation_error", details: { issues: [{ path: ["page_content"] }] } })
      expect(JSON.stringify(huge).length).toBeLessThan(2_000)
      // the same limit on the Markdown pushes
      const markdownOver = `---\ntitle: x\n---\n${"€".repeat(349_520)}`
      expect(new TextEncoder().encode(markdownOver).byteLength).toBeGreaterThan(MIB)
      for (const tool of ["push_markdown_file", "push_markdown"]) {
        expect(yield* error(owner.client, tool, { bucket: dock.id, page_content: markdownOver })).toMatchObject({
          code: "validation_error",
          status: 400
        })
      }
      expect(yield* partsIn(dock.id)).toBe(1)
    }))

  it.scoped("push_web_page refuses a bad page_slug with invalid_slug and stores nothing", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      for (const slug of ["Bad Slug", "double--hyphen", "-lead", "ümlaut", "UPPER"]) {
        expect(
          yield* error(owner.client, "push_web_page", { bucket: dock.id, page_slug: slug, page_content: "<p>x</p>" })
        )
          .toMatchObject({ code: "invalid_slug", status: 400 })
      }
      expect(yield* partsIn(dock.id)).toBe(0)
    }))

  it.scoped("push_web_page: read-only tokens and viewers get permission_denied; a restricted token outside its Docks a 403", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer, editor, outsider } = yield* cast
      const args = { bucket: dock.id, page_slug: "p", page_content: "<p>x</p>" }
      const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), MODERN)
      expect(yield* error(readOnly, "push_web_page", args)).toMatchObject({ code: "permission_denied", status: 403 })
      expect(yield* error(viewer.client, "push_web_page", args)).toMatchObject({
        code: "permission_denied",
        status: 403
      })
      // an outsider cannot see the private Dock at all
      expect(yield* error(outsider.client, "push_web_page", args)).toMatchObject({ code: "not_found", status: 404 })

      const allowed = yield* createBucket(owner.client, { title: "Allowed", slug: `allowed-${unique()}` })
      const restricted = yield* connect(yield* tokenFor(owner.user, { docks: [allowed.id] }), MODERN)
      expect(yield* error(restricted, "push_web_page", args)).toMatchObject({ code: "permission_denied", status: 403 })
      // untargeted: the default Dock is outside the set too
      expect(yield* error(restricted, "push_web_page", { page_slug: "p", page_content: "<p>x</p>" })).toMatchObject({
        code: "permission_denied",
        status: 403
      })
      expect(yield* partsIn(dock.id)).toBe(0)
      expect(yield* partsIn(owner.user.default_bucket_id)).toBe(0)
      const inside = yield* push(restricted, "push_web_page", {
        bucket: allowed.id,
        page_slug: "p",
        page_content: "<p>x</p>"
      })
      expect(inside.part.bucket_id).toBe(allowed.id)

      // the editor may write
      expect((yield* push(editor.client, "push_web_page", args)).action).toBe("created")
    }))

  it.scoped("push_web_page from a sandbox token: untargeted it lands in the sandbox; the 25-artifact cap gives tier_limit_exceeded", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = yield* register(server.url)
      expect(registration.status, registration.text).toBe(201)
      const sandboxId = registration.json.sandbox_bucket.id as string
      const sandbox = yield* connect(registration.json.credential as string, MODERN)

      const first = yield* push(sandbox, "push_web_page", { page_slug: "first", page_content: "<p>one</p>" })
      expect(first.part.bucket_id).toBe(sandboxId)
      // push_markdown without a Dock: the sandbox too
      const standalone = yield* push(sandbox, "push_markdown", { page_content: "# Loose\n\ntext" })
      expect(standalone.part.bucket_id).toBe(sandboxId)

      const existing = yield* partsIn(sandboxId)
      for (let i = existing; i < 25; i++) {
        yield* push(sandbox, "push_web_page", { page_slug: `page-${i}`, page_content: `<p>${i}</p>` })
      }
      expect(yield* partsIn(sandboxId)).toBe(25)
      expect(yield* error(sandbox, "push_web_page", { page_slug: "one-too-many", page_content: "<p>x</p>" }))
        .toMatchObject({
          code: "tier_limit_exceeded",
          status: 403
        })
      expect(yield* partsIn(sandboxId)).toBe(25)
      // updating an existing page is still fine
      expect((yield* push(sandbox, "push_web_page", { page_slug: "first", page_content: "<p>one, again</p>" })).action)
        .toBe(
          "updated"
        )
    }))

  // ---------------------------------------------------------------------------------------------------------
  // push_markdown_file

  it.scoped("push_markdown_file requires YAML front matter: missing, ---js and malformed YAML are invalid_front_matter", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      for (
        const content of [
          "# No front matter\n\ntext",
          "---js\n{ title: 'x' }\n---\n# Body",
          "---\ntitle: [unclosed\n---\n# Body",
          "---\ntitle: x\n# never closed"
        ]
      ) {
        expect(yield* error(owner.client, "push_markdown_file", { bucket: dock.id, page_content: content }))
          .toMatchObject({
            code: "invalid_front_matter",
            status: 400
          })
      }
      // a bad front-matter slug is invalid_slug; so is a bad page_slug
      expect(
        yield* error(owner.client, "push_markdown_file", {
          bucket: dock.id,
          page_content: "---\nslug: Not A Slug\n---\nx"
        })
      )
        .toMatchObject({ code: "invalid_slug", status: 400 })
      expect(
        yield* error(owner.client, "push_markdown_file", {
          bucket: dock.id,
          page_slug: "No!",
          page_content: "---\ntitle: t\n---\nx"
        })
      )
        .toMatchObject({ code: "invalid_slug", status: 400 })
      expect(yield* partsIn(dock.id)).toBe(0)
    }))

  it.scoped("push_markdown_file: an unpaired surrogate escape in front matter is invalid_front_matter naming the field, not internal", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Surrogates", slug: `surrogates-${unique()}` })
      for (
        const [yaml, path] of [["title: \"\\ud800\"", "title"], ["tags: [ok, \"\\udfff\"]", "tags[1]"], [
          "note: \"a\\ud83d\"",
          "note"
        ]]
      ) {
        const body = yield* error(owner.client, "push_markdown_file", {
          bucket: dock.id,
          page_slug: "odd",
          page_content: `---\n${yaml}\n---\nbody\n`
        })
        expect(body, yaml).toMatchObject({ code: "invalid_front_matter", status: 400, details: { path, line: 2 } })
      }
      expect(ok(yield* call(owner.client, "list_web_pages", { bucket: dock.id })).parts).toEqual([])
    }))

  it.scoped("push_markdown_file: front matter feeds the part and get_web_page's grounding, never placement or visibility", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const other = yield* createBucket(owner.client, { title: "Other", slug: "other" })
      const result = yield* push(owner.client, "push_markdown_file", { bucket: dock.id, page_content: HARBOUR })
      expect(result.action).toBe("created")
      expect(result).not.toHaveProperty("sanitization_warnings")
      expectPartShape(result.part)
      expect(result.part).toMatchObject({
        bucket_id: dock.id,
        title: "Harbour notes",
        slug: "harbour-notes",
        summary: "What the harbour looks like at dawn",
        content_type: "markdown",
        page_kind: "markdown_file",
        claim_count: 2,
        version: 1
      })
      const row = (yield* partRow(result.part.id))!
      expect(row).toMatchObject({
        dock_id: dock.id,
        visibility: null,
        content: HARBOUR,
        tags: ["coast", "boats"],
        concepts: ["tides"],
        source_ids: ["src-1", "src-2"],
        claim_count: 2
      })
      expect(row.entities).toEqual(expect.arrayContaining(["Lighthouse", "Lighthouse keeper"]))
      // `visibility: public` and `bucket: other` are data only
      expect(yield* dockVisibility(dock.id)).toBe("private")
      expect(yield* partsIn(other.id)).toBe(0)

      const read = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "harbour-notes" }))
      expect(read.content_type).toBe("markdown")
      expect(read.part.content).toBe(HARBOUR)
      expect(read.grounding).toMatchObject({
        tags: ["coast", "boats"],
        concepts: ["tides"],
        sources: ["src-1", "src-2"],
        links: ["Lighthouse keeper"],
        front_matter: { title: "Harbour notes", visibility: "public", bucket: "other" }
      })
      expect(read.grounding.entities).toEqual(expect.arrayContaining(["Lighthouse", "Lighthouse keeper"]))

      // page_slug (and page_title) win over front matter
      const overridden = yield* push(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_slug: "chosen",
        page_title: "Chosen title",
        page_content: HARBOUR
      })
      expect(overridden.part).toMatchObject({ slug: "chosen", title: "Chosen title", bucket_id: dock.id })
      expect(overridden.part.id).not.toBe(result.part.id)
      // no Dock named: the default Dock
      const untargeted = yield* push(owner.client, "push_markdown_file", {
        page_content: "---\ntitle: Home note\n---\nhi"
      })
      expect(untargeted.part).toMatchObject({ bucket_id: owner.user.default_bucket_id, slug: "home-note" })
      expect(yield* dockVisibility(dock.id)).toBe("private")
      expect(yield* partsIn(other.id)).toBe(0)
    }))

  // ---------------------------------------------------------------------------------------------------------
  // push_markdown

  it.scoped("push_markdown with a bucket behaves like push_markdown_file but front matter is optional", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer } = yield* cast
      const plain = yield* push(owner.client, "push_markdown", {
        bucket: dock.id,
        page_content: "# Plain page\n\nNo front matter."
      })
      expect(plain.part).toMatchObject({
        bucket_id: dock.id,
        title: "Plain page",
        slug: "plain-page",
        content_type: "markdown",
        page_kind: "markdown_file"
      })
      const again = yield* push(owner.client, "push_markdown", {
        bucket: dock.id,
        page_content: "# Plain page\n\nNo front matter."
      })
      expect(again).toMatchObject({ action: "unchanged", part: { id: plain.part.id, version: 1 } })
      const withFm = yield* push(owner.client, "push_markdown", { bucket: dock.id, page_content: HARBOUR })
      expect(withFm.part).toMatchObject({ slug: "harbour-notes", claim_count: 2 })
      for (const content of ["---js\nx\n---\nbody", "---\na: [\n---\nbody"]) {
        expect(yield* error(owner.client, "push_markdown", { bucket: dock.id, page_content: content })).toMatchObject({
          code: "invalid_front_matter",
          status: 400
        })
      }
      expect(yield* error(owner.client, "push_markdown", { bucket: dock.id, page_slug: "Bad Slug", page_content: "x" }))
        .toMatchObject({ code: "invalid_slug", status: 400 })
      expect(yield* error(viewer.client, "push_markdown", { bucket: dock.id, page_content: "x" })).toMatchObject({
        code: "permission_denied",
        status: 403
      })
      expect(yield* partsIn(dock.id)).toBe(2)
    }))

  it.scoped("push_markdown without a bucket makes a standalone part of the user's, in no Dock", () =>
    Effect.gen(function*() {
      const { owner } = yield* actor(MODERN).pipe(Effect.map((owner) => ({ owner })))
      const result = yield* push(owner.client, "push_markdown", { page_content: "# Loose thoughts\n\nStanding alone." })
      expect(result.action).toBe("created")
      expectPartShape(result.part)
      expect(result.part).toMatchObject({
        bucket_id: null,
        title: "Loose thoughts",
        content_type: "markdown",
        page_kind: "markdown_file",
        version: 1
      })
      const row = (yield* partRow(result.part.id))!
      expect(row).toMatchObject({
        dock_id: null,
        owner_id: owner.user.id,
        content: "# Loose thoughts\n\nStanding alone."
      })
      expect(yield* versionRows(result.part.id)).toMatchObject([{
        version: 1,
        reason: "created",
        user_id: owner.user.id
      }])
      const listed = ok(yield* call(owner.client, "list_web_pages", {})).parts
      expect(listed.map((p: any) => p.id)).not.toContain(result.part.id)
      expect(ok(yield* call(owner.client, "list_web_pages", { bucket: owner.user.default_bucket_id })).parts).toEqual(
        []
      )
      expect(yield* partsIn(owner.user.default_bucket_id)).toBe(0)
      // a write not scoped to a Dock: refused to read-only and Dock-restricted tokens (spec §5.5: a structured 403)
      const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), MODERN)
      expect(yield* error(readOnly, "push_markdown", { page_content: "# x" })).toMatchObject({
        code: "permission_denied",
        status: 403
      })
      const restricted = yield* connect(yield* tokenFor(owner.user, { docks: [owner.user.default_bucket_id] }), MODERN)
      expect(yield* error(restricted, "push_markdown", { page_content: "# x" })).toMatchObject({
        code: "permission_denied",
        status: 403
      })
      const standalone = yield* Effect.flatMap(
        TestServer,
        (server) =>
          server.sql<
            { n: number }
          >`select count(*)::int as n from parts where owner_id = ${owner.user.id} and dock_id is null`
      )
      expect(standalone[0]!.n).toBe(1)
      // front matter is optional but still checked
      expect(yield* error(owner.client, "push_markdown", { page_content: "---\nx: [\n---\nbody" })).toMatchObject({
        code: "invalid_front_matter"
      })
    }))

  // ---------------------------------------------------------------------------------------------------------
  // get_web_page

  it.scoped("get_web_page by UUID, slug and page_slug; native HTML is sanitized again, format text is the extracted text", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer, outsider } = yield* cast
      // stored unsanitized (as by an older sanitizer): native reads sanitize it again
      const seeded = yield* seedPage(owner.user, dock.id, "raw", {
        title: "Raw",
        content: `<p>Kept text</p><script>steal()</script><a href="javascript:alert(1)" onclick="x()">link</a>`,
        bodyText: "Kept text link"
      })
      const byId = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: seeded.part.id }))
      expect(Object.keys(byId).sort()).toEqual(["content_type", "grounding", "part"])
      expectPartShape(byId.part, true)
      expect(byId.content_type).toBe("html")
      expect(byId.part.content).toContain("Kept text")
      expect(byId.part.content.toLowerCase()).not.toContain("<script")
      expect(byId.part.content).not.toContain("javascript:")
      expect(byId.part.content).not.toContain("onclick")
      const bySlug = ok(
        yield* call(owner.client, "get_web_page", { bucket: pathOf(owner.user, dock), web_page: "raw" })
      )
      const byPageSlug = ok(yield* call(viewer.client, "get_web_page", { bucket: dock.id, page_slug: "raw" }))
      expect(bySlug).toEqual(byId)
      expect(byPageSlug).toEqual(byId)

      const text = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "raw", format: "text" }))
      expect(text.content_type).toBe("text")
      expect(text.part.content).toBe("Kept text link")

      const pushed = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "pushed",
        page_content: "<h2>Heading</h2><p>Body <b>bold</b></p>"
      })
      const pushedText = ok(
        yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: pushed.part.id, format: "text" })
      )
      expect(pushedText.part.content).toContain("Heading")
      expect(pushedText.part.content).toContain("bold")
      expect(pushedText.part.content).not.toContain("<")

      expect(yield* error(owner.client, "get_web_page", { bucket: dock.id, web_page: "missing" })).toMatchObject({
        code: "not_found",
        status: 404
      })
      expect(yield* error(owner.client, "get_web_page", { bucket: dock.id, web_page: crypto.randomUUID() }))
        .toMatchObject({
          code: "not_found"
        })
      expect(yield* error(owner.client, "get_web_page", { bucket: dock.id })).toMatchObject({
        code: "bad_request",
        status: 400
      })
      expect(yield* error(owner.client, "get_web_page", { bucket: dock.id, web_page: "raw", page_slug: "pushed" }))
        .toMatchObject({ code: "bad_request", status: 400 })
      // an outsider cannot tell a private Dock's page from a missing one
      const hidden = yield* error(outsider.client, "get_web_page", { bucket: dock.id, web_page: seeded.part.id })
      expect(hidden).toMatchObject({ code: "not_found", status: 404 })
      expect(yield* error(outsider.client, "get_web_page", { bucket: dock.id, web_page: "missing" })).toEqual(hidden)
      expect(yield* error(owner.client, "get_web_page", { bucket: dock.id, web_page: "raw", format: "pdf" }))
        .toMatchObject({
          code: "validation_error"
        })
    }))

  it.scoped("get_web_page and list_web_pages: anonymous reads of a public Dock over /mcp/public; the grounding Dock when none is named", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const open = yield* createBucket(owner.client, { title: "Open", slug: `open-${unique()}`, visibility: "public" })
      yield* push(owner.client, "push_web_page", {
        bucket: open.id,
        page_slug: "hello",
        page_content: "<p>Hello world</p>"
      })
      const anonymous = yield* connectPublic(MODERN)
      const read = ok(yield* call(anonymous, "get_web_page", { bucket: pathOf(owner.user, open), web_page: "hello" }))
      expect(read.part).toMatchObject({ slug: "hello", bucket_id: open.id, content: "<p>Hello world</p>" })
      expect(ok(yield* call(anonymous, "list_web_pages", { bucket: open.id })).parts.map((p: any) => p.slug)).toEqual([
        "hello"
      ])
      const closed = yield* createBucket(owner.client, { title: "Closed", slug: `closed-${unique()}` })
      yield* push(owner.client, "push_web_page", {
        bucket: closed.id,
        page_slug: "hello",
        page_content: "<p>secret</p>"
      })
      expect(yield* error(anonymous, "get_web_page", { bucket: closed.id, web_page: "hello" })).toMatchObject({
        code: "not_found"
      })

      // grounding: untargeted reads use the set_grounding_bucket Dock
      const reader = yield* actor(MODERN)
      yield* push(reader.client, "push_web_page", { page_slug: "mine", page_content: "<p>my default</p>" })
      expect(ok(yield* call(reader.client, "get_web_page", { page_slug: "mine" })).part.bucket_id).toBe(
        reader.user.default_bucket_id
      )
      ok(yield* call(reader.client, "set_grounding_bucket", { bucket_path: pathOf(owner.user, open) }))
      const grounded = ok(yield* call(reader.client, "get_web_page", { page_slug: "hello" }))
      expect(grounded.part).toMatchObject({ bucket_id: open.id, slug: "hello" })
      expect(ok(yield* call(reader.client, "list_web_pages", {})).parts.map((p: any) => p.bucket_id)).toEqual([open.id])
      expect(yield* error(reader.client, "get_web_page", { page_slug: "mine" })).toMatchObject({ code: "not_found" })
      // a named Dock beats the grounding
      expect(
        ok(yield* call(reader.client, "get_web_page", { bucket: reader.user.default_bucket_id, page_slug: "mine" }))
          .part.slug
      )
        .toBe("mine")
    }))

  // ---------------------------------------------------------------------------------------------------------
  // list_web_pages

  it.scoped("list_web_pages: the listed fields, alphabetical (deterministic) and recent order, limit 1-100", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { dock, owner, viewer, outsider } = yield* cast
      const charlie = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_title: "Charlie",
        page_content: "<p>c</p>"
      })
      const alpha = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_title: "alpha",
        page_content: "<p>a</p>"
      })
      const bravo = yield* push(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_content: "---\ntitle: Bravo\nsummary: B for bravo\nclaims: [one, two, three]\n---\nbody"
      })
      // distinct, known update times: recent order is then certain
      const at = (minutes: number) => new Date(Date.UTC(2030, 0, 1, 0, minutes))
      yield* server.sql`update parts set updated_at = ${at(1)} where id = ${alpha.part.id}`
      yield* server.sql`update parts set updated_at = ${at(3)} where id = ${charlie.part.id}`
      yield* server.sql`update parts set updated_at = ${at(2)} where id = ${bravo.part.id}`

      const listed = ok(yield* call(owner.client, "list_web_pages", { bucket: dock.id })).parts
      expect(Object.keys(listed[0]).sort()).toEqual(PART_KEYS)
      expect(listed.map((p: any) => p.title)).toEqual(["alpha", "Bravo", "Charlie"])
      expect(ok(yield* call(owner.client, "list_web_pages", { bucket: dock.id, sort: "alphabetical" })).parts).toEqual(
        listed
      )
      expect(listed[1]).toMatchObject({
        slug: "bravo",
        summary: "B for bravo",
        content_type: "markdown",
        page_kind: "markdown_file",
        claim_count: 3,
        last_updated: at(2).toISOString()
      })
      expect(listed[0]).toMatchObject({ slug: "alpha", content_type: "html", page_kind: "web_page", claim_count: 0 })

      const recent = ok(yield* call(owner.client, "list_web_pages", { bucket: dock.id, sort: "recent" })).parts
      expect(recent.map((p: any) => p.title)).toEqual(["Charlie", "Bravo", "alpha"])
      expect(
        ok(yield* call(owner.client, "list_web_pages", { bucket: dock.id, limit: 2 })).parts.map((p: any) => p.title)
      )
        .toEqual(["alpha", "Bravo"])
      expect(ok(yield* call(viewer.client, "list_web_pages", { bucket: dock.id, limit: 100 })).parts).toEqual(listed)
      for (const limit of [0, 101, 1.5, -1]) {
        expect(yield* error(owner.client, "list_web_pages", { bucket: dock.id, limit })).toMatchObject({
          code: "validation_error",
          status: 400
        })
      }
      expect(yield* error(owner.client, "list_web_pages", { bucket: dock.id, sort: "oldest" })).toMatchObject({
        code: "validation_error"
      })
      expect(yield* error(outsider.client, "list_web_pages", { bucket: dock.id })).toMatchObject({
        code: "not_found",
        status: 404
      })
      expect(yield* error(owner.client, "list_web_pages", { bucket: crypto.randomUUID() })).toMatchObject({
        code: "not_found"
      })
      // the deprecated slug alias with owner_username
      expect(
        ok(
          yield* call(viewer.client, "list_web_pages", { bucket_slug: dock.slug, owner_username: owner.user.username })
        ).parts
      )
        .toEqual(listed)
      expect(
        yield* error(outsider.client, "list_web_pages", { bucket_slug: dock.slug, owner_username: owner.user.username })
      )
        .toMatchObject({ code: "not_found" })
    }))

  // ---------------------------------------------------------------------------------------------------------
  // versions

  for (const family of ["web_page", "markdown_file"] as const) {
    const pushTool = family === "web_page" ? "push_web_page" : "push_markdown_file"
    const body = (n: number) =>
      family === "web_page" ? `<p>Edition ${n}</p>` : `---\ntitle: Edition\n---\nEdition ${n}\n`

    it.scoped(`${family} versions: listed with author and reason, read back, restored as a new version without rewriting history`, () =>
      Effect.gen(function*() {
        const { dock, owner, viewer, editor, outsider } = yield* cast
        const label = `agent-${unique()}`
        const agent = yield* connect((yield* labelledToken(editor.user, label)).token, MODERN)
        const v1 = yield* push(owner.client, pushTool, { bucket: dock.id, page_slug: "edition", page_content: body(1) })
        const v2 = yield* push(agent, pushTool, { bucket: dock.id, page_slug: "edition", page_content: body(2) })
        expect(v2).toMatchObject({ action: "updated", part: { id: v1.part.id, version: 2 } })
        const ref = { bucket: dock.id, [family]: "edition" }

        const listed = ok(yield* call(viewer.client, `list_${family}_versions`, ref)).versions
        expect(listed.map((v: any) => [v.version, v.reason, v.restored_from])).toEqual([[1, "created", null], [
          2,
          "updated",
          null
        ]])
        // Members (the viewer here) also see which token wrote each version.
        expect(listed[0].author).toEqual({
          user_id: owner.user.id,
          username: owner.user.username,
          agent_label: null,
          token_id: expect.stringMatching(/^[0-9a-f-]{36}$/)
        })
        expect(listed[1].author).toEqual({
          user_id: editor.user.id,
          username: editor.user.username,
          agent_label: label,
          token_id: expect.stringMatching(/^[0-9a-f-]{36}$/)
        })
        expect(listed[0]).toMatchObject({ content_type: family === "web_page" ? "html" : "markdown" })
        expect(listed[0].size_bytes).toBe(new TextEncoder().encode(body(1)).byteLength)
        expect(
          ok(yield* call(owner.client, `list_${family}_versions`, { bucket: dock.id, [family]: v1.part.id })).versions
        )
          .toEqual(listed)

        const old = ok(yield* call(owner.client, `get_${family}_version`, { ...ref, version: 1 }))
        expect(old).toEqual({ version: 1, content: body(1) })
        expect(ok(yield* call(viewer.client, `get_${family}_version`, { ...ref, version: 2 })).content).toBe(body(2))
        expect(yield* error(owner.client, `get_${family}_version`, { ...ref, version: 9 })).toMatchObject({
          code: "not_found",
          status: 404
        })
        for (const version of [0, -1, 1.5]) {
          expect(yield* error(owner.client, `get_${family}_version`, { ...ref, version })).toMatchObject({
            code: "validation_error",
            status: 400
          })
          expect(yield* error(owner.client, `restore_${family}_version`, { ...ref, version })).toMatchObject({
            code: "validation_error",
            status: 400
          })
        }
        expect(yield* error(owner.client, `list_${family}_versions`, { bucket: dock.id, [family]: "nope" }))
          .toMatchObject({
            code: "not_found"
          })
        expect(yield* error(outsider.client, `list_${family}_versions`, ref)).toMatchObject({
          code: "not_found",
          status: 404
        })
        expect(yield* error(outsider.client, `get_${family}_version`, { ...ref, version: 1 })).toMatchObject({
          code: "not_found"
        })

        const before = yield* versionRows(v1.part.id)
        expect(yield* error(viewer.client, `restore_${family}_version`, { ...ref, version: 1 })).toMatchObject({
          code: "permission_denied",
          status: 403
        })
        expect(yield* error(outsider.client, `restore_${family}_version`, { ...ref, version: 1 })).toMatchObject({
          code: "not_found"
        })
        const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), MODERN)
        expect(yield* error(readOnly, `restore_${family}_version`, { ...ref, version: 1 })).toMatchObject({
          code: "permission_denied"
        })
        expect(yield* error(owner.client, `restore_${family}_version`, { ...ref, version: 7 })).toMatchObject({
          code: "not_found"
        })
        expect(yield* versionRows(v1.part.id)).toEqual(before)

        const restored = ok(yield* call(owner.client, `restore_${family}_version`, { ...ref, version: 1 }))
        expect(Object.keys(restored)).toEqual(["part"])
        expectPartShape(restored.part)
        expect(restored.part).toMatchObject({ id: v1.part.id, version: 3, slug: "edition", bucket_id: dock.id })
        const after = yield* versionRows(v1.part.id)
        expect(after.slice(0, 2)).toEqual(before)
        expect(after[2]).toMatchObject({
          version: 3,
          reason: "restored",
          restored_from: 1,
          content: before[0]!.content,
          user_id: owner.user.id
        })
        expect((yield* partRow(v1.part.id))!).toMatchObject({ version: 3, content: before[0]!.content })
        expect(ok(yield* call(owner.client, `get_${family}_version`, { ...ref, version: 3 })).content).toBe(body(1))
        const relisted = ok(yield* call(owner.client, `list_${family}_versions`, ref)).versions
        expect(relisted.slice(0, 2)).toEqual(listed)
        expect(relisted[2]).toMatchObject({ version: 3, reason: "restored", restored_from: 1 })
        const restoredActivity = (yield* activityOf(v1.part.id)).find((a) => a.action === "page.restored")
        expect(restoredActivity).toMatchObject({ dock_id: dock.id, details: { version: 3, restored_from: 1 } })
        // the editor may restore too
        expect(ok(yield* call(editor.client, `restore_${family}_version`, { ...ref, version: 2 })).part.version).toBe(4)
      }))
  }

  it.scoped("12 parallel pushes to one slug: each answer is the version it wrote (2..13, each with its own content)", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Race", slug: `race-${unique()}` })
      const writers = yield* Effect.forEach(
        [0, 1, 2, 3],
        () => Effect.flatMap(tokenFor(owner.user), (token) => connect(token, MODERN))
      )
      const body = (n: number) => `# Edition ${n}\n\nwritten by push ${n}\n`
      yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "race",
        content_type: "markdown",
        page_content: body(0)
      })
      const answers = yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => i + 1),
        (n) =>
          Effect.map(
            push(writers[n % writers.length]!, "push_web_page", {
              bucket: dock.id,
              page_slug: "race",
              content_type: "markdown",
              page_content: body(n)
            }),
            (answer) => ({ n, version: answer.part.version as number, action: answer.action })
          ),
        { concurrency: "unbounded" }
      )
      expect(answers.every((answer) => answer.action === "updated")).toBe(true)
      expect(answers.map((answer) => answer.version).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 12 }, (_, i) => i + 2)
      )
      // the version each push was told holds exactly what that push wrote
      for (const answer of answers) {
        const stored = ok(
          yield* call(owner.client, "get_web_page_version", {
            bucket: dock.id,
            web_page: "race",
            version: answer.version
          })
        )
        expect(stored.content, `push ${answer.n} was told version ${answer.version}`).toBe(body(answer.n))
      }
    }))

  // Found by the fuzzer (issue 19): 2^31 is a valid version argument (a safe integer of at least 1) but past the
  // column's integer type, and the statement comparing them failed: `internal`.
  it.scoped("a version number past 2^31 - 1 is a version the page does not have (not_found), never internal", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* push(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_slug: "tall",
        page_content: "---\ntitle: Tall\n---\nOne"
      })
      for (const version of [2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
        for (const tool of ["get_web_page_version", "restore_web_page_version"]) {
          expect(yield* error(owner.client, tool, { bucket: dock.id, web_page: "tall", version })).toEqual({
            code: "not_found",
            status: 404,
            message: `Page "tall" has no version ${version}`
          })
        }
        for (const tool of ["get_markdown_file_version", "restore_markdown_file_version"]) {
          expect((yield* error(owner.client, tool, { bucket: dock.id, markdown_file: "tall", version })).code).toBe(
            "not_found"
          )
        }
      }
      // the largest number the column holds is still asked for (and is simply absent)
      expect(
        (yield* error(owner.client, "get_web_page_version", {
          bucket: dock.id,
          web_page: "tall",
          version: 2 ** 31 - 1
        }))
          .code
      ).toBe("not_found")
    }))

  it.scoped("restore_web_page_version brings back the old version's extracted text (format text, search)", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      // an HTML page: format "text" (and search) must follow the restored content
      const page = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "tide",
        page_content: "<p>Old tide text</p>"
      })
      yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "tide",
        page_content: "<p>New tide text</p>"
      })
      ok(yield* call(owner.client, "restore_web_page_version", { bucket: dock.id, web_page: "tide", version: 1 }))
      const text = ok(
        yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: page.part.id, format: "text" })
      )
      expect(text.part.content).toBe("Old tide text")
      expect((yield* partRow(page.part.id))!.body_text).toBe("Old tide text")
    }))

  it.scoped("restore_markdown_file_version brings back the old document's claim_count, tags, sources and links", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      // the front matter of the restored document is what the part and grounding show
      const v1 = "---\ntitle: Facts\ntags: [old]\nclaims: [one]\nsources: [s-old]\n---\nOld body [[Old link]]\n"
      const v2 =
        "---\ntitle: Facts\ntags: [new]\nclaims: [one, two, three]\nsources: [s-new]\n---\nNew body [[New link]]\n"
      const file = yield* push(owner.client, "push_markdown_file", { bucket: dock.id, page_content: v1 })
      expect(file.part.claim_count).toBe(1)
      expect((yield* push(owner.client, "push_markdown_file", { bucket: dock.id, page_content: v2 })).part.claim_count)
        .toBe(3)
      const restored = ok(
        yield* call(owner.client, "restore_markdown_file_version", {
          bucket: dock.id,
          markdown_file: "facts",
          version: 1
        })
      )
      expect(restored.part).toMatchObject({ version: 3, claim_count: 1 })
      const read = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "facts" }))
      expect(read.part.content).toBe(v1)
      expect(read.grounding).toMatchObject({ tags: ["old"], sources: ["s-old"], links: ["Old link"] })
      expect(
        ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "facts", format: "text" })).part
          .content
      )
        .toContain("Old body")
    }))

  // ---------------------------------------------------------------------------------------------------------
  // get_markdown_file / list_markdown_files

  it.scoped("get_markdown_file returns the complete document; list_markdown_files lists only Markdown files, alphabetically", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer, outsider } = yield* cast
      const file = yield* push(owner.client, "push_markdown_file", { bucket: dock.id, page_content: HARBOUR })
      yield* push(owner.client, "push_markdown_file", { bucket: dock.id, page_content: "---\ntitle: Anchors\n---\nx" })
      yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_title: "Aardvark page",
        page_content: "<p>w</p>"
      })

      const got = ok(
        yield* call(viewer.client, "get_markdown_file", { bucket: dock.id, markdown_file: "harbour-notes" })
      )
      expect(Object.keys(got)).toEqual(["part"])
      expectPartShape(got.part, true)
      expect(got.part).toMatchObject({ id: file.part.id, content: HARBOUR, page_kind: "markdown_file", claim_count: 2 })
      expect(
        ok(
          yield* call(owner.client, "get_markdown_file", {
            bucket: pathOf(owner.user, dock),
            markdown_file: file.part.id
          })
        )
      )
        .toEqual(got)
      expect(yield* error(owner.client, "get_markdown_file", { bucket: dock.id, markdown_file: "nope" })).toMatchObject(
        {
          code: "not_found",
          status: 404
        }
      )
      expect(yield* error(outsider.client, "get_markdown_file", { bucket: dock.id, markdown_file: "harbour-notes" }))
        .toMatchObject({ code: "not_found", status: 404 })

      const listed = ok(yield* call(owner.client, "list_markdown_files", { bucket: dock.id })).parts
      expect(listed.map((p: any) => p.title)).toEqual(["Anchors", "Harbour notes"])
      for (const part of listed) expect(Object.keys(part).sort()).toEqual(PART_KEYS)
      expect(yield* error(outsider.client, "list_markdown_files", { bucket: dock.id })).toMatchObject({
        code: "not_found"
      })
      expect(yield* error(owner.client, "list_markdown_files", {})).toMatchObject({ code: "validation_error" })
    }))

  // ---------------------------------------------------------------------------------------------------------
  // delete_web_page / delete_markdown_file

  it.scoped("delete_web_page: owners and editors delete (versions too); viewers are refused, outsiders see nothing", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer, editor, outsider } = yield* cast
      const first = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "first",
        page_content: "<p>1</p>"
      })
      yield* push(owner.client, "push_web_page", { bucket: dock.id, page_slug: "first", page_content: "<p>1b</p>" })
      const second = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "second",
        page_content: "<p>2</p>"
      })

      expect(yield* error(owner.client, "delete_web_page", { web_page: "first" })).toMatchObject({
        code: "bad_request",
        status: 400
      })
      expect(yield* error(owner.client, "delete_web_page", { bucket: dock.id })).toMatchObject({
        code: "bad_request",
        status: 400
      })
      expect(yield* error(viewer.client, "delete_web_page", { bucket: dock.id, web_page: "first" })).toMatchObject({
        code: "permission_denied",
        status: 403
      })
      expect(yield* error(outsider.client, "delete_web_page", { bucket: dock.id, web_page: "first" })).toMatchObject({
        code: "not_found",
        status: 404
      })
      const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), MODERN)
      expect(yield* error(readOnly, "delete_web_page", { bucket: dock.id, web_page: "first" })).toMatchObject({
        code: "permission_denied"
      })
      expect(yield* partsIn(dock.id)).toBe(2)

      expect(ok(yield* call(owner.client, "delete_web_page", { bucket: dock.id, web_page: first.part.id }))).toEqual({
        ok: true
      })
      expect(yield* partRow(first.part.id)).toBeUndefined()
      expect(yield* versionRows(first.part.id)).toEqual([])
      expect(yield* error(owner.client, "get_web_page", { bucket: dock.id, web_page: "first" })).toMatchObject({
        code: "not_found"
      })
      expect((yield* activityOf(first.part.id)).at(-1)).toMatchObject({
        action: "page.deleted",
        dock_id: dock.id,
        user_id: owner.user.id,
        details: { slug: "first" }
      })
      expect(yield* error(owner.client, "delete_web_page", { bucket: dock.id, web_page: "first" })).toMatchObject({
        code: "not_found",
        status: 404
      })

      expect(
        ok(
          yield* call(editor.client, "delete_web_page", { bucket_path: pathOf(owner.user, dock), page_slug: "second" })
        )
      )
        .toEqual({ ok: true })
      expect(yield* partRow(second.part.id)).toBeUndefined()
      expect(ok(yield* call(owner.client, "list_web_pages", { bucket: dock.id })).parts).toEqual([])
    }))

  it.scoped("delete_markdown_file: owners and editors delete; viewers get permission_denied, outsiders not_found", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer, editor, outsider } = yield* cast
      const one = yield* push(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_content: "---\ntitle: One\n---\n1"
      })
      const two = yield* push(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_content: "---\ntitle: Two\n---\n2"
      })
      const args = { bucket: dock.id, markdown_file: "one" }
      expect(yield* error(viewer.client, "delete_markdown_file", args)).toMatchObject({
        code: "permission_denied",
        status: 403
      })
      expect(yield* error(outsider.client, "delete_markdown_file", args)).toMatchObject({
        code: "not_found",
        status: 404
      })
      expect(yield* partsIn(dock.id)).toBe(2)
      expect(ok(yield* call(owner.client, "delete_markdown_file", args))).toEqual({ ok: true })
      expect(yield* partRow(one.part.id)).toBeUndefined()
      expect(yield* error(owner.client, "get_markdown_file", args)).toMatchObject({ code: "not_found" })
      expect(yield* error(owner.client, "delete_markdown_file", args)).toMatchObject({ code: "not_found", status: 404 })
      expect(ok(yield* call(editor.client, "delete_markdown_file", { bucket: dock.id, markdown_file: two.part.id })))
        .toEqual({
          ok: true
        })
      expect(ok(yield* call(owner.client, "list_markdown_files", { bucket: dock.id })).parts).toEqual([])
    }))

  it.scoped("the Markdown file tools see only Markdown files: a web page is not_found to them and left untouched", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const page = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "web",
        page_content: "<p>w</p>"
      })
      const markdownPage = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "web-md",
        content_type: "markdown",
        page_content: "# w"
      })
      for (const ref of ["web", page.part.id, "web-md"]) {
        const args = { bucket: dock.id, markdown_file: ref }
        const missing = { code: "not_found", status: 404, message: `No Markdown file "${ref}" in this Dock` }
        expect(yield* error(owner.client, "get_markdown_file", args)).toEqual(missing)
        expect(yield* error(owner.client, "delete_markdown_file", args)).toEqual(missing)
        expect(yield* error(owner.client, "list_markdown_file_versions", args)).toEqual(missing)
        expect(yield* error(owner.client, "get_markdown_file_version", { ...args, version: 1 })).toEqual(missing)
        expect(yield* error(owner.client, "restore_markdown_file_version", { ...args, version: 1 })).toEqual(missing)
      }
      expect(yield* partRow(page.part.id)).toMatchObject({ version: 1, page_kind: "web_page" })
      expect(yield* partRow(markdownPage.part.id)).toMatchObject({ version: 1, page_kind: "web_page" })
      expect(ok(yield* call(owner.client, "list_markdown_files", { bucket: dock.id })).parts).toEqual([])
      // The web page tools still read every kind, Markdown files included.
      const file = yield* push(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_content: "---\ntitle: F\n---\nf"
      })
      expect(ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: file.part.id })).part.id).toBe(
        file.part.id
      )
    }))

  // ---------------------------------------------------------------------------------------------------------
  // every era: a smoke subset

  for (const era of ERAS) {
    it.scoped(`${era}: push, read, list, version, restore and delete a page and a Markdown file`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const dock = yield* createBucket(owner.client, { title: "Smoke", slug: `smoke-${unique()}` })
        const page = yield* push(owner.client, "push_web_page", {
          bucket: dock.id,
          page_slug: "page",
          page_content: "<p>one</p><script>x()</script>"
        })
        expect(page.action).toBe("created")
        expect(page.sanitization_warnings!.length).toBeGreaterThan(0)
        yield* push(owner.client, "push_web_page", { bucket: dock.id, page_slug: "page", page_content: "<p>two</p>" })
        const read = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "page" }))
        expect(read.part).toMatchObject({ version: 2, content: "<p>two</p>" })
        expect(
          ok(yield* call(owner.client, "get_web_page_version", { bucket: dock.id, web_page: "page", version: 1 }))
            .content
        )
          .not.toContain("script")
        const restored = ok(
          yield* call(owner.client, "restore_web_page_version", { bucket: dock.id, web_page: "page", version: 1 })
        )
        expect(restored.part.version).toBe(3)
        expect(
          ok(yield* call(owner.client, "list_web_page_versions", { bucket: dock.id, web_page: "page" })).versions.length
        ).toBe(3)

        const file = yield* push(owner.client, "push_markdown_file", { bucket: dock.id, page_content: HARBOUR })
        expect(file.part).toMatchObject({ slug: "harbour-notes", claim_count: 2 })
        expect(
          refused(yield* call(owner.client, "push_markdown_file", { bucket: dock.id, page_content: "no front matter" }))
            .error
        )
          .toMatchObject({ code: "invalid_front_matter", status: 400 })
        expect(ok(yield* call(owner.client, "list_web_pages", { bucket: dock.id })).parts.map((p: any) => p.slug))
          .toEqual([
            "harbour-notes",
            "page"
          ])
        expect(refused(yield* call(owner.client, "list_web_pages", { bucket: dock.id, limit: 101 })).error.code).toBe(
          "validation_error"
        )
        expect(
          ok(yield* call(owner.client, "delete_markdown_file", { bucket: dock.id, markdown_file: "harbour-notes" }))
        )
          .toEqual({ ok: true })
        expect(ok(yield* call(owner.client, "delete_web_page", { bucket: dock.id, web_page: "page" }))).toEqual({
          ok: true
        })
        expect(refused(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "page" })).error.code)
          .toBe(
            "not_found"
          )
        const standalone = yield* push(owner.client, "push_markdown", { page_content: "# Alone" })
        expect(standalone.part.bucket_id).toBeNull()
      }))
  }
})
