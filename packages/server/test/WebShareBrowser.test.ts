/**
 * Share links and `/b/` in Chromium (issue 16, items 4 and 7; docs/web.md "Landing, the page API and share links in
 * the app"): the owner signs in with the mailed code, makes a share link on the page's share page, a fresh browser
 * context (no cookies) reads the private page through it, the owner revokes it in the app, and the fresh context
 * gets 404. Screenshots (light and dark) of the share page with its new link, the list after revoking, the same
 * on a phone, and the `/b/` chooser; no page trips its CSP or runs into a script error.
 */
import { CurrentPrincipal, Docks, type UserId, userPrincipal } from "@dock/domain"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Path from "node:path"
import { BrowserLive, openPage, skipBrowserTests } from "./support/Browser.ts"
import { unique } from "./support/Http.ts"
import { type AdminUser, newUser, seedPage } from "./support/McpTools.ts"
import { TestServer } from "./support/TestServer.ts"
import {
  noBrowserComplaints,
  SCREENSHOTS,
  screenshots,
  ServerWithSmtp,
  signInInBrowser,
  step
} from "./support/WebApp.ts"

const dockOf = (user: AdminUser, slug: string, visibility: "public" | "private", title: string) =>
  Effect.flatMap(TestServer, (server) =>
    server.domain(
      Effect.flatMap(Docks, (docks) => docks.create({ title, slug, visibility })).pipe(
        Effect.provideService(CurrentPrincipal, userPrincipal({ id: user.id as UserId, username: user.username })),
        Effect.orDie
      )
    ))

describe.skipIf(skipBrowserTests)("share links and /b/ in Chromium", () => {
  layer(Layer.merge(ServerWithSmtp(), BrowserLive), { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.scoped("the owner makes a link in the app, a fresh context reads it, the owner revokes it, then 404", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* newUser
        const slug = `voyages-${unique()}`
        const dock = yield* dockOf(owner, slug, "private", "Voyages")
        yield* seedPage(owner, dock.id, "north-passage", {
          title: "North passage plan",
          content: "<h1>North passage</h1><p>Sail at dawn, with the tide.</p>"
        })
        const sharePath = `/app/buckets/${slug}/north-passage/-/share?owner=${owner.username}`

        const recorded = yield* openPage({ origin: server.url })
        const { page } = recorded
        yield* signInInBrowser(page, server.url, owner.email, sharePath)
        expect(yield* step(() => page.locator("h1").innerText())).toBe("Share “North passage plan”")
        yield* step(() => page.getByLabel("Expires after").selectOption({ label: "30 days" }))
        yield* step(() => page.getByRole("button", { name: "Make share link" }).click())
        yield* step(() => page.getByLabel("Share link").waitFor())
        const shown = yield* step(() => page.getByLabel("Share link").inputValue())
        expect(shown).toMatch(/\/s\/[A-Za-z0-9_-]{40,}$/)
        yield* screenshots(page, "share-new")
        // The link as this test server answers it (the base URL names no reachable port).
        const link = `${server.url}${new URL(shown).pathname}`

        const reader = yield* openPage({ origin: server.url })
        const opened = yield* step(() => reader.page.goto(link))
        expect(opened?.status()).toBe(200)
        expect(yield* step(() => reader.page.locator("body").innerText())).toContain("Sail at dawn, with the tide.")

        // Listed without its secret, then revoked from the list.
        yield* step(() => page.goto(`${server.url}${sharePath}`))
        expect(yield* step(() => page.getByText("live", { exact: true }).count())).toBe(1)
        expect(yield* step(() => page.content())).not.toContain(new URL(shown).pathname)
        yield* step(() => page.getByRole("button", { name: /^Revoke/ }).click())
        yield* step(() => page.waitForURL(`${server.url}${sharePath}`))
        expect(yield* step(() => page.getByText("revoked", { exact: true }).count())).toBe(1)
        expect(yield* step(() => page.getByRole("button", { name: /^Revoke/ }).count())).toBe(0)
        yield* screenshots(page, "share-list")
        yield* step(() => page.setViewportSize({ width: 390, height: 844 }))
        yield* step(() =>
          page.screenshot({ path: Path.join(SCREENSHOTS, "share-list-phone-light.png"), fullPage: true })
        )
        yield* step(() => page.setViewportSize({ width: 1000, height: 800 }))
        noBrowserComplaints(recorded)

        const again = yield* openPage({ origin: server.url })
        const gone = yield* step(() => again.page.goto(link))
        expect(gone?.status()).toBe(404)
        expect(yield* step(() => again.page.locator("body").innerText())).not.toContain("Sail at dawn")
      }))

    it.scoped("/b/ with a slug two owners share shows the chooser; choosing lands on that Dock", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const ada = yield* newUser
        const bo = yield* newUser
        const slug = `field-guide-${unique()}`
        yield* dockOf(ada, slug, "public", "Ada's field guide to shore birds")
        yield* dockOf(bo, slug, "public", "Bo's field guide")

        const recorded = yield* openPage({ origin: server.url })
        const { page } = recorded
        const reply = yield* step(() => page.goto(`${server.url}/b/${slug}`))
        expect(reply?.status()).toBe(200)
        expect(yield* step(() => page.locator("h1").innerText())).toBe(`Which “${slug}” did you mean?`)
        expect(yield* step(() => page.locator("ul.docks li").count())).toBe(2)
        yield* screenshots(page, "landing-chooser")
        yield* step(() => page.setViewportSize({ width: 390, height: 844 }))
        yield* step(() =>
          page.screenshot({ path: Path.join(SCREENSHOTS, "landing-chooser-phone-light.png"), fullPage: true })
        )
        noBrowserComplaints(recorded)

        // Choosing Bo's Dock lands on its app view, which a public Dock shows without sign-in.
        yield* step(() => page.setViewportSize({ width: 1000, height: 800 }))
        yield* step(() => page.getByRole("link", { name: `${bo.username}/${slug}` }).click())
        yield* step(() => page.waitForURL(`${server.url}/app/buckets/${slug}?owner=${bo.username}`))
        expect(yield* step(() => page.locator("h1").innerText())).toContain("Bo's field guide")

        // Signed in, Ada's own Dock is what the bare slug means for her: no chooser.
        yield* signInInBrowser(page, server.url, ada.email)
        yield* step(() => page.goto(`${server.url}/b/${slug}`))
        expect(page.url()).toBe(`${server.url}/app/buckets/${slug}?owner=${ada.username}`)
        expect(yield* step(() => page.locator("h1").innerText())).toContain("Ada's field guide to shore birds")
        noBrowserComplaints(recorded)
      }))
  })
})
