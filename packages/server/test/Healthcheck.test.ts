/**
 * The container's health check (scripts/healthcheck.mjs, the Dockerfile's HEALTHCHECK and compose.yaml's): run as
 * the engine runs it, a Node child process, against a real production server on an ephemeral port. It passes only
 * by naming DOCK_BASE_URL's host, since production's Host guard answers a probe of 127.0.0.1 with 403.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFile } from "node:child_process"
import * as Net from "node:net"
import * as Path from "node:path"
import { nodeRequest } from "./support/Http.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const SCRIPT = Path.resolve(import.meta.dirname, "../../../scripts/healthcheck.mjs")

/** Runs the health check with this environment (and nothing of the test's own): its exit code and stderr. */
const healthcheck = (env: Record<string, string>) =>
  Effect.async<{ readonly code: number; readonly stderr: string }>((resume) => {
    const child = execFile(
      process.execPath,
      [SCRIPT],
      { env: { PATH: process.env["PATH"] ?? "", ...env }, timeout: 20_000 },
      (error, _stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ code, stderr }))
      }
    )
    return Effect.sync(() => child.kill())
  })

/** A port nothing listens on: one the OS handed out and took back. */
const closedPort = Effect.async<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as Net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

layer(
  Layer.scoped(
    TestServer,
    startTestServer({ DOCK_ENV: "production", DOCK_BASE_URL: "https://dock.example", DOCK_TRUST_PROXY: "true" })
  ),
  { excludeTestServices: true, timeout: 120_000 }
)("the container health check", (it) => {
  it.effect("passes against a production server by naming its base URL's host, and fails otherwise", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const port = String(server.port)

      // What a naive probe gets: production answers no host but its own.
      const naive = yield* nodeRequest({ port: server.port, path: "/healthz" })
      expect(naive.status).toBe(403)

      const healthy = yield* healthcheck({ PORT: port, DOCK_BASE_URL: "https://dock.example" })
      expect(healthy).toEqual({ code: 0, stderr: "" })

      // Another base URL than the server's is another Host header: refused, so the check fails.
      const wrongHost = yield* healthcheck({ PORT: port, DOCK_BASE_URL: "https://elsewhere.example" })
      expect(wrongHost.code).toBe(1)

      // Nothing listening: a connection error, reported on stderr.
      const down = yield* healthcheck({ PORT: String(yield* closedPort), DOCK_BASE_URL: "https://dock.example" })
      expect(down.code).toBe(1)
      expect(down.stderr).toMatch(/^healthcheck: .*ECONNREFUSED/)
    }))
})
