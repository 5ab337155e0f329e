/**
 * Connected agents and the claim page in Chromium (issue 16, items 5 and 10; docs/web.md "Connected agents and
 * claiming"): sign in, create a token in /app/mcp, use it from an MCP client, revoke it in the page and see 401;
 * claim an agent's sandbox through /claim with the mailed code, then sign in from the success page to open it
 * (a claim never signs anyone in). Screenshots `agents`, `agents-secret`, `claim`,
 * `claim-code` and `claimed` in light and dark (and `agents-phone` 390 px wide) go to DOCK_SCREENSHOT_DIR.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Path from "node:path"
import { BrowserLive, openPage, skipBrowserTests } from "./support/Browser.ts"
import { rawToolCall, unique } from "./support/Http.ts"
import { codeIn, register } from "./support/Identity.ts"
import { connectMcp } from "./support/McpClients.ts"
import { bodyText, mailTo, SmtpReceiver } from "./support/SmtpReceiver.ts"
import { TestServer } from "./support/TestServer.ts"
import {
  noBrowserComplaints,
  SCREENSHOTS,
  screenshots,
  ServerWithSmtp,
  signInInBrowser,
  step
} from "./support/WebApp.ts"

describe.skipIf(skipBrowserTests)("connected agents and claims in Chromium", () => {
  layer(
    Layer.merge(ServerWithSmtp({ DOCK_BASE_URL: "http://localhost:8787" }), BrowserLive),
    { excludeTestServices: true, timeout: 120_000 }
  )((it) => {
    it.scoped("create a token in /app/mcp, use it from an MCP client, revoke it and see 401", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const recorded = yield* openPage({ origin: server.url })
        const { page } = recorded
        const email = `agents-browser-${unique()}@example.com`
        yield* signInInBrowser(page, server.url, email)

        // A second Dock, so the form offers a choice.
        yield* step(() => page.getByLabel("Title", { exact: true }).fill("Research notes"))
        yield* step(() => page.getByRole("button", { name: "Create Dock" }).click())
        yield* step(() => page.waitForURL(/\/app\/buckets\//))

        yield* step(() => page.getByRole("link", { name: "Agents" }).click())
        yield* step(() => page.waitForURL(`${server.url}/app/mcp`))
        expect(yield* step(() => page.locator("h1").innerText())).toBe("Connected agents")
        yield* step(() => page.getByLabel(/^Label/).fill("Claude Code on my laptop"))
        yield* step(() => page.getByRole("radio", { name: /Only the Docks chosen below/ }).check())
        yield* step(() => page.getByRole("checkbox", { name: /Research notes/ }).check())
        yield* step(() => page.getByLabel("Expires").selectOption("30"))
        yield* step(() => page.getByRole("button", { name: "Create token" }).click())
        yield* step(() => page.getByText("shown only this once").waitFor())
        yield* screenshots(page, "agents-secret")
        const secret = yield* step(() => page.getByLabel("Token", { exact: true }).inputValue())
        expect(secret).toMatch(/^dock_mcp_/)
        // The copy button (shown by /app.js, the page's only script) puts the token on the clipboard.
        yield* step(() =>
          page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url })
        )
        yield* step(() => page.getByRole("button", { name: "Copy the token" }).click())
        yield* step(() => page.getByRole("button", { name: "Copy the token" }).getByText("Copied").waitFor())
        expect(yield* step(() => page.evaluate(() => navigator.clipboard.readText()))).toBe(secret)
        const claudeLine = yield* step(() => page.locator("#claude-code ~ pre").innerText())
        expect(claudeLine).toBe(
          `claude mcp add --transport http dock http://localhost:8787/mcp --header "Authorization: Bearer ${secret}"`
        )
        const vscode = JSON.parse(yield* step(() => page.locator("#vscode ~ pre").innerText()))
        expect(vscode).toEqual({
          servers: {
            dock: {
              type: "http",
              url: "http://localhost:8787/mcp",
              headers: { Authorization: `Bearer ${secret}` }
            }
          }
        })

        // The token works from a real MCP client, confined to the chosen Dock.
        const agent = yield* connectMcp(server.url, secret, "v2 modern")
        const listed = yield* Effect.promise(() => agent.callTool({ name: "list_buckets", arguments: {} }))
        expect(JSON.stringify(listed)).toContain("Research notes")

        yield* step(() => page.getByRole("link", { name: /Done/ }).click())
        yield* step(() => page.waitForURL(`${server.url}/app/mcp`))
        const item = page.locator("li.token", { hasText: "Claude Code on my laptop" })
        expect(yield* step(() => item.innerText())).toContain("Research notes")
        expect(yield* step(() => page.content())).not.toContain(secret)
        yield* screenshots(page, "agents")
        yield* step(() => page.setViewportSize({ width: 390, height: 800 }))
        yield* step(() => page.screenshot({ path: Path.join(SCREENSHOTS, "agents-phone.png"), fullPage: true }))
        // Nothing wider than the phone: no sideways scrolling.
        expect(yield* step(() => page.evaluate(() => document.documentElement.scrollWidth))).toBeLessThanOrEqual(390)
        yield* step(() => page.setViewportSize({ width: 1000, height: 800 }))

        yield* step(() => page.getByRole("button", { name: "Revoke Claude Code on my laptop" }).click())
        yield* step(() => page.getByText("Token revoked").waitFor())
        const after = yield* rawToolCall(server.url, secret, "list_buckets", {})
        expect(after.status).toBe(401)
        noBrowserComplaints(recorded)
      }))

    it.scoped("claim an agent's sandbox through the claim page", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const receiver = yield* SmtpReceiver
        const registered = yield* register(server.url, { agent_label: "weekend-agent" })
        expect(registered.status).toBe(201)
        const { registration_id: token, sandbox_bucket: sandbox } = registered.json as {
          registration_id: string
          sandbox_bucket: { id: string; slug: string }
        }
        const recorded = yield* openPage({ origin: server.url })
        const { page } = recorded
        const email = `claim-browser-${unique()}@example.com`

        yield* step(() => page.goto(`${server.url}/claim?token=${encodeURIComponent(token)}`))
        expect(yield* step(() => page.getByLabel(/^Claim token/).inputValue())).toBe(token)
        yield* step(() => page.getByLabel(/^Your email address/).fill(email))
        yield* screenshots(page, "claim")
        yield* step(() => page.getByRole("button", { name: "Mail me a code" }).click())
        yield* step(() => page.getByLabel("Six-digit code").waitFor())
        yield* screenshots(page, "claim-code")
        const mails = yield* mailTo(receiver, email)
        yield* step(() => page.getByLabel("Six-digit code").fill(codeIn(bodyText(mails[0]!.raw))))
        yield* step(() => page.getByRole("button", { name: "Claim the sandbox" }).click())
        yield* step(() => page.getByRole("heading", { name: "Sandbox claimed" }).waitFor())
        yield* screenshots(page, "claimed")
        // The claim started no session (whoever holds the claim token could have finished it): the person signs in.
        const cookies = yield* step(() => page.context().cookies())
        expect(cookies.filter((cookie) => cookie.name === "dock_session")).toEqual([])
        expect(yield* step(() => page.locator("header.top").innerText())).not.toContain("Sign out")
        yield* step(() => page.getByRole("link", { name: "Sign in to open it" }).click())
        yield* step(() => page.getByLabel("Email address").fill(email))
        yield* step(() => page.getByRole("button", { name: "Mail me a code" }).click())
        yield* step(() => page.getByLabel("Six-digit code").waitFor())
        const signInMails = yield* mailTo(receiver, email, 2)
        yield* step(() => page.getByLabel("Six-digit code").fill(codeIn(bodyText(signInMails[1]!.raw))))
        yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
        yield* step(() => page.waitForURL(new RegExp(`/app/buckets/${sandbox.slug}\\?owner=`)))
        expect(yield* step(() => page.locator("header.top").innerText())).toContain("Sign out")
        yield* step(() => page.getByRole("link", { name: "Agents" }).click())
        expect(yield* step(() => page.locator("li.token").first().innerText())).toContain("Claimed sandbox")
        noBrowserComplaints(recorded)
      }))
  })
})
