/** Grant rows (dock_members): SQL in, typed rows out. SqlError is a defect here. */
import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import type { DockId, UserId } from "../Ids.ts"
import type { Role, StoredRole } from "./Member.ts"

export const makeMembersRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  /** Grants the role, or changes the role already granted. */
  const upsert = (dockId: DockId, userId: UserId, role: Role, now: Date) =>
    sql`insert into dock_members (dock_id, user_id, role, created_at) values (${dockId}, ${userId}, ${role}, ${now})
      on conflict (dock_id, user_id) do update set role = excluded.role`.pipe(Effect.asVoid, Effect.orDie)

  /** The Dock's grants, oldest first. */
  const list = (dockId: DockId) =>
    sql<{ user_id: UserId; username: string; role: StoredRole }>`select m.user_id, u.username, m.role
      from dock_members m join users u on u.id = m.user_id where m.dock_id = ${dockId}
      order by m.created_at, u.username`.pipe(Effect.orDie)

  /** Removes the grant; answers the role it had, or undefined when there was none. */
  const remove = (dockId: DockId, userId: UserId) =>
    sql<{ role: StoredRole }>`delete from dock_members where dock_id = ${dockId} and user_id = ${userId}
      returning role`.pipe(Effect.map((rows) => rows[0]?.role), Effect.orDie)

  /** Whether the Dock is an unclaimed sandbox (an anonymous registration's, not yet claimed). */
  const isSandbox = (dockId: DockId) =>
    sql<{ sandbox: boolean }>`select sandbox from docks where id = ${dockId}`.pipe(
      Effect.map((rows) => rows[0]?.sandbox === true),
      Effect.orDie
    )

  /** A person's grants on Docks that are not hidden, most recently updated Dock first. */
  const grantsOf = (userId: UserId, limit: number) =>
    sql<{ dock_id: DockId; role: StoredRole }>`select m.dock_id, m.role
      from dock_members m join docks d on d.id = m.dock_id
      where m.user_id = ${userId} and d.hidden_at is null
      order by d.updated_at desc, d.id limit ${limit}`.pipe(Effect.orDie)

  return { upsert, list, remove, isSandbox, grantsOf } as const
})
