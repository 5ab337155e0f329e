/**
 * The activity log: every write is recorded with who did it (user, token, agent label). Recording joins the
 * caller's transaction, so an activity row exists exactly when its write committed.
 */
import { Context, type Effect, Schema } from "effect"
import { type DockId, TokenId, UserId } from "../Ids.ts"
import type { CurrentPrincipal } from "../Principal.ts"

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
