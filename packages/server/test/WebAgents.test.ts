/**
 * Connected agents at /app/mcp over real HTTP (issue 16, item 5; spec §5.7; docs/web.md "Connected agents and
 * claiming"): a token made in the page is shown once, works at /mcp with a real MCP client within the access and
 * Docks chosen, is listed without its secret, rotates (the old secret 401 at once) and revokes; another person's
 * token id is a 404 that changes nothing; CSRF and Origin refusals change nothing.
 */
import { sha256 } from "@dock/domain"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, unique } from "./support/Http.ts"
import { MCP_TOKEN } from "./support/Identity.ts"
import { call, connect, ok, rawToolCall, refused } from "./support/McpTools.ts"
import { type RunningServer, TestServer } from "./support/TestServer.ts"
import { browserFor, ServerWithSmtp, signIn } from "./support/WebApp.ts"
import { csrfIn, type WebClient, type WebReply } from "./support/WebClient.ts"

interface TokenRowSeen {
  readonly id: string
  readonly label: string | null
  readonly kind: string
  readonly scopes: ReadonlyArray<string>
  readonly allowed_bucket_ids: ReadonlyArray<string> | null
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
  readonly secret_hash: string
}

const tokensOf = (server: RunningServer, email: string) =>
  server.sql<TokenRowSeen>`select t.id, t.label, t.kind, t.scopes, t.allowed_bucket_ids, t.expires_at,
      t.revoked_at, t.secret_hash
    from tokens t join users u on u.id = t.user_id where u.email = ${email} order by t.created_at, t.id`.pipe(
    Effect.orDie
  )

/** A person signed in over HTTP, with their email. */
const person = Effect.gen(function*() {
  const server = yield* TestServer
  const client = browserFor(server)
  const email = `agents-${unique()}@example.com`
  expect((yield* signIn(client, email)).status).toBe(303)
  return { client, email }
})

/** A private Dock made through the /app form; answers its id and slug. */
const makeDock = (client: WebClient, email: string, title: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const slug = `${title.toLowerCase().replaceAll(" ", "-")}-${unique()}`
    const form = yield* client.get("/app")
    const made = yield* client.post("/app/buckets", { csrf: csrfIn(form.text), title, slug, visibility: "private" })
    expect(made.status).toBe(303)
    const [dock] = yield* server.sql<{ id: string }>`select d.id from docks d join users u on u.id = d.owner_id
      where u.email = ${email} and d.slug = ${slug}`.pipe(Effect.orDie)
    return { id: dock!.id, slug }
  })

const secretIn = (reply: WebReply) => {
  const match = /value="(dock_mcp_[0-9A-Za-z]+)"/.exec(reply.text)
  if (match === null) throw new Error(`No token on the page:\n${reply.text}`)
  return match[1]!
}

/** Creates a token through the page's form; `fields` override the defaults (write, all Docks, 90 days). */
const createToken = (client: WebClient, fields: Record<string, string>) =>
  Effect.gen(function*() {
    const page = yield* client.get("/app/mcp")
    expect(page.status).toBe(200)
    return yield* client.post("/app/mcp/tokens", {
      csrf: csrfIn(page.text),
      access: "write",
      docks: "all",
      expires: "90",
      ...fields
    })
  })

/** Status of a raw tools/call with the bearer (401 for a dead token). */
const bearerStatus = (token: string) =>
  Effect.map(rawToolCall("/mcp", "list_buckets", {}, bearer(token)), (reply) => reply.status)

const post = (client: WebClient, path: string, form: Record<string, string> = {}, headers = {}) =>
  Effect.gen(function*() {
    const page = yield* client.get("/app/mcp")
    return yield* client.post(path, { csrf: csrfIn(page.text), ...form }, headers)
  })

layer(ServerWithSmtp(), { excludeTestServices: true, timeout: 60_000 })("connected agents at /app/mcp", (it) => {
  it.effect("without a session, /app/mcp sends the person to sign in and back", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* browserFor(server).get("/app/mcp")
      expect(reply.status).toBe(303)
      expect(reply.headers["location"]).toBe("/login?next=%2Fapp%2Fmcp")
    }))

  it.scoped("a new token is shown once with client setup, works at /mcp and is listed without its secret", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { client, email } = yield* person
      const created = yield* createToken(client, { label: "Laptop agent", expires: "30" })
      expect(created.status).toBe(200)
      expect(created.headers["cache-control"]).toBe("no-store")
      const secret = secretIn(created)
      expect(secret).toMatch(MCP_TOKEN)
      expect(created.text).toContain("shown only this once")
      expect(created.text).toMatch(
        new RegExp(
          `claude mcp add --transport http dock https?://[^ ]+/mcp --header &quot;Authorization: Bearer ${secret}&quot;`
        )
      )
      expect(created.text).toContain(`&quot;mcpServers&quot;: {`)
      expect(created.text).toContain(`&quot;servers&quot;: {`)
      expect(created.text).toContain(`&quot;type&quot;: &quot;http&quot;`)
      expect(created.text).toContain("npx @modelcontextprotocol/inspector")
      // The page runs the server's one script (copy buttons) and nothing else; without it the buttons stay hidden.
      expect(created.headers["content-security-policy"]).toContain("script-src 'self'")
      expect(created.text).toContain(`<script src="/app.js" defer></script>`)
      expect(created.text).toMatch(/<button type="button" class="secondary copy" data-copy="secret" [^>]*hidden/)
      const script = yield* browserFor(server).get("/app.js")
      expect(script.status).toBe(200)
      expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8")
      expect((yield* client.get("/app/mcp")).headers["content-security-policy"]).not.toContain("script-src")

      const [row] = yield* tokensOf(server, email)
      expect(row!.label).toBe("Laptop agent")
      expect(row!.kind).toBe("personal")
      expect(row!.scopes).toEqual(["mcp:read", "mcp:write"])
      expect(row!.allowed_bucket_ids).toBeNull()
      expect(row!.secret_hash).toBe(sha256(secret))
      const days = (row!.expires_at!.getTime() - Date.now()) / 86_400_000
      expect(days).toBeGreaterThan(29.9)
      expect(days).toBeLessThan(30.1)

      const agent = yield* connect(secret, "v2 modern")
      const dock = ok(yield* call(agent, "create_bucket", { title: "Made by the agent", slug: `agent-${unique()}` }))
      expect(dock.bucket.owner.username).toBeDefined()

      const list = yield* client.get("/app/mcp")
      expect(list.status).toBe(200)
      expect(list.text).toContain("Laptop agent")
      expect(list.text).toContain("Read and write")
      expect(list.text).toContain("All Docks you can write")
      expect(list.text).not.toContain(secret)
      expect(list.text).not.toContain(secret.slice(9, 30))
      // Used just now: the last-used time is shown, not "not yet".
      expect(list.text).not.toContain("not yet")
    }))

  it.scoped("a read token cannot write; a token for chosen Docks changes only those", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { client, email } = yield* person
      const a = yield* makeDock(client, email, "Dock A")
      const b = yield* makeDock(client, email, "Dock B")

      const reader = secretIn(yield* createToken(client, { label: "reader", access: "read" }))
      const readClient = yield* connect(reader, "v2 modern")
      expect(ok(yield* call(readClient, "get_bucket", { bucket: a.id })).bucket.id).toBe(a.id)
      const denied = refused(
        yield* call(readClient, "update_bucket", { bucket: a.id, description: "from a read token" })
      )
      expect(denied.error.code).toBe("permission_denied")

      const chosenReply = yield* post(client, "/app/mcp/tokens", {
        label: "only A",
        access: "write",
        docks: "chosen",
        dock: a.id,
        expires: "never"
      })
      expect(chosenReply.status).toBe(200)
      const onlyA = secretIn(chosenReply)
      const rows = yield* tokensOf(server, email)
      const onlyARow = rows.find((row) => row.label === "only A")!
      expect(onlyARow.allowed_bucket_ids).toEqual([a.id])
      expect(onlyARow.expires_at).toBeNull()
      const aClient = yield* connect(onlyA, "v2 modern")
      ok(yield* call(aClient, "update_bucket", { bucket: a.id, description: "written through the A token" }))
      const outside = refused(yield* call(aClient, "update_bucket", { bucket: b.id, description: "nope" }))
      expect(outside.error.status).toBe(403)
      const [stored] = yield* server.sql<{ description: string | null }>`select description from docks
        where id = ${b.id}`.pipe(Effect.orDie)
      expect(stored!.description).toBeNull()

      // Another person's private Dock stays unseen to either token.
      const other = yield* person
      const hidden = yield* makeDock(other.client, other.email, "Hidden")
      expect(refused(yield* call(aClient, "get_bucket", { bucket: hidden.id })).error.code).toBe("not_found")
      // And cannot be chosen for a token: the domain checks write access.
      const stolen = yield* post(client, "/app/mcp/tokens", {
        label: "theirs",
        docks: "chosen",
        dock: hidden.id,
        expires: "30"
      })
      expect(stolen.status).toBe(400)
      expect(stolen.text).toContain("You cannot write to one of the chosen Docks")
      expect((yield* tokensOf(server, email)).map((row) => row.label)).not.toContain("theirs")
    }))

  it.effect("a create that is refused shows why and makes nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { client, email } = yield* person
      const none = yield* post(client, "/app/mcp/tokens", { label: "x", docks: "chosen", expires: "30" })
      expect(none.status).toBe(400)
      expect(none.text).toContain("Choose at least one Dock")
      const blank = yield* post(client, "/app/mcp/tokens", { label: "  ", docks: "all", expires: "30" })
      expect(blank.status).toBe(400)
      expect(blank.text).toContain("Give the token a label")
      const odd = yield* post(client, "/app/mcp/tokens", { label: "odd", docks: "all", expires: "7" })
      expect(odd.status).toBe(400)
      expect(odd.text).toContain("Choose an expiry")
      expect(yield* tokensOf(server, email)).toEqual([])
    }))

  it.scoped("rotate: a new secret at once, the old one 401; revoke: 401 on the next request", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { client, email } = yield* person
      const first = secretIn(yield* createToken(client, { label: "rotating", access: "read", expires: "365" }))
      expect(yield* bearerStatus(first)).toBe(200)
      const [before] = yield* tokensOf(server, email)

      const rotated = yield* post(client, `/app/mcp/tokens/${before!.id}/rotate`)
      expect(rotated.status).toBe(200)
      expect(rotated.headers["cache-control"]).toBe("no-store")
      expect(rotated.text).toContain("The old secret no longer works")
      const second = secretIn(rotated)
      expect(second).not.toBe(first)
      expect(yield* bearerStatus(first)).toBe(401)
      expect(yield* bearerStatus(second)).toBe(200)
      const [old, renewed] = yield* tokensOf(server, email)
      expect(old!.revoked_at).not.toBeNull()
      expect(renewed!.revoked_at).toBeNull()
      expect(renewed!.secret_hash).toBe(sha256(second))
      expect({ ...renewed, id: "", secret_hash: "", revoked_at: null }).toEqual({
        ...old,
        id: "",
        secret_hash: "",
        revoked_at: null
      })

      const revoked = yield* post(client, `/app/mcp/tokens/${renewed!.id}/revoke`)
      expect(revoked.status).toBe(303)
      expect(revoked.headers["location"]).toBe("/app/mcp?done=revoked")
      expect(yield* bearerStatus(second)).toBe(401)
      const page = yield* client.get("/app/mcp?done=revoked")
      expect(page.text).toContain("Token revoked")
      expect(page.text).toContain("Revoked and expired (2)")
      expect(page.text).toContain("No active tokens.")
      // A revoked token cannot be rotated back to life.
      expect((yield* post(client, `/app/mcp/tokens/${renewed!.id}/rotate`)).status).toBe(404)
    }))

  it.effect("someone else's token id cannot be revoked or rotated: 404, nothing changed", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* person
      const secret = secretIn(yield* createToken(owner.client, { label: "mine" }))
      const [row] = yield* tokensOf(server, owner.email)
      const intruder = yield* person
      for (const action of ["revoke", "rotate"]) {
        const reply = yield* post(intruder.client, `/app/mcp/tokens/${row!.id}/${action}`)
        expect(reply.status).toBe(404)
        expect(reply.text).toContain("Not found")
      }
      expect((yield* post(intruder.client, "/app/mcp/tokens/not-a-uuid/revoke")).status).toBe(404)
      expect(yield* bearerStatus(secret)).toBe(200)
      expect(yield* tokensOf(server, owner.email)).toEqual([row])
      expect(yield* tokensOf(server, intruder.email)).toEqual([])
    }))

  it.effect("CSRF and Origin refusals change nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { client, email } = yield* person
      const secret = secretIn(yield* createToken(client, { label: "kept" }))
      const [row] = yield* tokensOf(server, email)
      const page = yield* client.get("/app/mcp")
      const csrf = csrfIn(page.text)
      const attempts: Array<[string, Record<string, string>, Record<string, string>]> = [
        ["/app/mcp/tokens", { label: "no csrf", docks: "all", expires: "30" }, {}],
        ["/app/mcp/tokens", { csrf: "wrong", label: "wrong csrf", docks: "all", expires: "30" }, {}],
        ["/app/mcp/tokens", { csrf, label: "foreign", docks: "all", expires: "30" }, { origin: "https://evil.test" }],
        [`/app/mcp/tokens/${row!.id}/revoke`, {}, {}],
        [`/app/mcp/tokens/${row!.id}/revoke`, { csrf }, { origin: "https://evil.test" }],
        [`/app/mcp/tokens/${row!.id}/rotate`, { csrf: "wrong" }, {}],
        [`/app/mcp/tokens/${row!.id}/rotate`, { csrf }, { origin: "https://evil.test" }]
      ]
      for (const [path, form, headers] of attempts) {
        const reply = yield* client.post(path, form, headers)
        expect(reply.status, path).toBe(403)
        expect(reply.text).toContain("This form was refused")
      }
      expect(yield* tokensOf(server, email)).toEqual([row])
      expect(yield* bearerStatus(secret)).toBe(200)
    }))
})
