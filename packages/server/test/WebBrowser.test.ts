/**
 * The web app in Chromium (issue 16; docs/web.md): sign in with the code read from a real SMTP receiver, see
 * /app, create a Dock through the form, see the pages an agent pushed over /mcp (with its label), sign out, and find /app closed again. No page may trip its CSP or run
 * into a script error. Screenshots of /, /login and /app in light and dark go to DOCK_SCREENSHOT_DIR
 * (test-results/web by default, ignored by git); the ones in docs/screenshots were taken this way.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Path from "node:path"
import { BrowserLive, openPage, skipBrowserTests } from "./support/Browser.ts"
import { unique } from "./support/Http.ts"
import { codeIn } from "./support/Identity.ts"
import { type AdminUser, connect, labelledToken, pushed } from "./support/McpTools.ts"
import { bodyText, mailTo, SmtpReceiver } from "./support/SmtpReceiver.ts"
import { TestServer } from "./support/TestServer.ts"
import { noBrowserComplaints, SCREENSHOTS, screenshots, ServerWithSmtp, step } from "./support/WebApp.ts"

describe.skipIf(skipBrowserTests)("the web app in Chromium", () => {
  layer(
    Layer.merge(
      // What the pages show as the MCP URL (loopback hosts are answered in development whatever the port).
      ServerWithSmtp({ DOCK_BASE_URL: "http://localhost:8787" }),
      BrowserLive
    ),
    { excludeTestServices: true, timeout: 120_000 }
  )((it) => {
    it.scoped("sign in with the mailed code, create a Dock, sign out", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const receiver = yield* SmtpReceiver
        const recorded = yield* openPage({ origin: server.url })
        const { page } = recorded
        const email = `browser-${unique()}@example.com`
        const slug = `field-notes-${unique()}`

        yield* step(() => page.goto(`${server.url}/`))
        expect(yield* step(() => page.locator("h1").innerText())).toContain("Dock")
        yield* step(() => page.getByRole("link", { name: "Sign in with your email" }).click())
        yield* step(() => page.waitForURL(`${server.url}/login`))
        yield* screenshots(page, "login")
        yield* step(() => page.getByLabel("Email address").fill(email))
        yield* step(() => page.getByRole("button", { name: "Mail me a code" }).click())
        yield* step(() => page.getByLabel("Six-digit code").waitFor())
        yield* screenshots(page, "login-code")

        const mails = yield* mailTo(receiver, email)
        const code = codeIn(bodyText(mails[0]!.raw))
        yield* step(() => page.getByLabel("Six-digit code").fill(code))
        yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
        yield* step(() => page.waitForURL(`${server.url}/app`))
        expect(yield* step(() => page.locator("h1").innerText())).toBe("My Docks")

        // Keyboard: the skip link is the first stop and shows its focus.
        yield* step(() => page.keyboard.press("Tab"))
        expect(yield* step(() => page.evaluate(() => document.activeElement?.textContent))).toBe("Skip to content")

        yield* step(() => page.getByLabel("Title", { exact: true }).fill("Field notes"))
        yield* step(() => page.getByLabel(/^Slug/).fill(slug))
        yield* step(() => page.getByRole("radio", { name: /Public/ }).check())
        yield* screenshots(page, "app")
        yield* step(() => page.getByRole("button", { name: "Create Dock" }).click())
        yield* step(() => page.waitForURL(`${server.url}/app/buckets/${slug}`))
        expect(yield* step(() => page.locator("h1").innerText())).toContain("Field notes")

        // What an agent pushes over /mcp with its own labelled token shows in the Dock's list of pages.
        const [owner] = yield* server.sql<{ dock_id: string; id: string; username: string; email: string }>`select
          d.id as dock_id, u.id, u.username, u.email from docks d join users u on u.id = d.owner_id
          where d.slug = ${slug}`.pipe(Effect.orDie)
        const user = { id: owner!.id, username: owner!.username, email: owner!.email } as AdminUser
        const { token } = yield* labelledToken(user, "Trip planner")
        const agent = yield* connect(token, "v2 modern")
        yield* pushed(agent, "push_web_page", {
          bucket: owner!.dock_id,
          page_title: "Trip plan for the coast",
          page_content: "<h1>Trip plan</h1><p>Leave at dawn.</p>"
        })
        yield* pushed(agent, "push_markdown_file", {
          bucket: owner!.dock_id,
          page_content: "---\ntitle: Reading list\n---\n# Reading list\n\n- Tides"
        })
        yield* step(() => page.reload())
        expect(yield* step(() => page.locator("#pages tbody tr").count())).toBe(2)
        const pagesTable = yield* step(() => page.locator("#pages").innerText())
        expect(pagesTable).toContain("Trip plan for the coast")
        expect(pagesTable).toContain("Reading list")
        expect(pagesTable).toContain("Trip planner")
        yield* screenshots(page, "bucket")
        // Listed on the front page once it is discoverable.
        yield* server.sql`update docks set discoverable = true where id = ${owner!.dock_id}`.pipe(Effect.orDie)

        yield* step(() => page.goto(`${server.url}/app`))
        expect(yield* step(() => page.getByRole("link", { name: "Field notes" }).count())).toBe(1)
        yield* step(() => page.setViewportSize({ width: 390, height: 844 }))
        yield* step(() => page.screenshot({ path: Path.join(SCREENSHOTS, "app-phone-light.png"), fullPage: true }))
        yield* step(() => page.setViewportSize({ width: 1000, height: 800 }))

        yield* step(() => page.getByRole("button", { name: "Sign out" }).click())
        yield* step(() => page.waitForURL(`${server.url}/`))
        expect(yield* step(() => page.getByRole("link", { name: "Field notes" }).count())).toBe(1)
        yield* screenshots(page, "home")
        yield* step(() => page.goto(`${server.url}/app`))
        expect(page.url()).toBe(`${server.url}/login?next=%2Fapp`)
        noBrowserComplaints(recorded)
      }))
  })
})
