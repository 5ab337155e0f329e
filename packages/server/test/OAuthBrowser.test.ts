/**
 * OAuth end to end with the official MCP SDK client (issue 17): its OAuthClientProvider sends a real Chromium
 * through sign-in (the code from a real SMTP receiver) and the consent page, and takes the code at a loopback
 * redirect URI. From a 401 the client discovers the protected resource and the authorization server, registers
 * (DCR), authorizes with PKCE, exchanges the code, calls tools, refreshes (rotation), and a reused refresh token
 * ends the grant. The same with a Client ID Metadata Document served by a test server (loopback allowed through
 * DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA). The consent page is screenshot in light and dark, at phone width.
 */
import { describe, expect, layer } from "@effect/vitest"
import { auth, type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import { Effect, Layer } from "effect"
import * as Net from "node:net"
import type { Page, Route } from "playwright-core"
import { BrowserLive, openPage, skipBrowserTests } from "./support/Browser.ts"
import { fetchReply, rawToolCall, unique } from "./support/Http.ts"
import { codeIn } from "./support/Identity.ts"
import { metadataHost } from "./support/MetadataHost.ts"
import { REDIRECT, tokenRequest } from "./support/OAuthFlow.ts"
import { bodyText, mailTo, type Receiver, SmtpReceiver } from "./support/SmtpReceiver.ts"
import { TestServer } from "./support/TestServer.ts"
import { noBrowserComplaints, screenshots, ServerWithSmtp } from "./support/WebApp.ts"

/** A free loopback port, so the server's base URL (the resource the SDK checks) can name it. */
const freePort = Effect.async<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const port = (probe.address() as Net.AddressInfo).port
    probe.close(() => resume(Effect.succeed(port)))
  })
})

const OAuthServer = Layer.unwrapEffect(Effect.map(freePort, (port) =>
  ServerWithSmtp({
    PORT: String(port),
    DOCK_BASE_URL: `http://127.0.0.1:${port}`,
    DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA: "true"
  })))

/** An OAuthClientProvider whose "redirect" is Chromium driven through sign-in and consent. */
class BrowserProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  code: string | undefined
  authorizations = 0
  constructor(
    readonly drive: (url: URL) => Promise<string>,
    preregistered?: OAuthClientInformationMixed
  ) {
    this.info = preregistered
  }
  readonly sentState = `state-${Math.random().toString(36).slice(2)}`
  state() {
    return this.sentState
  }
  get redirectUrl() {
    return REDIRECT
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "SDK Agent",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "mcp:read mcp:write"
    }
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  async redirectToAuthorization(url: URL) {
    this.authorizations++
    this.code = await this.drive(url)
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/** Chromium from the authorization URL through sign-in (if asked) and consent to the code at the redirect URI. */
const driver =
  (page: Page, receiver: Receiver, email: string, onConsent: (page: Page) => Promise<void>) => async (url: URL) => {
    const atCallback = (target: URL | string) => target.toString().startsWith(`${REDIRECT}?`)
    // Nothing listens at the redirect URI: the browser is answered there, so its navigation ends on a page rather
    // than on Chromium's error page, which would interrupt the test's next navigation whenever it came late.
    const answerCallback = (route: Route) =>
      route.fulfill({ status: 200, contentType: "text/plain", body: "Connected." })
    await page.route(atCallback, answerCallback)
    const callback = page.waitForRequest((request) => atCallback(request.url()))
    await page.goto(url.toString())
    if (new URL(page.url()).pathname === "/login") {
      const before = receiver.received().filter((mail) => mail.to.includes(email)).length
      await page.getByLabel("Email address").fill(email)
      await page.getByRole("button", { name: "Mail me a code" }).click()
      await page.getByLabel("Six-digit code").waitFor()
      const mails = await Effect.runPromise(mailTo(receiver, email, before + 1))
      await page.getByLabel("Six-digit code").fill(codeIn(bodyText(mails[before]!.raw)))
      await page.getByRole("button", { name: "Sign in" }).click()
    }
    await page.getByRole("button", { name: "Allow" }).waitFor()
    await onConsent(page)
    await page.getByRole("button", { name: "Allow" }).click()
    const answer = new URL((await callback).url())
    await page.waitForURL(atCallback)
    await page.unroute(atCallback, answerCallback)
    expect(answer.searchParams.get("state")).toBe(url.searchParams.get("state"))
    expect(answer.searchParams.get("iss")).toBe(new URL(url).origin)
    return answer.searchParams.get("code")!
  }

/** Connects the SDK client: a 401, the browser round, finishAuth, and a connected client. */
const connectWithOAuth = (endpoint: URL, provider: BrowserProvider) =>
  Effect.promise(async () => {
    const first = new Client({ name: "dock-oauth-test", version: "1.0.0" })
    const error = await first.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider })).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(error).toBeInstanceOf(UnauthorizedError)
    const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider })
    await transport.finishAuth(provider.code!)
    const client = new Client({ name: "dock-oauth-test", version: "1.0.0" })
    await client.connect(transport)
    return client
  })

type ToolResult = { isError?: boolean; structuredContent?: any }

describe.skipIf(skipBrowserTests)("OAuth with the MCP SDK client and Chromium", () => {
  layer(Layer.merge(OAuthServer, BrowserLive), { excludeTestServices: true, timeout: 180_000 })((it) => {
    it.scoped("discovery from a 401, DCR, consent, tools, refresh rotation, reuse detection", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const receiver = yield* SmtpReceiver
        const recorded = yield* openPage({ origin: server.url })
        const endpoint = new URL(`${server.config.baseUrl}/mcp`)
        const email = `sdk-${unique()}@example.com`
        const provider = new BrowserProvider(
          driver(recorded.page, receiver, email, async (page) => {
            await Effect.runPromise(screenshots(page, "oauth-consent"))
            await page.setViewportSize({ width: 390, height: 844 })
            await Effect.runPromise(screenshots(page, "oauth-consent-phone"))
            await page.setViewportSize({ width: 1000, height: 800 })
          })
        )
        const client = yield* connectWithOAuth(endpoint, provider)
        expect(provider.authorizations).toBe(1)
        expect(provider.info?.client_id).toMatch(/^dock_client_/)
        const first = provider.saved!
        expect(first.access_token).toMatch(/^dock_at_/)

        const slug = `oauth-${unique()}`
        const created = (yield* Effect.promise(() =>
          client.callTool({ name: "create_bucket", arguments: { title: "Made over OAuth", slug } })
        )) as ToolResult
        expect(created.isError, JSON.stringify(created)).not.toBe(true)
        const listed = (yield* Effect.promise(() =>
          client.callTool({ name: "list_my_buckets", arguments: {} })
        )) as ToolResult
        expect(JSON.stringify(listed.structuredContent)).toContain(slug)
        // The write is recorded with the client's name as the agent.
        const actions = yield* server.sql<{ n: number }>`select count(*)::int as n from activity
          where agent_label = 'SDK Agent'`.pipe(Effect.orDie)
        expect(actions[0]!.n).toBeGreaterThan(0)

        // Refresh through the SDK: rotation.
        expect(yield* Effect.promise(() => auth(provider, { serverUrl: endpoint }))).toBe("AUTHORIZED")
        const second = provider.saved!
        expect(second.refresh_token).not.toBe(first.refresh_token)
        expect(second.access_token).not.toBe(first.access_token)
        const again = (yield* Effect.promise(() =>
          client.callTool({ name: "list_buckets", arguments: {} })
        )) as ToolResult
        expect(again.isError).not.toBe(true)

        // The first refresh token again: reuse, so the grant ends; the newest access token is 401 at once.
        const reuse = yield* tokenRequest(server, {
          grant_type: "refresh_token",
          refresh_token: first.refresh_token!,
          client_id: provider.info!.client_id
        })
        expect(reuse.json.error).toBe("invalid_grant")
        expect((yield* rawToolCall(server.url, second.access_token, "list_buckets", {})).status).toBe(401)
        // The connect-an-agent page.
        yield* Effect.promise(() => recorded.page.goto(`${server.url}/docs/connect/agents`))
        yield* screenshots(recorded.page, "connect-agents")
        yield* Effect.promise(() => client.close())
        noBrowserComplaints(recorded)

        // An invalid request from the registered client stays on a page of ours, with a link back it does not follow
        // by itself (after the complaints check: the browser logs the 400).
        const invalid = new URLSearchParams({
          client_id: provider.info!.client_id,
          redirect_uri: REDIRECT,
          response_type: "token",
          state: "s-1"
        })
        const refusedPage = yield* Effect.promise(() =>
          recorded.page.goto(`${server.url}/oauth/authorize?${invalid.toString()}`)
        )
        expect(refusedPage!.status()).toBe(400)
        expect(recorded.page.url()).toContain(`${server.url}/oauth/authorize?`)
        const back = recorded.page.getByRole("link", { name: /^Return to / })
        const href = new URL((yield* Effect.promise(() => back.getAttribute("href")))!)
        expect(`${href.origin}${href.pathname}`).toBe(REDIRECT)
        expect(href.searchParams.get("error")).toBe("unsupported_response_type")
        expect(href.searchParams.get("state")).toBe("s-1")
        yield* screenshots(recorded.page, "oauth-refused")
      }))

    it.scoped("a Client ID Metadata Document as client_id; revoke → 401", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const receiver = yield* SmtpReceiver
        const host = yield* metadataHost
        const clientId = `${host.url}/clients/sdk.json`
        host.documents.set("/clients/sdk.json", {
          client_id: clientId,
          client_name: "Metadata Agent",
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: "none"
        })
        const recorded = yield* openPage({ origin: server.url })
        const endpoint = new URL(`${server.config.baseUrl}/mcp`)
        let consentText = ""
        // The SDK's own clientMetadataUrl must be https; the test host is http on loopback, so the URL is handed
        // to the SDK as the client's id (which is what a metadata-document client id is).
        const provider = new BrowserProvider(
          driver(recorded.page, receiver, `cimd-${unique()}@example.com`, async (page) => {
            consentText = await page.locator("main").innerText()
          }),
          { client_id: clientId }
        )
        const client = yield* connectWithOAuth(endpoint, provider)
        expect(consentText).toContain("Metadata Agent")
        expect(consentText).toContain("127.0.0.1:9")
        const listed = (yield* Effect.promise(() =>
          client.callTool({ name: "list_buckets", arguments: {} })
        )) as ToolResult
        expect(listed.isError).not.toBe(true)
        const token = provider.saved!.access_token
        const revoked = yield* fetchReply(`${server.url}/oauth/revoke`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token, client_id: clientId }).toString()
        })
        expect(revoked.status).toBe(200)
        expect((yield* rawToolCall(server.url, token, "list_buckets", {})).status).toBe(401)
        // The grant itself stays (only that access token was revoked): it is listed among the connected apps.
        yield* Effect.promise(() => recorded.page.goto(`${server.url}/app/mcp`))
        expect(
          yield* Effect.promise(() => recorded.page.locator("section[aria-labelledby=oauth-grants] tbody").innerText())
        ).toContain("Metadata Agent")
        yield* screenshots(recorded.page, "oauth-connected-apps")
        yield* Effect.promise(() => client.close())
        noBrowserComplaints(recorded)
      }))
  })
})
