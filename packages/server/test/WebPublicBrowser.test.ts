/**
 * A public Dock in Chromium without signing in (spec §4.1; docs/web.md, "Public Docks without sign-in"): the Dock
 * view with its image thumbnail, then a page with the artifact rendered in its frame. No page may trip a CSP or
 * run into a script error. Screenshots `public-dock` and `public-page` (light and dark) go to DOCK_SCREENSHOT_DIR.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { BrowserLive, openPage, skipBrowserTests } from "./support/Browser.ts"
import { unique } from "./support/Http.ts"
import { pushImage, solid } from "./support/Images.ts"
import { actor, createBucket, seedPage } from "./support/McpTools.ts"
import { TestServer } from "./support/TestServer.ts"
import { noBrowserComplaints, screenshots, ServerWithSmtp, step } from "./support/WebApp.ts"

describe.skipIf(skipBrowserTests)("a public Dock in Chromium", () => {
  layer(
    Layer.merge(ServerWithSmtp({ DOCK_BASE_URL: "http://localhost:8787" }), BrowserLive),
    { excludeTestServices: true, timeout: 120_000 }
  )((it) => {
    it.scoped("opens a public Dock and one of its pages without signing in, the frame showing the artifact", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor("v2 modern")
        const dock = yield* createBucket(owner.client, {
          title: "Harbour field notes",
          description: "What we saw along the harbour, shared with everyone.",
          slug: `harbour-${unique()}`,
          visibility: "public"
        })
        yield* seedPage(owner.user, dock.id, "tides", {
          contentType: "markdown",
          pageKind: "markdown_file",
          title: "Tide tables",
          content: "# Tide tables\n\nLow water at seven, high water at one.\n"
        })
        yield* pushImage(owner.client, yield* solid("png", 64, 48, "#2a6"), {
          bucket: dock.id,
          filename: "harbour.png",
          alt_text: "The harbour at dawn"
        })

        const recorded = yield* openPage({ origin: server.url })
        const { page } = recorded
        yield* step(() => page.goto(`${server.url}/b/${dock.slug}`))
        yield* step(() => page.waitForURL(/\/app\/buckets\//))
        expect(yield* step(() => page.locator("h1").innerText())).toContain("Harbour field notes")
        expect(yield* step(() => page.getByRole("link", { name: "Sign in" }).first().isVisible())).toBe(true)
        expect(
          yield* step(() =>
            page.getByRole("img", { name: "The harbour at dawn" }).evaluate((img) =>
              (img as HTMLImageElement).naturalWidth
            )
          )
        ).toBe(64)
        yield* screenshots(page, "public-dock")

        yield* step(() => page.getByRole("link", { name: "Tide tables" }).click())
        yield* step(() => page.waitForURL(/\/tides\?/))
        const frame = page.frameLocator("iframe.artifact")
        expect(yield* step(() => frame.locator("h1").innerText())).toBe("Tide tables")
        expect(yield* step(() => page.locator("form[method=post]").count())).toBe(0)
        yield* screenshots(page, "public-page")
        noBrowserComplaints(recorded)
      }))
  })
})
