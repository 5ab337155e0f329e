/**
 * What the page tools read: lists, versions, search, links and the browser routes' lookups. SQL in, typed rows
 * out; SqlError is a defect here. Private to Pages/. Every write of a page goes through the Parts port.
 */
import type { Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { escapeLike } from "../Database/Like.ts"
import { rowsOf } from "../Database/Rows.ts"
import { readOnlySnapshot } from "../Database/Transactional.ts"
import { type Along, alongColumns } from "../Docks/Docks.ts"
import { type DockId, isUuid, type PageId } from "../Ids.ts"
import { partColumns, PartRow } from "../Parts/PartRow.ts"
import type { Principal } from "../Principal.ts"
import type { PageKind, PageRecord } from "./Part.ts"
import { highlightQuery, snippetLocators } from "./Snippets.ts"

/** The highest number a version can have: part_versions.version is a PostgreSQL `integer`. */
const MAX_STORED_VERSION = 2_147_483_647

/** Where a page of list_web_pages ended: the last row's sort key (text as PostgreSQL computed it) and id. */
export interface ListKey {
  readonly a: string
  readonly b: string
  readonly id: string
}

/**
 * Up to SEARCH_RANK_CANDIDATES matches of `tsquery` in these Docks (id, and whether the caller is a member, who
 * also reads the private pages), newest first: each Dock's walk of its own index (migration 18), merged.
 */
export const matchesByDock = (
  sql: PgClient.PgClient,
  tsquery: Statement.Fragment,
  docks: ReadonlyArray<readonly [string, boolean]>
) =>
  sql<{ readonly id: string }>`select id from (${
    sql.join(" union all ", false)(docks.map(([dockId, member]) =>
      sql`(select p.id, p.updated_at from parts p
        where p.dock_id = ${dockId} ${member ? sql`` : sql`and p.visibility is distinct from 'private'`}
          and p.search @@ ${tsquery}
        order by p.updated_at desc, p.id
        limit ${SEARCH_RANK_CANDIDATES})`
    ))
  }) c
    order by c.updated_at desc, c.id
    limit ${SEARCH_RANK_CANDIDATES}`

/**
 * Up to `wanted` matches of `tsquery` among the pages `p` (in Docks `d`) that `readable` admits, updated in [from,
 * before), newest first: a window of PagesRepo.search. The match is tested on the same row again (`s`, by its
 * ctid) and tied to its Dock, so that a walk through the newest pages tests it after the Dock: a page the caller
 * may not read is passed over without its vector read. Tested on `p` itself, PostgreSQL tested it first (it prices
 * `@@` as one operator, not as the read of a TOASTed vector), and the newest pages of Docks the caller cannot read
 * cost a vector each: 1,000 private 64 KiB pages, 22–290 ms a window (docs/decisions.md "Search reads the Dock
 * first"). The tie compares the ids as text, which no index answers: as `s.dock_id = d.id`, PostgreSQL 18 (the
 * embedded database) found `s` through the Dock's index and tested the match on each page of that Dock. A rare word
 * still comes from the GIN index: `s` first, then its row and Dock.
 */
export const matchesNewestFirst = (
  sql: PgClient.PgClient,
  window: {
    readonly tsquery: Statement.Fragment
    readonly readable: Statement.Fragment
    readonly from: string | null
    readonly before: string | null
    readonly wanted: number
  }
) =>
  sql<{ readonly id: string }>`select p.id from parts p join docks d on d.id = p.dock_id
    where ${window.readable}
      ${window.from === null ? sql`` : sql`and p.updated_at >= ${window.from}::timestamptz`}
      ${window.before === null ? sql`` : sql`and p.updated_at < ${window.before}::timestamptz`}
      and exists (select from parts s where s.ctid = p.ctid and s.dock_id::text = d.id::text
        and s.search @@ ${window.tsquery})
    order by p.updated_at desc, p.id
    limit ${window.wanted}`

/**
 * The best `limit` of the candidates `ids` for the query `written` (websearch_to_tsquery's text form), with their
 * Dock and a snippet: steps 2 and 3 of `search`. Prepared (one shape whatever the query), so PostgreSQL runs it on a
 * generic plan, which folds nothing that depends on a parameter. So the query arrives as a tsquery parameter (parsed
 * once, at bind) rather than through websearch_to_tsquery (parsed again for every candidate ranked and sorted), and
 * each hit's text is taken (read from TOAST and decompressed) and searched for the snippet's start once, in
 * subqueries the planner keeps (`offset 0`), rather than once for every expression that names them. A locator the
 * query has none of is left out of the statement rather than matched as null: a strict function's arguments are
 * still computed. Together about a third of the statement's time (docs/decisions.md, "A generic plan folds
 * nothing"). A hit's page comes without its content (`partColumns`).
 */
export const rankedMatches = (
  sql: PgClient.PgClient,
  ids: ReadonlyArray<string>,
  written: string,
  limit: number
) => {
  const locators = snippetLocators(written)
  const match = (pattern: string) => sql`nullif(regexp_instr(s.source, ${pattern}, 1, 1, 0, 'i'), 0)`
  const matches = [locators.phrases, locators.words].filter((pattern) => pattern !== "").map(match)
  const firstMatch = matches.length === 0 ? sql`1` : sql`coalesce(${sql.join(", ", false)(matches)}, 1)`
  const window = sql.literal(String(SNIPPET_WINDOW))
  return sql<
    PartRow & { rank: number; snippet: string; dock_slug: string; dock_title: string; owner_username: string }
  >`/* prepared */ with hits as (
      select p.id, ts_rank(p.rank_vector, ${written}::tsquery) as rank, d.slug as dock_slug, d.title as dock_title,
        u.username as owner_username
      from parts p join docks d on d.id = p.dock_id join users u on u.id = d.owner_id
      where p.id = any(${ids}::uuid[])
      order by rank desc, p.updated_at desc, p.id
      limit ${limit}
    )
    select ${partColumns(sql, { content: false })}, hits.rank, hits.dock_slug, hits.dock_title, hits.owner_username,
      ts_headline('english', window_text, ${highlightQuery(written)}::tsquery,
        'MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … ", StartSel=**, StopSel=**') as snippet
    from parts join hits using (id)
      cross join lateral (select left(body_text, ${sql.literal(String(SNIPPET_SOURCE_CHARS))}) as source offset 0) s
      cross join lateral (
        select greatest(1, ${firstMatch} - ${sql.literal(String(SNIPPET_LEAD))}) as start offset 0
      ) at
      -- from the first whole word of the window
      cross join lateral (
        select case when at.start = 1 then substr(s.source, 1, ${window})
          else regexp_replace(substr(s.source, at.start, ${window}), '^\\S*\\s+', '') end as window_text
      ) w
    order by hits.rank desc, updated_at desc, id`
}

/** What list_web_pages and list_markdown_files ask of one Dock (PagesRepo.listInDock). */
export interface DockPageListOptions {
  readonly limit: number
  readonly sort: "alphabetical" | "recent"
  readonly kinds: ReadonlyArray<PageKind>
  readonly includePrivate: boolean
  readonly after?: ListKey | undefined
}

/**
 * One page of a Dock's list, each row with its key (`list_key_a`, `list_key_b`). Both orders walk one index from
 * the cursor and stop at `limit`: `recent` parts_dock_updated_idx, `alphabetical` parts_dock_title_idx (migration
 * 19), whose expressions and collation are these, word for word; without it every page of the Dock was read and
 * sorted for each list (66 ms for a Dock of 20,000 pages, 0.2 ms with it).
 */
export const dockPageList = (
  sql: PgClient.PgClient,
  dockId: DockId,
  options: DockPageListOptions
) => {
  const recent = options.sort === "recent"
  const key = recent
    ? sql`to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as list_key_a, '' as list_key_b`
    : sql`lower(coalesce(title, slug, '')) as list_key_a, coalesce(slug, '') as list_key_b`
  const after = options.after
  const past = after === undefined
    ? sql``
    : recent
    // The first condition bounds the index scan (it starts at the cursor); the second drops the ties before it.
    ? sql`and updated_at <= ${after.a}::timestamp at time zone 'UTC'
          and (updated_at < ${after.a}::timestamp at time zone 'UTC' or id > ${after.id}::uuid)`
    : sql`and (lower(coalesce(title, slug, '')) collate "C", coalesce(slug, '') collate "C", id)
          > (${after.a} collate "C", ${after.b} collate "C", ${after.id}::uuid)`
  return sql`select ${partColumns(sql, { content: false })}, ${key} from parts
      where dock_id = ${dockId} and page_kind = any(${[...options.kinds]}::text[])
        ${options.includePrivate ? sql`` : sql`and visibility is distinct from 'private'`}
        ${past}
      order by ${
    recent
      ? sql`updated_at desc, id`
      : sql`lower(coalesce(title, slug, '')) collate "C", coalesce(slug, '') collate "C", id`
  }
      limit ${options.limit}`
}

/** Where a search looks: one Dock, one owner's Docks, or (neither) every Dock the caller can read. */
export interface SearchScope {
  readonly dockId: DockId | undefined
  readonly ownerUsername: string | undefined
}

export const makePagesRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const snapshot = readOnlySnapshot(sql)

  const columns = partColumns(sql, { content: true })
  const decode = rowsOf(PartRow)

  /** A stored page with the record fields get_web_page shows, as read (`body_text`, `front_matter`, …). */
  const withRecord = (rows: ReadonlyArray<Record<string, unknown>>) =>
    Effect.map(decode(rows), (parts) =>
      parts.map((part, index): PartRow & { readonly record: PageRecord } => {
        const row = rows[index] as {
          body_text: string
          front_matter: Record<string, unknown>
          tags: Array<string>
          entities: Array<string>
          concepts: Array<string>
          source_ids: Array<string>
          links: Array<string>
        }
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

  const pageWhere = (dockId: Statement.Fragment, ref: string) =>
    isUuid(ref.trim())
      ? sql`dock_id = ${dockId} and id = ${ref.trim().toLowerCase()}`
      // Slugs are stored lowercase, so a slug is found whatever its case, as wikilinks are (issue 18).
      : sql`dock_id = ${dockId} and slug in (${ref.trim()}, ${ref.trim().toLowerCase()})`

  /** A page of a Dock by its UUID or its slug, with the record fields get_web_page shows, in one read. */
  const findWithRecord = (dockId: DockId, ref: string) =>
    sql`select ${columns}, body_text, front_matter, tags, entities, concepts, source_ids, links from parts
      where ${pageWhere(sql`${dockId}`, ref)}`.pipe(
      Effect.flatMap(withRecord),
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  /**
   * `findWithRecord` read beside the Dock in the resolver's own statement (Docks.forReadAlong): the same columns,
   * each named `page_…` beside the Dock's; undefined when the Dock has no such page.
   */
  const withRecordAlong = (ref: string): Along<(PartRow & { readonly record: PageRecord }) | undefined> => ({
    from: (dockId) =>
      sql`select id as page_id, dock_id as page_dock_id, owner_id as page_owner_id, slug as page_slug,
          public_slug as page_public_slug, title as page_title, summary as page_summary,
          content_type as page_content_type, page_kind as page_page_kind, visibility as page_visibility,
          content as page_content, claim_count as page_claim_count, version as page_version,
          size_bytes as page_size_bytes, updated_at as page_updated_at, body_text as page_body_text,
          front_matter as page_front_matter, tags as page_tags, entities as page_entities,
          concepts as page_concepts, source_ids as page_source_ids, links as page_links
        from parts where ${pageWhere(dockId, ref)}`,
    decode: (row) => {
      if (row["page_id"] == null) return Effect.succeed(undefined)
      return withRecord([alongColumns(row, "page_")]).pipe(Effect.map((rows) => rows[0]), Effect.orDie)
    }
  })

  /**
   * A page of a Dock's list, `limit` at a time: `after` is the key of the last row of the page before (a cursor),
   * each row comes with its own key, so the next page starts after it whatever was written meanwhile. The key is
   * computed by PostgreSQL (its `lower`, timestamps to the microsecond), never by JavaScript.
   */
  const listInDock = (dockId: DockId, options: DockPageListOptions) =>
    dockPageList(sql, dockId, options).pipe(
      Effect.flatMap((rows) =>
        Effect.map(decode(rows), (parts) =>
          parts.map((part, index) => {
            const row = rows[index] as { list_key_a: string; list_key_b: string }
            return { part, key: { a: row.list_key_a, b: row.list_key_b, id: part.id } satisfies ListKey }
          }))
      ),
      Effect.orDie
    )

  const versions = (partId: PageId) =>
    sql<{
      version: number
      title: string | null
      summary: string
      content_type: string
      size_bytes: number
      reason: string
      restored_from: number | null
      lines_added: number | null
      lines_removed: number | null
      user_id: string | null
      username: string | null
      agent_label: string | null
      token_id: string | null
      created_at: Date
    }>`select v.version, v.title, v.summary, v.content_type, v.size_bytes, v.reason, v.restored_from, v.lines_added,
        v.lines_removed, v.user_id::text, u.username, v.agent_label, v.token_id::text, v.created_at
      from part_versions v left join users u on u.id = v.user_id
      where v.part_id = ${partId} order by v.version`.pipe(Effect.orDie)

  /**
   * A number past PostgreSQL's `integer` (the type of part_versions.version) names no stored version: it finds
   * none without being sent, since comparing it with the column would fail the statement.
   */
  const versionContent = (partId: PageId, version: number) =>
    version > MAX_STORED_VERSION ?
      Effect.succeed(undefined) :
      sql<{ title: string | null; summary: string; content_type: string; content: string }>`select title, summary,
        content_type, content from part_versions where part_id = ${partId} and version = ${version}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

  /**
   * The caller owns Dock `d` or is one of its members; `memberDocks`, when given, are the Docks the caller is a
   * member of, read beforehand (a plain list is what lets the planner price the Dock check fairly in search).
   */
  const memberOf = (principal: Principal, memberDocks?: ReadonlyArray<string>) =>
    sql`(d.owner_id = ${principal.userId} or ${
      memberDocks === undefined
        ? sql`exists(select 1 from dock_members m where m.dock_id = d.id and m.user_id = ${principal.userId})`
        : sql`d.id = any(${memberDocks}::uuid[])`
    })`

  /**
   * Docks `d` whose pages the caller may read (those not marked private, and those too for members): not hidden,
   * and public or theirs (owned or a member of); a sandbox caller's only its sandbox. With `findable`, public
   * Docks of others count only when they are discoverable (cross-Dock search).
   */
  const readableDock = (
    principal: Principal,
    options: { readonly findable: boolean; readonly memberDocks?: ReadonlyArray<string> }
  ) =>
    sql`d.hidden_at is null and ${
      principal.sandbox
        ? sql`d.id = any(${[...(principal.allowedBucketIds ?? [])]}::uuid[])`
        : sql`(${memberOf(principal, options.memberDocks)} or (d.visibility = 'public' ${
          options.findable ? sql`and d.discoverable` : sql``
        }))`
    }`

  /** Pages `p` (in Docks `d`) the caller may read: in a readable Dock, and not private unless a member's. */
  const readableBy = (
    principal: Principal,
    options: { readonly findable: boolean; readonly memberDocks?: ReadonlyArray<string> } = { findable: false }
  ) =>
    sql`${readableDock(principal, options)} and (p.visibility is distinct from 'private' or ${
      memberOf(principal, options.memberDocks)
    })`

  /** Which Docks a search looks in, and its query, as SQL. */
  const searchFilters = (query: string, options: SearchScope) => ({
    tsquery: sql`websearch_to_tsquery('english', ${query})`,
    findable: { findable: options.dockId === undefined },
    byOwner: options.ownerUsername === undefined
      ? sql``
      : sql`and d.owner_id = (select id from users where username = ${options.ownerUsername.toLowerCase()})`,
    byDock: options.dockId === undefined ? sql`` : sql`and d.id = ${options.dockId}`
  })
  /** The Docks searched (one more than SEARCH_DOCK_BY_DOCK at most), each with whether the caller is a member. */
  const docksSearched = (principal: Principal, filters: ReturnType<typeof searchFilters>) =>
    sql`coalesce((select json_agg(json_build_array(r.id, r.member)) from (
      select d.id, ${memberOf(principal)} as member from docks d
      where ${readableDock(principal, filters.findable)} ${filters.byDock} ${filters.byOwner}
      order by d.id limit ${sql.literal(String(SEARCH_DOCK_BY_DOCK + 1))}
    ) r), '[]')`
  /**
   * Where the window of the newest `size` pages ends: the updated_at of its oldest page, as text so that no
   * microsecond is lost on the way back; null when there are fewer pages.
   */
  const windowEnd = (size: number) =>
    sql`(select updated_at from parts order by updated_at desc offset ${sql.literal(String(size - 1))} limit 1)::text`

  /**
   * A search's first statement: the transaction's planner settings (see `search`), the query as tsquery text, where
   * the first window ends, the Docks searched and the caller's memberships. Its bounds are literals, so that its
   * generic plan costs what a custom one does and PostgreSQL keeps it from the sixth run on: with them as parameters
   * it planned the statement again on every search (0.2–0.45 ms of each).
   */
  const searchStart = (principal: Principal, query: string, options: SearchScope) => {
    const filters = searchFilters(query, options)
    return sql`/* prepared */ select ${searchPlannerSettings(sql)}, ${filters.tsquery}::text as written,
        ${windowEnd(SEARCH_WINDOWS[0]!)} as end, ${docksSearched(principal, filters)} as docks,
        array(select dock_id from dock_members where user_id = ${principal.userId}) as member_docks`
  }

  /**
   * search_web_pages: full-text search (title A, summary B, text C) over readable pages, best first, with a
   * snippet of the text around the matches (`**` marks each match). Standalone artifacts are in no Dock and
   * are never found. Three bounded steps on one snapshot (repeatable read), so that each sees the same pages:
   *
   * 1. The candidates: the SEARCH_RANK_CANDIDATES most recently updated readable matches (all of them when
   *    fewer match). Each way of finding them reads the vector of a page only when it needs to:
   *    - at most SEARCH_DOCK_BY_DOCK readable Docks (a named Dock, a sandbox, a caller with few Docks and few
   *      public ones around): each Dock's pages newest first, merged, stopping at the last candidate needed;
   *    - more: the newest pages of all first (SEARCH_WINDOWS: the newest 1,000, then the newest 10,000, then
   *      all), one statement a window, each stopping at the candidates still missing.
   *    A word on most pages is found by walking the newest pages until enough have it (a few hundred vectors
   *    read); a rare word's few pages come from the GIN index; a phrase is rechecked (its vector read) only on
   *    the pages walked.
   * 2. The ranking: `ts_rank` over `rank_vector` (title, summary and the start of the text) of the candidates,
   *    the best `limit` kept (equal ranks: most recently updated first).
   * 3. The snippets, for those `limit` pages only: `ts_headline` over SNIPPET_WINDOW characters from just before
   *    the first place the query's phrase, else one of its words, occurs (Snippets.ts), marking its words there.
   */
  const search = (
    principal: Principal,
    query: string,
    options: SearchScope & { readonly limit: number }
  ) => {
    const { byDock, byOwner, findable, tsquery } = searchFilters(query, options)
    /** Up to `wanted` readable matches updated in [from, before), newest first. */
    const matchesIn = (
      memberDocks: ReadonlyArray<string>,
      from: string | null,
      before: string | null,
      wanted: number
    ) =>
      matchesNewestFirst(sql, {
        tsquery,
        readable: sql`${readableBy(principal, { ...findable, memberDocks })} ${byDock} ${byOwner}`,
        from,
        before,
        wanted
      })
    // One snapshot for the three steps: a candidate is still a readable match when it is ranked.
    return snapshot(Effect.gen(function*() {
      // For this transaction only: no sequential scan, because the planner prices `@@` there far too low (it
      // reads every page's whole TOASTed vector where the GIN index answers without them); joins by nested loop,
      // which keep the walk through the newest pages in order, so it stops at the last candidate needed; and a
      // random page read priced as what it is on a server whose pages are cached (1.1 sequential reads, not 4), so
      // that a Dock's pages are walked through its own index even when the statistics predate a burst of newer
      // pages elsewhere: at 4, a Dock's walk went through every newer page of all, testing each one's vector
      // before its Dock (docs/decisions.md "Search reads the Dock first").
      const [first] = yield* sql<{
        readonly written: string
        readonly end: string | null
        readonly docks: ReadonlyArray<readonly [string, boolean]>
        readonly member_docks: ReadonlyArray<string>
      }>`${searchStart(principal, query, options)}`
      // Only stop words (websearch_to_tsquery's query is empty, and matches nothing), or no Dock to search.
      if (first!.written === "" || first!.docks.length === 0) return []
      const candidates: Array<string> = []
      if (first!.docks.length <= SEARCH_DOCK_BY_DOCK) {
        for (const row of yield* matchesByDock(sql, tsquery, first!.docks)) candidates.push(row.id)
      } else {
        let before: string | null = null
        let end = first!.end
        for (let window = 1;; window++) {
          const rows = yield* matchesIn(first!.member_docks, end, before, SEARCH_RANK_CANDIDATES - candidates.length)
          for (const row of rows) candidates.push(row.id)
          if (candidates.length >= SEARCH_RANK_CANDIDATES || end === null) break
          before = end
          end = window < SEARCH_WINDOWS.length
            ? (yield* sql<{ readonly end: string | null }>`select ${windowEnd(SEARCH_WINDOWS[window]!)} as end`)[0]!
              .end
            : null
        }
      }
      if (candidates.length === 0) return []
      const rows = yield* rankedMatches(sql, candidates, first!.written, options.limit)
      const parts = yield* decode(rows)
      return parts.map((part, index) => ({
        part,
        rank: Number(rows[index]!.rank),
        snippet: rows[index]!.snippet,
        dock: { slug: rows[index]!.dock_slug, title: rows[index]!.dock_title, owner: rows[index]!.owner_username }
      }))
    })).pipe(Effect.orDie)
  }

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

  /** Who wrote each page's current version (the Dock view's author column), by page id, in one statement. */
  const currentAuthors = (ids: ReadonlyArray<string>) =>
    ids.length === 0
      ? Effect.succeed([])
      : sql<{ part_id: string; username: string | null; agent_label: string | null }>`select p.id::text as part_id,
          u.username, v.agent_label
        from parts p join part_versions v on v.part_id = p.id and v.version = p.version
          left join users u on u.id = v.user_id
        where p.id = any(${[...ids]}::uuid[])`.pipe(Effect.orDie)

  /** Who made one version and when (the artifact footer). */
  const versionAuthor = (partId: PageId, version: number) =>
    sql<{ username: string | null; agent_label: string | null; created_at: Date }>`select u.username, v.agent_label,
        v.created_at
      from part_versions v left join users u on u.id = v.user_id
      where v.part_id = ${partId} and v.version = ${version}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

  /**
   * A page the browser routes may show: public ones by public slug or id (not private, and either in a public Dock
   * that is not hidden, or a standalone artifact); with `sharedId` (a live share link's page, found by ShareLinks)
   * or `memberPage` (a signed-in reader's, whose role the caller checks) whatever its visibility, while its Dock
   * is not hidden.
   */
  const findViewable = (
    by:
      | { readonly publicSlug: string }
      | { readonly id: string }
      | { readonly sharedId: string }
      | { readonly memberPage: { readonly publicSlug: string } | { readonly id: string } }
  ) =>
    ("sharedId" in by
      ? sql`select ${columns} from parts
        where id = ${by.sharedId} and dock_id in (select id from docks where hidden_at is null)`
      : "memberPage" in by
      // Any page of a Dock that is not hidden, whatever its visibility: the caller checks the reader's role.
      ? sql`select ${columns} from parts
        where ${
        "publicSlug" in by.memberPage ? sql`public_slug = ${by.memberPage.publicSlug}` : sql`id = ${by.memberPage.id}`
      }
          and dock_id in (select id from docks where hidden_at is null)`
      : sql`select ${columns} from parts
      where ${"publicSlug" in by ? sql`public_slug = ${by.publicSlug}` : sql`id = ${by.id}`}
        and visibility is distinct from 'private'
        and (dock_id is null
          or dock_id in (select id from docks where visibility = 'public' and hidden_at is null))`).pipe(
        Effect.flatMap(decode),
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

  return {
    search,
    searchStart,
    linkCandidates,
    backlinkCandidates,
    linksOf,
    versionAuthor,
    currentAuthors,
    findViewable,
    findWithRecord,
    withRecordAlong,
    listInDock,
    versions,
    versionContent
  } as const
})

/**
 * The planner settings of a search's transaction, as select-list items that set them (`search` says why): no
 * sequential scan, joins by nested loop only, and a random page read priced at 1.1 sequential ones rather than 4.
 */
export const searchPlannerSettings = (sql: PgClient.PgClient) =>
  sql`set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true),
    set_config('enable_mergejoin', 'off', true), set_config('random_page_cost', '1.1', true)`

/**
 * How many of the most recently updated readable matches are ranked (all of them when fewer match): ranking
 * reads each candidate's `rank_vector`, and finding the candidates reads the vector of every page looked at, so
 * a word on most pages would otherwise cost a read of most pages. 100 keeps a search for such a word at a few
 * milliseconds of SQL on 100,000 pages (docs/decisions.md, "Search").
 */
export const SEARCH_RANK_CANDIDATES = 100

/**
 * With at most this many readable Docks to search, each Dock's pages are walked (merged, newest first); with more,
 * the newest pages of all (see `search`).
 */
export const SEARCH_DOCK_BY_DOCK = 32

/** The windows of newest pages the candidates are looked for in, one after the other, before all pages. */
export const SEARCH_WINDOWS: ReadonlyArray<number> = [1_000, 10_000]

/** A snippet's match is looked for in at most this much of a page's text. */
const SNIPPET_SOURCE_CHARS = 100_000

/** ts_headline reads this many characters of the text, starting SNIPPET_LEAD before the first match. */
const SNIPPET_WINDOW = 600
const SNIPPET_LEAD = 150

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
