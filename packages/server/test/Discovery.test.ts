/**
 * Discovery documents (architecture §5, §14; security "MCP transport and auth"): RFC 9728 protected-resource
 * metadata and /auth.md, written from this server's own base URL and limits.
 */
import { SpecErrorCodes } from "@dock/domain"
import { catalogue } from "@dock/mcp"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { workingTogetherGuide } from "../src/http/WorkingTogetherHttp.ts"
import { fetchReply } from "./support/Http.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const BASE = "https://dock.example"

const DiscoveryServer = Layer.scoped(
  TestServer,
  startTestServer({
    DOCK_BASE_URL: BASE,
    DOCK_REGISTRATIONS_PER_IP_PER_DAY: "7",
    DOCK_REGISTRATIONS_PER_HOUR: "33",
    DOCK_SANDBOX_CLAIM_WINDOW: "3 days",
    DOCK_SANDBOX_RETENTION: "11 days",
    DOCK_OTP_SENDS_PER_HOUR: "4"
  })
)

layer(DiscoveryServer, { excludeTestServices: true })("discovery", (it) => {
  it.effect("both protected-resource metadata documents describe <base>/mcp", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      expect(server.config.baseUrl).toBe(BASE)
      const replies = [
        yield* fetchReply(`${server.url}/.well-known/oauth-protected-resource`),
        yield* fetchReply(`${server.url}/.well-known/oauth-protected-resource/mcp`)
      ]
      for (const reply of replies) {
        expect(reply.status).toBe(200)
        expect(reply.headers["content-type"]).toMatch(/^application\/json/)
        expect(reply.json).toEqual({
          resource: `${BASE}/mcp`,
          resource_name: expect.any(String),
          authorization_servers: [BASE],
          bearer_methods_supported: ["header"],
          scopes_supported: ["mcp:read", "mcp:write"],
          resource_documentation: `${BASE}/auth.md`
        })
      }
      expect(replies[0]!.json).toEqual(replies[1]!.json)
    }))

  it.effect("GET /auth.md is Markdown naming the endpoints, this server's limits and every spec error code", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* fetchReply(`${server.url}/auth.md`)
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toBe("text/markdown; charset=utf-8")
      const text = reply.text
      expect(text).toMatch(/^# /)
      expect(text).toContain(`${BASE}/mcp`)
      expect(text).toContain(`POST ${BASE}/agent/auth\n`)
      expect(text).toContain(`POST ${BASE}/agent/auth/claim`)
      expect(text).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`)
      expect(text).toContain(`"type":"anonymous"`)
      expect(text).toContain(`"requested_credential_type":"mcp_write_token"`)
      // The configured limits, not the defaults.
      expect(text).toContain("7 per day")
      expect(text).toContain("33 per hour")
      expect(text).toContain("3 days")
      expect(text).toContain("11 days")
      expect(text).toContain("4 per hour")
      expect(text).not.toContain("5 per day")
      expect(text).not.toContain("14 days")
      for (const code of SpecErrorCodes) expect(text, code).toContain(`\`${code}\``)
      expect(text).toContain("Retry-After")
      // The preview flow is not advertised while its flag is off.
      expect(text).not.toContain("verified_email")
      // Nothing points at another origin than the configured one.
      expect(text).not.toContain("localhost")
      expect(text).not.toContain("127.0.0.1")
    }))
})

layer(
  Layer.scoped(
    TestServer,
    startTestServer({
      DOCK_BASE_URL: BASE,
      ANONYMOUS_REGISTRATION_ENABLED: "false",
      DOCK_VERIFIED_EMAIL_REGISTRATION: "true"
    })
  ),
  { excludeTestServices: true }
)("discovery with the flags switched", (it) => {
  it.effect("/auth.md says anonymous registration is disabled and describes the verified-email flow", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* fetchReply(`${server.url}/auth.md`)
      expect(reply.status).toBe(200)
      expect(reply.text).toContain("Anonymous registration is disabled on this server")
      expect(reply.text).not.toContain(`"type":"anonymous"`)
      expect(reply.text).toContain(`"type":"verified_email"`)
    }))

  it.effect("GET /docs/working-together.md is the guide for this server, linked from /auth.md; docs/ holds the same text", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const manifest = yield* fetchReply(`${server.url}/auth.md`)
      expect(manifest.text).toContain(`The guide: ${BASE}/docs/working-together.md`)
      const reply = yield* fetchReply(`${server.url}/docs/working-together.md`)
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toBe("text/markdown; charset=utf-8")
      expect(reply.text).toMatch(/^# Working together in Dock\n/)
      expect(reply.text).toContain(`${BASE}/mcp`)
      // Every tool the guide teaches is one the server lists (a renamed tool must not leave the guide behind).
      for (
        const name of [
          "edit_markdown_file",
          "edit_web_page",
          "diff_web_page_versions",
          "list_agent_changes",
          "revert_agent_changes"
        ]
      ) {
        expect(reply.text).toContain(name)
        expect(catalogue.map((tool) => tool.name)).toContain(name)
      }
      expect(reply.text).toContain("base_version")
      expect(reply.text).toContain("idempotency_key")
      // The repository's copy is the text for the default base URL (npm run docs:guide writes it).
      const file = readFileSync(new URL("../../../docs/working-together.md", import.meta.url), "utf8")
      expect(file).toBe(workingTogetherGuide("http://localhost:8787"))
    }))
})
