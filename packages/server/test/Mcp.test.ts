/**
 * The MCP endpoint over the wire, with the real v2 client (both eras) and the v1 SDK client: tools/list, a
 * tool call, tool errors as `isError` results carrying the error body, bearer authentication, Origin checks,
 * unknown tools as JSON-RPC errors, and /mcp/public.
 */
import { publicCatalogue } from "@dock/mcp"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { bearer, fetchReply, nodeRequest, postJson, unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { connectMcp, ERAS } from "./support/McpClients.ts"
import { startTestServer, TestServer, TestServerLive } from "./support/TestServer.ts"

const connect = connectMcp

/** An operator-made user and a personal token with the given scopes. */
const userToken = (scopes: ReadonlyArray<string> = ["mcp:write"]) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const email = `mcp-${unique()}@example.com`
    const admin = bearer(server.adminToken)
    const user = yield* postJson(`${server.url}/admin/users`, { email }, admin)
    const token = yield* postJson(`${server.url}/admin/tokens`, { user: email, scopes }, admin)
    return { username: user.json.username as string, token: token.json.token as string }
  })

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the MCP endpoint", (it) => {
  for (const era of ERAS) {
    it.scoped(`${era}: tools/list advertises create_bucket with its schema and annotations`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const { token } = yield* userToken()
        const client = yield* connect(server.url, token, era)
        const { tools } = yield* Effect.promise(() => client.listTools())
        const create = tools.find((tool) => tool.name === "create_bucket")!
        expect(create.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false })
        expect(create.inputSchema).toMatchObject({
          type: "object",
          additionalProperties: false,
          properties: {
            title: { type: "string", maxLength: 200 },
            visibility: { type: "string", enum: ["private", "public"] },
            topic_tag_slugs: { type: "array", maxItems: 32 }
          }
        })
        expect(JSON.stringify(create.inputSchema)).not.toContain("$ref")
      }))

    it.scoped(`${era}: create_bucket creates a Dock owned by the token's user`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const { token, username } = yield* userToken()
        const client = yield* connect(server.url, token, era)
        const title = `Field notes ${unique()}`
        const result = (yield* Effect.promise(() =>
          client.callTool({ name: "create_bucket", arguments: { title, visibility: "public", tags: ["x"] } })
        )) as { isError?: boolean; structuredContent: { bucket: Record<string, unknown> } }
        expect(result.isError).not.toBe(true)
        expect(result.structuredContent.bucket).toMatchObject({
          title,
          visibility: "public",
          tags: ["x"],
          owner: { username }
        })
        const rows = yield* server.sql<{ n: number }>`select count(*)::int as n from docks where title = ${title}`
        expect(rows).toEqual([{ n: 1 }])
      }))

    it.scoped(`${era}: a domain failure is an isError result whose structuredContent is the error body`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const { token } = yield* userToken()
        const client = yield* connect(server.url, token, era)
        const result = (yield* Effect.promise(() =>
          client.callTool({ name: "create_bucket", arguments: { slug: "no-title" } })
        )) as { isError?: boolean; structuredContent: { error: Record<string, unknown> } }
        expect(result.isError).toBe(true)
        expect(result.structuredContent.error).toMatchObject({ code: "validation_error", status: 400 })
      }))
  }

  for (const era of ERAS) {
    it.scoped(`${era}: arguments that break the input schema get validation_error naming each path`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const { token } = yield* userToken()
        const client = yield* connect(server.url, token, era)
        const result = (yield* Effect.promise(() =>
          client.callTool({
            name: "create_bucket",
            arguments: { title: "t".repeat(201), visibility: "secret", extra: 1 }
          })
        )) as {
          isError?: boolean
          structuredContent: {
            error: { code: string; status: number; details: { issues: ReadonlyArray<{ path: ReadonlyArray<string> }> } }
          }
        }
        expect(result.isError).toBe(true)
        expect(result.structuredContent.error).toMatchObject({ code: "validation_error", status: 400 })
        expect(result.structuredContent.error.details.issues.map((issue) => issue.path.join("."))).toEqual(
          expect.arrayContaining(["title", "visibility", "extra"])
        )
        const rows = yield* server.sql`select id from docks where title = ${"t".repeat(201)}`
        expect(rows).toEqual([])
      }))
  }

  it.scoped("a sandbox token creating a Dock gets permission_denied with status 403", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = yield* register(server.url)
      const client = yield* connect(server.url, registration.json.credential, "v2 modern")
      const result = (yield* Effect.promise(() =>
        client.callTool({ name: "create_bucket", arguments: { title: "Escape" } })
      )) as { isError?: boolean; structuredContent: { error: Record<string, unknown> } }
      expect(result.isError).toBe(true)
      expect(result.structuredContent.error).toMatchObject({ code: "permission_denied", status: 403 })
    }))

  it.scoped("a read-only token calling a write tool gets permission_denied", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token } = yield* userToken(["mcp:read"])
      const client = yield* connect(server.url, token, "v1")
      const result = (yield* Effect.promise(() =>
        client.callTool({ name: "create_bucket", arguments: { title: "Nope" } })
      )) as { isError?: boolean; structuredContent: { error: Record<string, unknown> } }
      expect(result.isError).toBe(true)
      expect(result.structuredContent.error).toMatchObject({ code: "permission_denied", status: 403 })
    }))

  it.effect("no token: 401 with the protected-resource challenge; a token in the query string is ignored", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token } = yield* userToken()
      const body = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }
      const headers = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" }
      for (const url of [`${server.url}/mcp`, `${server.url}/mcp?access_token=${token}`]) {
        const reply = yield* postJson(url, body, headers)
        expect(reply.status).toBe(401)
        expect(reply.headers["www-authenticate"]).toBe(
          `Bearer resource_metadata="${server.config.baseUrl}/.well-known/oauth-protected-resource/mcp"`
        )
        expect(reply.json.error.code).toBe("unauthorized")
      }
    }))

  it.effect("a foreign Origin is refused with 403 forbidden", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token } = yield* userToken()
      const reply = yield* postJson(
        `${server.url}/mcp`,
        { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
        { ...bearer(token), origin: "https://evil.example", accept: "application/json, text/event-stream" }
      )
      expect(reply.status).toBe(403)
      expect(reply.json.error.code).toBe("forbidden")
    }))

  it.effect("CORS: a preflight from an allowed Origin allows the MCP headers; a foreign Origin's preflight is 403", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const origin = "http://localhost:5173"
      for (const path of ["/mcp", "/mcp/public"]) {
        const allowed = yield* fetchReply(`${server.url}${path}`, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, content-type, mcp-protocol-version"
          }
        })
        expect(allowed.status).toBe(204)
        expect(allowed.headers["access-control-allow-origin"]).toBe(origin)
        expect(allowed.headers["access-control-allow-methods"]).toContain("POST")
        const allowedHeaders = allowed.headers["access-control-allow-headers"]!.toLowerCase()
        for (const header of ["authorization", "content-type", "mcp-protocol-version", "mcp-session-id"]) {
          expect(allowedHeaders).toContain(header)
        }
        expect(allowed.headers["access-control-expose-headers"]).toBe("WWW-Authenticate, Mcp-Session-Id")

        const foreign = yield* fetchReply(`${server.url}${path}`, {
          method: "OPTIONS",
          headers: { origin: "https://evil.example", "access-control-request-method": "POST" }
        })
        expect(foreign.status).toBe(403)
        expect(foreign.headers["access-control-allow-origin"]).toBeUndefined()
      }
    }))

  it.effect("CORS: a 401 challenge and a tool answer to an allowed Origin expose WWW-Authenticate and Mcp-Session-Id", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token } = yield* userToken()
      const origin = "http://127.0.0.1:3000"
      const body = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }
      const headers = { origin, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" }
      const challenge = yield* postJson(`${server.url}/mcp`, body, headers)
      expect(challenge.status).toBe(401)
      expect(challenge.headers["access-control-allow-origin"]).toBe(origin)
      expect(challenge.headers["access-control-expose-headers"]).toBe("WWW-Authenticate, Mcp-Session-Id")
      expect(challenge.headers["www-authenticate"]).toMatch(/^Bearer resource_metadata=/)

      const answer = yield* postJson(`${server.url}/mcp`, body, { ...headers, ...bearer(token) })
      expect(answer.status).toBe(200)
      expect(answer.headers["access-control-allow-origin"]).toBe(origin)
      expect(answer.headers["access-control-expose-headers"]).toBe("WWW-Authenticate, Mcp-Session-Id")
    }))

  it.effect("a JSON body nested deeper than 64 levels is bad_request before any tool sees it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token } = yield* userToken()
      const deep = "[".repeat(100) + "]".repeat(100)
      const body =
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_buckets","arguments":{"query":${deep}}}}`
      const headers = {
        ...bearer(token),
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25"
      }
      const reply = yield* postJson(`${server.url}/mcp`, body, headers)
      expect(reply.status).toBe(400)
      expect(reply.json.error.code).toBe("bad_request")
      // Sixty levels are fine: the tool answers (here with a validation_error result for the wrong type).
      const shallow = "[".repeat(55) + "]".repeat(55)
      const ok = yield* postJson(
        `${server.url}/mcp`,
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_buckets","arguments":{"query":${shallow}}}}`,
        headers
      )
      expect(ok.status).toBe(200)
      expect(ok.text).toContain("validation_error")
    }))

  it.effect("an unsupported MCP-Protocol-Version header is refused with 400", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token } = yield* userToken()
      const reply = yield* postJson(
        `${server.url}/mcp`,
        { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
        { ...bearer(token), accept: "application/json, text/event-stream", "mcp-protocol-version": "1999-01-01" }
      )
      expect(reply.status).toBe(400)
    }))

  for (const era of ["v1", "v2 modern", "v2 legacy"] as const) {
    it.scoped(`${era}: after tools/list (which arms output-schema checks), an error result still carries its body`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const { token } = yield* userToken()
        const client = yield* connect(server.url, token, era)
        const { tools } = yield* Effect.promise(() => client.listTools())
        const getBucket = tools.find((tool) => tool.name === "get_bucket") as {
          outputSchema?: { anyOf?: Array<unknown> }
        }
        expect(getBucket.outputSchema?.anyOf).toHaveLength(2)
        const result = (yield* Effect.promise(() =>
          client.callTool({ name: "get_bucket", arguments: { bucket: "no-such-dock-anywhere" } })
        )) as { isError?: boolean; structuredContent: { error: Record<string, unknown> } }
        expect(result.isError).toBe(true)
        expect(result.structuredContent.error).toMatchObject({ code: "not_found", status: 404 })
        const success = (yield* Effect.promise(() =>
          client.callTool({ name: "list_buckets", arguments: {} })
        )) as { isError?: boolean; structuredContent: { buckets: Array<unknown> } }
        expect(success.isError).not.toBe(true)
        expect(Array.isArray(success.structuredContent.buckets)).toBe(true)
      }))
  }

  it.scoped("create_bucket with a slug the user already has is validation_error naming slug; nothing is created", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token, username } = yield* userToken()
      const client = yield* connect(server.url, token, "v2 modern")
      const slug = `taken-${unique()}`
      const first = (yield* Effect.promise(() =>
        client.callTool({ name: "create_bucket", arguments: { title: "First", slug } })
      )) as { isError?: boolean }
      expect(first.isError).not.toBe(true)
      const again = (yield* Effect.promise(() =>
        client.callTool({ name: "create_bucket", arguments: { title: "Again", slug } })
      )) as { isError?: boolean; structuredContent: { error: Record<string, unknown> } }
      expect(again.isError).toBe(true)
      expect(again.structuredContent.error).toMatchObject({ code: "validation_error", details: { field: "slug" } })
      const rows = yield* server.sql<{ title: string }>`select d.title from docks d join users u on u.id = d.owner_id
        where u.username = ${username} and d.slug = ${slug}`
      expect(rows.map((row) =>
        row.title
      )).toEqual(["First"])
    }))

  it.scoped("an unknown tool is a JSON-RPC error, not a tool result", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token } = yield* userToken()
      const client = yield* connect(server.url, token, "v2 legacy")
      const outcome = yield* Effect.promise(() =>
        client.callTool({ name: "no_such_tool", arguments: {} }).then(
          (value) => ({ rejected: false, value }),
          (error: unknown) => ({ rejected: true, value: String(error) })
        )
      )
      expect(outcome.rejected).toBe(true)
      expect(outcome.value).toMatch(/no_such_tool/)
    }))

  it.effect("/mcp/public answers without a token and offers no write tools", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* fetchReply(`${server.url}/mcp/public`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25"
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
      })
      expect(reply.status).toBe(200)
      const data = reply.text.split("\n").find((line) => line.startsWith("data: "))
      const names = (JSON.parse(data!.slice(6)).result.tools as Array<{ name: string }>).map((tool) => tool.name)
      expect(names).toEqual(publicCatalogue.map((entry) => entry.name))
      expect(names).toEqual(expect.arrayContaining(["search_buckets", "list_buckets", "get_bucket", "get_web_page"]))
      expect(publicCatalogue.every((entry) => entry.scope === "mcp:read")).toBe(true)
      expect(names).not.toContain("create_bucket")
    }))

  it.effect("a body over the MCP limit is refused with 413 before it is parsed; other routes allow 1 MiB", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { token } = yield* userToken()
      const huge = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"${"a".repeat(23 * 1024 * 1024)}"}}`
      const mcp = yield* postJson(`${server.url}/mcp`, huge, {
        ...bearer(token),
        accept: "application/json, text/event-stream"
      })
      expect(mcp.status).toBe(413)
      expect(mcp.json.error).toMatchObject({ code: "payload_too_large", status: 413 })
      const small = yield* postJson(`${server.url}/agent/auth`, `{"pad":"${"a".repeat(1024 * 1024)}"}`)
      expect(small.status).toBe(413)
    }))
})

layer(
  Layer.scoped(
    TestServer,
    startTestServer({ DOCK_ENV: "production", DOCK_BASE_URL: "https://dock.example", DOCK_TRUST_PROXY: "true" })
  ),
  { excludeTestServices: true, timeout: 120_000 }
)("the MCP endpoint in production", (it) => {
  it.effect("plain HTTP to /mcp is forbidden; through a TLS proxy (X-Forwarded-Proto: https) it answers", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      // Production answers only for its base URL's host, behind the proxy.
      const viaProxy = (path: string, json: unknown) =>
        nodeRequest({
          port: server.port,
          method: "POST",
          path,
          headers: {
            host: "dock.example",
            "x-forwarded-proto": "https",
            "content-type": "application/json",
            ...bearer(server.adminToken)
          },
          body: JSON.stringify(json)
        })
      const email = `prod-${unique()}@example.com`
      expect((yield* viaProxy("/admin/users", { email })).status).toBe(201)
      const token = JSON.parse((yield* viaProxy("/admin/tokens", { user: email, scopes: ["mcp:write"] })).text)
        .token as string
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
      const headers = {
        host: "dock.example",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        ...bearer(token)
      }
      for (const path of ["/mcp", "/mcp/public"]) {
        const plain = yield* nodeRequest({ port: server.port, method: "POST", path, headers, body })
        expect(plain.status, path).toBe(403)
        expect(JSON.parse(plain.text).error.code).toBe("forbidden")
      }
      const proxied = yield* nodeRequest({
        port: server.port,
        method: "POST",
        path: "/mcp",
        headers: { ...headers, "x-forwarded-proto": "https" },
        body
      })
      expect(proxied.status).toBe(200)
      expect(proxied.text).toContain("get_bucket")
      // a spoofed scheme counts only when the proxy is trusted, which is what DOCK_TRUST_PROXY says here
      const http = yield* nodeRequest({
        port: server.port,
        method: "POST",
        path: "/mcp",
        headers: { ...headers, "x-forwarded-proto": "http" },
        body
      })
      expect(http.status).toBe(403)
    }))
})
