/**
 * Undo an agent (docs/undo.md): what one token changed in a Dock since a time (list_agent_changes) and the plan
 * or result of reverting it (revert_agent_changes, `dock revert`). Wire shapes only; rules in AgentChangesLive.
 */
import { Schema } from "effect"

/** How far into the future `since` may lie (clock skew between the caller and the server). */
export const SINCE_SKEW_MS = 5 * 60 * 1000
/** At most this many entries of each kind are listed per Dock; `truncated` says when there were more. */
export const LIST_CAP = 500
/** At most this many steps of a plan or result are shown; the counts cover every step. */
export const STEPS_SHOWN = 1000
/** How long a deleted page waits in the trash and a row change stays in the log (docs/decisions.md). */
export const TRASH_RETENTION_DAYS = 30

const optional = <A, I>(schema: Schema.Schema<A, I, never>) => Schema.optionalWith(schema, { exact: true })

/** A page the token wrote versions of (it still exists). */
export class ChangedPage extends Schema.Class<ChangedPage>("ChangedPage")({
  page_id: Schema.String,
  slug: Schema.NullOr(Schema.String),
  title: Schema.NullOr(Schema.String),
  /** the page's current version */
  version: Schema.Int,
  /** the versions the token wrote since `since` */
  versions: Schema.Array(Schema.Struct({ version: Schema.Int, reason: Schema.String, created_at: Schema.String })),
  /** whether the token created the page (its version 1) since `since` */
  created: Schema.Boolean
}) {}

/** A page the token deleted (it waits in the trash). */
export class DeletedPage extends Schema.Class<DeletedPage>("DeletedPage")({
  page_id: Schema.String,
  slug: Schema.NullOr(Schema.String),
  title: Schema.NullOr(Schema.String),
  /** its version when deleted */
  version: Schema.Int,
  deleted_at: Schema.String
}) {}

/** One row write of the token. */
export class RowChange extends Schema.Class<RowChange>("RowChange")({
  table_id: Schema.String,
  /** the table's slug, null when the table is gone */
  table: Schema.NullOr(Schema.String),
  row_id: Schema.String,
  op: Schema.Literal("insert", "update", "delete"),
  at: Schema.String
}) {}

/** A schema change of the token (tables, columns): listed, never reverted. */
export class SchemaChange extends Schema.Class<SchemaChange>("SchemaChange")({
  action: Schema.String,
  subject_id: Schema.NullOr(Schema.String),
  details: Schema.Unknown,
  at: Schema.String
}) {}

export class DockChanges extends Schema.Class<DockChanges>("DockChanges")({
  bucket_id: Schema.String,
  bucket_path: Schema.String,
  pages: Schema.Array(ChangedPage),
  deleted_pages: Schema.Array(DeletedPage),
  row_changes: Schema.Array(RowChange),
  schema_changes: Schema.Array(SchemaChange),
  /** true when a list stopped at its cap (500 entries of each kind) */
  truncated: Schema.Boolean
}) {}

export class AgentChangeList extends Schema.Class<AgentChangeList>("AgentChangeList")({
  token_id: Schema.String,
  since: Schema.String,
  buckets: Schema.Array(DockChanges).annotations({ description: "One entry per Dock the token changed" })
}) {}

export const StepAction = Schema.Literal(
  "restore_version",
  "delete_page",
  "undelete_page",
  "delete_row",
  "restore_row",
  "reinsert_row",
  "skip",
  "not_reverted"
)
export type StepAction = typeof StepAction.Type

/** One step of a revert: what it does (or, in a dry run, would do) to a page, a row or the schema. */
export class RevertStep extends Schema.Class<RevertStep>("RevertStep")({
  subject: Schema.Literal("page", "row", "schema"),
  action: StepAction.annotations({
    description: "restore_version (a new version equal to to_version), delete_page (created by the token), " +
      "undelete_page (back from the trash with its history), delete_row (inserted by the token), restore_row " +
      "(its data before the token's changes), reinsert_row (deleted by the token), skip (see note), not_reverted " +
      "(a schema change: listed only)"
  }),
  page_id: optional(Schema.String),
  slug: optional(Schema.NullOr(Schema.String)),
  table: optional(Schema.NullOr(Schema.String)),
  row_id: optional(Schema.String),
  /** the page's current version (restore_version, delete_page, undelete_page) */
  from_version: optional(Schema.Int),
  /** the version whose content comes back (restore_version) */
  to_version: optional(Schema.Int),
  /** the version the revert wrote (real run) */
  new_version: optional(Schema.Int),
  /** schema changes: the activity's action */
  change: optional(Schema.String),
  note: optional(Schema.String)
}) {}

export class DockRevert extends Schema.Class<DockRevert>("DockRevert")({
  bucket_id: Schema.String,
  bucket_path: Schema.String,
  steps: Schema.Array(RevertStep),
  /** how many steps of each action (all of them, also when `steps` is cut at 1,000) */
  counts: Schema.Record({ key: Schema.String, value: Schema.Int }),
  /** true when `steps` shows only the first 1,000 */
  truncated: Schema.Boolean
}) {}

export class RevertResult extends Schema.Class<RevertResult>("RevertResult")({
  dry_run: Schema.Boolean,
  token_id: Schema.String,
  since: Schema.String,
  buckets: Schema.Array(DockRevert)
}) {}

/** What the operator's `POST /admin/revert` takes (`dock revert`). */
export const RevertRequest = Schema.Struct({
  token: Schema.String,
  since: Schema.String,
  dock: Schema.optional(Schema.String),
  dry_run: Schema.optional(Schema.Boolean)
})
