/**
 * A share link in Chromium (issue 16, item 7): opened in a fresh browser context — no sign-in, no cookie — it
 * shows the private page readably under the artifact CSP, with no request but the page and nothing stored in the
 * browser; once revoked, the same URL is the 404 page from the next request on (a fresh context, and the first
 * context reloading). Screenshots: /tmp/share-link.png and /tmp/share-link-revoked.png.
 *
 * One Chromium for the file (support/Browser.ts: skipped with a warning when it is missing, failed when
 * DOCK_REQUIRE_CHROMIUM=1); each test has its own browser context.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ARTIFACT_CSP } from "../src/http/ArtifactPage.ts"
import { BrowserLive, openPage, skipBrowserTests } from "./support/Browser.ts"
import { postJson, unique } from "./support/Http.ts"
import { admin, newUser, seedPage } from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const PLAN = `# Launch plan

A **private** page, shown to whoever has the link.

| Step | When |
| --- | --- |
| Draft | Monday |
| Review | Tuesday |
`

describe.skipIf(skipBrowserTests)("share links in Chromium", () => {
  layer(Layer.merge(TestServerLive, BrowserLive), { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.scoped("a fresh context opens the link without sign-in; after revoke it is 404 at once", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const a = yield* admin
        const owner = yield* newUser
        const slug = `launch-${unique()}`
        const saved = yield* seedPage(owner, owner.default_bucket_id, slug, {
          title: "Launch plan",
          contentType: "markdown",
          content: PLAN
        })
        const created = yield* postJson(
          `${a.url}/admin/share-links`,
          { dock: owner.default_bucket_id, page: slug },
          a.headers
        )
        expect(created.status, created.text).toBe(201)
        const url = `${server.url}${new URL(created.json.url as string).pathname}`

        // the page is private: its artifact URL is 404 to the browser
        const outsider = yield* openPage({ origin: server.url })
        const direct = yield* Effect.promise(() => outsider.page.goto(`${server.url}/a/${saved.part.public_slug}`))
        expect(direct!.status()).toBe(404)

        const first = yield* openPage({ origin: server.url })
        const response = yield* Effect.promise(() => first.page.goto(url))
        expect(response!.status()).toBe(200)
        const headers = response!.headers()
        expect(headers["content-security-policy"]).toBe(ARTIFACT_CSP)
        expect(headers["referrer-policy"]).toBe("no-referrer")
        expect(headers["cache-control"]).toBe("no-store")
        expect(headers["x-robots-tag"]).toBe("noindex, nofollow")
        const main = yield* Effect.promise(() => first.page.locator("main").innerText())
        expect(main).toContain("A private page, shown to whoever has the link.")
        expect(yield* Effect.promise(() => first.page.locator("main table td").first().innerText())).toBe("Draft")
        expect(yield* Effect.promise(() => first.page.title())).toBe("Launch plan")
        expect(yield* Effect.promise(() => first.page.context().cookies())).toEqual([])
        expect(first.requests.map((request) => request.url)).toEqual([url])
        expect(first.dialogs).toEqual([])
        expect(first.console).toEqual([])
        yield* Effect.promise(() => first.page.screenshot({ path: "/tmp/share-link.png", fullPage: true }))

        const revoked = yield* postJson(`${a.url}/admin/share-links/${created.json.id}/revoke`, {}, a.headers)
        expect(revoked.status).toBe(200)

        const second = yield* openPage({ origin: server.url })
        const gone = yield* Effect.promise(() => second.page.goto(url))
        expect(gone!.status()).toBe(404)
        expect(gone!.headers()["content-security-policy"]).toBe(ARTIFACT_CSP)
        expect(yield* Effect.promise(() => second.page.locator("h1").innerText())).toBe("Not found")
        expect(yield* Effect.promise(() => second.page.locator("body").innerText())).not.toContain("Launch plan")
        yield* Effect.promise(() => second.page.screenshot({ path: "/tmp/share-link-revoked.png", fullPage: true }))

        // the first context, which showed it a moment ago, gets the 404 too (nothing was cached)
        const reloaded = yield* Effect.promise(() => first.page.reload())
        expect(reloaded!.status()).toBe(404)
        expect(yield* Effect.promise(() => first.page.locator("main").innerText())).not.toContain("private page")
      }))
  })
})
