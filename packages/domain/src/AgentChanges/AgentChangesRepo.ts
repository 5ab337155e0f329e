/**
 * What a token changed, read: its page versions, the pages it deleted (the trash), its row changes (the row change
 * log) and its schema changes (the activity log), and the Docks it changed. SQL in, typed rows out; SqlError is a
 * defect here. Writes go through Parts and the Micro DB's repo, never here.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import type { DockId, PageId, RowId, TableId, TokenId, UserId } from "../Ids.ts"

/** One version of a page the token touched (no content). */
export interface VersionMeta {
  readonly page_id: PageId
  readonly slug: string | null
  readonly title: string | null
  /** the page's current version */
  readonly current: number
  readonly version: number
  readonly token_id: string | null
  readonly reason: string
  readonly created_at: Date
}

/** One version of a page the token deleted, as the trash keeps it. */
export interface TrashedVersionMeta extends VersionMeta {
  readonly deleted_at: Date
}

/** One entry of the row change log of a row the token touched, with the row and its table as they are now. */
export interface RowEntry {
  readonly seq: string
  readonly table_id: TableId
  readonly table_slug: string | null
  readonly row_id: RowId
  readonly token_id: string | null
  readonly op: "insert" | "update" | "delete"
  readonly data_before: Record<string, unknown> | null
  readonly at: Date
  readonly exists: boolean
  readonly current_data: Record<string, unknown> | null
}

export interface SchemaEntry {
  readonly action: string
  readonly subject_id: string | null
  readonly details: unknown
  readonly created_at: Date
}

export const makeAgentChangesRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  /**
   * The Docks the token changed since `since` (every write is in the activity log; deletions also in the trash),
   * not hidden, and with `ownerId` only that user's; at most 100, oldest first.
   */
  const touchedDocks = (tokenId: TokenId, since: Date, ownerId: UserId | null) =>
    sql<{ id: DockId; path: string }>`select d.id, u.username || '/' || d.slug as path
      from docks d join users u on u.id = d.owner_id
      where d.hidden_at is null ${ownerId === null ? sql`` : sql`and d.owner_id = ${ownerId}`}
        and d.id in (
          select a.dock_id from activity a where a.token_id = ${tokenId} and a.created_at >= ${since}
            and a.dock_id is not null
          union
          select t.dock_id from trashed_parts t where t.token_id = ${tokenId} and t.deleted_at >= ${since}
        )
      order by d.created_at, d.id
      limit 100`.pipe(Effect.orDie)

  /** Whether the Dock is an unclaimed sandbox (its caps): for the operator, who names Docks without resolving them. */
  const sandboxOf = (dockId: DockId) =>
    sql<{ sandbox: boolean }>`select sandbox from docks where id = ${dockId}`.pipe(
      Effect.map((rows) => rows[0]?.sandbox === true),
      Effect.orDie
    )

  /** Every version (without content) of the Dock's pages the token wrote a version of since `since`, by slug. */
  const pageVersions = (dockId: DockId, tokenId: TokenId, since: Date) =>
    sql<VersionMeta>`select p.id as page_id, p.slug, p.title, p.version as current, v.version, v.token_id::text,
        v.reason, v.created_at
      from parts p join part_versions v on v.part_id = p.id
      where p.dock_id = ${dockId} and p.page_kind <> 'micro_db' and p.id in (
        select w.part_id from part_versions w where w.token_id = ${tokenId} and w.created_at >= ${since}
      )
      order by p.slug, p.id, v.version`.pipe(Effect.orDie)

  /** Every version (without content) of the Dock's pages the token deleted since `since`, as the trash keeps them, by slug. */
  const trashedVersions = (dockId: DockId, tokenId: TokenId, since: Date) =>
    sql<TrashedVersionMeta>`select t.id as page_id, t.slug, t.part ->> 'title' as title,
        (t.part ->> 'version')::int as current, v.version, v.token_id::text, v.reason, v.created_at, t.deleted_at
      from trashed_parts t
        cross join lateral jsonb_to_recordset(t.versions)
          as v(version int, token_id uuid, reason text, created_at timestamptz)
      where t.dock_id = ${dockId} and t.token_id = ${tokenId} and t.deleted_at >= ${since}
      order by t.slug, t.id, v.version`.pipe(Effect.orDie)

  /** Whether the Dock has a page of this slug now (a trashed page cannot come back over it). */
  const slugTaken = (dockId: DockId, slug: string | null, except: PageId) =>
    slug === null ? Effect.succeed(false) : sql`select 1 from parts
      where dock_id = ${dockId} and slug = ${slug} and id <> ${except}`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  /** A stored version's own fields: what a new version equal to it starts from. */
  const versionContent = (pageId: PageId, version: number) =>
    sql<{ title: string | null; summary: string; content_type: string; content: string }>`select title, summary,
        content_type, content from part_versions where part_id = ${pageId} and version = ${version}`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  /**
   * Every log entry since `since` of the Dock's rows the token changed since then (anyone's, in order), with each
   * row's table and data as they are now.
   */
  const rowEntries = (dockId: DockId, tokenId: TokenId, since: Date) =>
    sql<RowEntry>`select c.seq::text, c.table_id, t.slug as table_slug, c.row_id, c.token_id::text, c.op,
        c.data_before, c.at, r.id is not null as exists, r.data as current_data
      from micro_db_row_changes c
        left join micro_db_tables t on t.id = c.table_id
        left join micro_db_rows r on r.id = c.row_id
      where c.dock_id = ${dockId} and c.at >= ${since} and c.row_id in (
        select w.row_id from micro_db_row_changes w
        where w.dock_id = ${dockId} and w.token_id = ${tokenId} and w.at >= ${since}
      )
      order by c.seq`.pipe(Effect.orDie)

  /** The token's own row log entries (list_agent_changes), up to `limit`. */
  const ownRowEntries = (dockId: DockId, tokenId: TokenId, since: Date, limit: number) =>
    sql<{ table_id: string; table_slug: string | null; row_id: string; op: "insert" | "update" | "delete"; at: Date }>`
      select c.table_id, t.slug as table_slug, c.row_id, c.op, c.at
      from micro_db_row_changes c left join micro_db_tables t on t.id = c.table_id
      where c.dock_id = ${dockId} and c.token_id = ${tokenId} and c.at >= ${since}
      order by c.seq
      limit ${limit}`.pipe(Effect.orDie)

  /** The token's schema changes in the Dock (tables, columns, the Micro DB's own fields), from the activity log. */
  const schemaEntries = (dockId: DockId, tokenId: TokenId, since: Date, limit: number) =>
    sql<SchemaEntry>`select a.action, a.subject_id::text, a.details, a.created_at
      from activity a
      where a.dock_id = ${dockId} and a.token_id = ${tokenId} and a.created_at >= ${since}
        and (starts_with(a.action, 'micro_db.table.') or starts_with(a.action, 'micro_db.column.')
          or a.action = 'micro_db.updated')
      order by a.seq
      limit ${limit}`.pipe(Effect.orDie)

  return {
    touchedDocks,
    sandboxOf,
    pageVersions,
    trashedVersions,
    slugTaken,
    versionContent,
    rowEntries,
    ownRowEntries,
    schemaEntries
  } as const
})
