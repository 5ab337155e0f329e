/**
 * `dock share create|list|revoke` in real processes against an in-process server: create prints the url once
 * (`--json`: `{id, url, bucket_id, page_id, expires_at}`), list never shows a secret, the link serves the private
 * page until revoke, and failures are exit code 1 with one line naming the code.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { adminOf, unique } from "./support/Admin.ts"
import { dock, failureLine, jsonOf } from "./support/Dock.ts"
import { cliTestServer, postJson, serverUrl } from "./support/Server.ts"

const ADMIN_TOKEN = "dock_admin_cli-share-test-token"
const admin = adminOf(ADMIN_TOKEN, "shr")
const TIMEOUT = 120_000

const { RunningServer } = (() => {
  const server = cliTestServer("share", ADMIN_TOKEN)
  afterAll(() => Fs.rmSync(server.dataDir, { recursive: true, force: true }))
  return server
})()

/** postJson with the Accept header an MCP call needs (harmless for the admin API). */
const post = (url: string, path: string, body: unknown, headers: Record<string, string>) =>
  postJson(url, path, body, { accept: "application/json, text/event-stream", ...headers })

/** A private Markdown page pushed by the user's own MCP token into their default Dock (private). */
const privatePage = (url: string, email: string, dockId: string, slug: string) =>
  Effect.gen(function*() {
    const token = yield* post(url, "/admin/tokens", { user: email, label: "cli-share" }, {
      authorization: `Bearer ${ADMIN_TOKEN}`
    })
    expect(token.status, token.text).toBe(201)
    const pushed = yield* post(url, "/mcp", {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "push_markdown",
        arguments: { bucket: dockId, page_slug: slug, page_content: "# Private notes\n\nFor the link only." }
      }
    }, { authorization: `Bearer ${JSON.parse(token.text).token}`, "mcp-protocol-version": "2025-11-25" })
    expect(pushed.status, pushed.text).toBe(200)
    expect(pushed.text).not.toContain("\"isError\":true")
  })

const statusOf = (url: string) => Effect.promise(() => fetch(url).then((response) => response.status))

layer(RunningServer, { timeout: TIMEOUT, excludeTestServices: true })("dock share", (it) => {
  it.effect(
    "create prints the url once; list shows metadata; revoke ends the link at once",
    () =>
      Effect.gen(function*() {
        const url = yield* serverUrl
        const owner = yield* admin.createUser(url)
        const slug = `notes-${unique()}`
        yield* privatePage(url, owner.email, owner.default_bucket_id, slug)
        const path = `${owner.username}/${owner.username}`

        const created = jsonOf(
          yield* dock(["share", "create", "--dock", path, "--page", slug, ...admin.flags(url), "--json"])
        ) as { id: string; url: string; bucket_id: string; page_id: string; expires_at: string | null }
        expect(Object.keys(created).sort()).toEqual(["bucket_id", "expires_at", "id", "page_id", "url"])
        expect(created.bucket_id).toBe(owner.default_bucket_id)
        expect(created.expires_at).toBeNull()
        const secretPath = new URL(created.url).pathname
        expect(secretPath).toMatch(/^\/s\/dock_share_[0-9A-Za-z]{43}$/)
        expect(yield* statusOf(`${url}${secretPath}`)).toBe(200)

        const human = yield* dock([
          "share",
          "create",
          "--dock",
          path,
          "--page",
          slug,
          "--expires-in",
          "2 days",
          ...admin.flags(url)
        ])
        expect(human.code).toBe(0)
        expect(human.stdout).toMatch(/^Share link [0-9a-f-]{36} \(shown once; anyone with it can read the page\):\n/)
        expect(human.stdout).toContain("/s/dock_share_")

        const listed = yield* dock(["share", "list", "--dock", path, "--page", slug, ...admin.flags(url)])
        expect(listed.code).toBe(0)
        expect(listed.stdout.trim().split("\n")).toHaveLength(2)
        expect(listed.stdout).toContain(`${created.id}  active  page ${slug}  by ${owner.username}`)
        expect(listed.stdout).not.toContain("dock_share_")

        const revoked = yield* dock(["share", "revoke", created.id, ...admin.flags(url)])
        expect(revoked.code).toBe(0)
        expect(revoked.stdout).toContain(`Revoked ${created.id}  revoked`)
        expect(yield* statusOf(`${url}${secretPath}`)).toBe(404)
      }),
    TIMEOUT
  )

  it.effect("errors are exit code 1 with one line naming the code", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const owner = yield* admin.createUser(url)
      const path = `${owner.username}/${owner.username}`
      expect(
        failureLine(yield* dock(["share", "create", "--dock", path, "--page", "missing", ...admin.flags(url)]))
      ).toBe(`dock: not_found: No page "missing" in this Dock`)
      expect(failureLine(yield* dock(["share", "revoke", crypto.randomUUID(), ...admin.flags(url)]))).toBe(
        "dock: not_found: No such share link"
      )
    }), TIMEOUT)
})
