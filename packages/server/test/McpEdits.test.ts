/**
 * Patch edits over the wire (issue 18, item 4): edit_markdown_file and edit_web_page with a real MCP client.
 * Each operation, one new version per edit (or `unchanged`), all or none, the push's sanitizing and limits,
 * not-found and ambiguous matches named by operation, broken front matter, permissions, and base_version.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Era } from "./support/McpClients.ts"
import {
  call,
  cast as castOf,
  connect,
  listedTool,
  ok,
  pushed as push,
  refused,
  tokenFor,
  toolError as error
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"
const MIB = 1_048_576

const cast = castOf("Edits", MODERN)

const GUIDE = [
  "---",
  "# kept comment",
  "title: Guide",
  "tags: [setup, docs]",
  "status: draft",
  "---",
  "# Guide",
  "",
  "Intro text.",
  "",
  "## Setup",
  "",
  "```sh",
  "## Install",
  "```",
  "",
  "### Install",
  "",
  "Old install steps.",
  "",
  "## Usage",
  "",
  "Use it daily.",
  ""
].join("\n")

/** The GUIDE pushed as a Markdown file with this slug: the page most tests edit. */
const pushGuide = (client: Parameters<typeof push>[0], bucket: string, slug: string) =>
  push(client, "push_markdown_file", { bucket, page_slug: slug, page_content: GUIDE })

const versionsOf = (partId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ version: number; content: string; reason: string }>`select version, content, reason
      from part_versions where part_id = ${partId} order by version`
  )

const stored = (partId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ version: number; content: string; title: string | null; slug: string; tags: Array<string> }>`
      select version, content, title, slug, tags from parts where id = ${partId}`.pipe(
        Effect.map((rows) => rows[0]!)
      )
  )

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("patch edits over MCP", (it) => {
  it.scoped("tools/list shows both edit tools with complete schemas, write annotations, after the spec tools", () =>
    Effect.gen(function*() {
      const { owner } = yield* cast
      const { tools } = yield* Effect.promise(() => owner.client.listTools())
      const names = tools.map((tool) => tool.name)
      // After the 47 spec tools, which keep their order (issue 18's tools are additions).
      expect(names.indexOf("edit_web_page")).toBeGreaterThan(names.indexOf("read_source"))
      expect(names.indexOf("edit_markdown_file")).toBe(names.indexOf("edit_web_page") + 1)
      const markdown = (yield* listedTool(owner.client, "edit_markdown_file"))!
      expect(markdown.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false })
      expect(markdown.inputSchema).toMatchObject({
        type: "object",
        required: ["bucket", "markdown_file", "operations"],
        properties: { operations: { type: "array", minItems: 1, maxItems: 100 }, base_version: { type: "integer" } }
      })
      const ops = (markdown.inputSchema.properties!["operations"] as { items: { anyOf: Array<any> } }).items.anyOf
      expect(ops.map((op) => op.properties.op.enum[0]).sort()).toEqual([
        "delete_front_matter",
        "insert_text",
        "replace_section",
        "replace_text",
        "set_front_matter"
      ])
      const web = (yield* listedTool(owner.client, "edit_web_page"))!
      const webOps = (web.inputSchema.properties!["operations"] as { items: { anyOf: Array<any> } }).items.anyOf
      expect(webOps.map((op) => op.properties.op.enum[0]).sort()).toEqual(["insert_text", "replace_text"])
      expect(JSON.stringify([markdown.inputSchema, web.inputSchema])).not.toContain("$ref")
      const described = tools.filter((tool) => tool.name.startsWith("edit_")).map((tool) =>
        (tool as { description?: string }).description
      )
      expect(described.every((text) => text?.includes("Example:"))).toBe(true)
    }))

  it.scoped("edit_markdown_file: every operation in one call makes one new version, fields derived again", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const created = yield* pushGuide(owner.client, dock.id, "guide")
      const edited = ok(
        yield* call(owner.client, "edit_markdown_file", {
          bucket: dock.id,
          markdown_file: "guide",
          operations: [
            { op: "replace_section", heading: "Setup > Install", content: "Run `npm ci`, then `npm start`." },
            { op: "replace_text", find: "Intro text.", replace: "Welcome." },
            { op: "insert_text", after: "Use it daily.", text: "\n\nAnd weekly." },
            { op: "set_front_matter", key: "tags", value: ["setup", "docs", "howto"] },
            { op: "set_front_matter", key: "title", value: "Handbook" },
            { op: "delete_front_matter", key: "status" }
          ]
        })
      )
      expect(Object.keys(edited).sort()).toEqual(["action", "part", "warnings"])
      expect(edited.action).toBe("updated")
      expect(edited.part).toMatchObject({ id: created.part.id, slug: "guide", version: 2, title: "Handbook" })
      const row = yield* stored(created.part.id)
      expect(row.content).toBe(
        [
          "---",
          "# kept comment",
          "title: Handbook",
          "tags: [setup, docs, howto]",
          "---",
          "# Guide",
          "",
          "Welcome.",
          "",
          "## Setup",
          "",
          "```sh",
          "## Install",
          "```",
          "",
          "### Install",
          "",
          "Run `npm ci`, then `npm start`.",
          "",
          "## Usage",
          "",
          "Use it daily.",
          "",
          "And weekly.",
          ""
        ].join("\n")
      )
      expect(row.tags).toEqual(["setup", "docs", "howto"])
      const versions = yield* versionsOf(created.part.id)
      expect(versions.map((version) => [version.version, version.reason])).toEqual([[1, "created"], [2, "updated"]])
      expect(versions[1]!.content).toBe(row.content)
    }))

  it.scoped("edit_markdown_file keeps a title given as page_title; the document's own title follows the edit", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const named = yield* push(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_slug: "named",
        page_title: "Chosen title",
        page_content: GUIDE
      })
      const kept = ok(
        yield* call(owner.client, "edit_markdown_file", {
          bucket: dock.id,
          markdown_file: named.part.id,
          operations: [{ op: "set_front_matter", key: "title", value: "Other" }]
        })
      )
      expect(kept.part.title).toBe("Chosen title")
      // push_markdown (no front matter) makes a Markdown file titled by its first heading; an edit may remove the
      // front matter it never had, and the heading's new text is the title
      const plain = yield* push(owner.client, "push_markdown", {
        bucket: dock.id,
        page_slug: "plain",
        page_content: "# First\n\nBody.\n"
      })
      expect(plain.part.title).toBe("First")
      const retitled = ok(
        yield* call(owner.client, "edit_markdown_file", {
          bucket: dock.id,
          markdown_file: "plain",
          operations: [{ op: "replace_text", find: "# First", replace: "# Second" }]
        })
      )
      expect(retitled.part).toMatchObject({ title: "Second", slug: "plain", version: 2 })
    }))

  it.scoped("edit_web_page edits the stored HTML; a <script> it brings is sanitized away with sanitization_warnings", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const page = yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_title: "Home",
        page_content: "<h1>Home</h1><p>Draft</p>"
      })
      const edited = ok(
        yield* call(owner.client, "edit_web_page", {
          bucket: dock.id,
          web_page: "home",
          operations: [
            { op: "replace_text", find: "<p>Draft</p>", replace: "<p>Final</p>" },
            { op: "insert_text", after: "<h1>Home</h1>", text: "<p>Welcome.</p><script>alert(1)</script>" }
          ]
        })
      )
      expect(edited.action).toBe("updated")
      expect(edited.sanitization_warnings.length).toBeGreaterThan(0)
      expect(edited.part).toMatchObject({ id: page.part.id, title: "Home", slug: "home", version: 2 })
      const row = yield* stored(page.part.id)
      expect(row.content).toBe("<h1>Home</h1><p>Welcome.</p><p>Final</p>")
      expect(yield* versionsOf(page.part.id)).toHaveLength(2)
      // a web page takes the text operations only: the schema refuses the others
      const section = yield* error(owner.client, "edit_web_page", {
        bucket: dock.id,
        web_page: "home",
        operations: [{ op: "replace_section", heading: "Home", content: "x" }]
      })
      expect(section.code).toBe("validation_error")
    }))

  it.scoped("edit_web_page on a Markdown web page edits its Markdown", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* push(owner.client, "push_web_page", {
        bucket: dock.id,
        page_slug: "md",
        content_type: "markdown",
        page_content: "# Notes\n\nOne.\n"
      })
      const edited = ok(
        yield* call(owner.client, "edit_web_page", {
          bucket: dock.id,
          web_page: "md",
          operations: [{ op: "insert_text", after: "One.", text: "\n\nTwo." }]
        })
      )
      expect(edited.part).toMatchObject({ content_type: "markdown", version: 2 })
      expect((yield* stored(edited.part.id)).content).toBe("# Notes\n\nOne.\n\nTwo.\n")
    }))

  it.scoped("a find or heading that matches nowhere or more than once is validation_error naming it; nothing changes", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const page = yield* push(owner.client, "push_markdown_file", {
        bucket: dock.id,
        page_slug: "g",
        page_content: GUIDE + "\n## More\n\n### Install\n\nAgain.\n"
      })
      const args = (operations: Array<Record<string, unknown>>) => ({ bucket: dock.id, markdown_file: "g", operations })
      const missing = yield* error(
        owner.client,
        "edit_markdown_file",
        args([{ op: "replace_text", find: "Intro", replace: "Hi" }, {
          op: "replace_text",
          find: "nowhere",
          replace: ""
        }])
      )
      expect(missing).toMatchObject({
        code: "validation_error",
        status: 400,
        message: "operations[1] (replace_text): find \"nowhere\" matches nowhere in the page (the match is exact)",
        details: { operation: 1, field: "find", matches: 0 }
      })
      const twice = yield* error(
        owner.client,
        "edit_markdown_file",
        args([{ op: "insert_text", before: "Install", text: "x" }])
      )
      expect(twice.message).toContain("operations[0] (insert_text): before \"Install\" matches 3 times")
      const heading = yield* error(
        owner.client,
        "edit_markdown_file",
        args([{ op: "replace_section", heading: "Install", content: "x" }])
      )
      expect(heading.message).toBe(
        "operations[0] (replace_section): heading \"Install\" matches 2 headings (Guide > Setup > Install; " +
          "Guide > More > Install); give more of its path, such as \"Parent > Heading\""
      )
      const none = yield* error(
        owner.client,
        "edit_markdown_file",
        args([{ op: "replace_section", heading: "Nope", content: "x" }])
      )
      expect(none.message).toContain(
        "heading \"Nope\" matches no heading of the document; its headings: Guide; Guide > Setup"
      )
      const gone = yield* error(owner.client, "edit_markdown_file", args([{ op: "delete_front_matter", key: "nope" }]))
      expect(gone.message).toBe("operations[0] (delete_front_matter): key \"nope\" is not in the front matter")
      expect(yield* versionsOf(page.part.id)).toHaveLength(1)
      expect((yield* stored(page.part.id)).content).toBe(GUIDE + "\n## More\n\n### Install\n\nAgain.\n")
    }))

  it.scoped("empty or too many operations, and a missing page, are refused", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* push(owner.client, "push_web_page", { bucket: dock.id, page_slug: "p", page_content: "<p>x</p>" })
      const empty = yield* error(owner.client, "edit_web_page", { bucket: dock.id, web_page: "p", operations: [] })
      expect(empty.code).toBe("validation_error")
      const many = Array.from({ length: 101 }, () => ({ op: "replace_text", find: "x", replace: "x" }))
      expect((yield* error(owner.client, "edit_web_page", { bucket: dock.id, web_page: "p", operations: many })).code)
        .toBe("validation_error")
      const hundred = many.slice(0, 100)
      expect(
        ok(yield* call(owner.client, "edit_web_page", { bucket: dock.id, web_page: "p", operations: hundred })).action
      )
        .toBe("unchanged")
      expect(
        yield* error(owner.client, "edit_web_page", {
          bucket: dock.id,
          web_page: "absent",
          operations: [{ op: "replace_text", find: "x", replace: "y" }]
        })
      ).toMatchObject({ code: "not_found" })
      // a web page is no Markdown file
      expect(
        yield* error(owner.client, "edit_markdown_file", {
          bucket: dock.id,
          markdown_file: "p",
          operations: [{ op: "replace_text", find: "x", replace: "y" }]
        })
      ).toMatchObject({ code: "not_found", message: "No Markdown file \"p\" in this Dock" })
    }))

  it.scoped("an edit that changes nothing is unchanged, with no new version", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const page = yield* pushGuide(owner.client, dock.id, "u")
      const same = ok(
        yield* call(owner.client, "edit_markdown_file", {
          bucket: dock.id,
          markdown_file: "u",
          operations: [{ op: "replace_text", find: "Use it daily.", replace: "Use it daily." }]
        })
      )
      expect(same.action).toBe("unchanged")
      expect(same.part.version).toBe(1)
      expect(yield* versionsOf(page.part.id)).toHaveLength(1)
    }))

  it.scoped("a result over 1 MiB is the push's size error", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const big = `<p>${"a".repeat(MIB - 100)}</p>`
      const page = yield* push(owner.client, "push_web_page", { bucket: dock.id, page_slug: "big", page_content: big })
      const tooBig = yield* error(owner.client, "edit_web_page", {
        bucket: dock.id,
        web_page: "big",
        operations: [{ op: "insert_text", before: "</p>", text: "é".repeat(60) }]
      })
      const bytes = new TextEncoder().encode(big).byteLength + 120
      expect(tooBig).toMatchObject({
        code: "validation_error",
        message: `page_content is ${bytes} bytes of UTF-8; the limit is ${MIB} (1 MiB)`,
        details: { field: "page_content", bytes, limit: MIB }
      })
      expect(yield* versionsOf(page.part.id)).toHaveLength(1)
    }))

  it.scoped("a Markdown file edit that breaks its front matter is invalid_front_matter", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const page = yield* pushGuide(owner.client, dock.id, "fm")
      const broken = yield* error(owner.client, "edit_markdown_file", {
        bucket: dock.id,
        markdown_file: "fm",
        operations: [{ op: "replace_text", find: "status: draft", replace: "status: [draft" }]
      })
      expect(broken).toMatchObject({ code: "invalid_front_matter", status: 400 })
      const removed = yield* error(owner.client, "edit_markdown_file", {
        bucket: dock.id,
        markdown_file: "fm",
        operations: [{ op: "replace_text", find: "---\n# kept comment", replace: "# kept comment" }]
      })
      expect(removed.code).toBe("invalid_front_matter")
      expect(yield* versionsOf(page.part.id)).toHaveLength(1)
    }))

  it.scoped("read-only tokens and viewers get permission_denied; an editor may edit", () =>
    Effect.gen(function*() {
      const { dock, editor, outsider, owner, viewer } = yield* cast
      yield* push(owner.client, "push_web_page", { bucket: dock.id, page_slug: "p", page_content: "<p>x</p>" })
      const args = { bucket: dock.id, web_page: "p", operations: [{ op: "replace_text", find: "x", replace: "y" }] }
      const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), MODERN)
      expect(yield* error(readOnly, "edit_web_page", args)).toMatchObject({ code: "permission_denied", status: 403 })
      expect(yield* error(viewer.client, "edit_web_page", args)).toMatchObject({ code: "permission_denied" })
      expect(yield* error(outsider.client, "edit_web_page", args)).toMatchObject({ code: "not_found" })
      expect(ok(yield* call(editor.client, "edit_web_page", args)).part.version).toBe(2)
    }))

  it.scoped("base_version: an edit of a version the page has left is conflict with details.current_version and the diff", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const page = yield* pushGuide(owner.client, dock.id, "b")
      const edit = (find: string, replace: string, base_version?: number) =>
        call(owner.client, "edit_markdown_file", {
          bucket: dock.id,
          markdown_file: "b",
          operations: [{ op: "replace_text", find, replace }],
          ...(base_version === undefined ? {} : { base_version })
        })
      expect(ok(yield* edit("Intro text.", "Intro one.", 1)).part.version).toBe(2)
      const stale = refused(yield* edit("Use it daily.", "Use it never.", 1)).error
      expect(stale).toMatchObject({
        code: "conflict",
        status: 409,
        details: { current_version: 2, base_version: 1, diff: { added: 1, removed: 1, truncated: false } }
      })
      // The diff from the version the caller had to the current one: what the other edit changed.
      const { diff } = (stale.details as { diff: { diff: string } }).diff
      expect(diff).toContain("-Intro text.")
      expect(diff).toContain("+Intro one.")
      expect(yield* versionsOf(page.part.id)).toHaveLength(2)
    }))

  it.scoped("two edits racing from the same base_version: exactly one wins, the other is conflict", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const page = yield* pushGuide(owner.client, dock.id, "r")
      const edit = (find: string, replace: string) =>
        call(owner.client, "edit_markdown_file", {
          bucket: dock.id,
          markdown_file: "r",
          operations: [{ op: "replace_text", find, replace }],
          base_version: 1
        })
      const results = yield* Effect.all([edit("Intro text.", "A."), edit("Use it daily.", "B.")], {
        concurrency: "unbounded"
      })
      expect(results.filter((result) => result.isError !== true)).toHaveLength(1)
      expect(refused(results.find((result) => result.isError === true)!).error).toMatchObject({
        code: "conflict",
        details: { current_version: 2 }
      })
      expect(yield* versionsOf(page.part.id)).toHaveLength(2)
    }))
})
