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

  /** The ten names of a column most pages mention, as a JSON array of { name, count } (the module's comment). */
  const ranked = (dockId: DockId, member: boolean, column: "entities" | "concepts") => {
    const names = column === "entities" ? sql`p.entities` : sql`p.concepts || p.tags`
    return sql`(select coalesce(json_agg(json_build_object('name', top.name, 'count', top.count)
        order by top.count desc, top.key collate "C", top.name collate "C"), '[]')
      from (
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
        select s.key, s.name, count(distinct m.id)::int as count
        from mentions m join spellings s on s.key = m.key and s.rank = 1
        group by s.key, s.name
        order by count desc, s.key collate "C", s.name collate "C"
        limit ${TOP_NAMES}
      ) top)`
  }

  /**
   * Recent activity as a JSON array, newest first; outsiders see only Dock and page events, and nothing about
   * private pages.
   */
  const activity = (dockId: DockId, member: boolean) =>
    sql`(select coalesce(json_agg(json_build_object('action', recent.action, 'subject_type', recent.subject_type,
        'subject_id', recent.subject_id, 'username', recent.username, 'agent_label', recent.agent_label,
        'token_id', recent.token_id, 'created_at', recent.created_at) order by recent.seq desc), '[]')
      from (
        select a.seq, a.action, a.subject_type, a.subject_id, u.username, a.agent_label, a.token_id, a.created_at
        from activity a left join users u on u.id = a.user_id
        where a.dock_id = ${dockId}
          ${
      member ? sql`` : sql`and a.action = any(${PUBLIC_ACTIONS}::text[])
            and not exists (select 1 from parts p where p.id = a.subject_id and p.visibility = 'private')`
    }
        order by a.seq desc
        limit ${RECENT_ACTIVITY}
      ) recent)`

  /**
   * Everything get_bucket reports about a Dock's content in one statement (one round trip, where a statement each
   * took six): the pages by kind, the sources, the top entities and concepts, the cover page (when it is one the
   * caller may see) and the recent activity.
   */
  const details = (dockId: DockId, member: boolean, coverId: string | null) =>
    sql<{
      kinds: Record<string, number>
      sources: number
      entities: Array<{ name: string; count: number }>
      concepts: Array<{ name: string; count: number }>
      cover: { id: string; slug: string | null; title: string | null } | null
      activity: Array<{
        action: string
        subject_type: string | null
        subject_id: string | null
        username: string | null
        agent_label: string | null
        token_id: string | null
        created_at: string
      }>
    }>`/* prepared */ select
        (select coalesce(json_object_agg(k.page_kind, k.n), '{}') from (select p.page_kind, count(*)::int as n
          from parts p where ${visibleParts(dockId, member)} group by p.page_kind) k) as kinds,
        (select count(*)::int from sources where dock_id = ${dockId} and archived_at is null) as sources,
        ${ranked(dockId, member, "entities")} as entities,
        ${ranked(dockId, member, "concepts")} as concepts,
        (select json_build_object('id', p.id, 'slug', p.slug, 'title', p.title) from parts p
          where p.id = ${coverId}::uuid and ${visibleParts(dockId, member)}) as cover,
        ${activity(dockId, member)} as activity`.pipe(
      Effect.map(([row]) => {
        const breakdown = { web_page: 0, markdown_file: 0, micro_db: 0, ...row!.kinds }
        return {
          page_count: breakdown.web_page + breakdown.markdown_file + breakdown.micro_db,
          source_count: row!.sources,
          page_kind_breakdown: breakdown,
          entities: row!.entities,
          concepts: row!.concepts,
          cover: row!.cover ?? undefined,
          // JSON carries a time as text with the session's offset: the same instant as a Date
          activity: row!.activity.map((entry) => ({ ...entry, created_at: new Date(entry.created_at) }))
        }
      }),
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

  return { details, forkTracking } as const
})
