/**
 * Every statement that writes `parts`, `part_versions` or a Dock's content usage, and the reads a write starts
 * from: SQL in, typed rows out. SqlError is a defect here. Private to Parts/: others go through the Parts port.
 */
import type { Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { rowsOf } from "../Database/Rows.ts"
import { type DockId, isUuid, type PageId, type UserId } from "../Ids.ts"
import type { ContentType, PageKind } from "../Pages/Part.ts"
import {
  type Author,
  type ContentChange,
  partColumns,
  type PartFields,
  PartRow,
  type ShellFields,
  type VersionLines,
  type VersionReason
} from "./PartRow.ts"

export const makePartsRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  const columns = partColumns(sql, { content: true })
  const decode = rowsOf(PartRow)
  const first = <A>(rows: ReadonlyArray<A>) => rows[0]
  /** Every column but the content ('' in its place), for reads that get the content from elsewhere. */
  const withoutContent = partColumns(sql, { content: false })
  /** The first of rows read `withoutContent`, decoded with `content`, which the caller holds already. */
  const firstWithContent = (content: string) => (rows: ReadonlyArray<Record<string, unknown>>) =>
    decode(rows.map((row) => ({ ...row, content }))).pipe(Effect.map(first))

  /**
   * Writers of one Dock take turns until the transaction ends (so two pushes of a new slug cannot both create it).
   * Answers whether the Dock is still there (not deleted or hidden meanwhile).
   */
  const lockDock = (dockId: DockId) =>
    sql`/* prepared */ select id from docks where id = ${dockId} and hidden_at is null for no key update`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  /** Whether the Dock is an unclaimed sandbox (for writers that hold a Dock id but not the resolved Dock). */
  const sandboxOf = (dockId: DockId) =>
    sql<{ sandbox: boolean }>`select sandbox from docks where id = ${dockId}`.pipe(
      Effect.map((rows) => rows[0]?.sandbox === true),
      Effect.orDie
    )

  /** The rows of a Dock's page named by its UUID or its slug, whatever the case of either (slugs are lowercase). */
  const rowsInDock = (dockId: DockId, ref: string, select: Statement.Fragment, lock: boolean) => {
    const trimmed = ref.trim()
    const byId = isUuid(trimmed)
    return sql<Record<string, unknown>>`/* prepared */ select ${select} from parts
      where dock_id = ${dockId} and ${
      byId ? sql`id = ${trimmed.toLowerCase()}` : sql`slug in (${trimmed}, ${trimmed.toLowerCase()})`
    }
      ${lock ? sql`for update` : sql``}`
  }

  /**
   * A page of a Dock by its UUID or its slug, whatever the case of either (slugs are stored lowercase; the slug
   * as given is compared too); `lock` makes the caller's transaction its one writer.
   */
  const findInDock = (dockId: DockId, ref: string, lock = false) =>
    rowsInDock(dockId, ref, columns, lock).pipe(Effect.flatMap(decode), Effect.map(first), Effect.orDie)

  /**
   * A page of a Dock locked for the caller's transaction (its one writer), as it is now. `read`, the page as read
   * before the lock, gives its content when the page is still at that version (a version's content never changes),
   * so that a write reads a page's content once; when another write came in between, it is read again.
   */
  const lockInDock = (dockId: DockId, ref: string, read: PartRow | undefined) =>
    Effect.gen(function*() {
      const rows = yield* rowsInDock(dockId, ref, withoutContent, true)
      const row = rows[0]
      if (row === undefined) return undefined
      if (read === undefined || read.id !== row["id"] || read.version !== row["version"]) {
        return yield* findInDock(dockId, ref, true)
      }
      return yield* firstWithContent(read.content)(rows)
    }).pipe(Effect.orDie)

  /** The Dock's page of a kind that a Dock has at most one of (the Micro DB shell). */
  const findKind = (dockId: DockId, kind: PageKind, lock = false) =>
    sql`select ${columns} from parts where dock_id = ${dockId} and page_kind = ${kind} ${
      lock ? sql`for update` : sql``
    }`
      .pipe(Effect.flatMap(decode), Effect.map(first), Effect.orDie)

  const findById = (id: PageId) =>
    sql`select ${columns} from parts where id = ${id}`.pipe(Effect.flatMap(decode), Effect.map(first), Effect.orDie)

  /** Everything a new version starts from: the page's current fields. */
  const fieldsOf = (id: PageId) =>
    sql<{
      slug: string
      title: string | null
      summary: string
      content_type: ContentType
      page_kind: PageKind
      content: string
      body_text: string
      front_matter: Record<string, unknown>
      tags: Array<string>
      entities: Array<string>
      concepts: Array<string>
      source_ids: Array<string>
      links: Array<string>
      claim_count: number
      size_bytes: number
    }>`select slug, title, summary, content_type, page_kind, content, body_text, front_matter, tags, entities, concepts,
        source_ids, links, claim_count, size_bytes from parts where id = ${id}`.pipe(
      Effect.map((rows): PartFields => {
        const row = rows[0]!
        return {
          slug: row.slug,
          title: row.title,
          summary: row.summary,
          contentType: row.content_type,
          pageKind: row.page_kind,
          content: row.content,
          bodyText: row.body_text,
          frontMatter: row.front_matter,
          tags: row.tags,
          entities: row.entities,
          concepts: row.concepts,
          sourceIds: row.source_ids,
          links: row.links,
          claimCount: row.claim_count,
          sizeBytes: row.size_bytes
        }
      }),
      Effect.orDie
    )

  /** The page a write answers: its row returned `withoutContent`, with the content the caller just sent. */
  const written = (fields: PartFields) => (rows: ReadonlyArray<Record<string, unknown>>) =>
    Effect.map(firstWithContent(fields.content)(rows), (row) => row!)

  /**
   * The version a write of `page` makes (`page`: a CTE of the one `parts` row just written, its `columns` and
   * `front_matter`): its content and fields copied from that row inside PostgreSQL, so that a page's content
   * crosses the wire once a write.
   */
  const versionOf = (
    page: string,
    author: Author,
    reason: VersionReason,
    now: Date,
    restoredFrom: number | null,
    lines: VersionLines | undefined
  ) =>
    sql`insert into part_versions (part_id, version, title, summary, content_type, content, front_matter, size_bytes,
        user_id, token_id, agent_label, reason, restored_from, created_at, lines_added, lines_removed)
      select id, version, title, summary, content_type, content, front_matter, size_bytes, ${author.userId},
        ${author.tokenId}, ${author.agentLabel}, ${reason}, ${restoredFrom}, ${now}, ${lines?.added ?? null},
        ${lines?.removed ?? null}
      from ${sql(page)}`

  /** A new page at version 1 and its first version, in one statement. */
  const insert = (
    dockId: DockId | null,
    page: {
      readonly ownerId: UserId
      readonly publicSlug: string
      readonly fields: PartFields
      readonly visibility: "private" | "public" | null
      readonly author: Author
      readonly now: Date
      readonly lines: VersionLines
    }
  ) => {
    const { fields, now } = page
    return sql`/* prepared */ with inserted as (
        insert into parts (dock_id, owner_id, slug, public_slug, title, summary, content_type, page_kind,
          visibility, content, body_text, front_matter, tags, entities, concepts, source_ids, links, claim_count,
          version, size_bytes, created_at, updated_at)
        values (${dockId}, ${page.ownerId}, ${fields.slug}, ${page.publicSlug}, ${fields.title}, ${fields.summary},
          ${fields.contentType}, ${fields.pageKind}, ${page.visibility}, ${fields.content}, ${fields.bodyText},
          ${sql.json(fields.frontMatter)}, ${[...fields.tags]}::text[], ${[...fields.entities]}::text[],
          ${[...fields.concepts]}::text[], ${[...fields.sourceIds]}::text[], ${[...fields.links]}::text[],
          ${fields.claimCount}, 1, ${fields.sizeBytes}, ${now}, ${now})
        returning ${columns}, front_matter
      ), versioned as (${versionOf("inserted", page.author, "created", now, null, page.lines)})
      select ${withoutContent} from inserted`.pipe(Effect.flatMap(written(fields)), Effect.orDie)
  }

  /** A page's new version: the page updated and the version stored, in one statement. */
  const update = (
    id: PageId,
    version: number,
    change: {
      readonly fields: PartFields
      readonly author: Author
      readonly reason: VersionReason
      readonly now: Date
      readonly restoredFrom: number | null
      readonly lines: VersionLines | undefined
    }
  ) => {
    const { fields, now } = change
    return sql`/* prepared */ with updated as (
        update parts set title = ${fields.title}, summary = ${fields.summary}, content_type = ${fields.contentType},
          content = ${fields.content}, body_text = ${fields.bodyText}, front_matter = ${sql.json(fields.frontMatter)},
          tags = ${[...fields.tags]}::text[], entities = ${[...fields.entities]}::text[],
          concepts = ${[...fields.concepts]}::text[], source_ids = ${[...fields.sourceIds]}::text[],
          links = ${[...fields.links]}::text[], claim_count = ${fields.claimCount}, size_bytes = ${fields.sizeBytes},
          version = ${version}, updated_at = ${now}
        where id = ${id}
        returning ${columns}, front_matter
      ), versioned as (${versionOf("updated", change.author, change.reason, now, change.restoredFrom, change.lines)})
      select ${withoutContent} from updated`.pipe(Effect.flatMap(written(fields)), Effect.orDie)
  }

  /**
   * Deletes a page with its versions, keeping both in the trash (a Dock's page only: a standalone artifact goes for
   * good) for a revert to bring back; returns the bytes every stored version held (the current one included).
   */
  const remove = (id: PageId, deleter: { readonly author: Author; readonly now: Date } | undefined) =>
    Effect.gen(function*() {
      const [stored] = yield* sql<{ bytes: string }>`select coalesce(sum(size_bytes), 0)::bigint as bytes
        from part_versions where part_id = ${id}`
      if (deleter !== undefined) {
        yield* sql`insert into trashed_parts (id, dock_id, slug, part, versions, size_bytes, user_id, token_id,
            deleted_at)
          select p.id, p.dock_id, p.slug, to_jsonb(p) - 'search' - 'rank_vector',
            coalesce((select jsonb_agg(to_jsonb(v) order by v.version) from part_versions v where v.part_id = p.id),
              '[]'::jsonb),
            ${stored!.bytes}::bigint, ${deleter.author.userId}, ${deleter.author.tokenId}, ${deleter.now}
          from parts p where p.id = ${id} and p.dock_id is not null
          on conflict (id) do update set dock_id = excluded.dock_id, slug = excluded.slug, part = excluded.part,
            versions = excluded.versions, size_bytes = excluded.size_bytes, user_id = excluded.user_id,
            token_id = excluded.token_id, deleted_at = excluded.deleted_at`
      }
      yield* sql`delete from parts where id = ${id}`
      return Number(stored!.bytes)
    }).pipe(Effect.orDie)

  /**
   * Brings a trashed page back into its Dock with its versions, as it was when deleted (its id, slugs and
   * history), and empties its trash entry. Answers the page and the bytes its versions hold; undefined when it is
   * not in the trash, or when its Dock has another page of its slug now (nothing is written then).
   */
  const untrash = (id: PageId) =>
    Effect.gen(function*() {
      const [entry] = yield* sql<{ dock_id: DockId; slug: string | null; size_bytes: string }>`select dock_id, slug,
          size_bytes from trashed_parts where id = ${id} for update`
      if (entry === undefined) return undefined
      const [taken] = yield* sql`select 1 from parts
        where (dock_id = ${entry.dock_id} and slug = ${entry.slug}) or id = ${id}
          or public_slug = (select part ->> 'public_slug' from trashed_parts where id = ${id})`
      if (taken !== undefined) return undefined
      const rows = yield* sql`insert into parts (id, dock_id, owner_id, slug, public_slug, title, summary, content_type,
          page_kind, visibility, content, body_text, front_matter, tags, entities, concepts, source_ids, links,
          claim_count, version, size_bytes, upstream_part_id, upstream_version, created_at, updated_at)
        select r.id, r.dock_id, r.owner_id, r.slug, r.public_slug, r.title, r.summary, r.content_type, r.page_kind,
          r.visibility, r.content, r.body_text, r.front_matter, r.tags, r.entities, r.concepts, r.source_ids, r.links,
          r.claim_count, r.version, r.size_bytes, r.upstream_part_id, r.upstream_version, r.created_at, r.updated_at
        from trashed_parts t cross join lateral jsonb_populate_record(null::parts, t.part) r
        where t.id = ${id}
        returning ${columns}`.pipe(Effect.flatMap(decode))
      yield* sql`insert into part_versions (part_id, version, title, summary, content_type, content, front_matter,
          size_bytes, user_id, token_id, agent_label, reason, restored_from, created_at)
        select v.part_id, v.version, v.title, v.summary, v.content_type, v.content, v.front_matter, v.size_bytes,
          case when exists(select 1 from users u where u.id = v.user_id) then v.user_id end, v.token_id,
          v.agent_label, v.reason, v.restored_from, v.created_at
        from trashed_parts t cross join lateral jsonb_populate_recordset(null::part_versions, t.versions) v
        where t.id = ${id}`
      yield* sql`delete from trashed_parts where id = ${id}`
      return { row: rows[0]!, bytes: Number(entry.size_bytes) }
    }).pipe(Effect.orDie)

  /** Empties the trash of pages deleted before `before`; answers how many went. */
  const purgeTrash = (before: Date) =>
    sql`delete from trashed_parts where deleted_at < ${before} returning id`.pipe(
      Effect.map((rows) => rows.length),
      Effect.orDie
    )

  /** The Micro DB shell's own fields (push_micro_db on an existing shell): they change in place. */
  const updateShell = (
    id: PageId,
    fields: ShellFields,
    now: Date
  ) =>
    sql`update parts set title = ${fields.title}, slug = ${fields.slug}, summary = ${fields.summary},
        visibility = ${fields.visibility}, updated_at = ${now}
      where id = ${id}
      returning ${columns}`.pipe(Effect.flatMap(decode), Effect.map((rows) => rows[0]!), Effect.orDie)

  /** Keeps the newest `keep` versions of a reason (snapshots); other versions stay. Returns what went. */
  const pruneVersions = (partId: PageId, reason: VersionReason, keep: number) =>
    sql<{ version: number; size_bytes: number }>`delete from part_versions
      where part_id = ${partId} and reason = ${reason} and version not in (
        select version from part_versions where part_id = ${partId} and reason = ${reason}
        order by version desc limit ${keep}
      )
      returning version, size_bytes`.pipe(
      Effect.map((rows) => ({
        versions: rows.map((row) => row.version),
        bytes: rows.reduce((sum, row) => sum + Number(row.size_bytes), 0)
      })),
      Effect.orDie
    )

  /**
   * Copies every page of one Dock into another (a fork), except pages marked private: fresh ids and public
   * slugs, version 1 authored by the forker, each copy remembering its upstream page and version. The Micro DB's
   * tables and rows follow its shell (when the shell was copied): new ids, the rows' times and order kept.
   * Returns how many pages were copied and the bytes the copy holds.
   */
  const copyDock = (from: DockId, to: DockId, ownerId: UserId, author: Author, now: Date) =>
    Effect.gen(function*() {
      const copied = yield* sql<{ id: string; size_bytes: number }>`insert into parts (dock_id, owner_id, slug,
          public_slug, title, summary, content_type, page_kind, visibility, content, body_text, front_matter, tags,
          entities, concepts, source_ids, links, claim_count, version, size_bytes, upstream_part_id, upstream_version,
          created_at, updated_at)
        select ${to}, ${ownerId}, slug,
          left(coalesce(slug, 'page'), 48) || '-' || substr(md5(random()::text || id::text), 1, 10),
          title, summary, content_type, page_kind, visibility, content, body_text, front_matter, tags, entities,
          concepts, '{}', links, claim_count, 1, size_bytes, id, version, ${now}, ${now}
        from parts where dock_id = ${from} and visibility is distinct from 'private'
        returning id, size_bytes`
      // Version 1 adds all its lines (as Content/LineDiff.ts counts them: a final newline starts no line).
      yield* sql`insert into part_versions (part_id, version, title, summary, content_type, content, front_matter,
          size_bytes, user_id, token_id, agent_label, reason, created_at, lines_added, lines_removed)
        select id, 1, title, summary, content_type, content, front_matter, size_bytes, ${author.userId},
          ${author.tokenId}, ${author.agentLabel}, 'forked', ${now},
          length(content) - length(replace(content, chr(10), ''))
            + case when content = '' or right(content, 1) = chr(10) then 0 else 1 end,
          0
        from parts where dock_id = ${to}`
      yield* sql`insert into micro_db_tables (dock_id, name, slug, description, position, columns, row_count, created_at,
          updated_at)
        select ${to}, name, slug, description, position, columns, row_count, ${now}, ${now}
        from micro_db_tables where dock_id = ${from}
          and exists(select 1 from parts where dock_id = ${to} and page_kind = 'micro_db')`
      const [rows] = yield* sql<{ bytes: string }>`with copied as (
          insert into micro_db_rows (table_id, data, size_bytes, created_at, updated_at)
          select copy.id, r.data, r.size_bytes, r.created_at, r.updated_at
          from micro_db_rows r
            join micro_db_tables original on original.id = r.table_id
            join micro_db_tables copy on copy.dock_id = ${to} and copy.slug = original.slug
          where original.dock_id = ${from}
          order by r.seq
          returning size_bytes
        )
        select coalesce(sum(size_bytes), 0)::bigint as bytes from copied`
      // Each copied page has one version, its content (a Micro DB shell's: the latest snapshot), and counts by it.
      const pageBytes = copied.reduce((sum, row) => sum + Number(row.size_bytes), 0)
      return { pages: copied.length, bytes: pageBytes + Number(rows!.bytes) }
    }).pipe(Effect.orDie)

  /**
   * Adds a change to the Dock's usage when it stays within the caps, in one conditional upsert (its row lock
   * serializes concurrent writers and the condition is the cap; a Dock without a row yet starts from zero, judged
   * by the same condition). Returns whether it was within them.
   */
  const addUsage = (
    dockId: DockId,
    change: ContentChange,
    max: { readonly artifacts: number; readonly bytes: number }
  ) => {
    const artifacts = sql`${change.artifacts}::int`
    const bytes = sql`${change.bytes}::bigint`
    /** The usage after the change, from `before` (0 for a Dock without a row), never below zero; and the caps. */
    const after = (before: { readonly artifacts: Statement.Fragment; readonly bytes: Statement.Fragment }) => ({
      artifacts: sql`greatest(${before.artifacts} + ${artifacts}, 0)`,
      bytes: sql`greatest(${before.bytes} + ${bytes}, 0)`,
      within: sql`(${artifacts} <= 0 or ${before.artifacts} + ${artifacts} <= ${max.artifacts}::int)
        and (${bytes} <= 0 or ${before.bytes} + ${bytes} <= ${max.bytes}::bigint)`
    })
    const fresh = after({ artifacts: sql`0`, bytes: sql`0` })
    const kept = after({ artifacts: sql`u.artifacts`, bytes: sql`u.bytes` })
    return sql<{ artifacts: number }>`/* prepared */ insert into dock_usage as u (dock_id, artifacts, bytes)
      select ${dockId}, ${fresh.artifacts}, ${fresh.bytes} where ${fresh.within}
      on conflict (dock_id) do update set artifacts = ${kept.artifacts}, bytes = ${kept.bytes} where ${kept.within}
      returning artifacts`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
  }

  const usage = (dockId: DockId) =>
    sql<{ artifacts: number; bytes: string }>`select artifacts, bytes from dock_usage where dock_id = ${dockId}`.pipe(
      Effect.map((rows) => ({ artifacts: rows[0]?.artifacts ?? 0, bytes: Number(rows[0]?.bytes ?? 0) })),
      Effect.orDie
    )

  /** A user's standalone artifacts (in no Dock), with their user's row locked so concurrent pushes take turns. */
  const standaloneUsage = (userId: UserId) =>
    Effect.gen(function*() {
      yield* sql`select id from users where id = ${userId} for no key update`
      const [usage] = yield* sql<{ artifacts: number; bytes: number }>`select count(*)::int as artifacts,
          coalesce(sum(size_bytes), 0)::bigint as bytes
        from parts where dock_id is null and owner_id = ${userId}`
      return { artifacts: usage!.artifacts, bytes: Number(usage!.bytes) }
    }).pipe(Effect.orDie)

  return {
    lockDock,
    sandboxOf,
    findInDock,
    lockInDock,
    findKind,
    findById,
    fieldsOf,
    insert,
    update,
    remove,
    untrash,
    purgeTrash,
    updateShell,
    pruneVersions,
    copyDock,
    addUsage,
    usage,
    standaloneUsage
  } as const
})
