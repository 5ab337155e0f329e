// Wikilinks are bounded and cheap (issue 13, finding 3), over a real database: a page names at most
// WIKILINKS_MAX distinct targets (validation_error past it, exactly at it accepted); resolving a page's links
// costs the same number of SQL statements whether they name 10 Docks or 200 (missing, private, public and
// shared ones), with every tenancy rule intact; pages stored before the cap are read in bounded work; and an old
// version over the cap is refused on restore rather than failing as `internal`.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import {
  anonymousPrincipal,
  type Dock,
  type DockId,
  errorBody,
  type OutboundLink,
  Pages,
  type Principal,
  userPrincipal,
  WIKILINKS_MAX
} from "../src/index.ts"
import { domainTestWith } from "../src/testing.ts"
import { as, createDock, grant, newUser, pathOf, unique } from "./support/Fixtures.ts"

/**
 * The effect's value and the SQL statements it ran: every statement of @effect/sql runs in a `sql.execute` span,
 * so a tracer that passes spans on to the real one sees each statement (the database stays the real one).
 */
const withStatements = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const real = yield* Effect.tracer
    const statements: Array<string> = []
    const counting = Tracer.make({
      span: (name, parent, context, links, startTime, kind, options) => {
        const span = real.span(name, parent, context, links, startTime, kind, options)
        if (name !== "sql.execute") return span
        const index = statements.push("") - 1
        const attribute = span.attribute.bind(span)
        span.attribute = (key, value) => {
          if (key === "db.query.text") statements[index] = String(value).replace(/\s+/g, " ").slice(0, 80)
          attribute(key, value)
        }
        return span
      },
      context: (f, fiber) => real.context(f, fiber)
    })
    const value = yield* Effect.withTracer(effect, counting)
    return { value, statements }
  })

const markPrivate = (partId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`update parts set visibility = 'private' where id = ${partId}`)

const savePage = (principal: Principal, dock: Dock, slug: string, title = slug) =>
  Effect.flatMap(Pages, (pages) =>
    pages.save(dock.id as DockId, {
      slug,
      title,
      summary: "",
      contentType: "html",
      pageKind: "web_page",
      content: `<p>${slug}</p>`,
      bodyText: slug
    })).pipe(as(principal), Effect.map(({ part }) => part))

const pushMarkdown = (principal: Principal, dock: Dock, slug: string, content: string) =>
  Effect.flatMap(
    Pages,
    (pages) => pages.push("web_page", { bucket: dock.id }, { slug, title: slug, content, contentType: "markdown" })
  ).pipe(as(principal))

/** Wikilinks each in a paragraph of its own (one long paragraph would be shown as plain text). */
const wikilinks = (targets: ReadonlyArray<string>) => targets.map((target) => `[[${target}]]`).join("\n\n")

const resolvedTo = (target: string, page: { id: string } | null) => ({
  target,
  resolved: page !== null,
  pageId: page?.id ?? null
})
const summary = (links: ReadonlyArray<OutboundLink>) => links.map((link) => resolvedTo(link.target, link.page))

/**
 * Alice's public hub with an index page linking to one local page and to `docks` other Docks, a quarter of each
 * kind: missing, Bob's private, Bob's public (with a page marked private) and Bob's private shared with Alice.
 * Answers what each principal should see.
 */
const world = (docks: number) =>
  Effect.gen(function*() {
    const alice = yield* newUser("alice")
    const bob = yield* newUser("bob")
    const asAlice = userPrincipal(alice)
    const asBob = userPrincipal(bob)
    const hub = yield* createDock(alice, { title: "Hub", visibility: "public" })
    const local = yield* savePage(asAlice, hub, "local-one", "Local One")
    const targets: Array<string> = ["local one"]
    const forAlice = [resolvedTo("local one", local)]
    const forAnyone = [resolvedTo("local one", local)]
    for (let i = 0; i < docks; i++) {
      const kind = (["missing", "private", "public", "shared"] as const)[i % 4]!
      if (kind === "missing") {
        const path = `nobody-${unique()}/gone-${i}`
        targets.push(`${path}/home`, `${path}/secret`)
        for (const seen of [forAlice, forAnyone]) {
          seen.push(resolvedTo(`${path}/home`, null), resolvedTo(`${path}/secret`, null))
        }
        continue
      }
      const dock = yield* createDock(bob, {
        title: `${kind} ${i}`,
        visibility: kind === "public" ? "public" : "private"
      })
      const home = yield* savePage(asBob, dock, "home", "Home")
      const secret = yield* savePage(asBob, dock, "secret", "Secret")
      yield* markPrivate(secret.id)
      if (kind === "shared") {
        yield* grant(dock, alice, "viewer")
      }
      // The owner part of a path is matched case-insensitively, as the resolver matches it.
      const path = i % 8 === 2 ? pathOf(dock).toUpperCase().replace(dock.slug.toUpperCase(), dock.slug) : pathOf(dock)
      targets.push(`${path}/home`, `${path}/secret`)
      forAlice.push(
        resolvedTo(`${path}/home`, kind === "public" || kind === "shared" ? home : null),
        resolvedTo(`${path}/secret`, kind === "shared" ? secret : null)
      )
      forAnyone.push(resolvedTo(`${path}/home`, kind === "public" ? home : null), resolvedTo(`${path}/secret`, null))
    }
    const index = (yield* pushMarkdown(asAlice, hub, "index", wikilinks(targets))).part
    return { alice: asAlice, hub, index, forAlice, forAnyone }
  })

const linksOf = (principal: Principal, dock: Dock, page: string) =>
  Effect.flatMap(Pages, (pages) => pages.links({ bucket: dock.id }, page)).pipe(as(principal))

const view = (principal: Principal, publicSlug: string) =>
  Effect.flatMap(Pages, (pages) => pages.view({ publicSlug })).pipe(as(principal))

layer(domainTestWith({ planMaxDocks: 1_000 }), { timeout: 300_000 })("Links", (it) => {
  it.effect("a page may name WIKILINKS_MAX distinct targets; one more is validation_error with the limit and the count", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("cap")
      const dock = yield* createDock(owner, { title: "Cap" })
      const targets = Array.from({ length: WIKILINKS_MAX }, (_, i) => `page-${i}`)

      // exactly at the cap, each named twice: accepted, every target stored once
      const atCap = yield* pushMarkdown(userPrincipal(owner), dock, "at-cap", wikilinks([...targets, ...targets]))
      expect(atCap.action).toBe("created")
      const { outbound } = yield* linksOf(userPrincipal(owner), dock, "at-cap")
      expect(outbound).toHaveLength(WIKILINKS_MAX)

      const over = yield* pushMarkdown(userPrincipal(owner), dock, "over-cap", wikilinks([...targets, "one-more"]))
        .pipe(Effect.flip)
      expect(errorBody(over)).toEqual({
        error: {
          code: "validation_error",
          status: 400,
          message: `A page may link to at most ${WIKILINKS_MAX} distinct [[wikilink]] targets; this one names ${
            WIKILINKS_MAX + 1
          }`,
          details: { field: "page_content", limit: WIKILINKS_MAX, count: WIKILINKS_MAX + 1 }
        }
      })
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`select 1 from parts where dock_id = ${dock.id} and slug = 'over-cap'`).toEqual([])
    }))

  it.effect("links to 10 or to 200 Docks (missing, private, public, shared) resolve in the same few statements, as each caller may see them", () =>
    Effect.gen(function*() {
      const counts: Array<{ links: number; anonymousLinks: number; view: number }> = []
      for (const docks of [10, 200]) {
        const { alice, forAlice, forAnyone, hub, index } = yield* world(docks)

        const forOwner = yield* withStatements(linksOf(alice, hub, "index"))
        expect(summary(forOwner.value.outbound)).toEqual(forAlice)
        const forAnonymous = yield* withStatements(linksOf(anonymousPrincipal, hub, "index"))
        expect(summary(forAnonymous.value.outbound)).toEqual(forAnyone)

        // render on read: the same resolution, for the reader; a resolved link is a link to the page's /a/ path
        const viewed = yield* withStatements(view(anonymousPrincipal, index.public_slug))
        const publicHome = forAnyone.find((link) => link.target.endsWith("/home") && link.resolved)!
        expect(viewed.value.html).toContain(`/a/`)
        expect(forAlice.filter((link) => link.resolved).length).toBeGreaterThan(
          forAnyone.filter((link) => link.resolved).length
        )
        for (
          const link of forAlice.filter((link) =>
            link.resolved && !forAnyone.some((seen) => seen.target === link.target && seen.resolved)
          )
        ) {
          // pages only Alice may read are not linked for the public
          const part = forOwner.value.outbound.find((outbound) => outbound.target === link.target)!.page!
          expect(viewed.value.html).not.toContain(new URL(part.url).pathname)
        }
        const linkedForAnyone = forAnonymous.value.outbound.find((outbound) => outbound.target === publicHome.target)!
          .page!
        expect(viewed.value.html).toContain(`href="${new URL(linkedForAnyone.url).pathname}"`)

        counts.push({
          links: forOwner.statements.length,
          anonymousLinks: forAnonymous.statements.length,
          view: viewed.statements.length
        })
      }
      expect(counts[1]).toEqual(counts[0])
      // resolving the Dock and page named, the page's links, the named Docks, their candidate pages, the
      // backlink candidates: a handful, whatever the page names (7 here; one or more per named Dock before)
      expect(counts[0]!.links).toBeLessThanOrEqual(10)
    }))

  it.effect("a page stored before the cap with more targets: the first WIKILINKS_MAX are resolved, the rest answered unresolved, in as many statements as a small page", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("legacy")
      const principal = userPrincipal(owner)
      const dock = yield* createDock(owner, { title: "Legacy", visibility: "public" })
      const early = yield* savePage(principal, dock, "early")
      const late = yield* savePage(principal, dock, "late")
      const small = (yield* pushMarkdown(principal, dock, "small", wikilinks(["early", "late"]))).part
      const legacy = (yield* pushMarkdown(principal, dock, "legacy", "placeholder")).part
      const targets = ["early", ...Array.from({ length: WIKILINKS_MAX + 498 }, (_, i) => `missing-${i}`), "late"]
      const sql = yield* SqlClient.SqlClient
      yield* sql`update parts set content = ${wikilinks(targets)}, links = ${targets}::text[] where id = ${legacy.id}`

      const bounded = yield* withStatements(linksOf(principal, dock, "legacy"))
      expect(bounded.value.outbound).toHaveLength(targets.length)
      expect(bounded.value.outbound[0]).toMatchObject({ target: "early", resolved: true, page: { id: early.id } })
      // past the cap: answered, not resolved (it names a page that exists)
      expect(bounded.value.outbound.at(-1)).toEqual({ target: "late", resolved: false, page: null })
      const baseline = yield* withStatements(linksOf(principal, dock, "small"))
      expect(bounded.statements.length).toBe(baseline.statements.length)

      // backlinks agree with outbound: the legacy page links to `early`, not (within the cap) to `late`
      const toEarly = yield* linksOf(principal, dock, "early")
      expect(toEarly.inbound.map((link) => link.page.id).sort()).toEqual([legacy.id, small.id].sort())
      const toLate = yield* linksOf(principal, dock, "late")
      expect(toLate.inbound.map((link) => link.page.id)).toEqual([small.id])

      // the browser route renders it, linking `early` but not `late`
      const viewed = yield* view(anonymousPrincipal, legacy.public_slug)
      expect(viewed.html).toContain(`href="/a/${early.public_slug}"`)
      expect(viewed.html).not.toContain(`/a/${late.public_slug}`)
    }))

  it.effect("restoring a version stored before the cap with more targets is validation_error, not internal", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("restore")
      const principal = userPrincipal(owner)
      const dock = yield* createDock(owner, { title: "Restore" })
      const part = (yield* pushMarkdown(principal, dock, "notes", "version one")).part
      yield* pushMarkdown(principal, dock, "notes", "version two")
      const sql = yield* SqlClient.SqlClient
      const many = wikilinks(Array.from({ length: WIKILINKS_MAX + 1 }, (_, i) => `page-${i}`))
      yield* sql`update part_versions set content = ${many} where part_id = ${part.id} and version = 1`

      const refused = yield* Effect.flatMap(Pages, (pages) => pages.restore({ bucket: dock.id }, "notes", 1)).pipe(
        as(principal),
        Effect.flip
      )
      expect(errorBody(refused).error).toMatchObject({
        code: "validation_error",
        details: { field: "page_content", limit: WIKILINKS_MAX, count: WIKILINKS_MAX + 1 }
      })
    }))
})
