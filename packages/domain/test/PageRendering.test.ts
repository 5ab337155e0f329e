// Render on read under the content workers' bound (issue 13, finding 1): a stored page version that cannot be
// rendered in time is shown as its escaped source, and is never rendered again.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { ordinary } from "../src/Content/MarkdownSamples.ts"
import { anonymousPrincipal, ContentWorkers, Pages, userPrincipal } from "../src/index.ts"
import { domainTestWith } from "../src/testing.ts"
import { as, newUser } from "./support/Fixtures.ts"

/**
 * No Markdown we know of runs away from markdown-it, so the version that cannot be rendered in time is a long one
 * under a short deadline: ~0.6 s to render 1 MB, against 100 ms.
 */
const long = ordinary(1_000_000)

layer(domainTestWith({ renderDeadline: Duration.millis(100) }), { excludeTestServices: true, timeout: 120_000 })(
  "render on read",
  (it) => {
    it.effect("a version too complex to render is shown as escaped text, and the next read does not render it again", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pages = yield* Pages
        const workers = yield* ContentWorkers
        const owner = yield* newUser("render")
        const pushed = yield* pages.push("markdown", {}, { content: "# Fine\n\nAt first." }).pipe(
          as(userPrincipal(owner))
        )
        const first = yield* pages.view({ id: pushed.part.id }).pipe(as(anonymousPrincipal))
        expect(first.html).toContain("<h1>Fine</h1>")

        // Content planted in the database (or accepted under a longer deadline) that no longer renders in time.
        const planted = `<script>alert(1)</script>\n\n${long}`
        yield* sql`update parts set content = ${planted}, version = 2 where id = ${pushed.part.id}`
        const before = (yield* workers.stats).started.renderMarkdown
        const views = yield* Effect.forEach(
          [1, 2, 3],
          () => pages.view({ id: pushed.part.id }).pipe(as(anonymousPrincipal))
        )
        expect((yield* workers.stats).started.renderMarkdown).toBe(before + 1)
        // (checked by pieces: the page is 1 MiB, too long for an assertion's diff)
        for (const view of views) expect(view.html === views[0]!.html).toBe(true)
        const html = views[0]!.html
        expect(html.slice(0, html.indexOf("<pre>"))).toBe(
          "<p><strong>The content is too complex to render: processing was stopped after 100ms.</strong> " +
            "Its source is shown as text.</p>\n"
        )
        const source = "<pre>&#60;script&#62;alert(1)&#60;/script&#62;\n\n## 1. "
        expect(html.slice(html.indexOf("<pre>"), html.indexOf("<pre>") + source.length)).toBe(source)
        expect(html.includes("<script")).toBe(false)
      }))
  }
)
