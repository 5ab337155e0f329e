/** Share link rows (share_links): SQL in, typed rows out. SqlError is a defect here. */
import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import type { DockId, PageId, UserId } from "../Ids.ts"
import type { ShareLinkId } from "./ShareLink.ts"

export interface ShareLinkRow {
  readonly id: ShareLinkId
  readonly dock_id: DockId
  readonly part_id: PageId
  readonly page_slug: string | null
  readonly page_title: string | null
  readonly created_by: string | null
  readonly created_at: Date
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
}

export const makeShareLinksRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  const select = sql`select l.id, l.dock_id, l.part_id, p.slug as page_slug, p.title as page_title,
      u.username as created_by, l.created_at, l.expires_at, l.revoked_at
    from share_links l join parts p on p.id = l.part_id left join users u on u.id = l.created_by`

  const insert = (link: {
    readonly dockId: DockId
    readonly partId: PageId
    readonly secretHash: string
    readonly createdBy: UserId
    readonly createdAt: Date
    readonly expiresAt: Date | null
  }) =>
    sql<{ id: ShareLinkId }>`insert into share_links (dock_id, part_id, secret_hash, created_by, created_at, expires_at)
      values (${link.dockId}, ${link.partId}, ${link.secretHash}, ${link.createdBy}, ${link.createdAt},
        ${link.expiresAt})
      returning id`.pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie)

  /** The Dock's links (or one page's), newest first. */
  const list = (dockId: DockId, partId: PageId | null) =>
    sql<ShareLinkRow>`${select} where l.dock_id = ${dockId}
      ${partId === null ? sql`` : sql`and l.part_id = ${partId}`}
      order by l.created_at desc, l.id`.pipe(Effect.orDie)

  const byId = (id: ShareLinkId) =>
    sql<ShareLinkRow>`${select} where l.id = ${id}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

  /** Revokes now unless revoked already; answers the row either way (undefined: no such link). */
  const revoke = (id: ShareLinkId, now: Date) =>
    sql`update share_links set revoked_at = ${now} where id = ${id} and revoked_at is null`.pipe(
      Effect.zipRight(byId(id)),
      Effect.orDie
    )

  /** The page of the live link with this secret hash (not revoked, not expired at `now`, its Dock not hidden). */
  const livePage = (secretHash: string, now: Date) =>
    sql<{ part_id: PageId }>`select l.part_id from share_links l join docks d on d.id = l.dock_id
      where l.secret_hash = ${secretHash} and l.revoked_at is null
        and (l.expires_at is null or l.expires_at > ${now}) and d.hidden_at is null`.pipe(
      Effect.map((rows) => rows[0]?.part_id),
      Effect.orDie
    )

  return { insert, list, byId, revoke, livePage } as const
})
