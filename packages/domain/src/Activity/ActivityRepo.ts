/** Activity rows: SQL in, typed rows out. SqlError is a defect here. */
import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"
import { DockId, type TokenId, type UserId } from "../Ids.ts"
import { ActivityEntry } from "./Activity.ts"

const ActivityRow = Schema.Struct({
  ...ActivityEntry.fields,
  created_at: Schema.DateFromSelf
})

export interface InsertActivity {
  readonly dockId: DockId | null
  readonly userId: UserId | null
  readonly tokenId: TokenId | null
  readonly agentLabel: string | null
  readonly action: string
  readonly subjectType: string | null
  readonly subjectId: string | null
  readonly details: Record<string, unknown>
  readonly createdAt: Date
}

export const makeActivityRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  /** Joins the caller's transaction, so an activity row exists exactly when its write committed. */
  const insert = (row: InsertActivity) =>
    sql`/* prepared */ insert into activity (dock_id, user_id, token_id, agent_label, action, subject_type,
        subject_id, details, created_at)
      values (${row.dockId}, ${row.userId}, ${row.tokenId}, ${row.agentLabel}, ${row.action}, ${row.subjectType},
        ${row.subjectId}, ${sql.json(row.details)}, ${row.createdAt})`.pipe(Effect.asVoid, Effect.orDie)

  const recentOfDock = SqlSchema.findAll({
    Request: Schema.Struct({ dockId: DockId, limit: Schema.Number }),
    Result: ActivityRow,
    execute: ({ dockId, limit }) =>
      sql`select action, subject_type, subject_id::text, user_id, token_id, agent_label, details, created_at
        from activity where dock_id = ${dockId} order by seq desc limit ${limit}`
  })

  return {
    insert,
    recentOfDock: (dockId: DockId, limit: number) => Effect.orDie(recentOfDock({ dockId, limit }))
  } as const
})
