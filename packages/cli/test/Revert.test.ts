/**
 * `dock revert` in real processes against an in-process server: an agent invited to an owner's Dock rewrites a
 * page and creates another over MCP; the dry run (`--json`) prints the plan and changes nothing, the real run
 * (human output, every Dock the token changed) puts the owner's version back as a new version and deletes the
 * created page; a bad token id fails with one line.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { adminOf, type AdminUser } from "./support/Admin.ts"
import { dock, failureLine, jsonOf } from "./support/Dock.ts"
import { cliTestServer, postJson, serverUrl } from "./support/Server.ts"

const ADMIN_TOKEN = "dock_admin_cli-revert-test-token"
const admin = adminOf(ADMIN_TOKEN, "rev")
const TIMEOUT = 120_000

const { RunningServer } = (() => {
  const server = cliTestServer("revert", ADMIN_TOKEN)
  afterAll(() => Fs.rmSync(server.dataDir, { recursive: true, force: true }))
  return server
})()

/** A write token of the user: its id and its secret. */
const tokenOf = (url: string, user: AdminUser) =>
  Effect.map(
    postJson(url, "/admin/tokens", { user: user.email, scopes: ["mcp:write"] }, {
      authorization: `Bearer ${ADMIN_TOKEN}`
    }),
    (reply) => {
      expect(reply.status, reply.text).toBe(201)
      return JSON.parse(reply.text) as { id: string; token: string }
    }
  )

/** One MCP tools/call (a plain JSON-RPC POST); its structured result. */
const tool = (url: string, token: string, name: string, args: Record<string, unknown>) =>
  Effect.map(
    postJson(url, "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }, {
      authorization: `Bearer ${token}`,
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25"
    }),
    (reply) => {
      expect(reply.status, reply.text).toBe(200)
      const json = reply.text.trimStart().startsWith("{")
        ? reply.text
        : reply.text.split("\n").find((line) => line.startsWith("data:"))!.slice(5)
      return JSON.parse(json).result as { isError?: boolean; structuredContent: any }
    }
  )

layer(RunningServer, { timeout: TIMEOUT, excludeTestServices: true })("dock revert", (it) => {
  it.effect(
    "--dry-run --json prints the plan and changes nothing; the real run reverts; a bad token id fails",
    () =>
      Effect.gen(function*() {
        const url = yield* serverUrl
        const owner = yield* admin.createUser(url)
        const agent = yield* admin.createUser(url)
        const path = `${owner.username}/${owner.username}`
        const granted = yield* postJson(url, "/admin/members", { dock: path, user: agent.username, role: "editor" }, {
          authorization: `Bearer ${ADMIN_TOKEN}`
        })
        expect(granted.status, granted.text).toBe(201)
        const ownerToken = yield* tokenOf(url, owner)
        const agentToken = yield* tokenOf(url, agent)
        const push = (token: string, slug: string, html: string) =>
          Effect.map(
            tool(url, token, "push_web_page", { bucket: path, page_slug: slug, page_title: slug, page_content: html }),
            (result) => {
              expect(result.isError, JSON.stringify(result.structuredContent)).not.toBe(true)
              return result.structuredContent.part as { id: string; version: number }
            }
          )
        const versionOf = (slug: string) =>
          Effect.map(
            tool(url, ownerToken.token, "get_web_page", { bucket: path, web_page: slug }),
            (result) => result.isError === true ? null : result.structuredContent.part.version as number
          )

        yield* push(ownerToken.token, "notes", "<p>the owner's notes</p>")
        const since = new Date().toISOString()
        yield* push(agentToken.token, "notes", "<p>the agent's notes</p>")
        yield* push(agentToken.token, "scratch", "<p>the agent's scratch</p>")

        const plan = jsonOf(
          yield* dock([
            "revert",
            "--token",
            agentToken.id,
            "--since",
            since,
            "--bucket",
            path,
            "--dry-run",
            ...admin.flags(url),
            "--json"
          ])
        )
        expect(plan).toMatchObject({ dry_run: true, token_id: agentToken.id })
        expect(plan.buckets).toHaveLength(1)
        expect(plan.buckets[0]).toMatchObject({
          bucket_id: owner.default_bucket_id,
          bucket_path: path,
          counts: { restore_version: 1, delete_page: 1 },
          truncated: false
        })
        expect(yield* versionOf("notes")).toBe(2)
        expect(yield* versionOf("scratch")).toBe(1)

        const done = yield* dock(["revert", "--token", agentToken.id, "--since", since, ...admin.flags(url)])
        expect(done.code, done.stderr).toBe(0)
        const lines = done.stdout.trim().split("\n")
        expect(lines[0]).toBe(`Reverted token ${agentToken.id} since ${since}`)
        expect(lines[1]).toBe(`${path} (${owner.default_bucket_id}): 1 restore_version, 1 delete_page`)
        expect(lines).toContain("  restore_version  page notes v2 -> v1 (now v3)")
        expect(lines).toContain("  delete_page  page scratch")
        expect(yield* versionOf("notes")).toBe(3)
        expect(yield* versionOf("scratch")).toBe(null)

        const bad = failureLine(yield* dock(["revert", "--token", "agent-7", "--since", since, ...admin.flags(url)]))
        expect(bad).toMatch(/^dock: validation_error: token_id must be a token's UUID/)
      }),
    TIMEOUT
  )
})
