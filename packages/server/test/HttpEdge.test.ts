/**
 * The HTTP edge against hostile framing (issue 13, findings 9 and 10): a chunked body over the limit is 413 (not a
 * reset connection), an empty JSON body is bad_request, and a Host header must be exactly one host[:port].
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "node:http"
import { bearer, nodeRequest, type Reply } from "./support/Http.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

/** POST `total` bytes in chunks (Transfer-Encoding: chunked, no Content-Length) and read the answer. */
const postChunked = (port: number, path: string, headers: Record<string, string>, total: number) =>
  Effect.async<Reply, Error>((resume) => {
    const request = Http.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path,
        headers: { ...headers, "transfer-encoding": "chunked" },
        agent: false
      },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () => {
          let json: unknown = undefined
          try {
            json = JSON.parse(text)
          } catch {
            // not JSON
          }
          resume(
            Effect.succeed({
              status: response.statusCode ?? 0,
              headers: response.headers as Record<string, string>,
              text,
              json
            })
          )
        })
      }
    )
    request.on("error", (error) => resume(Effect.fail(error)))
    const chunk = Buffer.alloc(64 * 1024, "a")
    let sent = 0
    // Writes until the body is sent or the server has answered (and stopped reading).
    const pump = () => {
      while (sent < total) {
        sent += chunk.length
        if (!request.write(chunk)) return request.once("drain", pump)
      }
      request.end()
    }
    request.write("\"")
    pump()
    return Effect.sync(() => request.destroy())
  })

layer(TestServerLive, { excludeTestServices: true })("HTTP edge: hostile framing", (it) => {
  it.effect("an oversized chunked body (no Content-Length) is 413 payload_too_large, on the admin API and on /mcp", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const admin = yield* postChunked(
        server.port,
        "/admin/users",
        { host: `127.0.0.1:${server.port}`, "content-type": "application/json", ...bearer(server.adminToken) },
        // Past the limit by less than what the server still reads and drops (1 MiB), so the answer is sure to
        // arrive; a body far longer is cut off with the connection once that much has been dropped.
        1024 * 1024 + 256 * 1024
      )
      expect(admin.status).toBe(413)
      expect(admin.json.error.code).toBe("payload_too_large")
      const mcp = yield* postChunked(
        server.port,
        "/mcp/public",
        {
          host: `127.0.0.1:${server.port}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream"
        },
        22 * 1024 * 1024 + 256 * 1024
      )
      expect(mcp.status).toBe(413)
      expect(mcp.json.error.code).toBe("payload_too_large")
    }))

  it.effect("an empty JSON body is 400 bad_request, not validation_error", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* nodeRequest({
        port: server.port,
        method: "POST",
        path: "/admin/users",
        headers: { host: `127.0.0.1:${server.port}`, "content-type": "application/json", ...bearer(server.adminToken) },
        body: ""
      })
      expect(reply.status).toBe(400)
      expect(reply.json.error.code).toBe("bad_request")
    }))

  it.effect("a Host header that is not exactly one host[:port] is refused", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (
        const host of [
          `localhost:1, evil.example`,
          `127.0.0.1:${server.port}, evil.example`,
          "localhost:1:2",
          "localhost:",
          "localhost:port",
          "user@localhost",
          "localhost/x",
          "[::1",
          "[::1]x",
          "localhost:123456"
        ]
      ) {
        const reply = yield* nodeRequest({ port: server.port, path: "/healthz", headers: { host } })
        expect(reply.status, host).toBe(403)
        expect(reply.json.error.code, host).toBe("forbidden")
      }
      for (
        const host of [`localhost:${server.port}`, "localhost", `[::1]:${server.port}`, `127.0.0.1:${server.port}`]
      ) {
        const reply = yield* nodeRequest({ port: server.port, path: "/healthz", headers: { host } })
        expect(reply.status, host).toBe(200)
      }
    }))
})
