/**
 * The web app's accessibility in Chromium (issue 16, item 1): axe-core's WCAG 2.0/2.1 A and AA rules (labels,
 * names, contrast, landmarks, headings, focusable controls, lang) over every main view, in light and in dark, as
 * a signed-out visitor and as a signed-in owner. axe runs through the DevTools protocol (`page.evaluate`), so the
 * app's CSP, which allows no injected script, stays as it is.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import type { Page } from "playwright-core"
import { BrowserLive, openPage, skipBrowserTests } from "./support/Browser.ts"
import { unique } from "./support/Http.ts"
import { type AdminUser, connect, labelledToken, pushed } from "./support/McpTools.ts"
import { TestServer } from "./support/TestServer.ts"
import { noBrowserComplaints, ServerWithSmtp, signInInBrowser, step } from "./support/WebApp.ts"

const AXE_SOURCE = Fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

interface Violation {
  readonly id: string
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string>; readonly failureSummary?: string }>
}

/** axe's WCAG A/AA violations on what the page shows now, in light and in dark, as readable lines. */
const violations = (page: Page) =>
  step(async () => {
    const found: Array<string> = []
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      await page.evaluate(AXE_SOURCE)
      const result = await page.evaluate(() =>
        (globalThis as any).axe.run(document, {
          runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
          // The artifact in the page view is the author's content in a sandboxed frame, not the app's.
          iframes: false
        })
      ) as { violations: ReadonlyArray<Violation>; passes: ReadonlyArray<{ readonly id: string }> }
      // axe did check the page: the rules every app page meets (a language, a title, contrast) are among its passes.
      const passed = result.passes.map((rule) => rule.id)
      for (const rule of ["html-has-lang", "document-title", "color-contrast"]) {
        if (!passed.includes(rule)) found.push(`${scheme} ${rule} was not checked`)
      }
      for (const violation of result.violations) {
        for (const node of violation.nodes) {
          found.push(
            `${scheme} ${violation.id} (${violation.help}) at ${node.target.join(" ")}: ${node.failureSummary}`
          )
        }
      }
    }
    await page.emulateMedia({ colorScheme: "light" })
    return found
  })

describe.skipIf(skipBrowserTests)("the web app's accessibility", () => {
  layer(Layer.merge(ServerWithSmtp(), BrowserLive), { excludeTestServices: true, timeout: 180_000 })((it) => {
    it.scoped("every main view passes axe's WCAG A and AA rules in light and dark", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const recorded = yield* openPage({ origin: server.url })
        const { page } = recorded
        const email = `a11y-${unique()}@example.com`
        const slug = `atlas-${unique()}`
        const checked: Array<string> = []
        const check = (path: string) =>
          Effect.gen(function*() {
            const reply = yield* step(() => page.goto(`${server.url}${path}`))
            expect(reply?.status(), path).toBe(200)
            expect(yield* violations(page), path).toEqual([])
            checked.push(path)
          })

        // Signed out.
        for (const path of ["/", "/login", "/claim", "/docs/connect/agents"]) yield* check(path)

        // Signed in, with a Dock an agent filled.
        yield* signInInBrowser(page, server.url, email)
        const [owner] = yield* server.sql<{ id: string; username: string; email: string }>`select id, username, email
          from users where email = ${email}`.pipe(Effect.orDie)
        const { token } = yield* labelledToken(owner as unknown as AdminUser, "Atlas agent")
        const agent = yield* connect(token, "v2 modern")
        yield* pushed(agent, "create_bucket", { title: "Atlas", slug, visibility: "private" })
        yield* pushed(agent, "push_markdown_file", {
          bucket: `${owner!.username}/${slug}`,
          page_content: "---\ntitle: Coastline\n---\n# Coastline\n\nA first draft."
        })
        yield* pushed(agent, "push_markdown_file", {
          bucket: `${owner!.username}/${slug}`,
          page_content: "---\ntitle: Coastline\n---\n# Coastline\n\nA second draft, longer."
        })
        yield* pushed(agent, "create_micro_db_table", {
          bucket: `${owner!.username}/${slug}`,
          name: "Sightings",
          columns: [{ name: "Bird", type: "text" }, { name: "Count", type: "number" }]
        })
        yield* pushed(agent, "insert_micro_db_rows", {
          bucket: `${owner!.username}/${slug}`,
          table: "sightings",
          rows: [{ bird: "Oystercatcher", count: 3 }]
        })
        const dock = `/app/buckets/${slug}`
        const query = `?owner=${owner!.username}`
        for (
          const path of [
            "/app",
            `${dock}${query}`,
            `${dock}/coastline${query}`,
            `${dock}/coastline/-/diff${query}&from=1&to=2`,
            `${dock}/-/tables/sightings${query}`,
            `${dock}/-/settings${query}`,
            `${dock}/-/members${query}`,
            `${dock}/coastline/-/share${query}`,
            "/app/mcp",
            "/claim"
          ]
        ) yield* check(path)
        expect(checked.length).toBe(14)
        noBrowserComplaints(recorded)
      }))
  })
})
