/**
 * The activity log: every write is recorded with who did it (user, token, agent label). Recording joins the
 * caller's transaction, so an activity row exists exactly when its write committed.
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { DockId, TokenId, UserId } from "../Ids.ts"
import { CurrentPrincipal } from "../Principal.ts"

export class ActivityEntry extends Schema.Class<ActivityEntry>("ActivityEntry")({
  action: Schema.String,
  subject_type: Schema.NullOr(Schema.String),
  subject_id: Schema.NullOr(Schema.String),
  user_id: Schema.NullOr(UserId),
  token_id: Schema.NullOr(TokenId),
  agent_label: Schema.NullOr(Schema.String),
  details: Schema.Unknown,
  created_at: Schema.String
}) {}

export interface NewActivity {
  readonly dockId: DockId | null
  /** dotted verb, e.g. "dock.created" */
  readonly action: string
  readonly subjectType?: string | undefined
  readonly subjectId?: string | undefined
  readonly details?: Record<string, unknown> | undefined
}

export class Activity extends Context.Tag("@dock/domain/Activity")<Activity, {
  readonly record: (entry: NewActivity) => Effect.Effect<void, never, CurrentPrincipal>
  readonly recent: (dockId: DockId, limit: number) => Effect.Effect<ReadonlyArray<ActivityEntry>>
}>() {}

const Row = Schema.Struct({
  ...ActivityEntry.fields,
  created_at: Schema.DateFromSelf
})

export const ActivityLive = Layer.effect(
  Activity,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient

    const record = Effect.fn("Activity.record")(function*(entry: NewActivity) {
      const principal = yield* CurrentPrincipal
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* sql`insert into activity (dock_id, user_id, token_id, agent_label, action, subject_type, subject_id,
          details, created_at)
        values (${entry.dockId}, ${principal.userId}, ${principal.tokenId}, ${principal.agentLabel}, ${entry.action},
          ${entry.subjectType ?? null}, ${entry.subjectId ?? null}, ${sql.json(entry.details ?? {})}, ${now})`
        .pipe(Effect.orDie)
    })

    const recent = Effect.fn("Activity.recent")(function*(dockId: DockId, limit: number) {
      const rows = yield* sql`select action, subject_type, subject_id::text, user_id, token_id, agent_label, details,
          created_at
        from activity where dock_id = ${dockId} order by seq desc limit ${limit}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Row))),
        Effect.orDie
      )
      return rows.map((row) => new ActivityEntry({ ...row, created_at: row.created_at.toISOString() }))
    })

    return { record, recent }
  })
)
