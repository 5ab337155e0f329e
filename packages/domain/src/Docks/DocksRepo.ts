/**
 * Dock rows: SQL in, typed rows out. SqlError is a defect here; absence is an Option. Hidden Docks (expired
 * sandboxes) are absent from every lookup.
 */
import type { Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import { escapeLike } from "../Database/Like.ts"
import { rowsOf } from "../Database/Rows.ts"
import { DockId, UserId } from "../Ids.ts"
import type { Role } from "../Policy.ts"
import { DockRow } from "./Dock.ts"

/** A Dock row with the caller's collaborator grant on it (null: none), and the row read beside it, if asked. */
export interface DockWithGrant {
  readonly dock: DockRow
  readonly grant: Role | null
  /** The raw row of the lookup, whose `along` columns a caller of Docks.forReadAlong decodes. */
  readonly along?: Readonly<Record<string, unknown>> | undefined
}

/** A lookup's row as the driver gives it: the Dock's columns (decoded as DockRow), the grant, and any others. */
type RawDock = Readonly<Record<string, unknown>> & { readonly member_role: Role | null }

/** What a lookup reads beside each candidate Dock (Docks.Along's subquery over the Dock whose id `dockId` is). */
export type AlongFrom = (dockId: Statement.Fragment) => Statement.Fragment

export interface InsertDock {
  readonly owner_id: UserId
  readonly slug: string
  readonly title: string
  readonly description: string | null
  readonly visibility: "private" | "public"
  readonly discoverable: boolean
  readonly allow_forks: boolean
  readonly tags: ReadonlyArray<string>
  readonly topics: ReadonlyArray<string>
  /** An anonymous registration's sandbox (the sandbox rules apply while it is unclaimed). */
  readonly sandbox?: boolean | undefined
  readonly now: Date
}

/** A LIKE pattern that matches the text literally. */

// A cover page marked private is never named in a Dock object: outsiders must not learn its id (a cover is a web
// page or Markdown file, which have no visibility of their own, so this only guards data set by other means).
export const makeDocksRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const decodeRows = rowsOf(DockRow)

  const dockColumns = sql`d.id, d.owner_id, u.username as owner_username, d.slug, d.title, d.description,
    d.visibility, d.discoverable, d.allow_forks, d.tags, d.topics,
    (select p.id from parts p where p.id = d.cover_part_id and p.visibility is distinct from 'private') as cover_part_id,
    d.cover_part_id as member_cover_part_id,
    d.forked_from_id,
    d.forked_from_path, d.forked_at, d.forked_page_count, d.sandbox, d.created_at, d.updated_at`
  const selectDock = sql`select ${dockColumns} from docks d join users u on u.id = d.owner_id`

  /** The one Dock a statement reads, if any. */
  const oneDock = (rows: ReadonlyArray<unknown>) =>
    Effect.map(decodeRows(rows), (docks) => Option.fromNullable(docks[0]))

  const findById = (id: DockId) =>
    sql`${selectDock} where d.id = ${id} and d.hidden_at is null`.pipe(Effect.flatMap(oneDock))

  const findByPath = (owner: string, slug: string) =>
    sql`${selectDock} where u.username = ${owner} and d.slug = ${slug} and d.hidden_at is null`.pipe(
      Effect.flatMap(oneDock)
    )

  /**
   * A Dock row with the caller's grant on it, in one statement: the docks row, its owner and the caller's
   * dock_members row (a null user has no grant), and with `along` the row it reads beside the Dock. `where` picks
   * the Dock.
   */
  const withGrant = (userId: UserId | null, where: Statement.Fragment, along?: AlongFrom) =>
    sql<RawDock>`/* prepared */ select ${dockColumns}, m.role as member_role ${alongColumns(along)}
      from docks d join users u on u.id = d.owner_id
        left join dock_members m on m.dock_id = d.id and m.user_id = ${userId}
        ${alongJoin(along, sql`d.id`)}
      where d.hidden_at is null and ${where}`.pipe(Effect.flatMap((rows) => decodeWithGrant(rows, along)))

  const alongColumns = (along: AlongFrom | undefined) => (along === undefined ? sql`` : sql`, along.*`)

  /** The subquery `along` reads beside each Dock, for the Dock whose id is `dockId`; with `gate`, only where it holds. */
  const alongJoin = (along: AlongFrom | undefined, dockId: Statement.Fragment, gate?: Statement.Fragment) =>
    along === undefined
      ? sql``
      : gate === undefined
      ? sql`left join lateral (${along(dockId)}) along on true`
      : sql`left join lateral (select * from (${along(dockId)}) a where ${gate}) along on true`

  const decodeWithGrant = (
    rows: ReadonlyArray<RawDock>,
    along?: AlongFrom
  ) =>
    Effect.map(decodeRows(rows), (docks) =>
      docks.map((dock, index): DockWithGrant => ({
        dock,
        grant: rows[index]!.member_role ?? null,
        ...(along === undefined ? {} : { along: rows[index]! })
      })))

  const first = (rows: ReadonlyArray<DockWithGrant>) => Option.fromNullable(rows[0])

  const findByIdWithGrant = (userId: UserId | null, id: DockId, along?: AlongFrom) =>
    withGrant(userId, sql`d.id = ${id}`, along).pipe(Effect.map(first))

  const findByPathWithGrant = (userId: UserId | null, owner: string, slug: string, along?: AlongFrom) =>
    withGrant(userId, sql`u.username = ${owner} and d.slug = ${slug}`, along).pipe(Effect.map(first))

  /**
   * The Docks an untargeted read falls back to, in one statement and in order: the token's grounding Dock while
   * it is set and unexpired, then the user's default Dock; each with the caller's grant (and what `along` reads
   * beside it: for both, since which one the caller may read is the policy's to say).
   */
  const findReadFallbacksWithGrant = (userId: UserId | null, tokenId: string | null, now: Date, along?: AlongFrom) =>
    sql<RawDock>`/* prepared */ select ${dockColumns}, m.role as member_role ${alongColumns(along)}
      from (select g.dock_id, 1 as rank from grounding g where g.token_id = ${tokenId} and g.expires_at > ${now}
          union all select me.default_dock_id, 2 from users me where me.id = ${userId}) f
        join docks d on d.id = f.dock_id join users u on u.id = d.owner_id
        left join dock_members m on m.dock_id = d.id and m.user_id = ${userId}
        ${alongJoin(along, sql`d.id`)}
      where d.hidden_at is null
      order by f.rank`.pipe(Effect.flatMap((rows) => decodeWithGrant(rows, along)))

  /** What `along` reads beside one Dock named by id, alone (a target naming the Dock in several forms). */
  const alongOf = (dockId: DockId, along: AlongFrom) =>
    sql<Record<string, unknown>>`select along.* from (select ${dockId}::uuid as id) d ${alongJoin(along, sql`d.id`)}`
      .pipe(Effect.map((rows) => rows[0] ?? {}))

  /** The user's default Dock, with the user's grant on it. */
  const findDefaultWithGrant = (userId: UserId) =>
    withGrant(userId, sql`d.id = (select me.default_dock_id from users me where me.id = ${userId})`).pipe(
      Effect.map(first)
    )

  /**
   * Docks with this slug the caller may read, ranked: 1 own, 2 collaboration, 3 public, with the caller's grant; a
   * sandbox caller's only among `sandboxDocks`. `along` is read beside the one Dock the resolver can pick (the only
   * one of the best rank): many public Docks may share a slug, and their rows are not read.
   */
  const findBySlugForCaller = (
    userId: UserId | null,
    sandboxDocks: ReadonlyArray<DockId> | null,
    slug: string,
    along?: AlongFrom
  ) =>
    sql<RawDock & { tier: number }>`/* prepared */ select c.* ${alongColumns(along)} from (
        select ${dockColumns}, m.role as member_role, t.tier,
          t.tier = min(t.tier) over () and count(*) over (partition by t.tier) = 1 as chosen
        from docks d join users u on u.id = d.owner_id
          left join dock_members m on m.dock_id = d.id and m.user_id = ${userId}
          cross join lateral (select case when d.owner_id = ${userId} then 1 when m.user_id is not null then 2
            else 3 end as tier) t
        where d.slug = ${slug} and d.hidden_at is null
          and (d.owner_id = ${userId} or m.user_id is not null or d.visibility = 'public')
          ${sandboxDocks === null ? sql`` : sql`and d.id = any(${[...sandboxDocks]}::uuid[])`}
      ) c ${alongJoin(along, sql`c.id`, sql`c.chosen`)}
      order by c.tier`.pipe(
      Effect.flatMap((rows) =>
        Effect.map(decodeWithGrant(rows, along), (found) =>
          found.map((candidate, index) => ({ ...candidate, tier: Number(rows[index]!.tier) })))
      )
    )

  /**
   * Docks at many `owner/slug` paths in one statement (wikilinks name any number of Docks), each with the
   * caller's grant on it; missing and hidden Docks are absent. The policy decides what the caller may read.
   */
  const findByPathsWithGrant = (
    userId: UserId | null,
    paths: ReadonlyArray<{ readonly owner: string; readonly slug: string }>
  ) =>
    withGrant(
      userId,
      sql`(u.username, d.slug) in (select * from unnest(${paths.map((path) => path.owner)}::text[],
          ${paths.map((path) => path.slug)}::text[]))`
    )

  /** Owned Docks, and with collaborations also those with an owner or editor grant. */
  const findWritable = (userId: UserId, collaborations: boolean) =>
    sql`${selectDock} where d.hidden_at is null and (d.owner_id = ${userId} or (${collaborations} and exists(
        select 1 from dock_members m where m.dock_id = d.id and m.user_id = ${userId} and m.role in ('owner', 'editor'))))
      order by d.created_at, d.id`.pipe(Effect.flatMap(decodeRows))

  const update = (id: DockId, fields: {
    readonly title: string
    readonly description: string | null
    readonly visibility: "private" | "public"
    readonly tags: ReadonlyArray<string>
    readonly now: Date
  }) =>
    sql`update docks set title = ${fields.title}, description = ${fields.description}, visibility = ${fields.visibility},
      tags = ${[...fields.tags]}::text[], updated_at = ${fields.now} where id = ${id}`

  /**
   * Docks a caller finds when listing or searching: their own, their collaborations, and public Docks that are
   * discoverable (outsiders never find a public Dock that is not). A sandbox caller finds only its sandbox.
   */
  const findable = (userId: UserId | null, sandboxDocks: ReadonlyArray<DockId> | null) =>
    sandboxDocks !== null
      ? sql`d.id = any(${[...sandboxDocks]}::uuid[])`
      : sql`(d.owner_id = ${userId} or exists(select 1 from dock_members m where m.dock_id = d.id and m.user_id = ${userId})
          or (d.visibility = 'public' and d.discoverable))`

  /** Full-text search over title (A), description (B) and slug (C), plus tags, topics and title substrings. */
  const search = (userId: UserId | null, sandboxDocks: ReadonlyArray<DockId> | null, query: string, limit: number) =>
    sql`select ${dockColumns} from docks d join users u on u.id = d.owner_id,
        websearch_to_tsquery('english', ${query}) q
      where d.hidden_at is null and ${findable(userId, sandboxDocks)}
        and (d.search @@ q or d.title ilike ${"%" + escapeLike(query) + "%"}
          or lower(${query}) = any(select lower(t) from unnest(d.tags || d.topics) t))
      order by ts_rank_cd(d.search, q) desc, (d.title ilike ${"%" + escapeLike(query) + "%"}) desc,
        d.updated_at desc, d.id
      limit ${limit}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)

  /** Docks the caller can read and find, most recently updated first. */
  const list = (
    userId: UserId | null,
    sandboxDocks: ReadonlyArray<DockId> | null,
    filter: { readonly visibility: "public" | "private" | "all"; readonly ownedByMe: boolean },
    limit: number
  ) =>
    sql`/* prepared */ select ${dockColumns} from docks d join users u on u.id = d.owner_id
      where d.hidden_at is null and ${findable(userId, sandboxDocks)}
        ${filter.visibility === "all" ? sql`` : sql`and d.visibility = ${filter.visibility}`}
        ${filter.visibility === "private" ? sql`and d.owner_id = ${userId}` : sql``}
        ${filter.ownedByMe ? sql`and d.owner_id = ${userId}` : sql``}
      order by d.updated_at desc, d.id
      limit ${limit}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)

  const updateMetadata = (id: DockId, fields: {
    readonly title: string
    readonly description: string | null
    readonly visibility: "private" | "public"
    readonly discoverable: boolean
    readonly allowForks: boolean
    readonly topics: ReadonlyArray<string>
    readonly now: Date
  }) =>
    sql`update docks set title = ${fields.title}, description = ${fields.description}, visibility = ${fields.visibility},
      discoverable = ${fields.discoverable}, allow_forks = ${fields.allowForks}, topics = ${[...fields.topics]}::text[],
      updated_at = ${fields.now} where id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  const setCover = (id: DockId, partId: string, now: Date) =>
    sql`update docks set cover_part_id = ${partId}, updated_at = ${now} where id = ${id}`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  const markFork = (id: DockId, upstream: { readonly id: DockId; readonly path: string }, pages: number, now: Date) =>
    sql`update docks set forked_from_id = ${upstream.id}, forked_from_path = ${upstream.path}, forked_at = ${now},
      forked_page_count = ${pages} where id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  const remove = (id: DockId) => sql`delete from docks where id = ${id}`

  const insert = (dock: InsertDock) =>
    sql<{ id: DockId }>`insert into docks (owner_id, slug, title, description, visibility, discoverable, allow_forks,
        tags, topics, sandbox, created_at, updated_at)
      values (${dock.owner_id}, ${dock.slug}, ${dock.title}, ${dock.description}, ${dock.visibility},
        ${dock.discoverable}, ${dock.allow_forks}, ${[...dock.tags]}::text[], ${[...dock.topics]}::text[],
        ${dock.sandbox ?? false}, ${dock.now}, ${dock.now})
      on conflict (owner_id, slug) do nothing
      returning id`.pipe(Effect.map((rows) => rows[0]?.id))

  const slugTaken = (ownerId: UserId, slug: string) =>
    sql<{ taken: boolean }>`select exists(select 1 from docks where owner_id = ${ownerId} and slug = ${slug}) as taken`
      .pipe(Effect.map((rows) => rows[0]?.taken === true))

  /** Counts the owner's Docks while holding a lock on the owner, so concurrent creates cannot pass a cap. */
  const lockAndCountOwned = (ownerId: UserId) =>
    Effect.gen(function*() {
      yield* sql`select id from users where id = ${ownerId} for update`
      const rows = yield* sql<{ n: number }>`select count(*)::int as n from docks where owner_id = ${ownerId}`
      return rows[0]?.n ?? 0
    })

  /** Remembers the token's grounding Dock until `expires` (set_grounding_bucket); a later choice replaces it. */
  const setGrounding = (tokenId: string, dockId: DockId, expires: Date, now: Date) =>
    sql`insert into grounding (token_id, dock_id, expires_at, updated_at)
      values (${tokenId}, ${dockId}, ${expires}, ${now})
      on conflict (token_id) do update set dock_id = excluded.dock_id, expires_at = excluded.expires_at,
        updated_at = excluded.updated_at`.pipe(Effect.asVoid, Effect.orDie)

  return {
    findById: (id: DockId) => Effect.orDie(findById(id)),
    findByPath: (owner: string, slug: string) => Effect.orDie(findByPath(owner, slug)),
    findBySlugForCaller: (
      userId: UserId | null,
      sandboxDocks: ReadonlyArray<DockId> | null,
      slug: string,
      along?: AlongFrom
    ) => Effect.orDie(findBySlugForCaller(userId, sandboxDocks, slug, along)),
    findByIdWithGrant: (userId: UserId | null, id: DockId, along?: AlongFrom) =>
      Effect.orDie(findByIdWithGrant(userId, id, along)),
    findByPathWithGrant: (userId: UserId | null, owner: string, slug: string, along?: AlongFrom) =>
      Effect.orDie(findByPathWithGrant(userId, owner, slug, along)),
    findReadFallbacksWithGrant: (userId: UserId | null, tokenId: string | null, now: Date, along?: AlongFrom) =>
      Effect.orDie(findReadFallbacksWithGrant(userId, tokenId, now, along)),
    alongOf: (dockId: DockId, along: AlongFrom) => Effect.orDie(alongOf(dockId, along)),
    findDefaultWithGrant: (userId: UserId) => Effect.orDie(findDefaultWithGrant(userId)),
    findByPathsWithGrant: (
      userId: UserId | null,
      paths: ReadonlyArray<{ readonly owner: string; readonly slug: string }>
    ) => Effect.orDie(findByPathsWithGrant(userId, paths)),
    findWritable: (userId: UserId, collaborations: boolean) => Effect.orDie(findWritable(userId, collaborations)),
    update: (id: DockId, fields: Parameters<typeof update>[1]) => update(id, fields),
    remove: (id: DockId) => Effect.orDie(remove(id)),
    insert: (dock: InsertDock) => Effect.orDie(insert(dock)),
    slugTaken: (ownerId: UserId, slug: string) => Effect.orDie(slugTaken(ownerId, slug)),
    lockAndCountOwned: (ownerId: UserId) => Effect.orDie(lockAndCountOwned(ownerId)),
    setGrounding,
    search,
    list,
    updateMetadata,
    setCover,
    markFork
  } as const
})

export type DocksRepo = Effect.Effect.Success<typeof makeDocksRepo>
