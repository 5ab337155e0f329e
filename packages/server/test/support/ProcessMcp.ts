/**
 * Clients of a server process (ServerProcess.ts), as an operator's agents would be: the database each test's
 * process runs on, a user with tokens made through the admin API, and tool calls over a real MCP client.
 */
import { scopedPostgresDatabase, testServerUrl } from "@dock/domain/testing"
import { expect } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { bearer, postJson, unique } from "./Http.ts"
import type { AnyClient } from "./McpClients.ts"
import type { ToolResult } from "./McpTools.ts"
import { scopedTempDir } from "./TestServer.ts"

export const ADMIN_TOKEN = "dock_admin_process-clients"

/**
 * The environment of a server process on this run's database: a fresh PostgreSQL database on
 * DOCK_TEST_DATABASE_URL's server when it is set, else the embedded database in the data directory. Starting
 * again with the same environment opens the same data. Both are removed when the scope closes.
 */
export const processDatabase = Effect.gen(function*() {
  const dataDir = yield* scopedTempDir("dock-process-")
  const serverUrl = yield* testServerUrl
  if (Option.isNone(serverUrl)) return { label: "embedded PGlite", dataDir, env: { DOCK_DATA_DIR: dataDir } }
  const databaseUrl = yield* scopedPostgresDatabase(serverUrl.value)
  return {
    label: "PostgreSQL",
    dataDir,
    env: { DOCK_DATA_DIR: dataDir, DATABASE_URL: Redacted.value(databaseUrl) }
  }
})

export interface ProcessUser {
  readonly email: string
  readonly bucket: string
  readonly tokens: ReadonlyArray<string>
}

/** A new user (their default Dock is `bucket`) with `count` mcp:write tokens, made through the admin API. */
export const userWithTokens = (url: string, count: number) =>
  Effect.gen(function*() {
    const email = `process-${unique()}@example.com`
    const created = yield* postJson(`${url}/admin/users`, { email }, bearer(ADMIN_TOKEN))
    expect(created.status, created.text).toBe(201)
    const tokens = yield* Effect.all(
      Array.from({ length: count }, () =>
        Effect.map(
          postJson(`${url}/admin/tokens`, { user: email, scopes: ["mcp:write"] }, bearer(ADMIN_TOKEN)),
          (reply) => {
            expect(reply.status, reply.text).toBe(201)
            return reply.json.token as string
          }
        )),
      { concurrency: 4 }
    )
    return { email, bucket: created.json.default_bucket_id as string, tokens } satisfies ProcessUser
  })

/** A tool call that may reject (the server went away): its result, or the transport error. */
export const attempt = (client: AnyClient, name: string, args: Record<string, unknown>) =>
  Effect.promise(() =>
    (client.callTool({ name, arguments: args }) as Promise<ToolResult>).then(
      (result) => ({ _tag: "Answered" as const, result }),
      (error: unknown) => ({ _tag: "Failed" as const, error: String(error) })
    )
  )
