/**
 * What the page tools read: lists, versions, search, links and the browser routes' lookups. SQL in, typed rows
 * out; SqlError is a defect here. Private to Pages/. Every write of a page goes through the Parts port.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"
import { escapeLike } from "../Database/Like.ts"
import { type DockId, isUuid, type PageId } from "../Ids.ts"
import { PartRow } from "../Parts/PartRow.ts"
import type { Principal } from "../Principal.ts"
import type { PageKind, PageRecord } from "./Part.ts"

export const makePagesRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  const columns = sql`id, dock_id, owner_id, slug, public_slug, title, summary, content_type, page_kind, visibility,
    content, claim_count, version, size_bytes, updated_at`
  /** A search hit's page without its content, which results never carry (pages may be 1 MiB each). */
  const resultColumns = sql`id, dock_id, owner_id, slug, public_slug, title, summary, content_type, page_kind,
    visibility, '' as content, claim_count, version, size_bytes, updated_at`
  const decode = Schema.decodeUnknown(Schema.Array(PartRow))

  /** A page of a Dock by its UUID or its slug, with the record fields get_web_page shows, in one read. */
  const findWithRecord = (dockId: DockId, ref: string) => {
    const byId = isUuid(ref.trim())
    return sql<{
      body_text: string
      front_matter: Record<string, unknown>
      tags: Array<string>
      entities: Array<string>
      concepts: Array<string>
      source_ids: Array<string>
      links: Array<string>
    }>`select ${columns}, body_text, front_matter, tags, entities, concepts, source_ids, links from parts
      where dock_id = ${dockId} and ${byId ? sql`id = ${ref.trim().toLowerCase()}` : sql`slug = ${ref.trim()}`}`.pipe(
      Effect.flatMap((rows) =>
        Effect.map(decode(rows), (parts) =>
          parts.map((part, index): PartRow & { readonly record: PageRecord } => {
            const row = rows[index]!
            return {
              ...part,
              record: {
                text: row.body_text,
                frontMatter: row.front_matter,
                tags: row.tags,
                entities: row.entities,
                concepts: row.concepts,
                sourceIds: row.source_ids,
                links: row.links
              }
            }
          }))
      ),
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )
  }

  const listInDock = (
    dockId: DockId,
    options: {
      readonly limit: number
      readonly sort: "alphabetical" | "recent"
      readonly kinds: ReadonlyArray<PageKind>
      readonly includePrivate: boolean
    }
  ) =>
    sql`select ${columns} from parts
      where dock_id = ${dockId} and page_kind = any(${[...options.kinds]}::text[])
        ${options.includePrivate ? sql`` : sql`and visibility is distinct from 'private'`}
      order by ${
      options.sort === "recent"
        ? sql`updated_at desc, id`
        : sql`lower(coalesce(title, slug, '')) collate "C", slug collate "C", id`
    }
      limit ${options.limit}`.pipe(Effect.flatMap(decode), Effect.orDie)

  const versions = (partId: PageId) =>
    sql<{
      version: number
      title: string | null
      summary: string
      content_type: string
      size_bytes: number
      reason: string
      restored_from: number | null
      user_id: string | null
      username: string | null
      agent_label: string | null
      created_at: Date
    }>`select v.version, v.title, v.summary, v.content_type, v.size_bytes, v.reason, v.restored_from, v.user_id::text,
        u.username, v.agent_label, v.created_at
      from part_versions v left join users u on u.id = v.user_id
      where v.part_id = ${partId} order by v.version`.pipe(Effect.orDie)

  const versionContent = (partId: PageId, version: number) =>
    sql<{ title: string | null; summary: string; content_type: string; content: string }>`select title, summary,
        content_type, content from part_versions where part_id = ${partId} and version = ${version}`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  /**
   * Pages the caller may read: in a Dock that is not hidden and is public or theirs (owned or a member of), a
   * sandbox caller's only in its sandbox, and a page marked private only for the Dock's members. With
   * `findable`, public Docks of others count only when they are discoverable (cross-Dock search).
   */
  const readableBy = (principal: Principal, options: { readonly findable: boolean } = { findable: false }) => {
    const member = sql`(d.owner_id = ${principal.userId}
      or exists(select 1 from dock_members m where m.dock_id = d.id and m.user_id = ${principal.userId}))`
    const docks = principal.sandbox
      ? sql`d.id = any(${[...(principal.allowedBucketIds ?? [])]}::uuid[])`
      : sql`(${member} or (d.visibility = 'public' ${options.findable ? sql`and d.discoverable` : sql``}))`
    return sql`d.hidden_at is null and ${docks} and (p.visibility is distinct from 'private' or ${member})`
  }

  /**
   * search_web_pages: full-text search (title A, summary B, text C) over readable pages, best first (ranked by
   * `rank_vector`: title, summary and the start of the text), with a
   * snippet of the text around the matches (`**` marks each match). Standalone artifacts are in no Dock and
   * are never found.
   */
  const search = (
    principal: Principal,
    query: string,
    options: { readonly dockId: DockId | undefined; readonly ownerUsername: string | undefined; readonly limit: number }
  ) =>
    // The planner prices `@@` in a sequential scan far too low: it reads every page's whole (TOASTed) vector,
    // where the GIN index answers without them (a word on 80% of 100,000 pages: 530 ms against 120 ms). Only
    // this statement's transaction is told so.
    sql.withTransaction(Effect.zipRight(
      sql`set local enable_seqscan = off`,
      sql<PartRow & { rank: number; snippet: string; dock_slug: string; dock_title: string; owner_username: string }>`
      with matches as (
        select p.id from parts p join docks d on d.id = p.dock_id join users u on u.id = d.owner_id
        where p.search @@ websearch_to_tsquery('english', ${query})
          and ${readableBy(principal, { findable: options.dockId === undefined })}
          ${options.dockId === undefined ? sql`` : sql`and d.id = ${options.dockId}`}
          ${options.ownerUsername === undefined ? sql`` : sql`and u.username = ${options.ownerUsername.toLowerCase()}`}
        order by p.updated_at desc, p.id
        limit ${SEARCH_RANK_CANDIDATES}
      ),
      hits as (
        select p.id, ts_rank(p.rank_vector, websearch_to_tsquery('english', ${query})) as rank, d.slug as dock_slug,
          d.title as dock_title, u.username as owner_username
        from matches m join parts p on p.id = m.id join docks d on d.id = p.dock_id join users u on u.id = d.owner_id
        order by rank desc, p.updated_at desc, p.id
        limit ${options.limit}
      )
      select ${resultColumns}, hits.rank, hits.dock_slug, hits.dock_title, hits.owner_username,
        ts_headline('english', left(body_text, ${SNIPPET_SOURCE_CHARS}), websearch_to_tsquery('english', ${query}),
          'MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … ", StartSel=**, StopSel=**') as snippet
      from parts join hits using (id)
      order by hits.rank desc, updated_at desc, id`.pipe(
        Effect.flatMap((rows) =>
          Effect.map(decode(rows), (parts) =>
            parts.map((part, index) => ({
              part,
              rank: Number(rows[index]!.rank),
              snippet: rows[index]!.snippet,
              dock: { slug: rows[index]!.dock_slug, title: rows[index]!.dock_title, owner: rows[index]!.owner_username }
            })))
        ),
        Effect.orDie
      )
    )).pipe(Effect.orDie)

  /**
   * Pages that wikilinks could name, in any number of Docks at once (one statement): for each Dock, the pages
   * whose slug or lowercased title is one of its keys (the link texts lowercased and slugified), oldest first.
   */
  const linkCandidates = (wanted: ReadonlyArray<{ readonly dockId: DockId; readonly keys: ReadonlyArray<string> }>) => {
    const pairs = wanted.flatMap(({ dockId, keys }) => [...new Set(keys)].map((key) => [dockId, key] as const))
    if (pairs.length === 0) return Effect.succeed([])
    return sql<LinkCandidate>`with wanted as (
        select * from unnest(${pairs.map(([dockId]) => dockId)}::uuid[], ${pairs.map(([, key]) => key)}::text[])
          as w(dock_id, key)
      )
      select p.id, p.dock_id, p.slug, p.title, p.public_slug, p.visibility, p.created_at
      from parts p
      where p.dock_id = any(${[...new Set(wanted.map(({ dockId }) => dockId))]}::uuid[])
        and ((p.dock_id, p.slug) in (select dock_id, key from wanted)
          or (p.dock_id, lower(p.title)) in (select dock_id, key from wanted))
      order by p.created_at, p.id`.pipe(Effect.orDie)
  }

  /**
   * Pages the caller can read whose wikilinks might name a page of `dockId` at `path` (owner/dock/): every
   * linking page of that Dock, and pages elsewhere with a link under the path. The caller resolves each. Only
   * a page's first `linksMax` targets count (as when its links are read), and of those from other Docks only
   * the ones under the path come back.
   */
  const backlinkCandidates = (principal: Principal, dockId: DockId, path: string, limit: number, linksMax: number) => {
    const under = escapeLike(path.toLowerCase()) + "%"
    return sql<
      {
        id: string
        dock_id: string
        slug: string | null
        title: string | null
        public_slug: string
        links: Array<string>
        dock_slug: string
        owner_username: string
      }
    >`select p.id, p.dock_id, p.slug, p.title, p.public_slug,
        array(select t from unnest(p.links[1:${linksMax}]) t where p.dock_id = ${dockId} or lower(t) like ${under}) as links,
        d.slug as dock_slug, u.username as owner_username
      from parts p join docks d on d.id = p.dock_id join users u on u.id = d.owner_id
      where cardinality(p.links) > 0 and ${readableBy(principal)}
        and (p.dock_id = ${dockId}
          or exists(select 1 from unnest(p.links[1:${linksMax}]) t where lower(t) like ${under}))
      order by p.created_at, p.id
      limit ${limit}`.pipe(Effect.orDie)
  }

  /** A page's stored wikilink targets (the first `max` of them when given), without the rest of the row. */
  const linksOf = (id: PageId, max?: number) =>
    sql<{ links: Array<string> }>`select ${max === undefined ? sql`links` : sql`links[1:${max}] as links`}
      from parts where id = ${id}`.pipe(
      Effect.map((rows) => rows[0]?.links ?? []),
      Effect.orDie
    )

  /** Who made one version and when (the artifact footer). */
  const versionAuthor = (partId: PageId, version: number) =>
    sql<{ username: string | null; agent_label: string | null; created_at: Date }>`select u.username, v.agent_label,
        v.created_at
      from part_versions v left join users u on u.id = v.user_id
      where v.part_id = ${partId} and v.version = ${version}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

  /**
   * A page anyone may view (the browser routes, before app sessions exist): not private, and either in a
   * public Dock that is not hidden, or a standalone artifact (reachable by its link, listed nowhere).
   */
  const findViewable = (by: { readonly publicSlug: string } | { readonly id: string }) =>
    sql`select ${columns} from parts
      where ${"publicSlug" in by ? sql`public_slug = ${by.publicSlug}` : sql`id = ${by.id}`}
        and visibility is distinct from 'private'
        and (dock_id is null
          or dock_id in (select id from docks where visibility = 'public' and hidden_at is null))`.pipe(
      Effect.flatMap(decode),
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  return {
    search,
    linkCandidates,
    backlinkCandidates,
    linksOf,
    versionAuthor,
    findViewable,
    findWithRecord,
    listInDock,
    versions,
    versionContent
  } as const
})

/**
 * Ranking reads every candidate's vector, so a word found on most pages would cost a read of most pages: when
 * more readable pages match than this, the most recently updated ones are ranked.
 */
export const SEARCH_RANK_CANDIDATES = 5_000

/** ts_headline reads at most this much of a page's text: snippets stay fast on 1 MiB pages. */
const SNIPPET_SOURCE_CHARS = 100_000

export interface LinkCandidate {
  readonly id: string
  readonly dock_id: string
  readonly slug: string | null
  readonly title: string | null
  readonly public_slug: string
  readonly visibility: "private" | "public" | null
  readonly created_at: Date
}

export type PagesRepo = Effect.Effect.Success<typeof makePagesRepo>
