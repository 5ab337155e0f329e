/**
 * DOCK_ARTIFACT_ORIGIN (architecture §10): artifacts served from an origin of their own. Pages' `url` points
 * there, and that host serves /a/ and /artifacts/ only — the API, MCP and health routes are not found on it, so
 * untrusted pages never share an origin with them.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Http from "node:http"
import { unique } from "./support/Http.ts"
import { actor, call, createBucket, ok } from "./support/McpTools.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const APP = "http://app.dock.test"
const ARTIFACTS = "http://artifacts.dock.test"

const ArtifactOriginServer = Layer.scoped(
  TestServer,
  startTestServer({ DOCK_BASE_URL: APP, DOCK_ARTIFACT_ORIGIN: ARTIFACTS })
)

/** A request to the test server that names another host (fetch cannot set Host). */
const requestAs = (host: string, method: string, path: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      Effect.async<{ status: number; contentType: string | undefined; csp: string | undefined; body: string }>(
        (resume) => {
          const request = Http.request(
            { host: "127.0.0.1", port: server.port, method, path, headers: { host } },
            (response) => {
              const chunks: Array<Buffer> = []
              response.on("data", (chunk: Buffer) => chunks.push(chunk))
              response.on("end", () =>
                resume(Effect.succeed({
                  status: response.statusCode!,
                  contentType: response.headers["content-type"],
                  csp: response.headers["content-security-policy"] as string | undefined,
                  body: Buffer.concat(chunks).toString("utf8")
                })))
            }
          )
          request.on("error", (error) => resume(Effect.die(error)))
          request.end()
        }
      )
  )

layer(ArtifactOriginServer, { excludeTestServices: true, timeout: 60_000 })("DOCK_ARTIFACT_ORIGIN", (it) => {
  it.scoped("pages link to the artifact origin, which serves artifacts and nothing else", () =>
    Effect.gen(function*() {
      const owner = yield* actor("v2 modern")
      const dock = yield* createBucket(owner.client, {
        title: "Shown",
        slug: `shown-${unique()}`,
        visibility: "public"
      })
      const pushed = ok(
        yield* call(owner.client, "push_web_page", { bucket: dock.id, page_title: "Hello", page_content: "<p>hi</p>" })
      )
      expect(pushed.part.url).toBe(`${ARTIFACTS}/a/${pushed.part.public_slug}`)

      for (const path of [`/a/${pushed.part.public_slug}`, `/artifacts/${pushed.part.id}`]) {
        const reply = yield* requestAs("artifacts.dock.test", "GET", path)
        expect(reply.status).toBe(200)
        expect(reply.contentType).toBe("text/html; charset=utf-8")
        expect(reply.csp).toMatch(/^sandbox;/)
        expect(reply.body).toContain("<p>hi</p>")
      }
      for (
        const [method, path] of [["GET", "/healthz"], ["POST", "/mcp"], [
          "GET",
          "/.well-known/oauth-protected-resource"
        ], ["GET", "/b/x"]]
      ) {
        const reply = yield* requestAs("artifacts.dock.test", method!, path!)
        expect(reply.status).toBe(404)
        expect(JSON.parse(reply.body).error.code).toBe("not_found")
      }
      // The app host still answers everything, and a host that is neither is refused.
      expect((yield* requestAs("app.dock.test", "GET", "/healthz")).status).toBe(200)
      expect((yield* requestAs("elsewhere.test", "GET", `/a/${pushed.part.public_slug}`)).status).toBe(403)
    }))
})
