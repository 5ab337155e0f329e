// search_web_pages' SQL against its reference: on a corpus larger than the candidate bound and the first window
// (PagesRepo.search), every query shape (a word on most pages, a word on about half, a phrase, two words, a rare
// word, exclusion, OR) gives the same pages in the same order as the single statement search used before the
// windows (kept below as the reference), for the owner, a member, an outsider, an anonymous reader and a
// sandbox token, across Docks and within one; and never a page the caller cannot read.
import { SqlClient, type Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  anonymousPrincipal,
  type Dock,
  type DockId,
  type DockTarget,
  Pages,
  type Principal,
  type User,
  userPrincipal
} from "../src/index.ts"
import {
  makePagesRepo,
  matchesByDock,
  matchesNewestFirst,
  rankedMatches,
  SEARCH_DOCK_BY_DOCK,
  SEARCH_RANK_CANDIDATES,
  SEARCH_WINDOWS,
  searchPlannerSettings
} from "../src/Pages/PagesRepo.ts"
import { DomainTest } from "../src/testing.ts"
import { as, createDock, grant, newUser, unique } from "./support/Fixtures.ts"
import { executeArguments, planOf, planText } from "./support/Plans.ts"

/** More pages than the first window holds, and enough that the common word matches more than the bound. */
const PAGES = Math.ceil(Math.max(SEARCH_WINDOWS[0]! * 1.5, (SEARCH_RANK_CANDIDATES / 0.8) * 1.4))

/**
 * The search statement before the windows (commit 762881c), parameterised only by the caller: the
 * SEARCH_RANK_CANDIDATES most recently updated readable matches, ranked by ts_rank over rank_vector.
 */
const reference = (
  principal: Principal,
  query: string,
  options: { readonly dockId?: string; readonly ownerUsername?: string; readonly limit: number }
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const member = sql`(d.owner_id = ${principal.userId}
      or exists(select 1 from dock_members m where m.dock_id = d.id and m.user_id = ${principal.userId}))`
    const findable = options.dockId === undefined
    const docks = principal.sandbox
      ? sql`d.id = any(${[...(principal.allowedBucketIds ?? [])]}::uuid[])`
      : sql`(${member} or (d.visibility = 'public' ${findable ? sql`and d.discoverable` : sql``}))`
    const readable = sql`d.hidden_at is null and ${docks} and (p.visibility is distinct from 'private' or ${member})`
    return sql<{ id: string }>`
      with matches as (
        select p.id from parts p join docks d on d.id = p.dock_id join users u on u.id = d.owner_id
        where p.search @@ websearch_to_tsquery('english', ${query}) and ${readable}
          ${options.dockId === undefined ? sql`` : sql`and d.id = ${options.dockId}`}
          ${options.ownerUsername === undefined ? sql`` : sql`and u.username = ${options.ownerUsername}`}
        order by p.updated_at desc, p.id
        limit ${SEARCH_RANK_CANDIDATES}
      )
      select p.id from matches m join parts p on p.id = m.id
      order by ts_rank(p.rank_vector, websearch_to_tsquery('english', ${query})) desc, p.updated_at desc, p.id
      limit ${options.limit}`.pipe(Effect.map((rows) => rows.map((row) => row.id)))
  })

const search = (principal: Principal, query: string, target: DockTarget, limit: number) =>
  Effect.flatMap(Pages, (pages) => pages.search(query, { target, limit })).pipe(
    as(principal),
    Effect.map((hits) => hits.map((hit) => ({ id: hit.part.id as string, dock: hit.bucket.id, rank: hit.rank })))
  )

/**
 * PAGES pages over five Docks, with SQL (so the corpus is quick to make): updated_at falling 7 µs a page, three
 * pages at a time sharing one (ties, and bounds inside one millisecond); every 13th page private. Words: `common`
 * on 80% of the pages (twice on every third, in the title of every 40th and the summary of every 7th), `half` on
 * 45%, the phrase `a b` on 10%, `a` and `b` apart on another 10%, `rare` on three pages, `secret` on the private
 * pages only.
 */
const seed = (
  docks: ReadonlyArray<{ readonly dock: Dock; readonly owner: User }>,
  words: Record<"common" | "half" | "a" | "b" | "rare" | "secret", string>
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
    insert into parts (dock_id, owner_id, slug, public_slug, title, summary, content_type, page_kind, visibility,
      content, body_text, size_bytes, created_at, updated_at)
    select (${docks.map(({ dock }) => dock.id)}::uuid[])[k], (${docks.map(({ owner }) => owner.id)}::uuid[])[k],
      'page-' || g, ${`search-${unique()}-`} || g,
      'Page ' || g || case when g % 40 = 0 then ' about ' || ${words.common} else '' end,
      case when g % 7 = 0 then 'A note on ' || ${words.common} else 'A note' end,
      'html', 'web_page', case when g % 13 = 0 then 'private' end, body, body, octet_length(body),
      timestamptz '2026-01-01' - (g / 3) * interval '7 microseconds',
      timestamptz '2026-01-01' - (g / 3) * interval '7 microseconds'
    from generate_series(1, ${PAGES}) g
      -- Docks 1-5 hold 60%, 20%, 10%, 5% and 5% of the pages
      cross join lateral (select case when g % 20 < 12 then 1 when g % 20 < 16 then 2 when g % 20 < 18 then 3
        when g % 20 = 18 then 4 else 5 end as k) dock
      cross join lateral (select concat_ws(' ', 'lorem ipsum',
        case when g % 5 <> 0 then ${words.common} end,
        case when g % 5 <> 0 and g % 3 = 0 then 'again ' || ${words.common} end,
        case when g % 20 < 9 then ${words.half} end,
        case when g % 10 = 1 then ${words.a} || ' ' || ${words.b} end,
        case when g % 10 = 2 then ${words.b} || ' dolor sit ' || ${words.a} end,
        case when g in (5, ${Math.floor(PAGES / 2)}, ${PAGES - 3}) then ${words.rare} end,
        case when g % 13 = 0 then ${words.secret} end,
        'amet') as body) text`)

const word = (name: string) => `${name}${unique().replace(/[0-9]/g, "")}`

/**
 * Pages g = from…to of `owner`, each with `text` as its content, in the Dock `dockOf` gives and updated at `at`
 * (SQL over g): the plain pages the plan tests below seed in bulk.
 */
const insertPages = (sql: PgClient.PgClient, pages: {
  readonly owner: User
  readonly dockOf: Statement.Fragment
  readonly text: string
  readonly from: number
  readonly to: number
  readonly at: Statement.Fragment
}) =>
  sql`insert into parts (dock_id, owner_id, slug, public_slug, title, summary, content_type, page_kind,
      content, body_text, size_bytes, created_at, updated_at)
    select ${pages.dockOf}, ${pages.owner.id}, 'bulk-' || g, ${`bulk-${unique()}-`} || g, 'Bulk ' || g, '', 'html',
      'web_page', ${pages.text}, ${pages.text}, ${pages.text.length}, ${pages.at}, ${pages.at}
    from generate_series(${pages.from}::int, ${pages.to}::int) g`

/** `count` public Docks of `owner`, titled `title` and their number. */
const publicDocks = (owner: User, title: string, count: number, options: { readonly discoverable?: boolean } = {}) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => i),
    (i) => createDock(owner, { title: `${title} ${i}`, visibility: "public", ...options })
  )

/** PagesRepo.search's merged walk of `docks` for `text`, for a caller who is a member of none. */
const walkOf = (sql: PgClient.PgClient, text: string, docks: ReadonlyArray<Dock>) =>
  matchesByDock(sql, sql`websearch_to_tsquery('english', ${text})`, docks.map((dock) => [dock.id, false]))

/** Each of `count` Docks is walked through its own index (migration 18), none through the newest pages of all. */
const expectOwnIndexes = (plan: string, count: number) => {
  expect(plan.match(/parts_dock_updated_idx/g), plan).toHaveLength(count)
  expect(plan).not.toContain("parts_updated_idx")
}

layer(DomainTest, { timeout: 120_000 })("search_web_pages candidates, Dock by Dock and window by window", (it) => {
  it.effect(
    "every query shape gives the reference's pages in the reference's order, for every kind of caller",
    () =>
      Effect.gen(function*() {
        const alice = yield* newUser("search-owner")
        const bob = yield* newUser("search-member")
        const carol = yield* newUser("search-other")
        const outsider = yield* newUser("search-outsider")
        const open = yield* createDock(alice, { title: "Open", visibility: "public", discoverable: true })
        const closed = yield* createDock(alice, { title: "Closed" })
        const quiet = yield* createDock(alice, { title: "Quiet", visibility: "public" })
        const hidden = yield* createDock(alice, { title: "Hidden", visibility: "public", discoverable: true })
        const carols = yield* createDock(carol, { title: "Carol's" })
        yield* grant(closed, bob, "viewer")
        const sql = yield* SqlClient.SqlClient
        yield* sql`update docks set hidden_at = now() where id = ${hidden.id}`
        const words = {
          common: word("common"),
          half: word("half"),
          a: word("alpha"),
          b: word("beta"),
          rare: word("rare"),
          secret: word("secret")
        }
        yield* seed([
          { dock: open, owner: alice },
          { dock: closed, owner: alice },
          { dock: quiet, owner: alice },
          { dock: hidden, owner: alice },
          { dock: carols, owner: carol }
        ], words)

        // the corpus does what it is for: the common word matches more pages than are ranked, and more than
        // the first window holds; the word on half the pages fills no window on its own
        const [counts] = yield* sql<{ common: number; half: number; phrase: number }>`select
        count(*) filter (where search @@ websearch_to_tsquery('english', ${words.common}))::int as common,
        count(*) filter (where search @@ websearch_to_tsquery('english', ${words.half}))::int as half,
        count(*) filter (where search @@ websearch_to_tsquery('english', ${`"${words.a} ${words.b}"`}))::int as phrase
        from parts where dock_id = any(${[open.id, closed.id, quiet.id, hidden.id, carols.id]}::uuid[])`
        expect(counts!.common).toBeGreaterThan(SEARCH_RANK_CANDIDATES)
        expect(counts!.common).toBeGreaterThan(SEARCH_WINDOWS[0]!)
        expect(counts!.phrase).toBe(Math.floor((PAGES + 9) / 10))

        const callers: ReadonlyArray<readonly [string, Principal]> = [
          ["owner", userPrincipal(alice)],
          ["member", userPrincipal(bob)],
          ["outsider", userPrincipal(outsider)],
          ["anonymous", anonymousPrincipal],
          ["sandbox", userPrincipal(carol, { sandbox: true, allowedBucketIds: [carols.id as DockId] })]
        ]
        const queries = [
          words.common,
          words.half,
          `"${words.a} ${words.b}"`,
          `${words.a} ${words.b}`,
          words.rare,
          `${words.common} -${words.half}`,
          `${words.rare} OR ${words.a}`
        ]
        const across = { target: {}, filter: {} }
        const inDock = (dock: Dock) => ({ target: { bucket: dock.id }, filter: { dockId: dock.id } })
        const byOwner = { target: { owner_username: alice.username }, filter: { ownerUsername: alice.username } }
        let compared = 0
        const check = (
          [name, principal]: readonly [string, Principal],
          query: string,
          { filter, target }: {
            readonly target: DockTarget
            readonly filter: { dockId?: string; ownerUsername?: string }
          }
        ) =>
          Effect.gen(function*() {
            const hits = yield* search(principal, query, target, 50)
            const expected = yield* reference(principal, query, { ...filter, limit: 50 })
            expect({ name, query, target, ids: hits.map((hit) => hit.id) }).toEqual({
              name,
              query,
              target,
              ids: expected
            })
            // ranked: best first
            for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.rank).toBeGreaterThanOrEqual(hits[i]!.rank)
            compared += expected.length
            return hits
          })
        const compareAll = Effect.gen(function*() {
          for (const caller of callers) {
            for (const query of queries) {
              const hits = yield* check(caller, query, across)
              // paged: a smaller limit is the top of the same order
              expect((yield* search(caller[1], query, {}, 20)).map((hit) => hit.id)).toEqual(
                hits.slice(0, 20).map((hit) => hit.id)
              )
              yield* check(caller, query, inDock(closed))
            }
            for (const query of [words.common, `"${words.a} ${words.b}"`, words.rare]) {
              yield* check(caller, query, inDock(open))
              yield* check(caller, query, inDock(quiet))
              yield* check(caller, query, byOwner)
            }
          }
        })
        // every caller reads at most SEARCH_DOCK_BY_DOCK Docks: each Dock's pages are walked
        yield* compareAll
        expect(compared).toBeGreaterThan(1000)

        // what each caller may read, directly: an outsider and an anonymous reader only the open Dock's public
        // pages (the hidden Dock and the quiet one, not discoverable, are not searched across Docks); the member
        // the closed Dock's pages, private ones too; the sandbox only its own Dock
        const docksOf = (principal: Principal, query: string) =>
          Effect.map(search(principal, query, {}, 50), (hits) => new Set(hits.map((hit) => hit.dock)))
        for (const principal of [userPrincipal(outsider), anonymousPrincipal]) {
          expect([...(yield* docksOf(principal, words.common))]).toEqual([open.id])
          expect([...(yield* docksOf(principal, words.rare))]).toEqual([open.id])
        }
        const sandbox = userPrincipal(carol, { sandbox: true, allowedBucketIds: [carols.id as DockId] })
        expect([...(yield* docksOf(sandbox, words.common))]).toEqual([carols.id])
        // the words only private pages have: found by members (in the closed Dock and, for the owner, in all of
        // theirs but the hidden one), by nobody else
        expect([...(yield* docksOf(userPrincipal(bob), words.secret))]).toEqual([closed.id])
        expect((yield* docksOf(userPrincipal(alice), words.secret)).size).toBe(3)
        expect((yield* docksOf(sandbox, words.secret)).size).toBe(1)
        for (const principal of [userPrincipal(outsider), anonymousPrincipal]) {
          expect(yield* search(principal, words.secret, {}, 50)).toEqual([])
          expect(yield* search(principal, words.secret, { bucket: open.id }, 50)).toEqual([])
        }
        // with more public, discoverable Docks (three pages each, among the newest), every caller but the sandbox
        // reads more than SEARCH_DOCK_BY_DOCK: the newest pages of all are walked, window by window
        const more = yield* Effect.forEach(
          Array.from({ length: SEARCH_DOCK_BY_DOCK }, (_, i) => i),
          (i) => createDock(carol, { title: `More ${i}`, visibility: "public", discoverable: true })
        )
        yield* sql`insert into parts (dock_id, owner_id, slug, public_slug, title, summary, content_type, page_kind,
          content, body_text, size_bytes, created_at, updated_at)
        select d, ${carol.id}, 'more-' || n, ${`more-${unique()}-`} || row_number() over (), 'More ' || n, '', 'html',
          'web_page', body, body, octet_length(body), timestamptz '2026-01-02', timestamptz '2026-01-02' - n * interval '1 second'
        from unnest(${more.map((dock) => dock.id)}::uuid[]) d, generate_series(1, 3) n,
          lateral (select ${words.common} || ' ' || ${words.half} || ' ' || ${words.a} || ' ' || ${words.b} as body) b`
        compared = 0
        yield* compareAll
        expect(compared).toBeGreaterThan(1000)

        // and still never a Dock or a private page the caller cannot read
        const outsiders = new Set([open.id, ...more.map((dock) => dock.id)])
        for (const principal of [userPrincipal(outsider), anonymousPrincipal]) {
          for (const query of [words.common, words.half, words.secret]) {
            for (const dock of yield* docksOf(principal, query)) expect(outsiders).toContain(dock)
          }
          expect(yield* search(principal, words.secret, {}, 50)).toEqual([])
        }
        expect([...(yield* docksOf(sandbox, words.common))]).toEqual([carols.id])
      }),
    300_000
  )

  it.effect("a snippet is cut from around the first match, however deep in the text, with the query's words marked", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("search-snippets")
      const dock = yield* createDock(owner, { title: "Snippets" })
      const [w, a, b] = [word("deep"), word("alpha"), word("beta")]
      const filler = (n: number) => Array.from({ length: n }, (_, i) => `filler${i % 7}`).join(" ")
      const sql = yield* SqlClient.SqlClient
      const insert = (slug: string, body: string) =>
        sql`insert into parts (dock_id, owner_id, slug, public_slug, title, summary, content_type, page_kind,
            content, body_text, size_bytes, created_at, updated_at)
          values (${dock.id}, ${owner.id}, ${slug}, ${`${slug}-${unique()}`}, ${slug}, '', 'html', 'web_page', ${body},
            ${body}, ${body.length}, now(), now())`
      yield* insert("deep", `${filler(400)} and then the ${w} shows up, late. ${filler(400)}`)
      // the phrase's first word alone first, the phrase later
      yield* insert("phrase", `${a} alone here. ${filler(300)} Now ${a} ${b} together. ${filler(100)}`)
      // the match 150 characters into a long word, where the window starts
      yield* insert("cut", `${filler(50)} ${"abcdefghij".repeat(30)} then the ${w} here. ${filler(20)}`)
      // a word whose stem is not a prefix of it (study: studi)
      yield* insert("stem", `${filler(300)} one more study of ${w}. ${filler(50)}`)
      const snippets = (query: string) =>
        Effect.flatMap(Pages, (pages) => pages.search(query, { target: { bucket: dock.id }, limit: 10 })).pipe(
          as(userPrincipal(owner)),
          Effect.map((hits) => Object.fromEntries(hits.map((hit) => [hit.part.slug, hit.snippet])))
        )
      const deep = yield* snippets(w)
      expect(deep["deep"]).toContain(`the **${w}** shows up`)
      expect(deep["deep"]).not.toMatch(/^filler0 filler1 filler2/)
      // the window starts at a whole word: the long one it begins inside is left out, not cut
      expect(deep["cut"]).toContain(`then the **${w}** here`)
      expect(deep["cut"]).not.toContain("ghij")
      expect(deep["stem"]).toContain(`**${w}**`)
      const phrase = yield* snippets(`"${a} ${b}"`)
      expect(phrase["phrase"]).toContain(`**${a}** **${b}** together`)
      const studies = yield* snippets(`studies ${w}`)
      expect(studies["stem"]).toContain(`**study** of **${w}**`)
    }))
})

layer(DomainTest, { timeout: 120_000 })("search_web_pages, Dock by Dock", (it) => {
  it.effect("each Dock's walk reads that Dock's pages from its own index, not every newer page of the others", () =>
    Effect.gen(function*() {
      // 20 busy Docks and an old one, 100 pages each, every page with the word: walking all pages newest first and
      // testing each against the Dock (parts_updated_idx) reads the 2,000 newer pages' vectors before the old
      // Dock's first page, which is what the planner chose for the old Dock while its Dock's index left the ties
      // to a sort (migration 18)
      const owner = yield* newUser("search-walk")
      const docks = yield* publicDocks(owner, "Walk", 21)
      const sql = yield* PgClient.PgClient
      yield* insertPages(sql, {
        owner,
        dockOf: sql`(${docks.map((dock) => dock.id)}::uuid[])[case when g > 2000 then 21 else 1 + g % 20 end]`,
        text: "lorem ipsum data",
        from: 1,
        to: 2100,
        at: sql`now() - g * interval '1 second'`
      })
      yield* sql`analyze parts`
      expectOwnIndexes(yield* planOf(sql, walkOf(sql, "data", docks)), 21)
    }))

  it.effect("under the search's settings each Dock's walk reads its own index, not every newer page of others", () =>
    Effect.gen(function*() {
      // 6 Docks of 60 pages, analyzed; then 1,000 newer pages in 16 other Docks, not yet analyzed (bench:pages leaves
      // this after its pushes; so does any burst of writes between two runs of autovacuum). Every page has the
      // word. At PostgreSQL's default random_page_cost (4) the planner, which still saw 6 Docks of 60 pages, walked
      // the global parts_updated_idx for each of the 6 and tested every newer page's vector before its Dock: ~98 ms
      // a search on bench:pages' database, against ~1.3 ms through each Dock's own index
      const owner = yield* newUser("search-busy")
      const docks = yield* publicDocks(owner, "Busy", 22)
      const sql = yield* PgClient.PgClient
      const text = `lorem ipsum ${word("busy")}`
      const insert = (from: number, to: number) =>
        insertPages(sql, {
          owner,
          dockOf: sql`(${docks.map((dock) => dock.id)}::uuid[])[case when g <= 360 then 1 + g % 6 else 7 + g % 16 end]`,
          text,
          from,
          to,
          at: sql`now() + interval '2 hours' + g * interval '1 second'`
        })
      yield* insert(1, 360)
      yield* sql`analyze parts`
      yield* insert(361, 1360)
      const plan = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`select ${searchPlannerSettings(sql)}`
        return yield* planOf(sql, walkOf(sql, text, docks.slice(0, 6)))
      }))
      expectOwnIndexes(plan, 6)
    }))
})

layer(DomainTest, { timeout: 120_000 })("search_web_pages, window by window", (it) => {
  it.effect("a window's walk tests the match only on pages the caller may read, the newest unreadable ones skipped", () =>
    Effect.gen(function*() {
      // 400 newest pages in another user's private Dock, then 600 older ones in 40 public, discoverable Docks, every
      // page with the word: the walk through the newest pages (more readable Docks than SEARCH_DOCK_BY_DOCK) must
      // test the word (read the page's vector) on the 100 readable pages it keeps, not on the 400 it passes over
      const owner = yield* newUser("search-private")
      const closed = yield* createDock(owner, { title: "Private work" })
      const open = yield* publicDocks(owner, "Open work", 40, { discoverable: true })
      const sql = yield* PgClient.PgClient
      const text = `lorem ipsum ${word("windowed")}`
      yield* insertPages(sql, {
        owner,
        dockOf: sql`case when g <= 400 then ${closed.id}::uuid
          else (${open.map((dock) => dock.id)}::uuid[])[1 + g % 40] end`,
        text,
        from: 1,
        to: 1000,
        at: sql`now() + interval '1 hour' - g * interval '1 second'`
      })
      yield* sql`analyze parts`
      const window = matchesNewestFirst(sql, {
        tsquery: sql`websearch_to_tsquery('english', ${text})`,
        // what PagesRepo's readableBy gives a caller who owns and belongs to no Dock
        readable: sql`d.hidden_at is null and d.visibility = 'public' and d.discoverable
          and p.visibility is distinct from 'private'`,
        from: null,
        before: null,
        wanted: SEARCH_RANK_CANDIDATES
      })
      const [plan, found] = yield* sql.withTransaction(Effect.gen(function*() {
        // the transaction's settings of PagesRepo.search; and no sort, so that the planner walks the newest pages
        // here as it does over many readable Docks' pages (on so few, it reads each readable Dock's and sorts them)
        yield* sql`select ${searchPlannerSettings(sql)}, set_config('enable_sort', 'off', true)`
        return [yield* planOf(sql, window, "(analyze, costs off, timing off)"), yield* window] as const
      }))
      expect(found).toHaveLength(SEARCH_RANK_CANDIDATES)
      // every plan node that tests the word: the rows it tested (each loop's rows kept and removed)
      const lines = plan.split("\n")
      const tested = lines.flatMap((line, i) => {
        if (!/Filter: .*@@/.test(line)) return []
        const node = lines.slice(0, i).reverse().find((above) => above.includes("(actual rows="))!
        const [, rows, loops] = /actual rows=([\d.]+) loops=(\d+)/.exec(node)!
        const removed = /Rows Removed by Filter: (\d+)/.exec(lines[i + 1] ?? "")?.[1] ?? "0"
        return [Number(loops) * (Number(rows) + Number(removed))]
      })
      expect(tested.length, plan).toBeGreaterThan(0)
      expect(tested.reduce((sum, n) => sum + n, 0), plan).toBeLessThanOrEqual(SEARCH_RANK_CANDIDATES)
    }))
})

layer(DomainTest, { timeout: 120_000 })("search_web_pages, the opening statement", (it) => {
  it.effect("is planned once: PostgreSQL keeps its generic plan from the sixth run on", () =>
    Effect.gen(function*() {
      // Prepared, it is planned for its values (a custom plan) on its first five runs; then PostgreSQL keeps the
      // generic plan only if it costs no more than those did. With the window's offset and the Docks' limit as
      // parameters the generic plan guessed them and cost more, so every search planned the statement again.
      // More pages than ten times the first window: a generic plan guesses an offset at a tenth of the rows.
      const owner = yield* newUser("search-start")
      const dock = yield* createDock(owner, { title: "Many pages", visibility: "public" })
      const sql = yield* PgClient.PgClient
      yield* insertPages(sql, {
        owner,
        dockOf: sql`${dock.id}::uuid`,
        text: "",
        from: 1,
        to: SEARCH_WINDOWS[0]! * 12,
        at: sql`now() - g * interval '1 second'`
      })
      yield* sql`analyze parts`
      const repo = yield* makePagesRepo
      const [statement, params] = repo.searchStart(userPrincipal(owner), "release schedule", {
        dockId: undefined,
        ownerUsername: undefined
      }).compile()
      const plans = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe(`prepare search_start as ${statement}`)
        for (let run = 0; run < 8; run++) {
          yield* sql.unsafe(`execute search_start(${executeArguments(params)})`)
        }
        const [row] = yield* sql<{ generic_plans: number; custom_plans: number }>`select generic_plans::int,
            custom_plans::int from pg_prepared_statements where name = 'search_start'`
        yield* sql`deallocate search_start`
        return row!
      }))
      expect(plans).toEqual({ generic_plans: 3, custom_plans: 5 })
    }))
})

layer(DomainTest, { timeout: 120_000 })("search_web_pages, the ranking statement", (it) => {
  it.effect("its generic plan parses the query once, at bind, and takes each hit's text once", () =>
    Effect.gen(function*() {
      // The statement is prepared, and after five runs PostgreSQL keeps to its generic plan, which folds nothing
      // that depends on a parameter: websearch_to_tsquery of a parameter is parsed again for every candidate, and
      // every expression naming the text takes it again from TOAST (PagesRepo.rankedMatches).
      const sql = yield* PgClient.PgClient
      const [statement, params] = rankedMatches(sql, [crypto.randomUUID()], "'error' <-> 'budget' & 'data'", 20)
        .compile()
      const plan = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`set local plan_cache_mode = force_generic_plan`
        yield* sql.unsafe(`prepare ranked_plan as ${statement}`)
        const rows = yield* sql.unsafe<{ "QUERY PLAN": string }>(
          `explain (verbose, costs off) execute ranked_plan(${executeArguments(params)})`
        )
        yield* sql`deallocate ranked_plan`
        return planText(rows)
      }))
      expect(plan).not.toContain("websearch_to_tsquery")
      // EXPLAIN shows a reference to a value computed below in parentheses: computed, the text is taken once and
      // the start looked for once
      expect(plan.match(/(?<!\()"left"\(parts\.body_text/g), plan).toHaveLength(1)
      expect(plan.match(/(?<!\()GREATEST\(/g), plan).toHaveLength(1)
    }))
})
