/**
 * OAuth 2.1 for MCP clients over real HTTP (issue 17, docs/oauth.md): metadata, dynamic client registration,
 * /oauth/authorize (errors before and after the redirect URI is known, sign-in and back, consent, CSRF), the token
 * endpoint (PKCE, one-time codes, replay, refresh rotation and reuse detection, foreign resources), revocation,
 * and OAuth access tokens at /mcp (scopes, audience, revocation on the next request).
 */
import { OAuth } from "@dock/domain"
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, TestClock, TestContext } from "effect"
import { isPublicAddress } from "../src/http/ClientMetadataFetch.ts"
import { fetchReply, postJson, rawToolCall, unique } from "./support/Http.ts"
import { metadataHost } from "./support/MetadataHost.ts"
import {
  approve,
  authorizeUrl,
  exchange,
  hiddenFields,
  locationParams,
  pkce,
  REDIRECT,
  registerClient,
  returnLinkParams,
  tokenRequest,
  type Tokens
} from "./support/OAuthFlow.ts"
import { configFrom, type RunningServer, TestServer } from "./support/TestServer.ts"
import { browserFor, ServerWithSmtp, signIn } from "./support/WebApp.ts"
import { csrfIn } from "./support/WebClient.ts"

const toolAnswer = (reply: { json: any; text: string }) => {
  const body = reply.json ?? JSON.parse(reply.text.split("\n").find((l) => l.startsWith("data: "))!.slice(6))
  return body.result as { isError?: boolean; structuredContent: any }
}

const signedIn = (server: RunningServer) =>
  Effect.gen(function*() {
    const browser = browserFor(server)
    const done = yield* signIn(browser, `oauth-${unique()}@example.com`)
    expect(done.status).toBe(303)
    return browser
  })

/** Registration, sign-in, consent and the code exchange: a working pair of tokens. */
const connected = (
  server: RunningServer,
  options: { readonly scope?: string; readonly choices?: Record<string, string | Array<string>> } = {}
) =>
  Effect.gen(function*() {
    const client = yield* registerClient(server)
    const browser = yield* signedIn(server)
    const { challenge, verifier } = pkce()
    const { params } = yield* approve(
      browser,
      authorizeUrl(server, { client_id: client.client_id, code_challenge: challenge, scope: options.scope }),
      options.choices
    )
    const code = params.get("code")!
    const reply = yield* exchange(server, client.client_id, code, verifier)
    expect(reply.status, reply.text).toBe(200)
    return { client, browser, code, verifier, tokens: reply.json as Tokens }
  })

/** The OAuth sweep as if it ran at `at` (the TestClock stands in for the job's clock). */
const sweepAt = (server: RunningServer, at: number) =>
  server.domain(
    Effect.gen(function*() {
      yield* TestClock.setTime(at)
      return yield* (yield* OAuth).sweep
    }).pipe(Effect.provide(TestContext.TestContext))
  )

const clientIds = (server: RunningServer, ids: ReadonlyArray<string>) =>
  server.sql<{ id: string }>`select id from oauth_clients where id in ${server.sql.in(ids)} order by id`.pipe(
    Effect.map((rows) => rows.map((row) => row.id)),
    Effect.orDie
  )

const grantRows = (server: RunningServer, clientId: string) =>
  server.sql<{ revoked_at: Date | null }>`select revoked_at from oauth_grants where client_id = ${clientId}`.pipe(
    Effect.orDie
  )

layer(ServerWithSmtp({ DOCK_OAUTH_REGISTRATIONS_PER_IP_PER_HOUR: "1000" }), { excludeTestServices: true })(
  "OAuth over HTTP",
  (it) => {
    describe("metadata", () => {
      it.effect("RFC 8414 metadata names the endpoints, S256, both grant types and CIMD support", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const base = server.config.baseUrl
          const reply = yield* fetchReply(`${server.url}/.well-known/oauth-authorization-server`)
          expect(reply.status).toBe(200)
          expect(reply.json).toMatchObject({
            issuer: base,
            authorization_endpoint: `${base}/oauth/authorize`,
            token_endpoint: `${base}/oauth/token`,
            registration_endpoint: `${base}/oauth/register`,
            revocation_endpoint: `${base}/oauth/revoke`,
            code_challenge_methods_supported: ["S256"],
            grant_types_supported: ["authorization_code", "refresh_token"],
            response_types_supported: ["code"],
            scopes_supported: ["mcp:read", "mcp:write"],
            token_endpoint_auth_methods_supported: ["none"],
            client_id_metadata_document_supported: true,
            authorization_response_iss_parameter_supported: true
          })
          const resource = yield* fetchReply(`${server.url}/.well-known/oauth-protected-resource/mcp`)
          expect(resource.json.authorization_servers).toEqual([base])
          const challenge = yield* fetchReply(`${server.url}/mcp`, { method: "POST" })
          expect(challenge.status).toBe(401)
          expect(challenge.headers["www-authenticate"]).toBe(
            `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`
          )
        }))
    })

    describe("connect-an-agent docs", () => {
      it.effect("/docs/connect/agents names this server's MCP URL for each client; /auth.md mentions OAuth", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const base = server.config.baseUrl
          const page = yield* browserFor(server).get("/docs/connect/agents")
          expect(page.status).toBe(200)
          for (const text of ["Claude", "ChatGPT", "Claude Code", "Cursor", "VS Code", "MCP Inspector", "Headless"]) {
            expect(page.text).toContain(text)
          }
          expect(page.text).toContain(`claude mcp add --transport http dock ${base}/mcp`)
          const manifest = yield* fetchReply(`${server.url}/auth.md`)
          expect(manifest.text).toContain("OAuth 2.1")
          expect(manifest.text).toContain(`${base}/docs/connect/agents`)
        }))
    })

    describe("dynamic client registration", () => {
      it.effect("accepts https, loopback http and reverse-DNS schemes; answers a public client", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const uris = [
            "https://app.example/cb",
            "http://localhost:33418/cb",
            "http://127.0.0.1/x",
            "com.example.app:/oauth"
          ]
          const client = yield* registerClient(server, { redirect_uris: uris, client_name: "Many" })
          expect(client).toMatchObject({
            client_name: "Many",
            redirect_uris: uris,
            token_endpoint_auth_method: "none",
            grant_types: ["authorization_code", "refresh_token"]
          })
          expect(client.client_id).toMatch(/^dock_client_/)
          const rows = yield* server.sql<{ id: string }>`select id from oauth_clients where id = ${client.client_id}`
          expect(rows).toHaveLength(1)
        }))

      it.effect("refuses javascript:, data:, fragments, http off loopback, bare custom schemes; stores nothing", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const name = `refused-${unique()}`
          for (
            const uri of [
              "javascript:alert(1)",
              "data:text/html,hi",
              "https://app.example/cb#frag",
              "http://app.example/cb",
              "myapp:/cb",
              "not a uri"
            ]
          ) {
            const reply = yield* postJson(`${server.url}/oauth/register`, { client_name: name, redirect_uris: [uri] })
            expect(reply.status, uri).toBe(400)
            expect(reply.json.error).toBe("invalid_redirect_uri")
          }
          const none = yield* postJson(`${server.url}/oauth/register`, { client_name: name })
          expect(none.status).toBe(400)
          const rows = yield* server.sql`select id from oauth_clients where client_name = ${name}`
          expect(rows).toHaveLength(0)
        }))
    })

    describe("authorize", () => {
      it.effect("errors are a page: before the redirect URI is known without a way back, after with a link back", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const client = yield* registerClient(server)
          const browser = browserFor(server)
          const { challenge } = pkce()
          const unknown = yield* browser.get(
            authorizeUrl(server, { client_id: "dock_client_nope", code_challenge: challenge })
          )
          expect(unknown.status).toBe(400)
          expect(unknown.headers["location"]).toBeUndefined()
          expect(unknown.text).toContain("not registered")
          const mismatch = yield* browser.get(
            authorizeUrl(server, {
              client_id: client.client_id,
              code_challenge: challenge,
              redirect_uri: `${REDIRECT}/x`
            })
          )
          expect(mismatch.status).toBe(400)
          expect(mismatch.headers["location"]).toBeUndefined()
          expect(mismatch.text).toContain("must match exactly")

          const cases: Array<[Record<string, string | undefined>, string]> = [
            [{ code_challenge: undefined }, "invalid_request"],
            [{ code_challenge_method: "plain" }, "invalid_request"],
            [{ response_type: "token" }, "unsupported_response_type"],
            [{ resource: "https://elsewhere.example/mcp" }, "invalid_target"],
            [{ scope: "mcp:read admin" }, "invalid_scope"]
          ]
          // Not signed in, and signed in: never a redirect (the registration is open to anyone), but a page that
          // names the error and the host, with a link the person may follow carrying error, state and iss.
          const person = yield* signedIn(server)
          for (const visitor of [browser, person]) {
            for (const [change, error] of cases) {
              const reply = yield* visitor.get(
                authorizeUrl(server, { client_id: client.client_id, code_challenge: challenge, ...change })
              )
              const back = returnLinkParams(reply)
              expect(reply.text).toContain(error)
              expect(back.host).toBe("127.0.0.1:9")
              expect(back.url).toBe(REDIRECT)
              expect(back.params.get("error"), JSON.stringify(change)).toBe(error)
              expect(back.params.get("error_description")).not.toBeNull()
              expect(back.params.get("state")).toBe("st-123")
              expect(back.params.get("iss")).toBe(server.config.baseUrl)
            }
          }
          // A consent form whose request was tampered with is refused the same way when posted.
          const page = yield* person.get(
            authorizeUrl(server, { client_id: client.client_id, code_challenge: challenge })
          )
          const tampered = new URLSearchParams({
            ...hiddenFields(page.text),
            response_type: "token",
            decision: "approve",
            access: "write",
            docks: "all"
          })
          const posted = returnLinkParams(yield* person.postRaw("/oauth/authorize", tampered.toString()))
          expect(posted.params.get("error")).toBe("unsupported_response_type")
          expect(yield* grantRows(server, client.client_id)).toHaveLength(0)
        }))

      it.effect("signs in first and comes back; the consent page cannot be framed; deny answers access_denied", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const client = yield* registerClient(server)
          const browser = browserFor(server)
          const { challenge } = pkce()
          const path = authorizeUrl(server, { client_id: client.client_id, code_challenge: challenge })
          const away = yield* browser.get(path)
          expect(away.status).toBe(303)
          expect(away.headers["location"]).toBe(`/login?next=${encodeURIComponent(path)}`)
          const back = yield* signIn(browser, `consent-${unique()}@example.com`, path)
          expect(back.headers["location"]).toBe(path)
          const page = yield* browser.get(path)
          expect(page.status).toBe(200)
          expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
          expect(page.headers["x-frame-options"]).toBe("DENY")
          expect(page.headers["cache-control"]).toBe("no-store")
          expect(page.text).toContain("Test Agent")
          expect(page.text).toContain("127.0.0.1:9")
          expect(page.text).toContain("mcp:write")
          const form = new URLSearchParams({ ...hiddenFields(page.text), decision: "deny" })
          const denied = locationParams(yield* browser.postRaw("/oauth/authorize", form.toString()))
          expect(denied.get("error")).toBe("access_denied")
          expect(denied.get("state")).toBe("st-123")
          expect(denied.get("iss")).toBe(server.config.baseUrl)
          expect(yield* grantRows(server, client.client_id)).toHaveLength(0)
        }))

      it.effect("an approve without the CSRF token or from another origin is refused and issues nothing", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const client = yield* registerClient(server)
          const browser = yield* signedIn(server)
          const { challenge } = pkce()
          const page = yield* browser.get(
            authorizeUrl(server, { client_id: client.client_id, code_challenge: challenge })
          )
          const fields = { ...hiddenFields(page.text), decision: "approve", access: "write", docks: "all" }
          const noCsrf = new URLSearchParams({ ...fields, csrf: "" }).toString()
          expect((yield* browser.postRaw("/oauth/authorize", noCsrf)).status).toBe(403)
          const foreign = new URLSearchParams(fields).toString()
          const other = yield* browser.postRaw("/oauth/authorize", foreign, { origin: "https://evil.example" })
          expect(other.status).toBe(403)
          expect(other.headers["location"]).toBeUndefined()
          expect(yield* grantRows(server, client.client_id)).toHaveLength(0)
          const codes = yield* server.sql`select id from oauth_codes where client_id = ${client.client_id}`
          expect(codes).toHaveLength(0)
          // The same form with both passes.
          expect(csrfIn(page.text)).toBe(hiddenFields(page.text)["csrf"])
          const ok = yield* browser.postRaw("/oauth/authorize", foreign)
          expect(locationParams(ok).get("code")).toMatch(/^[0-9A-Za-z]{43}$/)
        }))
    })

    describe("token endpoint", () => {
      it.effect("the code gives an access token for /mcp and a refresh token; no-store; the code is one-time", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { client, code, tokens, verifier } = yield* connected(server)
          expect(tokens.token_type).toBe("Bearer")
          expect(tokens.access_token).toMatch(/^dock_at_/)
          expect(tokens.refresh_token).toMatch(/^dock_rt_/)
          expect(tokens.expires_in).toBe(3600)
          expect(tokens.scope).toBe("mcp:read mcp:write")
          const listed = toolAnswer(yield* rawToolCall(server.url, tokens.access_token, "list_buckets", {}))
          expect(listed.isError).not.toBe(true)

          // Replaying the code fails and revokes what it issued.
          const replay = yield* exchange(server, client.client_id, code, verifier)
          expect(replay.status).toBe(400)
          expect(replay.json.error).toBe("invalid_grant")
          expect(replay.headers["cache-control"]).toBe("no-store")
          const after = yield* rawToolCall(server.url, tokens.access_token, "list_buckets", {})
          expect(after.status).toBe(401)
          expect((yield* grantRows(server, client.client_id))[0]!.revoked_at).not.toBeNull()
          const refresh = yield* tokenRequest(server, {
            grant_type: "refresh_token",
            refresh_token: tokens.refresh_token,
            client_id: client.client_id
          })
          expect(refresh.json.error).toBe("invalid_grant")
        }))

      it.effect("a wrong or missing PKCE verifier, another redirect URI or client, a foreign resource: refused", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const client = yield* registerClient(server)
          const browser = yield* signedIn(server)
          const freshCode = Effect.gen(function*() {
            const pair = pkce()
            const { params } = yield* approve(
              browser,
              authorizeUrl(server, { client_id: client.client_id, code_challenge: pair.challenge })
            )
            return { code: params.get("code")!, verifier: pair.verifier }
          })
          const base = (code: string, verifier: string) => ({
            grant_type: "authorization_code",
            code,
            client_id: client.client_id,
            redirect_uri: REDIRECT,
            code_verifier: verifier
          })
          const wrong = yield* freshCode
          const wrongReply = yield* tokenRequest(server, base(wrong.code, pkce().verifier))
          expect(wrongReply.status).toBe(400)
          expect(wrongReply.json).toEqual({
            error: "invalid_grant",
            error_description: expect.stringContaining("code_verifier")
          })
          const missing = yield* freshCode
          const { code_verifier: _, ...noVerifier } = base(missing.code, missing.verifier)
          const missingReply = yield* tokenRequest(server, noVerifier)
          expect(missingReply.json.error).toBe("invalid_request")
          const redirect = yield* freshCode
          const redirectReply = yield* tokenRequest(server, {
            ...base(redirect.code, redirect.verifier),
            redirect_uri: "http://127.0.0.1:9/other"
          })
          expect(redirectReply.json.error).toBe("invalid_grant")
          const other = yield* registerClient(server)
          const stolen = yield* freshCode
          const stolenReply = yield* tokenRequest(server, {
            ...base(stolen.code, stolen.verifier),
            client_id: other.client_id
          })
          expect(stolenReply.json.error).toBe("invalid_grant")
          const foreign = yield* freshCode
          const foreignReply = yield* tokenRequest(server, {
            ...base(foreign.code, foreign.verifier),
            resource: "https://elsewhere.example/mcp"
          })
          expect(foreignReply.json.error).toBe("invalid_target")
          const unsupported = yield* tokenRequest(server, { grant_type: "password", client_id: client.client_id })
          expect(unsupported.json.error).toBe("unsupported_grant_type")
          const noClient = yield* tokenRequest(server, { grant_type: "authorization_code", code: "x" })
          expect(noClient.status).toBe(401)
          expect(noClient.json.error).toBe("invalid_client")
          const tokens = yield* server.sql`select t.id from tokens t join oauth_grants g on g.id = t.grant_id
          where g.client_id = ${client.client_id}`
          expect(tokens).toHaveLength(0)
        }))

      it.effect("refresh rotates; reusing a spent refresh token revokes the whole grant", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { client, tokens } = yield* connected(server)
          const first = yield* tokenRequest(server, {
            grant_type: "refresh_token",
            refresh_token: tokens.refresh_token,
            client_id: client.client_id
          })
          expect(first.status, first.text).toBe(200)
          expect(first.json.refresh_token).not.toBe(tokens.refresh_token)
          expect(first.json.access_token).not.toBe(tokens.access_token)
          const fresh = first.json as Tokens
          expect((yield* rawToolCall(server.url, fresh.access_token, "list_buckets", {})).status).toBe(200)
          const reuse = yield* tokenRequest(server, {
            grant_type: "refresh_token",
            refresh_token: tokens.refresh_token,
            client_id: client.client_id
          })
          expect(reuse.status).toBe(400)
          expect(reuse.json.error).toBe("invalid_grant")
          // The grant is gone: the newest access and refresh tokens too.
          expect((yield* rawToolCall(server.url, fresh.access_token, "list_buckets", {})).status).toBe(401)
          const again = yield* tokenRequest(server, {
            grant_type: "refresh_token",
            refresh_token: fresh.refresh_token,
            client_id: client.client_id
          })
          expect(again.json.error).toBe("invalid_grant")
        }))

      /** Of parallel spends of one code or refresh token: exactly one issued tokens, the rest are invalid_grant, and
       * the grant is revoked. Answers the tokens issued. */
      const onlyOneIssued = (
        server: RunningServer,
        clientId: string,
        replies: ReadonlyArray<{ status: number; text: string; json: any }>
      ) =>
        Effect.gen(function*() {
          const issued = replies.filter((reply) => reply.status === 200)
          expect(issued, replies.map((reply) => reply.text).join("\n")).toHaveLength(1)
          for (const reply of replies.filter((reply) => reply.status !== 200)) {
            expect(reply.json.error).toBe("invalid_grant")
          }
          expect((yield* grantRows(server, clientId))[0]!.revoked_at).not.toBeNull()
          return issued[0]!.json as Tokens
        })

      it.effect("one code spent in parallel: exactly one request gets tokens, and the replays revoke the grant", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const client = yield* registerClient(server)
          const browser = yield* signedIn(server)
          const { challenge, verifier } = pkce()
          const { params } = yield* approve(
            browser,
            authorizeUrl(server, { client_id: client.client_id, code_challenge: challenge })
          )
          const code = params.get("code")!
          const replies = yield* Effect.all(
            Array.from({ length: 6 }, () => exchange(server, client.client_id, code, verifier)),
            { concurrency: "unbounded" }
          )
          const access = (yield* onlyOneIssued(server, client.client_id, replies)).access_token
          expect((yield* rawToolCall(server.url, access, "list_buckets", {})).status).toBe(401)
        }))

      it.effect("one refresh token used in parallel: exactly one request gets tokens, and the reuse ends the grant", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { client, tokens } = yield* connected(server)
          const replies = yield* Effect.all(
            Array.from({ length: 6 }, () =>
              tokenRequest(server, {
                grant_type: "refresh_token",
                refresh_token: tokens.refresh_token,
                client_id: client.client_id
              })),
            { concurrency: "unbounded" }
          )
          const fresh = yield* onlyOneIssued(server, client.client_id, replies)
          expect((yield* rawToolCall(server.url, fresh.access_token, "list_buckets", {})).status).toBe(401)
          const next = yield* tokenRequest(server, {
            grant_type: "refresh_token",
            refresh_token: fresh.refresh_token,
            client_id: client.client_id
          })
          expect(next.json.error).toBe("invalid_grant")
        }))

      it.effect("a refresh may ask for fewer scopes (that access token has only those), never more", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { client, tokens } = yield* connected(server)
          const narrowed = yield* tokenRequest(server, {
            grant_type: "refresh_token",
            refresh_token: tokens.refresh_token,
            client_id: client.client_id,
            scope: "mcp:read"
          })
          expect(narrowed.status, narrowed.text).toBe(200)
          expect(narrowed.json.scope).toBe("mcp:read")
          const write = toolAnswer(
            yield* rawToolCall(server.url, narrowed.json.access_token, "create_bucket", {
              title: "Nope",
              slug: `n-${unique()}`
            })
          )
          expect(write.structuredContent.error.code).toBe("permission_denied")
          // The grant keeps its scopes: the next refresh without scope has both again.
          const full = yield* tokenRequest(server, {
            grant_type: "refresh_token",
            refresh_token: narrowed.json.refresh_token,
            client_id: client.client_id
          })
          expect(full.json.scope).toBe("mcp:read mcp:write")

          const readOnly = yield* connected(server, { scope: "mcp:read" })
          const wider = yield* tokenRequest(server, {
            grant_type: "refresh_token",
            refresh_token: readOnly.tokens.refresh_token,
            client_id: readOnly.client.client_id,
            scope: "mcp:read mcp:write"
          })
          expect(wider.status).toBe(400)
          expect(wider.json.error).toBe("invalid_scope")
        }))

      it.effect("HTTP Basic: a client id that does not decode is 401 invalid_client; only Basic gets a Basic challenge", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { client, tokens } = yield* connected(server)
          const basic = (user: string) => `Basic ${Buffer.from(`${user}:`).toString("base64")}`
          const post = (path: string, form: Record<string, string>, authorization?: string) =>
            fetchReply(`${server.url}${path}`, {
              method: "POST",
              headers: {
                "content-type": "application/x-www-form-urlencoded",
                ...(authorization === undefined ? {} : { authorization })
              },
              body: new URLSearchParams(form).toString()
            })
          const refresh = { grant_type: "refresh_token", refresh_token: tokens.refresh_token }
          const malformed = yield* post("/oauth/token", refresh, basic("%zz"))
          expect(malformed.status).toBe(401)
          expect(malformed.json.error).toBe("invalid_client")
          expect(malformed.headers["www-authenticate"]).toMatch(/^Basic /)
          const revoke = yield* post("/oauth/revoke", { token: tokens.access_token }, basic("%zz"))
          expect(revoke.status).toBe(401)
          expect(revoke.json.error).toBe("invalid_client")
          // Without Basic: 401 and no challenge.
          const noClient = yield* post("/oauth/token", refresh)
          expect(noClient.status).toBe(401)
          expect(noClient.headers["www-authenticate"]).toBeUndefined()
          // The client id as the Basic user (percent-encoded) works.
          const ok = yield* post("/oauth/token", refresh, basic(encodeURIComponent(client.client_id)))
          expect(ok.status, ok.text).toBe(200)
          expect(ok.headers["www-authenticate"]).toBeUndefined()
        }))

      it.effect("/oauth/revoke: the access token is 401 on the next request; a refresh token ends the grant", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { client, tokens } = yield* connected(server)
          expect((yield* rawToolCall(server.url, tokens.access_token, "list_buckets", {})).status).toBe(200)
          const revoked = yield* fetchReply(`${server.url}/oauth/revoke`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ token: tokens.access_token, client_id: client.client_id }).toString()
          })
          expect(revoked.status).toBe(200)
          expect((yield* rawToolCall(server.url, tokens.access_token, "list_buckets", {})).status).toBe(401)
          // Unknown tokens are fine (RFC 7009 §2.2).
          const unknown = yield* fetchReply(`${server.url}/oauth/revoke`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: "token=whatever"
          })
          expect(unknown.status).toBe(200)
          const second = yield* connected(server)
          yield* fetchReply(`${server.url}/oauth/revoke`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ token: second.tokens.refresh_token }).toString()
          })
          expect((yield* rawToolCall(server.url, second.tokens.access_token, "list_buckets", {})).status).toBe(401)
          expect((yield* grantRows(server, second.client.client_id))[0]!.revoked_at).not.toBeNull()
        }))
    })

    describe("at /mcp", () => {
      it.effect("without mcp:write a write tool is permission_denied; reads work", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { tokens } = yield* connected(server, { scope: "mcp:read" })
          expect(tokens.scope).toBe("mcp:read")
          const read = toolAnswer(yield* rawToolCall(server.url, tokens.access_token, "list_buckets", {}))
          expect(read.isError).not.toBe(true)
          const write = toolAnswer(
            yield* rawToolCall(server.url, tokens.access_token, "create_bucket", {
              title: "Nope",
              slug: `n-${unique()}`
            })
          )
          expect(write.isError).toBe(true)
          expect(write.structuredContent.error.code).toBe("permission_denied")
        }))

      it.effect("the person may narrow a write request to read; writes then are permission_denied", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { tokens } = yield* connected(server, { choices: { access: "read", docks: "all" } })
          expect(tokens.scope).toBe("mcp:read")
          const write = toolAnswer(
            yield* rawToolCall(server.url, tokens.access_token, "create_bucket", {
              title: "Nope",
              slug: `n-${unique()}`
            })
          )
          expect(write.structuredContent.error.code).toBe("permission_denied")
        }))

      it.effect("an access token for another audience, or an expired one, is 401; a refresh token is no bearer", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { tokens } = yield* connected(server)
          const elsewhere = yield* connected(server)
          yield* server.sql`update tokens set audience = 'https://elsewhere.example/mcp'
          where secret_hash = encode(sha256(${elsewhere.tokens.access_token}::bytea), 'hex')`
          const foreign = yield* rawToolCall(server.url, elsewhere.tokens.access_token, "list_buckets", {})
          expect(foreign.status).toBe(401)
          expect(foreign.headers["www-authenticate"]).toContain(`error="invalid_token"`)
          expect((yield* rawToolCall(server.url, tokens.refresh_token, "list_buckets", {})).status).toBe(401)
          yield* server.sql`update tokens set expires_at = now() - interval '1 second'
          where secret_hash = encode(sha256(${tokens.access_token}::bytea), 'hex')`
          expect((yield* rawToolCall(server.url, tokens.access_token, "list_buckets", {})).status).toBe(401)
        }))
    })

    describe("client ID metadata documents (SSRF)", () => {
      it.scoped("private, loopback, link-local, ULA and metadata-service targets are refused before any request", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const browser = browserFor(server)
          const { challenge } = pkce()
          const host = yield* metadataHost
          host.documents.set("/ok.json", { client_id: `${host.url}/ok.json`, redirect_uris: [REDIRECT] })
          for (
            const clientId of [
              "https://10.0.0.5/client.json",
              "https://192.168.1.10/client.json",
              "https://169.254.169.254/latest/meta-data",
              "https://[::1]/client.json",
              "https://[fd00::1]/client.json",
              "https://[fe80::1]/client.json",
              "https://127.0.0.1/client.json",
              "https://localhost/client.json",
              // Loopback over http without DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA: refused too.
              `${host.url}/ok.json`
            ]
          ) {
            const reply = yield* browser.get(authorizeUrl(server, { client_id: clientId, code_challenge: challenge }))
            expect(reply.status, clientId).toBe(400)
            expect(reply.headers["location"]).toBeUndefined()
            expect(reply.text).toContain("could not be identified")
          }
          const stored = yield* server.sql`select id from oauth_clients where kind = 'metadata_document'`
          expect(stored).toHaveLength(0)
        }))

      it.effect("production refuses DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA", () =>
        Effect.gen(function*() {
          const production = {
            DOCK_ENV: "production",
            DOCK_BASE_URL: "https://dock.example",
            DOCK_SECRET: "a-production-secret-for-this-test"
          }
          const refused = yield* Effect.flip(
            configFrom({ ...production, DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA: "true" })
          )
          expect(String(refused)).toContain("DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA")
          const fine = yield* configFrom(production)
          expect(fine.oauthAllowLoopbackClientMetadata).toBe(false)
        }))

      it.effect("the address rules", () =>
        Effect.sync(() => {
          for (
            const address of [
              "10.1.1.1",
              "172.16.0.1",
              "192.168.0.1",
              "127.0.0.1",
              "169.254.1.1",
              "100.64.0.1",
              "0.0.0.0",
              "224.0.0.1",
              "::1",
              "::",
              "fd12::1",
              "fe80::1",
              "ff02::1",
              "::ffff:10.0.0.1",
              "::ffff:127.0.0.1",
              "::ffff:7f00:1",
              "::7f00:1",
              "::127.0.0.1",
              "::a00:1"
            ]
          ) {
            expect(isPublicAddress(address), address).toBe(false)
          }
          for (const address of ["93.184.216.34", "2606:4700::1111", "::ffff:93.184.216.34"]) {
            expect(isPublicAddress(address), address).toBe(true)
          }
          expect(isPublicAddress("127.0.0.1", true)).toBe(true)
          expect(isPublicAddress("10.0.0.1", true)).toBe(false)
        }))
    })

    describe("connected apps", () => {
      it.effect("lists the person's grants and revokes one (CSRF-checked): its tokens die at once", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { browser, client, tokens } = yield* connected(server)
          const page = yield* browser.get("/app/mcp")
          expect(page.status).toBe(200)
          expect(page.text).toContain("Test Agent")
          expect(page.text).toContain(client.client_id)
          expect(page.text).toContain("read and write")
          const grantId = /action="\/app\/mcp\/oauth\/([0-9a-f-]{36})\/revoke"/.exec(page.text)![1]!
          const refused = yield* browser.post(`/app/mcp/oauth/${grantId}/revoke`, { csrf: "nope" })
          expect(refused.status).toBe(403)
          expect((yield* rawToolCall(server.url, tokens.access_token, "list_buckets", {})).status).toBe(200)
          // Someone else cannot revoke it (404, nothing changes).
          const stranger = yield* signedIn(server)
          const strangerPage = yield* stranger.get("/app/mcp")
          const notTheirs = yield* stranger.post(`/app/mcp/oauth/${grantId}/revoke`, {
            csrf: csrfIn(strangerPage.text)
          })
          expect(notTheirs.status).toBe(404)
          const done = yield* browser.post(`/app/mcp/oauth/${grantId}/revoke`, { csrf: csrfIn(page.text) })
          expect(done.status).toBe(303)
          expect(done.headers["location"]).toBe("/app/mcp?done=app-revoked")
          expect((yield* rawToolCall(server.url, tokens.access_token, "list_buckets", {})).status).toBe(401)
          const refresh = yield* tokenRequest(server, {
            grant_type: "refresh_token",
            refresh_token: tokens.refresh_token,
            client_id: client.client_id
          })
          expect(refresh.json.error).toBe("invalid_grant")
          expect((yield* browser.get("/app/mcp")).text).not.toContain(client.client_id)
        }))

      it.effect("OAuth access tokens are not listed as personal tokens at /app/mcp; the grant is", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const { browser, client, tokens } = yield* connected(server)
          const rows = yield* server.sql<{ id: string }>`select id from tokens
          where secret_hash = encode(sha256(${tokens.access_token}::bytea), 'hex')`
          expect(rows).toHaveLength(1)
          const page = yield* browser.get("/app/mcp")
          expect(page.status).toBe(200)
          expect(page.text).toContain(client.client_id)
          expect(page.text).not.toContain(rows[0]!.id)
        }))

      it.effect("a grant restricted to some Docks: ticking none is refused; the token carries the ticked Docks", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const client = yield* registerClient(server)
          const browser = yield* signedIn(server)
          const { challenge, verifier } = pkce()
          const path = authorizeUrl(server, { client_id: client.client_id, code_challenge: challenge })
          const page = yield* browser.get(path)
          const dockId = /name="dock" value="([0-9a-f-]{36})"/.exec(page.text)![1]!
          // Ticking nothing under "some" is refused with the page again, nothing issued.
          const none = new URLSearchParams({
            ...hiddenFields(page.text),
            decision: "approve",
            access: "write",
            docks: "some"
          })
          const noneReply = yield* browser.postRaw("/oauth/authorize", none.toString())
          expect(noneReply.status).toBe(400)
          expect(yield* grantRows(server, client.client_id)).toHaveLength(0)
          const { params } = yield* approve(browser, path, { access: "write", docks: "some", dock: dockId })
          const reply = yield* exchange(server, client.client_id, params.get("code")!, verifier)
          const rows = yield* server.sql<{ allowed_bucket_ids: Array<string> }>`select allowed_bucket_ids from tokens
          where secret_hash = encode(sha256(${reply.json.access_token}::bytea), 'hex')`
          expect(rows[0]!.allowed_bucket_ids).toEqual([dockId])
          const listed = yield* browser.get("/app/mcp")
          expect(listed.text).not.toContain("all I can edit")
        }))
    })
  }
)

layer(
  ServerWithSmtp({
    DOCK_OAUTH_REGISTRATIONS_PER_IP_PER_HOUR: "2",
    DOCK_OAUTH_CLIENT_METADATA_FETCHES_PER_IP_PER_HOUR: "2",
    DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA: "true"
  }),
  { excludeTestServices: true }
)(
  "OAuth limits",
  (it) => {
    it.scoped("metadata document fetches per address are rate-limited (429, Retry-After); a cached one is not", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const host = yield* metadataHost
        const browser = browserFor(server)
        const { challenge } = pkce()
        const cached = `${host.url}/cached.json`
        host.documents.set("/cached.json", { client_id: cached, redirect_uris: [REDIRECT] })
        const authorize = (clientId: string) =>
          browser.get(authorizeUrl(server, { client_id: clientId, code_challenge: challenge }))
        // Fetched (1), then from the cache (not counted); a failed fetch counts too (2).
        expect((yield* authorize(cached)).status).toBe(303)
        expect((yield* authorize(cached)).status).toBe(303)
        expect((yield* authorize(`${host.url}/missing-${unique()}.json`)).status).toBe(400)
        const third = yield* authorize(`${host.url}/third-${unique()}.json`)
        expect(third.status).toBe(429)
        expect(Number(third.headers["retry-after"])).toBeGreaterThan(0)
        expect(third.headers["location"]).toBeUndefined()
        expect(third.text).toContain("Too many client metadata documents")
        expect((yield* authorize(cached)).status).toBe(303)
      }))

    it.effect("registrations per address are rate-limited (429, Retry-After); the refused one is not stored", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* registerClient(server)
        yield* registerClient(server)
        const third = yield* postJson(`${server.url}/oauth/register`, {
          client_name: "Third",
          redirect_uris: [REDIRECT]
        })
        expect(third.status).toBe(429)
        expect(Number(third.headers["retry-after"])).toBeGreaterThan(0)
        const rows = yield* server.sql`select id from oauth_clients where client_name = 'Third'`
        expect(rows).toHaveLength(0)
      }))
  }
)

layer(
  ServerWithSmtp({
    DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA: "true",
    DOCK_OAUTH_CLIENT_METADATA_TIMEOUT: "700 millis"
  }),
  { excludeTestServices: true }
)("OAuth client ID metadata documents (loopback allowed for tests)", (it) => {
  it.scoped("a good document is used (and cached); mismatched, oversized, slow and redirects to private hosts are refused", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const host = yield* metadataHost
      const { challenge, verifier } = pkce()
      const good = `${host.url}/good.json`
      host.documents.set("/good.json", { client_id: good, client_name: "CIMD Agent", redirect_uris: [REDIRECT] })
      host.documents.set("/other.json", { client_id: `${host.url}/elsewhere.json`, redirect_uris: [REDIRECT] })
      const browser = yield* signedIn(server)
      const refusedWith = (clientId: string, text: string) =>
        Effect.gen(function*() {
          const reply = yield* browser.get(authorizeUrl(server, { client_id: clientId, code_challenge: challenge }))
          expect(reply.status, clientId).toBe(400)
          expect(reply.text, clientId).toContain(text)
        })
      yield* refusedWith(`${host.url}/other.json`, "client_id is not its URL")
      yield* refusedWith(`${host.url}/big.json`, "larger than 65536 bytes")
      yield* refusedWith(`${host.url}/slow.json`, "did not arrive within")
      yield* refusedWith(`${host.url}/to-private`, "does not fetch from")
      yield* refusedWith(`${host.url}/loop`, "redirects more than 3 times")
      yield* refusedWith(`${host.url}/missing.json`, "HTTP 404")

      const { params } = yield* approve(browser, authorizeUrl(server, { client_id: good, code_challenge: challenge }))
      const reply = yield* exchange(server, good, params.get("code")!, verifier)
      expect(reply.status, reply.text).toBe(200)
      const stored = yield* server.sql<
        { client_name: string; kind: string }
      >`select client_name, kind from oauth_clients
        where id = ${good}`
      expect(stored).toEqual([{ client_name: "CIMD Agent", kind: "metadata_document" }])
      // Cached: a changed document is not fetched again within the hour.
      host.documents.set("/good.json", { client_id: good, client_name: "Changed", redirect_uris: [REDIRECT] })
      const page = yield* browser.get(authorizeUrl(server, { client_id: good, code_challenge: challenge }))
      expect(page.text).toContain("CIMD Agent")
    }))

  it.scoped("a document named by host name (not an address literal) is fetched and used end to end", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const host = yield* metadataHost
      const { challenge, verifier } = pkce()
      const byName = `${host.url.replace("127.0.0.1", "localhost")}/by-name.json`
      host.documents.set("/by-name.json", { client_id: byName, client_name: "Named Host", redirect_uris: [REDIRECT] })
      const browser = yield* signedIn(server)
      const { page, params } = yield* approve(
        browser,
        authorizeUrl(server, { client_id: byName, code_challenge: challenge })
      )
      expect(page.text).toContain("Named Host")
      const reply = yield* exchange(server, byName, params.get("code")!, verifier)
      expect(reply.status, reply.text).toBe(200)
    }))

  it.scoped("a redirect to a Location that is no URL refuses the client, and the server keeps answering", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const host = yield* metadataHost
      const { challenge } = pkce()
      const reply = yield* browserFor(server).get(
        authorizeUrl(server, { client_id: `${host.url}/bad-location`, code_challenge: challenge })
      )
      expect(reply.status).toBe(400)
      expect(reply.headers["location"]).toBeUndefined()
      expect(reply.text).toContain("could not be identified")
      expect(reply.text).toContain("redirects to something that is not a URL")
      const still = yield* fetchReply(`${server.url}/.well-known/oauth-authorization-server`)
      expect(still.status).toBe(200)
    }))

  it.scoped("the OAuth sweep drops expired codes, unused registrations and stale unused metadata clients", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const host = yield* metadataHost
      const browser = yield* signedIn(server)
      const start = Date.now()
      // Used: a registration and a metadata-document client with grants.
      const used = yield* connected(server)
      const kept = `${host.url}/kept-${unique()}.json`
      host.documents.set(new URL(kept).pathname, { client_id: kept, redirect_uris: [REDIRECT] })
      const keptPair = pkce()
      const keptCode = yield* approve(
        browser,
        authorizeUrl(server, { client_id: kept, code_challenge: keptPair.challenge })
      )
      expect((yield* exchange(server, kept, keptCode.params.get("code")!, keptPair.verifier)).status).toBe(200)
      // Unused: a registration nobody used, and a metadata document fetched once (its consent page never answered).
      const unused = yield* registerClient(server)
      const dropped = `${host.url}/dropped-${unique()}.json`
      host.documents.set(new URL(dropped).pathname, { client_id: dropped, redirect_uris: [REDIRECT] })
      const droppedPage = yield* browser.get(
        authorizeUrl(server, { client_id: dropped, code_challenge: pkce().challenge })
      )
      expect(droppedPage.status).toBe(200)
      // A code never exchanged.
      const pending = yield* approve(
        browser,
        authorizeUrl(server, { client_id: used.client.client_id, code_challenge: pkce().challenge })
      )
      const pendingHash = server.sql`encode(sha256(${pending.params.get("code")!}::bytea), 'hex')`
      const codeCount = server.sql<{ count: number }>`select count(*)::int as count from oauth_codes
        where code_hash = ${pendingHash}`.pipe(Effect.map((rows) => rows[0]!.count), Effect.orDie)
      const all = [used.client.client_id, kept, unused.client_id, dropped].sort()

      yield* sweepAt(server, start)
      expect(yield* clientIds(server, all)).toEqual(all)
      expect(yield* codeCount).toBe(1)
      // Two hours on: the metadata cache has expired, so the unused document's row goes; the rest stays.
      yield* sweepAt(server, start + Duration.toMillis(Duration.hours(2)))
      expect(yield* clientIds(server, all)).toEqual(all.filter((id) => id !== dropped))
      expect(yield* codeCount).toBe(1)
      // Eight days on: the unused registration and the expired code go; used clients stay.
      yield* sweepAt(server, start + Duration.toMillis(Duration.days(8)))
      expect(yield* clientIds(server, all)).toEqual([used.client.client_id, kept].sort())
      expect(yield* codeCount).toBe(0)
    }))
})
