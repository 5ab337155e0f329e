/** The Micro DB tools of spec §4.3 (docs/micro-db.md): catalogue entries, one domain call each. */
import {
  ColumnType,
  FilterOp,
  MicroDb,
  MicroDbColumn,
  MicroDbRow,
  MicroDbSnapshot,
  MicroDbTable,
  Part,
  RowDataInput
} from "@dock/domain"
import { Effect, Schema } from "effect"
import { DESTRUCTIVE, READ, tool, WRITE } from "../Tool.ts"
import { Bucket, optional, Text, Visibility, WriteTarget } from "./Params.ts"

const withMicroDb = <A, E, R>(f: (microDb: MicroDb["Type"]) => Effect.Effect<A, E, R>) => Effect.flatMap(MicroDb, f)

const Table = Text(200).pipe(Schema.annotations({ description: "The table: its UUID or its slug" }))
const Column = Text(64).pipe(Schema.annotations({ description: "The column's slug" }))
const RowId = Schema.UUID.pipe(Schema.annotations({ description: "A row's UUID" }))
const RowData = RowDataInput.pipe(
  Schema.annotations({ description: "Values keyed by column slug; null clears a value" })
)

const columnDefFields = {
  name: Text(100),
  slug: optional(
    Text(64).pipe(Schema.annotations({ description: "Default: from the name (\"First name\" → first_name)" }))
  ),
  type: ColumnType,
  required: optional(Schema.Boolean),
  unique: optional(Schema.Boolean),
  default: optional(Schema.Unknown.pipe(Schema.annotations({ description: "A value of the column's type" }))),
  options: optional(
    Schema.Array(Text(100)).pipe(
      Schema.maxItems(200),
      Schema.annotations({ description: "select / multi_select only: the allowed values" })
    )
  ),
  description: optional(Schema.NullOr(Text(1_000)))
}
const ColumnDef = Schema.Struct(columnDefFields).pipe(
  Schema.annotations({
    description:
      "MicroDbColumnDef. Types: text, long_text, number, integer, boolean, date (YYYY-MM-DD), datetime (ISO 8601), " +
      "select, multi_select, url, email, json"
  })
)
const ColumnPatch = Schema.Struct({ ...columnDefFields, name: optional(Text(100)), type: optional(ColumnType) })

const Filter = Schema.Struct({
  column: Text(64),
  op: FilterOp,
  value: optional(Schema.Unknown)
}).pipe(
  Schema.annotations({
    description: "MicroDbFilter: compares a column (or id, created_at, updated_at) with a typed value"
  })
)
const Sort = Schema.Struct({
  column: Text(64),
  direction: optional(Schema.Literal("asc", "desc").pipe(Schema.annotations({ description: "Default asc" })))
}).pipe(Schema.annotations({ description: "MicroDbSort" }))

const Deleted = Schema.Struct({ ok: Schema.Literal(true), snapshot: MicroDbSnapshot })

export const pushMicroDb = tool({
  name: "push_micro_db",
  description:
    "Create or update the Dock's Micro DB artifact (its one page of kind micro_db, whose versions are snapshots): " +
    "`title`, `slug`, `visibility` (\"private\" hides the tables from non-members even in a public Dock; only " +
    "the Dock's owner may set it) and " +
    "`summary`. With no Dock named it is your default Dock's. Returns `{ part }`.",
  input: Schema.Struct({
    ...WriteTarget,
    title: optional(Schema.NullOr(Text(300))),
    slug: optional(Schema.NullOr(Text(64))),
    visibility: optional(Visibility),
    summary: optional(Schema.NullOr(Text(2_000)))
  }),
  output: Schema.Struct({ part: Part }),
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ slug, summary, title, visibility, ...target }) =>
    withMicroDb((microDb) => microDb.push(target, { title, slug, summary, visibility })).pipe(
      Effect.map((part) => ({ part }))
    )
})

export const listMicroDbTables = tool({
  name: "list_micro_db_tables",
  description:
    "List the tables of a Dock's Micro DB in position order, each with its columns and row_count. Returns `{ tables }`.",
  input: Schema.Struct({ bucket: Bucket }),
  output: Schema.Struct({ tables: Schema.Array(MicroDbTable) }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ bucket }) => withMicroDb((microDb) => microDb.tables({ bucket })).pipe(Effect.map((tables) => ({ tables })))
})

export const getMicroDbSchema = tool({
  name: "get_micro_db_schema",
  description:
    "One table and its columns (name, slug, type, required, unique, default, options, description). Returns `{ table, columns }`.",
  input: Schema.Struct({ bucket: Bucket, table: Table }),
  output: Schema.Struct({ table: MicroDbTable, columns: Schema.Array(MicroDbColumn) }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ bucket, table }) =>
    withMicroDb((microDb) => microDb.table({ bucket }, table)).pipe(
      Effect.map((table) => ({ table, columns: table.columns }))
    )
})

export const queryMicroDbRows = tool({
  name: "query_micro_db_rows",
  description:
    "Rows of one table. `filter`: conditions `{ column, op, value }` combined with AND; ops eq, neq, gt, gte, lt, lte, " +
    "contains, starts_with (case-insensitive), in, not_in (value: an array), is_null, is_not_null; values are typed " +
    "like the column (numbers numerically, dates chronologically). `sort`: `[{ column, direction }]`, rows without a " +
    "value last; then insertion order. `limit` 1-500 (default 100), `offset` ≥ 0. Returns `{ rows, total }`; with a " +
    "filter, `total` is left out when the page is full (page on with `offset` until a page comes back short).",
  input: Schema.Struct({
    bucket: Bucket,
    table: Table,
    filter: optional(Schema.Array(Filter).pipe(Schema.maxItems(20))),
    sort: optional(Schema.Array(Sort).pipe(Schema.maxItems(5))),
    limit: optional(Schema.Int.pipe(Schema.between(1, 500))),
    offset: optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)))
  }),
  output: Schema.Struct({ rows: Schema.Array(MicroDbRow), total: optional(Schema.Int) }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ bucket, filter, limit, offset, sort, table }) =>
    withMicroDb((microDb) =>
      microDb.query({ bucket }, table, {
        filter,
        sort: sort?.map((key) => ({ column: key.column, direction: key.direction ?? "asc" })),
        limit: limit ?? 100,
        offset: offset ?? 0
      })
    )
})

export const getMicroDbRow = tool({
  name: "get_micro_db_row",
  description: "One row of a table by its id. Returns `{ row }`.",
  input: Schema.Struct({ bucket: Bucket, table: Table, row_id: RowId }),
  output: Schema.Struct({ row: MicroDbRow }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ bucket, row_id, table }) =>
    withMicroDb((microDb) => microDb.row({ bucket }, table, row_id)).pipe(Effect.map((row) => ({ row })))
})

export const createMicroDbTable = tool({
  name: "create_micro_db_table",
  description:
    "Create a table in the Dock's Micro DB (the Micro DB is created with its first table). `slug` defaults from the " +
    "name; `columns` are MicroDbColumnDefs. Returns `{ table }`.",
  input: Schema.Struct({
    bucket: Bucket,
    name: Text(200),
    slug: optional(Text(64)),
    description: optional(Schema.NullOr(Text(2_000))),
    columns: Schema.Array(ColumnDef).pipe(Schema.maxItems(100))
  }),
  output: Schema.Struct({ table: MicroDbTable }),
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ bucket, ...input }) =>
    withMicroDb((microDb) => microDb.createTable({ bucket }, input)).pipe(Effect.map((table) => ({ table })))
})

export const updateMicroDbTable = tool({
  name: "update_micro_db_table",
  description: "Rename a table, change its description, or move it to `position` (0-based). Returns `{ table }`.",
  input: Schema.Struct({
    bucket: Bucket,
    table: Table,
    name: optional(Text(200)),
    description: optional(Schema.NullOr(Text(2_000))),
    position: optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)))
  }),
  output: Schema.Struct({ table: MicroDbTable }),
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ bucket, table, ...patch }) =>
    withMicroDb((microDb) => microDb.updateTable({ bucket }, table, patch)).pipe(Effect.map((table) => ({ table })))
})

export const deleteMicroDbTable = tool({
  name: "delete_micro_db_table",
  description:
    "Delete a table and its rows, after snapshotting the whole Micro DB (read it back with get_web_page_version). " +
    "Returns `{ ok: true, snapshot }`.",
  input: Schema.Struct({ bucket: Bucket, table: Table }),
  output: Deleted,
  annotations: DESTRUCTIVE,
  scope: "mcp:write",
  run: ({ bucket, table }) =>
    withMicroDb((microDb) => microDb.deleteTable({ bucket }, table)).pipe(
      Effect.map((snapshot) => ({ ok: true as const, snapshot }))
    )
})

export const addMicroDbColumn = tool({
  name: "add_micro_db_column",
  description:
    "Add a column (a MicroDbColumnDef) at the end of a table; with a `default`, existing rows get it. Returns `{ column }`.",
  input: Schema.Struct({ bucket: Bucket, table: Table, column_def: ColumnDef }),
  output: Schema.Struct({ column: MicroDbColumn }),
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ bucket, column_def, table }) =>
    withMicroDb((microDb) => microDb.addColumn({ bucket }, table, column_def)).pipe(
      Effect.map((column) => ({ column }))
    )
})

export const updateMicroDbColumn = tool({
  name: "update_micro_db_column",
  description:
    "Change a column with a partial MicroDbColumnDef `patch`. A new `slug` moves every row's value; a new `type` " +
    "converts every value or is refused naming the rows that do not convert; a new `type` also drops the column's " +
    "default (it may not be a value of the new type) unless the patch sets `default`, and `warnings` says so; " +
    "turning on required or unique checks existing rows. Returns `{ column, warnings }`.",
  input: Schema.Struct({ bucket: Bucket, table: Table, column: Column, patch: ColumnPatch }),
  output: Schema.Struct({
    column: MicroDbColumn,
    warnings: Schema.Array(Schema.String).pipe(
      Schema.annotations({ description: "What the change did besides the patch (a dropped default)" })
    )
  }),
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ bucket, column, patch, table }) =>
    withMicroDb((microDb) => microDb.updateColumn({ bucket }, table, column, patch))
})

export const deleteMicroDbColumn = tool({
  name: "delete_micro_db_column",
  description:
    "Delete a column and its values, after snapshotting the whole Micro DB. Returns `{ ok: true, snapshot }`.",
  input: Schema.Struct({ bucket: Bucket, table: Table, column: Column }),
  output: Deleted,
  annotations: DESTRUCTIVE,
  scope: "mcp:write",
  run: ({ bucket, column, table }) =>
    withMicroDb((microDb) => microDb.deleteColumn({ bucket }, table, column)).pipe(
      Effect.map((snapshot) => ({ ok: true as const, snapshot }))
    )
})

export const insertMicroDbRow = tool({
  name: "insert_micro_db_row",
  description:
    "Insert one row: `data` keyed by column slug, validated against the columns (types, required, unique, options); " +
    "missing values take the column's default. Returns `{ row }`.",
  input: Schema.Struct({ bucket: Bucket, table: Table, data: RowData }),
  output: Schema.Struct({ row: MicroDbRow }),
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ bucket, data, table }) =>
    withMicroDb((microDb) => microDb.insertRows({ bucket }, table, [data])).pipe(
      Effect.map((rows) => ({ row: rows[0]! }))
    )
})

export const insertMicroDbRows = tool({
  name: "insert_micro_db_rows",
  description:
    "Insert 1-500 rows, all or nothing: if any row is invalid nothing is written and the error's details list each " +
    "failing row's index, column and reason. Returns `{ rows }` in the order given.",
  input: Schema.Struct({
    bucket: Bucket,
    table: Table,
    rows: Schema.Array(RowData).pipe(Schema.minItems(1), Schema.maxItems(500))
  }),
  output: Schema.Struct({ rows: Schema.Array(MicroDbRow) }),
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ bucket, rows, table }) =>
    withMicroDb((microDb) => microDb.insertRows({ bucket }, table, rows)).pipe(Effect.map((rows) => ({ rows })))
})

/** The write precondition of a row's update or delete (docs/versions.md, "Rows"). */
const RowBaseVersion = Schema.Int.pipe(
  Schema.greaterThanOrEqualTo(1),
  Schema.annotations({
    description: "Optional precondition: the row's `version` you read. If the row is at another version now, " +
      "nothing is written and the answer is conflict with details.current_version and details.row (the row now)"
  })
)
const ROW_BASE_VERSION_NOTE = " Every row has a `version` (1 at insert, +1 on every update). Pass `base_version` " +
  "(the version you read) to write only if nobody changed the row since: if someone did, the answer is conflict " +
  "(409) with details.current_version and details.row (the row as it is now), and nothing is written."

export const updateMicroDbRow = tool({
  name: "update_micro_db_row",
  description:
    "Merge `data`'s keys into a row (null clears a value); the whole row is validated again. Returns `{ row }` " +
    "with its raised `version`." + ROW_BASE_VERSION_NOTE,
  input: Schema.Struct({
    bucket: Bucket,
    table: Table,
    row_id: RowId,
    data: RowData,
    base_version: optional(RowBaseVersion)
  }),
  output: Schema.Struct({ row: MicroDbRow }),
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ base_version, bucket, data, row_id, table }) =>
    withMicroDb((microDb) => microDb.updateRow({ bucket }, table, row_id, data, base_version)).pipe(
      Effect.map((row) => ({ row }))
    )
})

export const deleteMicroDbRow = tool({
  name: "delete_micro_db_row",
  description: "Delete one row. Returns `{ ok: true }`." + ROW_BASE_VERSION_NOTE,
  input: Schema.Struct({ bucket: Bucket, table: Table, row_id: RowId, base_version: optional(RowBaseVersion) }),
  output: Schema.Struct({ ok: Schema.Literal(true) }),
  annotations: DESTRUCTIVE,
  scope: "mcp:write",
  run: ({ base_version, bucket, row_id, table }) =>
    withMicroDb((microDb) => microDb.deleteRow({ bucket }, table, row_id, base_version)).pipe(
      Effect.as({ ok: true as const })
    )
})

export const snapshotMicroDb = tool({
  name: "snapshot_micro_db",
  description:
    "Save the whole Micro DB (tables, columns, rows) as a new version of its page; the newest 20 snapshots are kept. " +
    "Read one back with get_web_page_version { bucket, web_page: part_id, version }. Returns `{ snapshot }`.",
  input: Schema.Struct({ bucket: Bucket }),
  output: Schema.Struct({ snapshot: MicroDbSnapshot }),
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ bucket }) =>
    withMicroDb((microDb) => microDb.snapshot({ bucket })).pipe(Effect.map((snapshot) => ({ snapshot })))
})
