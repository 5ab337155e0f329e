/** One in-process Dock server per CLI test file, on a fresh database and data directory, for `dock` to talk to. */
import { TestDatabaseLive } from "@dock/domain/testing"
import { ServerConfig, ServerLive } from "@dock/server"
import { HttpServer } from "@effect/platform"
import { ConfigProvider, Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

export const cliTestServer = (name: string, adminToken: string) => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), `dock-cli-${name}-`))
  const config = Effect.runSync(
    Effect.withConfigProvider(
      ServerConfig,
      ConfigProvider.fromMap(
        new Map([
          ["PORT", "0"],
          ["DOCK_DATA_DIR", dataDir],
          ["DOCK_ADMIN_TOKEN", adminToken],
          ["DOCK_SECRET", `cli-${name}-test-secret`]
        ])
      )
    )
  )
  return { dataDir, config, RunningServer: ServerLive(config, { database: TestDatabaseLive }) }
}

/** The running server's URL, read from its bound address. */
export const serverUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as HttpServer.TcpAddress
  return `http://127.0.0.1:${address.port}`
})

/** A JSON POST to the test server (admin API or /mcp), answered as its status and body text. */
export const postJson = (url: string, path: string, body: unknown, headers: Record<string, string>) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
    return { status: response.status, text: await response.text() }
  })
