/** The Micro DB's wire shapes (tables, rows, snapshots), its inputs and its bounds (docs/micro-db.md). */
import { Schema } from "effect"
import { type ColumnDef, MicroDbColumn } from "./Columns.ts"
import type { MicroDbFilter, MicroDbSort } from "./Query.ts"

export class MicroDbTable extends Schema.Class<MicroDbTable>("MicroDbTable")({
  id: Schema.UUID,
  name: Schema.String,
  slug: Schema.String,
  description: Schema.NullOr(Schema.String),
  position: Schema.Int,
  columns: Schema.Array(MicroDbColumn),
  row_count: Schema.Int,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class MicroDbRow extends Schema.Class<MicroDbRow>("MicroDbRow")({
  id: Schema.UUID,
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** 1 at insert, +1 on every update: the `base_version` update_micro_db_row and delete_micro_db_row may require. */
  version: Schema.Int,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

/** A snapshot_micro_db result (architecture §14): the shell's new version and what it holds. */
export class MicroDbSnapshot extends Schema.Class<MicroDbSnapshot>("MicroDbSnapshot")({
  part_id: Schema.UUID,
  version: Schema.Int,
  created_at: Schema.String,
  tables: Schema.Int,
  rows: Schema.Int
}) {}

export const SNAPSHOT_FORMAT = "dock.micro_db.snapshot/1"
export const TABLE_NAME_MAX = 200
export const TABLE_DESCRIPTION_MAX = 2_000
export const SHELL_TITLE_MAX = 300
export const SHELL_SUMMARY_MAX = 2_000
/** At most this many offending rows are listed when a schema change is refused. */
export const LISTED_INVALID_ROWS = 50

export interface ShellInput {
  readonly title?: string | null | undefined
  readonly slug?: string | null | undefined
  readonly visibility?: "private" | "public" | undefined
  readonly summary?: string | null | undefined
}

export interface TableInput {
  readonly name: string
  readonly slug?: string | undefined
  readonly description?: string | null | undefined
  readonly columns: ReadonlyArray<ColumnDef>
}

export interface TablePatch {
  readonly name?: string | undefined
  readonly description?: string | null | undefined
  readonly position?: number | undefined
}

export interface RowsQuery {
  readonly filter?: ReadonlyArray<MicroDbFilter> | undefined
  readonly sort?: ReadonlyArray<MicroDbSort> | undefined
  readonly limit: number
  readonly offset: number
}
