/**
 * What over-the-wire MCP tool tests share: users, tokens and grants made through the admin API, connected
 * clients of every era, tool calls with their success content or error body, and pages seeded through the
 * domain's own Pages service (the page tools arrive with the Web pages issue).
 */
import { CurrentPrincipal, type DockId, type PageContent, Pages, type UserId, userPrincipal } from "@dock/domain"
import { expect } from "@effect/vitest"
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { bearer, fetchReply, postJson, unique } from "./Http.ts"
import { type AnyClient, connectMcp, type Era } from "./McpClients.ts"
import { TestServer } from "./TestServer.ts"

export interface ToolResult {
  readonly isError?: boolean
  readonly structuredContent: any
  readonly content: ReadonlyArray<{ type: string; text: string }>
}

export interface AdminUser {
  readonly id: string
  readonly username: string
  readonly email: string
  readonly default_bucket_id: string
}

/** A connected client of the given kind, sending the token as a bearer. */
export const connect = (token: string, era: Era) =>
  Effect.flatMap(TestServer, (server) => connectMcp(server.url, token, era))

export const call = (client: AnyClient, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<ToolResult>)

/** A successful tool result's structured content (the text content carries the same JSON). */
export const ok = (result: ToolResult) => {
  expect(result.isError, JSON.stringify(result.structuredContent)).not.toBe(true)
  expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent)
  return result.structuredContent
}

/** A refused tool call's error body. */
export const refused = (result: ToolResult) => {
  expect(result.isError).toBe(true)
  expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent)
  return result.structuredContent as { error: { code: string; status: number; message: string; details?: unknown } }
}

export const admin = Effect.map(TestServer, (server) => ({ url: server.url, headers: bearer(server.adminToken) }))

export const newUser = Effect.gen(function*() {
  const a = yield* admin
  const reply = yield* postJson(`${a.url}/admin/users`, { email: `tools-${unique()}@example.com` }, a.headers)
  expect(reply.status).toBe(201)
  return reply.json as AdminUser
})

/** POST /admin/tokens for the user; `docks` restricts the token (allowed_bucket_ids). */
export const tokenFor = (
  user: AdminUser,
  options: { scopes?: ReadonlyArray<string>; docks?: ReadonlyArray<string> } = {}
) =>
  Effect.gen(function*() {
    const a = yield* admin
    const reply = yield* postJson(
      `${a.url}/admin/tokens`,
      { user: user.email, scopes: options.scopes ?? ["mcp:write"], ...(options.docks ? { docks: options.docks } : {}) },
      a.headers
    )
    expect(reply.status, reply.text).toBe(201)
    return reply.json.token as string
  })

/** POST /admin/members */
export const grant = (dockId: string, user: AdminUser, role: "editor" | "viewer") =>
  Effect.gen(function*() {
    const a = yield* admin
    const reply = yield* postJson(`${a.url}/admin/members`, { dock: dockId, user: user.username, role }, a.headers)
    expect(reply.status, reply.text).toBe(201)
  })

/** A user, a write token and a connected client. */
export const actor = (era: Era) =>
  Effect.gen(function*() {
    const user = yield* newUser
    const token = yield* tokenFor(user)
    return { user, token, client: yield* connect(token, era) }
  })

/**
 * An owner with a fresh private Dock (titled `title`, a unique slug from it), plus a viewer, an editor and an
 * outsider, each with a client of `era`.
 */
export const cast = (title: string, era: Era = "v2 modern") =>
  Effect.gen(function*() {
    const owner = yield* actor(era)
    const dock = yield* createBucket(owner.client, { title, slug: `${title.toLowerCase()}-${unique()}` })
    const viewer = yield* actor(era)
    const editor = yield* actor(era)
    const outsider = yield* actor(era)
    yield* grant(dock.id, viewer.user, "viewer")
    yield* grant(dock.id, editor.user, "editor")
    return { owner, dock, viewer, editor, outsider }
  })

/** A raw JSON-RPC tools/call POST (no client, no initialize) to `path`. */
export const rawToolCall = (
  path: string,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {}
) =>
  Effect.flatMap(TestServer, (server) =>
    fetchReply(`${server.url}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        ...headers
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })
    }))

/** A Dock made with create_bucket by the client's user. */
export const createBucket = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(
    call(client, "create_bucket", args),
    (result) => ok(result).bucket as { id: string; slug: string; title: string }
  )

/**
 * A page saved into a Dock as `user` through the Pages service (a new version when it changes). `content`
 * defaults to a small HTML page titled after the slug.
 */
export const seedPage = (user: AdminUser, dockId: string, slug: string, content: Partial<PageContent> = {}) =>
  Effect.flatMap(TestServer, (server) =>
    server.domain(
      Effect.flatMap(Pages, (pages) =>
        pages.save(dockId as DockId, {
          slug,
          title: slug,
          summary: "",
          contentType: "html",
          pageKind: "web_page",
          content: `<p>${slug}</p>`,
          bodyText: slug,
          ...content
        })).pipe(
          Effect.provideService(CurrentPrincipal, userPrincipal({ id: user.id as UserId, username: user.username })),
          Effect.orDie
        )
    ))

/**
 * A client of the given kind connected to `/mcp/public` without any token (anonymous public reads), closed with
 * the scope.
 */
export const connectPublic = (era: Era) =>
  Effect.flatMap(TestServer, (server) =>
    Effect.acquireRelease(
      Effect.promise(async (): Promise<AnyClient> => {
        const endpoint = new URL(`${server.url}/mcp/public`)
        if (era === "v1") {
          const client = new ClientV1({ name: "dock-test-v1-public", version: "1.0.0" })
          await client.connect(new TransportV1(endpoint))
          return client as unknown as AnyClient
        }
        const client = new ClientV2(
          { name: "dock-test-v2-public", version: "1.0.0" },
          { versionNegotiation: { mode: era === "v2 modern" ? { pin: "2026-07-28" } : "legacy" } }
        )
        await client.connect(new TransportV2(endpoint))
        return client as unknown as AnyClient
      }),
      (client) => Effect.promise(() => client.close())
    ))

/**
 * POST /admin/tokens with a label (the agent's visible identity, recorded on every write it makes); returns the
 * secret and the token's id. `docks` restricts the token (allowed_bucket_ids).
 */
export const labelledToken = (
  user: AdminUser,
  label: string,
  options: { scopes?: ReadonlyArray<string>; docks?: ReadonlyArray<string> } = {}
) =>
  Effect.gen(function*() {
    const a = yield* admin
    const reply = yield* postJson(
      `${a.url}/admin/tokens`,
      {
        user: user.email,
        label,
        scopes: options.scopes ?? ["mcp:write"],
        ...(options.docks ? { docks: options.docks } : {})
      },
      a.headers
    )
    expect(reply.status, reply.text).toBe(201)
    return { id: reply.json.id as string, token: reply.json.token as string }
  })

/** POST /admin/tokens/:id/revoke: the token fails from its next request on. */
export const revokeToken = (tokenId: string) =>
  Effect.gen(function*() {
    const a = yield* admin
    const reply = yield* postJson(`${a.url}/admin/tokens/${tokenId}/revoke`, {}, a.headers)
    expect(reply.status, reply.text).toBe(200)
  })

/** The body of a Dock the caller cannot see, exactly as for one that does not exist. */
export const NOT_FOUND = { error: { code: "not_found", status: 404, message: "Dock not found" } }

/** Every field of a Dock object (architecture §14, plus cover and fork attribution). */
export const DOCK_KEYS = [
  "allow_forks",
  "cover_page_id",
  "created_at",
  "description",
  "discoverable",
  "forked_from",
  "id",
  "owner",
  "slug",
  "tags",
  "title",
  "topics",
  "updated_at",
  "url",
  "visibility"
]

/** Every field of the `part` object without content (architecture §14). */
export const PART_KEYS = [
  "bucket_id",
  "claim_count",
  "content_type",
  "id",
  "last_updated",
  "page_kind",
  "public_slug",
  "slug",
  "summary",
  "title",
  "url",
  "version"
]

/** A Dock's `owner_username/dock_slug`. */
export const pathOf = (owner: { readonly username: string }, dock: { readonly slug: string }) =>
  `${owner.username}/${dock.slug}`

/** A successful push's body. */
export const pushed = (client: AnyClient, tool: string, args: Record<string, unknown>) =>
  Effect.map(
    call(client, tool, args),
    (result) =>
      ok(result) as { part: any; action: string; warnings: Array<string>; sanitization_warnings?: Array<string> }
  )

/** A successful push's `part`. */
export const pushedPart = (client: AnyClient, tool: string, args: Record<string, unknown>) =>
  Effect.map(pushed(client, tool, args), (body) => body.part)

/** A refused call's error. */
export const toolError = (client: AnyClient, tool: string, args: Record<string, unknown>) =>
  Effect.map(call(client, tool, args), (result) => refused(result).error)

/** Marks a page private (members only, even in a public Dock); no tool sets it before the Micro DB issue. */
export const makePrivate = (partId: string) =>
  Effect.flatMap(TestServer, (server) => server.sql`update parts set visibility = 'private' where id = ${partId}`)

/** One tool as tools/list shows it to this client, or undefined. */
export const listedTool = (client: AnyClient, name: string) =>
  Effect.map(Effect.promise(() => client.listTools()), ({ tools }) => tools.find((entry) => entry.name === name))

type ObjectSchema = { properties?: Record<string, unknown>; anyOf?: ReadonlyArray<ObjectSchema> }

/** The property names of each shape a tool's output schema allows (the success shape beside the error body). */
export const outputShapes = (tool: object) => {
  const output = (tool as { outputSchema?: ObjectSchema }).outputSchema!
  return [output, ...(output.anyOf ?? [])].map((shape) => Object.keys(shape.properties ?? {}).sort())
}

/**
 * A listed tool's input schema without `idempotency_key`, which the dispatcher adds to every write tool (pinned in
 * McpIdempotency.test.ts): the parameters the tool itself declares.
 */
export const ownInputSchema = <S extends { readonly properties?: Record<string, unknown> | undefined }>(
  schema: S
): S => {
  if (schema.properties === undefined || !("idempotency_key" in schema.properties)) return schema
  const { idempotency_key: _key, ...properties } = schema.properties
  return { ...schema, properties }
}
