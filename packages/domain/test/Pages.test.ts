// The pages store and what get_bucket derives from it, over a real database: versions only on change,
// attribution on every version, the content caps, and the deterministic entity/concept ranking.
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import {
  type Dock,
  type DockId,
  Docks,
  errorBody,
  type PageContent,
  Pages,
  type Principal,
  type TokenId,
  userPrincipal
} from "../src/index.ts"
import { dockPageList, type DockPageListOptions, makePagesRepo } from "../src/Pages/PagesRepo.ts"
import { makePartsRepo } from "../src/Parts/PartsRepo.ts"
import { DomainTest, domainTestWith, TEST_BASE_URL, testServerUrl } from "../src/testing.ts"
import { as, createDock, grant, newUser, unique } from "./support/Fixtures.ts"
import { planOf } from "./support/Plans.ts"

const page = (slug: string, content: Partial<PageContent> = {}): PageContent => ({
  slug,
  title: `Page ${slug}`,
  summary: "",
  contentType: "html",
  pageKind: "web_page",
  content: `<p>${slug}</p>`,
  bodyText: slug,
  ...content
})

const save = (principal: Principal, dock: Dock, content: PageContent) =>
  Effect.flatMap(Pages, (pages) => pages.save(dock.id as DockId, content)).pipe(as(principal))

const details = (principal: Principal, dock: Dock) =>
  Effect.flatMap(Docks, (docks) => docks.details({ bucket: dock.id })).pipe(as(principal))

const versions = (partId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ version: number; reason: string; user_id: string; token_id: string | null; agent_label: string | null }>`
      select version, reason, user_id, token_id, agent_label from part_versions where part_id = ${partId}
      order by version`
  )

layer(DomainTest)("Pages", (it) => {
  it.effect("a first save creates version 1; identical content is unchanged; a change makes version 2", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("pages")
      const dock = yield* createDock(owner, { title: "Notes" })
      const agent = userPrincipal(owner, { tokenId: crypto.randomUUID() as TokenId, agentLabel: "writer-bot" })

      const first = yield* save(agent, dock, page("intro"))
      expect(first.action).toBe("created")
      expect(first.part).toMatchObject({
        bucket_id: dock.id,
        slug: "intro",
        title: "Page intro",
        content_type: "html",
        page_kind: "web_page",
        version: 1,
        claim_count: 0
      })
      expect(first.part.public_slug).toMatch(/^intro-[0-9a-z]+$/)
      expect(first.part.url).toBe(`${TEST_BASE_URL}/a/${first.part.public_slug}`)

      const again = yield* save(agent, dock, page("intro"))
      expect(again.action).toBe("unchanged")
      expect(again.part.version).toBe(1)

      const changed = yield* save(agent, dock, page("intro", { content: "<p>changed</p>" }))
      expect(changed.action).toBe("updated")
      expect(changed.part.version).toBe(2)
      expect(changed.part.public_slug).toBe(first.part.public_slug)

      const rows = yield* versions(first.part.id)
      expect(rows.map((row) => [row.version, row.reason])).toEqual([[1, "created"], [2, "updated"]])
      for (const row of rows) {
        expect(row).toMatchObject({ user_id: owner.id, token_id: agent.tokenId, agent_label: "writer-bot" })
      }
    }))

  it.effect("an editor may save, a viewer may not, an outsider does not see a private Dock", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("pages")
      const editor = yield* newUser("pages")
      const viewer = yield* newUser("pages")
      const outsider = yield* newUser("pages")
      const dock = yield* createDock(owner, { title: "Shared" })
      yield* grant(dock, editor, "editor")
      yield* grant(dock, viewer, "viewer")

      expect((yield* save(userPrincipal(editor), dock, page("by-editor"))).action).toBe("created")
      const denied = yield* Effect.flip(save(userPrincipal(viewer), dock, page("by-viewer")))
      expect(errorBody(denied).error.code).toBe("permission_denied")
      const hidden = yield* Effect.flip(save(userPrincipal(outsider), dock, page("by-outsider")))
      expect(errorBody(hidden).error.code).toBe("not_found")
    }))

  it.effect("a bad page slug is validation_error and nothing is stored", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("pages")
      const dock = yield* createDock(owner, { title: "Slugs" })
      const error = yield* Effect.flip(save(userPrincipal(owner), dock, page("Not A Slug")))
      expect(errorBody(error).error).toMatchObject({ code: "validation_error", details: { field: "page_slug" } })
      const count = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: number }>`select count(*)::int as n from parts where dock_id = ${dock.id}`)
      expect(count[0]!.n).toBe(0)
    }))

  it.effect("get_bucket ranks entities and concepts case-insensitively, once per page, ties alphabetically", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("pages")
      const me = userPrincipal(owner)
      const dock = yield* createDock(owner, { title: "Graph" })
      yield* save(
        me,
        dock,
        page("a", { entities: ["Ada Lovelace", "Babbage", "Babbage"], concepts: ["engines"], tags: ["math"] })
      )
      yield* save(me, dock, page("b", { entities: ["ada lovelace", "Zuse"], concepts: ["Engines"], tags: [] }))
      yield* save(me, dock, page("c", { entities: ["Ada Lovelace"], tags: ["math", "history"] }))

      const bucket = yield* details(me, dock)
      expect(bucket.top_entities).toEqual([
        { name: "Ada Lovelace", count: 3 },
        { name: "Babbage", count: 1 },
        { name: "Zuse", count: 1 }
      ])
      expect(bucket.top_concepts).toEqual([
        { name: "Engines", count: 2 },
        { name: "math", count: 2 },
        { name: "history", count: 1 }
      ])
      expect(bucket.page_count).toBe(3)
      expect(bucket.page_kind_breakdown).toEqual({ web_page: 3, markdown_file: 0, micro_db: 0 })
      expect(bucket.recent_activity.map((entry) => entry.action).slice(0, 3)).toEqual(
        ["page.created", "page.created", "page.created"]
      )
    }))
})

layer(domainTestWith({ planMaxArtifactsPerDock: 2 }))("Pages under a tight plan", (it) => {
  it.effect("the artifact cap refuses the page past it with tier_limit_exceeded and stores nothing", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("cap")
      const me = userPrincipal(owner)
      const dock = yield* createDock(owner, { title: `Capped ${unique()}` })
      yield* save(me, dock, page("one"))
      yield* save(me, dock, page("two"))
      const error = yield* Effect.flip(save(me, dock, page("three")))
      expect(errorBody(error).error.code).toBe("tier_limit_exceeded")
      // Updating an existing page is still allowed at the cap.
      expect((yield* save(me, dock, page("two", { content: "<p>2</p>" }))).action).toBe("updated")
      const count = yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ n: number }>`select count(*)::int as n from parts where dock_id = ${dock.id}`
      )
      expect(count[0]!.n).toBe(2)
    }))
})

layer(DomainTest, { timeout: 120_000 })("A Dock's page list", (it) => {
  it.effect("walks one index from its cursor in either order, and sorts nothing", () =>
    Effect.gen(function*() {
      // 2,000 pages in one Dock, a quarter of them sharing one instant (the recent order's ties): a list that read
      // and sorted the whole Dock for each page of 50 would show a Sort, or an index scan bounded by the Dock alone
      const owner = yield* newUser("list-order")
      const dock = yield* createDock(owner, { title: "List order" })
      const sql = yield* PgClient.PgClient
      yield* sql`insert into parts (dock_id, owner_id, slug, public_slug, title, summary, content_type, page_kind,
          content, body_text, size_bytes, created_at, updated_at)
        select ${dock.id}, ${owner.id}, 'list-' || g, ${`list-${unique()}-`} || g,
          case when g % 7 = 0 then null else 'Title ' || (g * 7919) % 2000 end, '', 'html', 'web_page', '', '', 0,
          now(), now() - (case when g % 4 = 0 then 0 else g end) * interval '1 second'
        from generate_series(1, 2000) g`
      yield* sql`analyze parts`
      const plan = (options: DockPageListOptions) => planOf(sql, dockPageList(sql, dock.id, options), "(verbose)")
      const base = { limit: 50, kinds: ["web_page", "markdown_file"] as const, includePrivate: false }
      const cursor = { a: "title 1", b: "list-143", id: crypto.randomUUID() }
      for (const after of [undefined, cursor]) {
        const alphabetical = yield* plan({ ...base, sort: "alphabetical", after })
        expect(alphabetical, alphabetical).toContain("parts_dock_title_idx")
        expect(alphabetical, alphabetical).not.toContain("Sort")
      }
      // a list never shows a page's content (up to 1 MiB each): it is not read
      const listed = yield* plan({ ...base, sort: "alphabetical" })
      expect(listed, listed).toMatch(/Output: .*\bcontent_type\b/)
      expect(listed, listed).not.toMatch(/\bcontent\b/)
      const recent = yield* plan({ ...base, sort: "recent" })
      expect(recent, recent).toContain("parts_dock_updated_idx")
      expect(recent, recent).not.toContain("Sort")
      // past the cursor, the scan starts at it: its instant bounds the index condition, not just the filter
      const [{ at }] = yield* sql<{ at: string }>`select to_char((now() - interval '10 minutes') at time zone 'UTC',
          'YYYY-MM-DD"T"HH24:MI:SS.US') as at`
      const later = yield* plan({ ...base, sort: "recent", after: { a: at, b: "", id: crypto.randomUUID() } })
      expect(later, later).toMatch(/Index Cond: .*updated_at <=/)
      expect(later, later).not.toContain("Sort")
      // and the walk still yields every page once, in order: 40 pages of 50, ties broken by id
      const repo = yield* makePagesRepo
      for (const sort of ["alphabetical", "recent"] as const) {
        const seen: Array<string> = []
        let after: { a: string; b: string; id: string } | undefined
        for (;;) {
          const rows = yield* repo.listInDock(dock.id, { ...base, sort, after })
          seen.push(...rows.map((row) => row.part.id))
          if (rows.length < base.limit) break
          after = rows.at(-1)!.key
        }
        expect(new Set(seen).size).toBe(2000)
        expect(seen).toHaveLength(2000)
      }
    }))
})

layer(DomainTest, { timeout: 60_000 })("A page's stored text", (it) => {
  it.effect("is compressed with lz4 on PostgreSQL (pglz where the server has no lz4), its search vector not at all", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("compression")
      const dock = yield* createDock(owner, { title: "Compression" })
      const writer = userPrincipal(owner)
      // ~64 KiB of prose-like text: past the TOAST threshold, and compressible
      const words = Array.from({ length: 9_000 }, (_, n) => `word${(n * 7919) % 400}`).join(" ")
      const saved = yield* save(writer, dock, page("compressed", { content: `<p>${words}</p>`, bodyText: words }))
      yield* save(writer, dock, page("compressed", { content: `<p>${words} again</p>`, bodyText: `${words} again` }))
      const sql = yield* PgClient.PgClient
      // the search vector (~20 KB here) is stored as it is: not even tried (storage external)
      const [storage] = yield* sql<{ attstorage: string }>`select attstorage from pg_attribute
        where attrelid = 'parts'::regclass and attname = 'search'`
      expect(storage).toEqual({ attstorage: "e" })
      const [stored] = yield* sql<{ content: string; body_text: string; search: string | null }>`select
          pg_column_compression(content) as content, pg_column_compression(body_text) as body_text,
          pg_column_compression(search) as search
        from parts where id = ${saved.part.id}`
      const kept = yield* sql<{ version: number; content: string }>`select version,
          pg_column_compression(content) as content from part_versions where part_id = ${saved.part.id}
        order by version`
      const method = Option.isSome(yield* testServerUrl) ? "lz4" : "pglz"
      expect(stored).toEqual({ content: method, body_text: method, search: null })
      expect(kept).toEqual([{ version: 1, content: method }, { version: 2, content: method }])
    }))
})

layer(DomainTest)("A Dock's usage", (it) => {
  it.effect("is added in one upsert that refuses what passes a cap, with or without a row yet", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("usage")
      const dock = yield* createDock(owner, { title: "Usage" })
      const dockId = dock.id as DockId
      const sql = yield* PgClient.PgClient
      const repo = yield* makePartsRepo
      const usage = () =>
        sql<{ artifacts: number; bytes: string }>`select artifacts, bytes from dock_usage where dock_id = ${dock.id}`
      const max = { artifacts: 3, bytes: 1_000 }
      yield* sql`delete from dock_usage where dock_id = ${dock.id}`
      // no row yet: a change past a cap is refused and leaves none; one within starts the row at the change
      expect(yield* repo.addUsage(dockId, { artifacts: 4, bytes: 10 }, max)).toBe(false)
      expect(yield* repo.addUsage(dockId, { artifacts: 1, bytes: 1_001 }, max)).toBe(false)
      expect(yield* usage()).toEqual([])
      expect(yield* repo.addUsage(dockId, { artifacts: 1, bytes: 600 }, max)).toBe(true)
      expect(yield* usage()).toEqual([{ artifacts: 1, bytes: "600" }])
      // with a row: the sum is what the caps judge (400 more bytes fit, 401 do not; bytes compare as numbers)
      expect(yield* repo.addUsage(dockId, { artifacts: 1, bytes: 401 }, max)).toBe(false)
      expect(yield* repo.addUsage(dockId, { artifacts: 2, bytes: 400 }, max)).toBe(true)
      expect(yield* repo.addUsage(dockId, { artifacts: 1, bytes: 0 }, max)).toBe(false)
      expect(yield* usage()).toEqual([{ artifacts: 3, bytes: "1000" }])
      // a removal always passes, and never below zero
      expect(yield* repo.addUsage(dockId, { artifacts: -5, bytes: -2_000 }, max)).toBe(true)
      expect(yield* usage()).toEqual([{ artifacts: 0, bytes: "0" }])
    }))
})

layer(DomainTest)("A page's write", (it) => {
  it.effect("stores the page and its version in one statement, each with the content sent once", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("write")
      const dock = yield* createDock(owner, { title: "Writes" })
      const writer = userPrincipal(owner, { tokenId: crypto.randomUUID() as TokenId, agentLabel: "write-bot" })
      const sql = yield* PgClient.PgClient
      const created = yield* save(writer, dock, page("once", { content: "<p>one</p>\n<p>two</p>" }))
      const updated = yield* save(writer, dock, page("once", { content: "<p>one</p>\n<p>three</p>\n<p>four</p>" }))
      expect(updated.part.version).toBe(2)
      // each version holds its own content, author and lines, copied from the page row inside the statement
      const kept = yield* sql<
        { version: number; content: string; agent_label: string; added: number; removed: number }
      >`
        select version, content, agent_label, lines_added as added, lines_removed as removed from part_versions
        where part_id = ${created.part.id} order by version`
      expect(kept).toEqual([
        { version: 1, content: "<p>one</p>\n<p>two</p>", agent_label: "write-bot", added: 2, removed: 0 },
        { version: 2, content: "<p>one</p>\n<p>three</p>\n<p>four</p>", agent_label: "write-bot", added: 2, removed: 1 }
      ])
      const [stored] = yield* sql<{ content: string }>`select content from parts where id = ${created.part.id}`
      expect(stored).toEqual({ content: "<p>one</p>\n<p>three</p>\n<p>four</p>" })
    }))

  it.effect("reads a page's content under the lock only when another write moved it since the first read", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("relock")
      const dock = yield* createDock(owner, { title: "Relock" })
      const dockId = dock.id as DockId
      const writer = userPrincipal(owner)
      const sql = yield* SqlClient.SqlClient
      const repo = yield* makePartsRepo
      yield* save(writer, dock, page("moving", { content: "<p>first</p>" }))
      const read = (yield* repo.findInDock(dockId, "moving"))!
      // still at the version read: its content is the read's (a marker here, to show it is not read again)
      const same = yield* sql.withTransaction(repo.lockInDock(dockId, "Moving", { ...read, content: "marker" }))
      expect(same).toMatchObject({ id: read.id, version: 1, content: "marker" })
      // another write came in between: the page as it is now, its content read under the lock
      yield* save(writer, dock, page("moving", { content: "<p>second</p>" }))
      const moved = yield* sql.withTransaction(repo.lockInDock(dockId, "moving", { ...read, content: "marker" }))
      expect(moved).toMatchObject({ id: read.id, version: 2, content: "<p>second</p>" })
      expect(yield* repo.lockInDock(dockId, "moving", undefined)).toMatchObject({
        version: 2,
        content: "<p>second</p>"
      })
      expect(yield* repo.lockInDock(dockId, "absent", read)).toBeUndefined()
    }))
})
