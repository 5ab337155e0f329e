// Undo an agent in the domain (docs/undo.md): a 500-row insert logs every row in the same write, a delete keeps
// the page and its versions in the trash (and a revert brings them back as they were), and the trash sweep
// purges what is older than the retention period, both trash and row change log.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import {
  AgentChanges,
  type DockId,
  MicroDb,
  type PageContent,
  Pages,
  type TokenId,
  TRASH_RETENTION_DAYS,
  userPrincipal
} from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"
import { as, createDock, newUser } from "./support/Fixtures.ts"

const DAY = 24 * 60 * 60 * 1000
const START = Date.UTC(2031, 0, 1)

const page = (slug: string, text: string): PageContent => ({
  slug,
  title: slug,
  summary: "",
  contentType: "html",
  pageKind: "web_page",
  content: `<p>${text}</p>`,
  bodyText: text
})

layer(DomainTest)("AgentChanges", (it) => {
  it.effect("a 500-row insert logs 500 changes; a delete keeps the page in the trash; the sweep purges after 30 days", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const sql = yield* SqlClient.SqlClient
      const owner = yield* newUser("undo")
      const dock = yield* createDock(owner, { title: "Undo" })
      const tokenId = crypto.randomUUID() as TokenId
      const agent = userPrincipal(owner, { tokenId, agentLabel: "bot" })
      const target = { bucket: dock.id }

      yield* Effect.flatMap(
        MicroDb,
        (db) => db.createTable(target, { name: "Items", columns: [{ name: "N", type: "number" }] })
      ).pipe(as(agent))
      yield* Effect.flatMap(
        MicroDb,
        (db) => db.insertRows(target, "items", Array.from({ length: 500 }, (_, n) => ({ n })))
      ).pipe(as(agent))
      const [logged] = yield* sql<{ count: number; tokens: number }>`select count(*)::int as count,
          count(distinct token_id)::int as tokens
        from micro_db_row_changes where dock_id = ${dock.id} and op = 'insert'`
      expect(logged).toEqual({ count: 500, tokens: 1 })

      yield* Effect.flatMap(Pages, (pages) => pages.save(dock.id as DockId, page("kept", "one"))).pipe(as(agent))
      yield* Effect.flatMap(Pages, (pages) => pages.save(dock.id as DockId, page("kept", "two"))).pipe(as(agent))
      yield* Effect.flatMap(Pages, (pages) => pages.remove(target, "kept")).pipe(as(agent))
      const [trashed] = yield* sql<
        { versions: number; token_id: string }
      >`select jsonb_array_length(versions) as versions,
          token_id::text from trashed_parts where dock_id = ${dock.id} and slug = 'kept'`
      expect(trashed).toEqual({ versions: 2, token_id: tokenId })

      // Within the retention period the sweep keeps both; after it, both go.
      const sweep = Effect.flatMap(AgentChanges, (changes) => changes.sweep)
      yield* TestClock.setTime(START + (TRASH_RETENTION_DAYS - 1) * DAY)
      const early = yield* sweep
      const [left] = yield* sql<{ pages: number; rows: number }>`select
          (select count(*)::int from trashed_parts where dock_id = ${dock.id}) as pages,
          (select count(*)::int from micro_db_row_changes where dock_id = ${dock.id}) as rows`
      expect(left).toEqual({ pages: 1, rows: 500 })
      expect(early.pages).toBeGreaterThanOrEqual(0)
      yield* TestClock.setTime(START + (TRASH_RETENTION_DAYS + 1) * DAY)
      const late = yield* sweep
      expect(late.pages).toBeGreaterThanOrEqual(1)
      expect(late.rowChanges).toBeGreaterThanOrEqual(500)
      const [gone] = yield* sql<{ pages: number; rows: number }>`select
          (select count(*)::int from trashed_parts where dock_id = ${dock.id}) as pages,
          (select count(*)::int from micro_db_row_changes where dock_id = ${dock.id}) as rows`
      expect(gone).toEqual({ pages: 0, rows: 0 })
    }))
})
