/**
 * What get_bucket reports about a Dock's content, counted only over what the caller may see: pages marked
 * private are left out for outsiders.
 *
 * top_entities and top_concepts are derived deterministically from the pages' records: entities are the front
 * matter `entities` values and the `[[wikilink]]` targets of each page, concepts are the front matter `concepts`
 * values and the `tags`. Each name counts once per page, names are compared case-insensitively (the most common
 * spelling wins, then the first in code-point order, capitals first), and the ten with most pages are listed, ties alphabetically (lowercased, code-point order, so the answer
 * is the same whatever the database's collation).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import type { DockId } from "../Ids.ts"

export const TOP_NAMES = 10
export const RECENT_ACTIVITY = 20

/** Actions an outsider sees in a public Dock's activity: what happened to the Dock and its pages. */
export const PUBLIC_ACTIONS = [
  "dock.created",
  "dock.updated",
  "dock.forked",
  "page.created",
  "page.updated",
  "page.deleted",
  "page.restored"
]

export const makeDockDetailsRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  const visibleParts = (dockId: DockId, member: boolean) =>
    member ? sql`p.dock_id = ${dockId}` : sql`p.dock_id = ${dockId} and p.visibility is distinct from 'private'`

  const counts = (dockId: DockId, member: boolean) =>
    Effect.gen(function*() {
      const kinds = yield* sql<{ page_kind: string; n: number }>`/* prepared */ select p.page_kind, count(*)::int as n
        from parts p where ${visibleParts(dockId, member)} group by p.page_kind`
      const sources = yield* sql<{ n: number }>`/* prepared */ select count(*)::int as n from sources
        where dock_id = ${dockId} and archived_at is null`
      const breakdown = { web_page: 0, markdown_file: 0, micro_db: 0 }
      for (const row of kinds) breakdown[row.page_kind as keyof typeof breakdown] = row.n
      return {
        page_count: breakdown.web_page + breakdown.markdown_file + breakdown.micro_db,
        source_count: sources[0]?.n ?? 0,
        page_kind_breakdown: breakdown
      }
    }).pipe(Effect.orDie)

  const ranked = (dockId: DockId, member: boolean, column: "entities" | "concepts") => {
    const names = column === "entities" ? sql`p.entities` : sql`p.concepts || p.tags`
    return sql<{ name: string; count: number }>`/* prepared */
      with mentions as (
        select distinct p.id, lower(trim(name)) as key, trim(name) as name
        from parts p, unnest(${names}) as name
        where ${visibleParts(dockId, member)} and trim(name) <> ''
      ),
      spellings as (
        select key, name, count(*) as uses,
          row_number() over (partition by key order by count(*) desc, name collate "C") as rank
        from mentions group by key, name
      )
      select s.name, count(distinct m.id)::int as count
      from mentions m join spellings s on s.key = m.key and s.rank = 1
      group by s.key, s.name
      order by count desc, s.key collate "C", s.name collate "C"
      limit ${TOP_NAMES}`.pipe(Effect.orDie)
  }

  const cover = (dockId: DockId, partId: string | null, member: boolean) =>
    partId === null ?
      Effect.succeed(undefined) :
      sql<{ id: string; slug: string | null; title: string | null }>`/* prepared */
      select p.id, p.slug, p.title from parts p where p.id = ${partId} and ${visibleParts(dockId, member)}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

  /**
   * A fork's standing against its upstream: changed, added and removed pages since the fork. An upstream page
   * made private since counts as removed: the forker may not see it any more.
   */
  const forkTracking = (forkId: DockId, upstreamId: DockId) =>
    Effect.gen(function*() {
      const copies = yield* sql<{ pages: number; changed: number; removed: number }>`/* prepared */
        select count(*)::int as pages,
          count(*) filter (where up.id is not null and up.version > p.upstream_version)::int as changed,
          count(*) filter (where up.id is null)::int as removed
        from parts p left join parts up on up.id = p.upstream_part_id and up.dock_id = ${upstreamId}
          and up.visibility is distinct from 'private'
        where p.dock_id = ${forkId} and p.upstream_part_id is not null`
      const added = yield* sql<{ n: number }>`/* prepared */ select count(*)::int as n from parts up
        where up.dock_id = ${upstreamId} and up.visibility is distinct from 'private'
          and not exists (select 1 from parts p where p.dock_id = ${forkId} and p.upstream_part_id = up.id)`
      return {
        pages: copies[0]?.pages ?? 0,
        changed: copies[0]?.changed ?? 0,
        removed: copies[0]?.removed ?? 0,
        added: added[0]?.n ?? 0
      }
    }).pipe(Effect.orDie)

  /** Recent activity; outsiders see only Dock and page events, and nothing about private pages. */
  const activity = (dockId: DockId, member: boolean) =>
    sql<{
      action: string
      subject_type: string | null
      subject_id: string | null
      username: string | null
      agent_label: string | null
      token_id: string | null
      created_at: Date
    }>`/* prepared */ select a.action, a.subject_type, a.subject_id::text, u.username, a.agent_label, a.token_id::text, a.created_at
      from activity a left join users u on u.id = a.user_id
      where a.dock_id = ${dockId}
        ${
      member ? sql`` : sql`and a.action = any(${PUBLIC_ACTIONS}::text[])
          and not exists (select 1 from parts p where p.id = a.subject_id and p.visibility = 'private')`
    }
      order by a.seq desc
      limit ${RECENT_ACTIVITY}`.pipe(Effect.orDie)

  return { counts, ranked, cover, forkTracking, activity } as const
})
