/**
 * Dock rows: SQL in, typed rows out. SqlError is a defect here; absence is an Option. Hidden Docks (expired
 * sandboxes) are absent from every lookup.
 */
import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"
import { DockId, UserId } from "../Ids.ts"
import type { Role } from "../Policy.ts"

export class DockRow extends Schema.Class<DockRow>("DockRow")({
  id: DockId,
  owner_id: UserId,
  owner_username: Schema.String,
  slug: Schema.String,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  visibility: Schema.Literal("private", "public"),
  discoverable: Schema.Boolean,
  allow_forks: Schema.Boolean,
  tags: Schema.Array(Schema.String),
  topics: Schema.Array(Schema.String),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
}) {}

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

export const makeDocksRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  const selectDock = sql`select d.id, d.owner_id, u.username as owner_username, d.slug, d.title, d.description,
    d.visibility, d.discoverable, d.allow_forks, d.tags, d.topics, d.created_at, d.updated_at
    from docks d join users u on u.id = d.owner_id`

  const findById = SqlSchema.findOne({
    Request: DockId,
    Result: DockRow,
    execute: (id) => sql`${selectDock} where d.id = ${id} and d.hidden_at is null`
  })

  const findByPath = SqlSchema.findOne({
    Request: Schema.Struct({ owner: Schema.String, slug: Schema.String }),
    Result: DockRow,
    execute: ({ owner, slug }) =>
      sql`${selectDock} where u.username = ${owner} and d.slug = ${slug} and d.hidden_at is null`
  })

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

  const grantOf = (dockId: DockId, userId: UserId) =>
    sql<{ role: Role }>`select role from dock_members where dock_id = ${dockId} and user_id = ${userId}`.pipe(
      Effect.map((rows) => rows[0]?.role ?? null)
    )

  return {
    findById: (id: DockId) => Effect.orDie(findById(id)),
    findByPath: (owner: string, slug: string) => Effect.orDie(findByPath({ owner, slug })),
    insert: (dock: InsertDock) => Effect.orDie(insert(dock)),
    slugTaken: (ownerId: UserId, slug: string) => Effect.orDie(slugTaken(ownerId, slug)),
    lockAndCountOwned: (ownerId: UserId) => Effect.orDie(lockAndCountOwned(ownerId)),
    grantOf: (dockId: DockId, userId: UserId) => Effect.orDie(grantOf(dockId, userId))
  } as const
})

export type DocksRepo = Effect.Effect.Success<typeof makeDocksRepo>
