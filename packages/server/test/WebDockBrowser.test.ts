/**
 * The Dock's pages in Chromium (issue 16, items 3 and 6; docs/web.md, "The Dock view, settings and members"): the
 * owner signs in with the mailed code and opens a Dock an agent filled (pages, a Micro DB table with rows, an image,
 * a source), opens the table, saves settings, grants a viewer on the members page; the viewer, signed in in a fresh
 * browser context, finds nothing there while the Dock is private and ungranted, then finds it on /app and sees it read-only (no settings, no members). No page trips its CSP or runs
 * into a script error. Screenshots `dock-view`, `dock-table`, `dock-settings` and `dock-members` (light and dark)
 * go to DOCK_SCREENSHOT_DIR (test-results/web by default).
 */
import {
  CurrentPrincipal,
  type DockId,
  Docks,
  Images,
  MicroDb,
  Pages,
  type Principal,
  Sources,
  type UserId,
  userPrincipal
} from "@dock/domain"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Path from "node:path"
import { BrowserLive, openPage, skipBrowserTests } from "./support/Browser.ts"
import { unique } from "./support/Http.ts"
import { base64, solid } from "./support/Images.ts"
import { type RunningServer, TestServer } from "./support/TestServer.ts"
import {
  noBrowserComplaints,
  SCREENSHOTS,
  screenshots,
  ServerWithSmtp,
  signInInBrowser,
  step
} from "./support/WebApp.ts"

const as = <A, E>(server: RunningServer, principal: Principal, effect: Effect.Effect<A, E, any>) =>
  server.domain(effect.pipe(Effect.provideService(CurrentPrincipal, principal), Effect.orDie) as any) as Effect.Effect<
    A
  >

const userByEmail = (server: RunningServer, email: string) =>
  Effect.map(
    server.sql<{ id: string; username: string }>`select id, username from users where email = ${email}`.pipe(
      Effect.orDie
    ),
    (rows) => rows[0]!
  )

describe.skipIf(skipBrowserTests)("the Dock in Chromium", () => {
  layer(Layer.merge(ServerWithSmtp(), BrowserLive), { excludeTestServices: true, timeout: 180_000 })((it) => {
    it.scoped("an owner sees what agents wrote, a table, settings and members; a viewer sees it read-only", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const ownerEmail = `dock-owner-${unique()}@example.com`
        const viewerEmail = `dock-viewer-${unique()}@example.com`
        const slug = `garden-${unique()}`

        // The viewer has an account (they signed in once before), so they can be granted by email.
        const viewerTab = yield* openPage({ origin: server.url })
        yield* signInInBrowser(viewerTab.page, server.url, viewerEmail)

        const ownerTab = yield* openPage({ origin: server.url })
        const { page } = ownerTab
        yield* signInInBrowser(page, server.url, ownerEmail)
        const owner = yield* userByEmail(server, ownerEmail)
        const agent = userPrincipal({ id: owner.id as UserId, username: owner.username }, { agentLabel: "Claude Code" })
        const dock = yield* as(
          server,
          agent,
          Effect.flatMap(Docks, (docks) =>
            docks.create({
              title: "Community garden",
              slug,
              visibility: "public",
              description: "Plans, plots and harvests"
            }))
        )
        const target = { bucket_id: dock.id }
        yield* as(
          server,
          agent,
          Effect.gen(function*() {
            const pages = yield* Pages
            const page = (slug: string, title: string, pageKind: "web_page" | "markdown_file") =>
              pages.save(dock.id as DockId, {
                slug,
                title,
                summary: "",
                contentType: pageKind === "web_page" ? "html" : "markdown",
                pageKind,
                content: `<p>${title}</p>`,
                bodyText: title
              })
            yield* page("planting-plan", "Planting plan for spring", "web_page")
            yield* page("tool-shed", "Tool shed rules", "markdown_file")
            const microDb = yield* MicroDb
            yield* microDb.createTable(target, {
              name: "Harvest log",
              description: "What came out of each plot",
              columns: [
                { name: "Plot", type: "text" },
                { name: "Crop", type: "text" },
                { name: "Kilograms", type: "number" },
                { name: "Notes", type: "long_text" }
              ]
            })
            yield* microDb.insertRows(target, "harvest-log", [
              { plot: "A1", crop: "Tomatoes", kilograms: 12.5, notes: "Best week so far" },
              { plot: "B2", crop: "Beans", kilograms: 4, notes: "Some <b>aphids</b> on the east side" },
              { plot: "C3", crop: "Courgettes", kilograms: 21, notes: "Far too many courgettes. ".repeat(20) }
            ])
            const images = yield* Images
            yield* images.push(target, {
              imageBase64: base64(yield* solid("png", 320, 200, "#3a7d44")),
              filename: "plot-map.png",
              altText: "Map of the plots"
            })
          })
        )
        yield* server.domain(
          Effect.flatMap(Sources, (sources) =>
            sources.add({
              dock: dock.id,
              title: "Allotment rules 2026",
              origin: "https://garden.example/rules.md",
              media_type: "text/markdown",
              content: "# Rules\n\nWater in the evening."
            })).pipe(Effect.orDie)
        )

        // The Dock view: pages with their author agent, the table, the image, the source, activity.
        yield* step(() => page.goto(`${server.url}/app/buckets/${slug}?owner=${owner.username}`))
        expect(yield* step(() => page.locator("h1").innerText())).toContain("Community garden")
        expect(yield* step(() => page.locator("#pages tbody tr").count())).toBe(3)
        expect(yield* step(() => page.locator("#pages").innerText())).toContain("via Claude Code")
        expect(yield* step(() => page.getByRole("link", { name: "Harvest log" }).count())).toBe(1)
        expect(yield* step(() => page.getByText("Allotment rules 2026").count())).toBe(1)
        const thumbnail = page.getByRole("img", { name: "Map of the plots" })
        expect(yield* step(() => thumbnail.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))).toBe(
          320
        )
        yield* screenshots(page, "dock-view")
        yield* step(() => page.setViewportSize({ width: 390, height: 844 }))
        yield* step(() =>
          page.screenshot({ path: Path.join(SCREENSHOTS, "dock-view-phone-light.png"), fullPage: true })
        )
        yield* step(() => page.setViewportSize({ width: 1000, height: 800 }))

        // The table, live.
        yield* step(() => page.getByRole("link", { name: "Harvest log" }).click())
        yield* step(() => page.waitForURL(/\/-\/tables\/harvest-log/))
        expect(yield* step(() => page.locator("tbody tr").count())).toBe(3)
        expect(yield* step(() => page.locator("tbody").innerText())).toContain("Some <b>aphids</b> on the east side")
        yield* screenshots(page, "dock-table")

        // Settings: the owner makes it private (and allows forks for when it is public again).
        yield* step(() => page.goto(`${server.url}/app/buckets/${slug}?owner=${owner.username}`))
        yield* step(() => page.getByRole("link", { name: "Settings" }).click())
        yield* step(() => page.getByRole("radio", { name: /Private/ }).check())
        yield* step(() => page.getByLabel(/Allow forks/).check())
        yield* step(() => page.getByRole("button", { name: "Save settings" }).click())
        yield* step(() => page.getByText("Settings saved.").waitFor())
        const [stored] = yield* server.sql<{ visibility: string; allow_forks: boolean }>`select visibility,
          allow_forks from docks where id = ${dock.id}`.pipe(Effect.orDie)
        expect(stored).toEqual({ visibility: "private", allow_forks: true })
        yield* screenshots(page, "dock-settings")

        // Private now: before any grant the viewer's session finds nothing there (asked without rendering the page,
        // whose 404 the browser would log).
        const dockUrl = `${server.url}/app/buckets/${slug}?owner=${owner.username}`
        const hidden = yield* step(() => viewerTab.page.request.get(dockUrl, { maxRedirects: 0 }))
        expect(hidden.status()).toBe(404)
        expect(yield* step(() => hidden.text())).not.toContain("Community garden")

        // Members: grant the viewer by email.
        yield* step(() => page.goto(`${server.url}/app/buckets/${slug}/-/members?owner=${owner.username}`))
        yield* step(() => page.getByLabel(/Username or email/).fill(viewerEmail))
        yield* step(() => page.getByLabel("Role").selectOption("viewer"))
        yield* step(() => page.getByRole("button", { name: "Grant access" }).click())
        yield* step(() => page.getByText("Access granted.").waitFor())
        const viewer = yield* userByEmail(server, viewerEmail)
        expect(yield* step(() => page.locator("tbody").innerText())).toContain(viewer.username)
        yield* screenshots(page, "dock-members")
        noBrowserComplaints(ownerTab)

        // The viewer, in their own browser context: on /app with their role, the Dock read-only.
        yield* step(() => viewerTab.page.goto(`${server.url}/app`))
        expect(yield* step(() => viewerTab.page.locator("ul.docks").last().innerText())).toContain("viewer")
        yield* step(() => viewerTab.page.getByRole("link", { name: "Community garden" }).click())
        yield* step(() => viewerTab.page.locator("#pages").waitFor())
        expect(yield* step(() => viewerTab.page.locator("#pages tbody tr").count())).toBe(3)
        expect(yield* step(() => viewerTab.page.getByRole("link", { name: "Settings" }).count())).toBe(0)
        expect(yield* step(() => viewerTab.page.getByRole("link", { name: "Members" }).count())).toBe(0)
        // Private: only its owner's and members' to read, nobody's to fork.
        expect(yield* step(() => viewerTab.page.getByRole("button", { name: "Fork this Dock" }).count())).toBe(0)
        expect(yield* step(() => viewerTab.page.getByRole("link", { name: "Planting plan for spring" }).count())).toBe(
          1
        )
        yield* screenshots(viewerTab.page, "dock-view-viewer")
        noBrowserComplaints(viewerTab)
        // The settings page is the owner's (a 403 page; the browser logs that status, so after the check above).
        const refused = yield* step(() =>
          viewerTab.page.goto(`${server.url}/app/buckets/${slug}/-/settings?owner=${owner.username}`)
        )
        expect(refused!.status()).toBe(403)
      }))
  })
})
