/**
 * A page of a Dock in Chromium (issue 16, item 3; docs/web.md, "Pages in the app"): sign in with the mailed code,
 * open a page an agent pushed and see it rendered inside the sandboxed frame (a private page: the frame is
 * served by the session), compare two versions, restore the older one and see it in the frame, read the Markdown
 * source; and with the artifacts on an origin of their own (the app on localhost, artifacts on 127.0.0.1), the
 * frame loads by its signed URL and may be framed by the app. No page may trip a CSP or run into a script error. Screenshots `page-view`, `page-diff` and
 * `page-source` (light and dark) and `page-view-phone-light` go to DOCK_SCREENSHOT_DIR (test-results/web).
 */
import { CurrentPrincipal, type DockId, type PageContent, Pages, type UserId, userPrincipal } from "@dock/domain"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Net from "node:net"
import * as Path from "node:path"
import { BrowserLive, openPage, skipBrowserTests } from "./support/Browser.ts"
import { unique } from "./support/Http.ts"
import { type AdminUser, seedPage } from "./support/McpTools.ts"
import { TestServer } from "./support/TestServer.ts"
import {
  noBrowserComplaints,
  SCREENSHOTS,
  screenshots,
  ServerWithSmtp,
  signInInBrowser,
  step
} from "./support/WebApp.ts"

const plan = (stop: string) =>
  `---
title: Coast walk
summary: Three days along the cliffs, with the stops and what to pack.
---
# Coast walk

Three days along the cliffs. We start at the harbour and end at the lighthouse.

| Day | From | To |
| --- | --- | --- |
| 1 | Harbour | ${stop} |
| 2 | ${stop} | Cove |
| 3 | Cove | Lighthouse |

## Pack

- rain jacket
- water, two litres each
- the tide table
`

/** A page saved as an agent would: by a token labelled "trip-planner" acting for the owner. */
const agentSave = (
  owner: AdminUser,
  dockId: string,
  content: Omit<PageContent, "summary" | "bodyText"> & {
    readonly summary?: string
  }
) =>
  Effect.flatMap(TestServer, (server) =>
    server.domain(
      Effect.flatMap(Pages, (pages) =>
        pages.save(dockId as DockId, { summary: "", bodyText: content.content, ...content })).pipe(
          Effect.provideService(
            CurrentPrincipal,
            userPrincipal({ id: owner.id as UserId, username: owner.username }, { agentLabel: "trip-planner" })
          ),
          Effect.orDie
        )
    ))

describe.skipIf(skipBrowserTests)("a page in Chromium", () => {
  layer(
    Layer.merge(ServerWithSmtp({ DOCK_BASE_URL: "http://localhost:8787" }), BrowserLive),
    { excludeTestServices: true, timeout: 120_000 }
  )((it) => {
    it.scoped("see the framed page, a diff between versions, restore the older one, read the source", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const recorded = yield* openPage({ origin: server.url })
        const { page } = recorded
        const email = `pages-${unique()}@example.com`
        yield* signInInBrowser(page, server.url, email)

        // An agent pushes a Markdown file twice into the person's (private) default Dock.
        const [row] = yield* server.sql<{ id: string; username: string; dock_id: string; dock_slug: string }>`
          select u.id, u.username, d.id as dock_id, d.slug as dock_slug from users u
          join docks d on d.owner_id = u.id where u.email = ${email}`.pipe(Effect.orDie)
        const owner = { id: row!.id, username: row!.username } as AdminUser
        const markdown = { contentType: "markdown" as const, pageKind: "markdown_file" as const, title: "Coast walk" }
        const summary = "Three days along the cliffs, with the stops and what to pack."
        yield* seedPage(owner, row!.dock_id, "coast-walk", { ...markdown, summary, content: plan("Fishing village") })
        yield* agentSave(owner, row!.dock_id, { ...markdown, slug: "coast-walk", summary, content: plan("Old mill") })
        yield* agentSave(owner, row!.dock_id, {
          ...markdown,
          slug: "summer-trips",
          title: "Summer trips",
          content: "# Summer trips\n\n- [[coast-walk]]\n",
          links: ["coast-walk"]
        })

        // From the Dock's list to the page view.
        yield* step(() => page.goto(`${server.url}/app/buckets/${row!.dock_slug}?owner=${owner.username}`))
        yield* step(() => page.getByRole("link", { name: "Coast walk" }).click())
        const viewUrl = `${server.url}/app/buckets/${row!.dock_slug}/coast-walk?owner=${owner.username}`
        yield* step(() => page.waitForURL(viewUrl))
        expect(yield* step(() => page.locator("h1").innerText())).toBe("Coast walk")
        const frame = page.frameLocator("iframe.artifact")
        expect(yield* step(() => frame.locator("h1").innerText())).toBe("Coast walk")
        expect(yield* step(() => frame.locator("table").innerText())).toContain("Old mill")
        expect(yield* step(() => page.locator("dl.meta").innerText())).toContain("trip-planner for " + owner.username)
        expect(yield* step(() => page.getByRole("link", { name: "Summer trips" }).count())).toBe(1)
        yield* screenshots(page, "page-view")
        yield* step(() => page.setViewportSize({ width: 390, height: 844 }))
        yield* step(() =>
          page.screenshot({ path: Path.join(SCREENSHOTS, "page-view-phone-light.png"), fullPage: true })
        )
        yield* step(() => page.setViewportSize({ width: 1000, height: 800 }))

        // Compare version 1 with version 2.
        yield* step(() => page.getByLabel("From version").selectOption("1"))
        yield* step(() => page.getByLabel("To version").selectOption("2"))
        yield* step(() => page.getByRole("button", { name: "Show the changes" }).click())
        yield* step(() => page.waitForURL(/\/-\/diff\?/))
        expect(yield* step(() => page.locator("pre.diff del").allInnerTexts())).toEqual([
          "-| 1 | Harbour | Fishing village |\n",
          "-| 2 | Fishing village | Cove |\n"
        ])
        expect(yield* step(() => page.locator("pre.diff ins").allInnerTexts())).toEqual([
          "+| 1 | Harbour | Old mill |\n",
          "+| 2 | Old mill | Cove |\n"
        ])
        yield* screenshots(page, "page-diff")

        // Restore version 1: a new version 3 with its content, shown in the frame.
        yield* step(() => page.goto(viewUrl))
        yield* step(() => page.getByRole("button", { name: "Restore version 1" }).click())
        yield* step(() => page.waitForURL(`${viewUrl}&restored=1`))
        expect(yield* step(() => page.getByRole("status").innerText())).toBe(
          "Version 1 was restored: it is now version 3."
        )
        expect(yield* step(() => frame.locator("table").innerText())).toContain("Fishing village")
        expect(yield* step(() => page.locator("table.versions tbody tr").first().innerText())).toContain(
          "restored from 1"
        )

        // The Markdown source, as stored.
        yield* step(() => page.getByRole("link", { name: "Markdown source" }).click())
        yield* step(() => page.waitForURL(/\/-\/source\?/))
        expect(yield* step(() => page.locator("pre.source").innerText())).toContain("| 1 | Harbour | Fishing village |")
        yield* screenshots(page, "page-source")
        noBrowserComplaints(recorded)
      }))
  })
})

/** A port free right now, for a server whose base URL must name its own port before it starts. */
const freePort = Effect.async<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const port = (probe.address() as Net.AddressInfo).port
    probe.close(() => resume(Effect.succeed(port)))
  })
})

describe.skipIf(skipBrowserTests)("a page in Chromium, artifacts on an origin of their own", () => {
  // The app on localhost, artifacts on 127.0.0.1: two origins of one server, so the session cookie (localhost's)
  // never reaches the frame, which must come through its signed URL and be frameable by the app's origin.
  const twoOrigins = Layer.unwrapEffect(Effect.map(freePort, (port) =>
    Layer.merge(
      ServerWithSmtp({
        PORT: String(port),
        DOCK_BASE_URL: `http://localhost:${port}`,
        DOCK_ARTIFACT_ORIGIN: `http://127.0.0.1:${port}`
      }),
      BrowserLive
    )))
  layer(twoOrigins, { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.scoped("the frame shows the private page from the artifact origin by its signed URL", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const app = `http://localhost:${server.port}`
        const recorded = yield* openPage({ origin: app })
        const { page } = recorded
        // The artifact origin is reachable too (page routes come before the context's fence).
        yield* step(() => page.route(`${server.url}/**`, (route) => route.continue()))
        const email = `frames-${unique()}@example.com`
        yield* signInInBrowser(page, app, email)
        const [row] = yield* server.sql<{ id: string; username: string; dock_id: string; dock_slug: string }>`
          select u.id, u.username, d.id as dock_id, d.slug as dock_slug from users u
          join docks d on d.owner_id = u.id where u.email = ${email}`.pipe(Effect.orDie)
        const owner = { id: row!.id, username: row!.username } as AdminUser
        yield* agentSave(owner, row!.dock_id, {
          contentType: "markdown",
          pageKind: "markdown_file",
          slug: "coast-walk",
          title: "Coast walk",
          content: plan("Old mill")
        })
        yield* step(() => page.goto(`${app}/app/buckets/${row!.dock_slug}/coast-walk?owner=${owner.username}`))
        const src = yield* step(() => page.locator("iframe.artifact").getAttribute("src"))
        expect(src!.startsWith(`${server.url}/artifacts/`)).toBe(true)
        expect(src).toContain("&sig=")
        const frame = page.frameLocator("iframe.artifact")
        expect(yield* step(() => frame.locator("h1").innerText())).toBe("Coast walk")
        expect(yield* step(() => frame.locator("table").innerText())).toContain("Old mill")
        noBrowserComplaints(recorded)
      }))
  })
})
