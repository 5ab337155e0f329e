/**
 * Real MCP clients for over-the-wire tests: the v2 client pinned to the 2026-07-28 era, the v2 client in the
 * legacy (2025) era, and the v1 SDK client — each sending a bearer token to `<url>/mcp`.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { bearer } from "./Http.ts"

export type Era = "v2 modern" | "v2 legacy" | "v1"
export const ERAS: ReadonlyArray<Era> = ["v2 modern", "v2 legacy", "v1"]

export interface ToolInfo {
  readonly name: string
  readonly inputSchema: { readonly required?: ReadonlyArray<string>; readonly properties?: Record<string, unknown> }
  readonly annotations?: Record<string, unknown>
}

export interface AnyClient {
  readonly listTools: () => Promise<{ tools: ReadonlyArray<ToolInfo> }>
  readonly callTool: (call: { name: string; arguments: Record<string, unknown> }) => Promise<unknown>
  readonly close: () => Promise<void>
}

/** A connected client of the given kind, closed with the scope. */
export const connectMcp = (url: string, token: string, era: Era) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<AnyClient> => {
      const endpoint = new URL(`${url}/mcp`)
      if (era === "v1") {
        const client = new ClientV1({ name: "dock-test-v1", version: "1.0.0" })
        await client.connect(new TransportV1(endpoint, { requestInit: { headers: bearer(token) } }))
        return client as unknown as AnyClient
      }
      const client = new ClientV2(
        { name: "dock-test-v2", version: "1.0.0" },
        { versionNegotiation: { mode: era === "v2 modern" ? { pin: "2026-07-28" } : "legacy" } }
      )
      await client.connect(new TransportV2(endpoint, { authProvider: { token: async () => token } }))
      return client as unknown as AnyClient
    }),
    (client) => Effect.promise(() => client.close())
  )
