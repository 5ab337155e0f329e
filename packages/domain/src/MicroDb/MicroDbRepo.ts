/** Micro DB tables and rows: SQL in, typed rows out. SqlError is a defect here. */
import type { Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"
import { DockId, isUuid, type RowId, TableId } from "../Ids.ts"
import { MicroDbColumn } from "./Columns.ts"

export class TableRow extends Schema.Class<TableRow>("TableRow")({
  id: TableId,
  dock_id: DockId,
  name: Schema.String,
  slug: Schema.String,
  description: Schema.NullOr(Schema.String),
  position: Schema.Number,
  columns: Schema.Array(MicroDbColumn),
  row_count: Schema.Number,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
}) {}

export interface StoredRow {
  readonly id: RowId
  readonly table_id: TableId
  readonly data: Record<string, unknown>
  readonly size_bytes: number
  readonly created_at: Date
  readonly updated_at: Date
}

export const makeMicroDbRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const decodeTables = Schema.decodeUnknown(Schema.Array(TableRow))
  const tableColumns = sql`id, dock_id, name, slug, description, position, columns, row_count, created_at, updated_at`
  const rowColumns = sql`r.id, r.table_id, r.data, r.size_bytes, r.created_at, r.updated_at`

  const tables = (dockId: DockId) =>
    sql`select ${tableColumns} from micro_db_tables where dock_id = ${dockId} order by position, created_at`.pipe(
      Effect.flatMap(decodeTables),
      Effect.orDie
    )

  /** A table of the Dock by UUID or slug; `lock` makes the caller's transaction the table's one writer. */
  const findTable = (dockId: DockId, ref: string, lock = false) => {
    const trimmed = ref.trim()
    return sql`select ${tableColumns} from micro_db_tables
      where dock_id = ${dockId} and ${isUuid(trimmed) ? sql`id = ${trimmed.toLowerCase()}` : sql`slug = ${trimmed}`}
      ${lock ? sql`for update` : sql``}`.pipe(
      Effect.flatMap(decodeTables),
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )
  }

  const insertTable = (
    dockId: DockId,
    table: {
      readonly name: string
      readonly slug: string
      readonly description: string | null
      readonly columns: ReadonlyArray<MicroDbColumn>
    },
    now: Date
  ) =>
    sql<{ id: TableId }>`insert into micro_db_tables (dock_id, name, slug, description, position, columns, created_at,
        updated_at)
      values (${dockId}, ${table.name}, ${table.slug}, ${table.description},
        (select count(*) from micro_db_tables where dock_id = ${dockId}), ${
      JSON.stringify(table.columns)
    }::jsonb, ${now}, ${now})
      returning id`.pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie)

  const updateTable = (
    id: TableId,
    patch: {
      readonly name?: string | undefined
      readonly description?: string | null | undefined
      readonly columns?: ReadonlyArray<MicroDbColumn> | undefined
      readonly rowCountChange?: number | undefined
    },
    now: Date
  ) =>
    sql`update micro_db_tables set
        name = coalesce(${patch.name ?? null}::text, name),
        description = ${patch.description === undefined ? sql`description` : sql`${patch.description}::text`},
        columns = ${patch.columns === undefined ? sql`columns` : sql`${JSON.stringify(patch.columns)}::jsonb`},
        row_count = row_count + ${patch.rowCountChange ?? 0},
        updated_at = ${now}
      where id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  /** Moves a table to `position` (clamped) and renumbers the Dock's tables 0, 1, 2, … */
  const moveTable = (dockId: DockId, id: TableId, position: number) =>
    sql`with ordered as (
        select id, row_number() over (order by position, created_at) - 1 as place from micro_db_tables
        where dock_id = ${dockId} and id <> ${id}
      ),
      placed as (
        select id, case when place >= ${position} then place + 1 else place end as place from ordered
        union all
        select ${id}::uuid, least(${position}, (select count(*) from ordered))
      )
      update micro_db_tables t set position = placed.place from placed where t.id = placed.id`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  /** Deletes a table with its rows and renumbers the others; returns the bytes its rows held. */
  const deleteTable = (dockId: DockId, id: TableId) =>
    Effect.gen(function*() {
      const [usage] = yield* sql<{ bytes: string }>`select coalesce(sum(size_bytes), 0)::bigint as bytes
        from micro_db_rows where table_id = ${id}`
      yield* sql`delete from micro_db_tables where id = ${id}`
      yield* sql`with ordered as (
          select id, row_number() over (order by position, created_at) - 1 as place from micro_db_tables
          where dock_id = ${dockId}
        )
        update micro_db_tables t set position = ordered.place from ordered where t.id = ordered.id`
      return Number(usage!.bytes)
    }).pipe(Effect.orDie)

  /** Inserts rows in order (one statement); each row's size is its stored JSON text's. */
  const insertRows = (tableId: TableId, rows: ReadonlyArray<Record<string, unknown>>, now: Date) =>
    sql<StoredRow & { seq: string }>`insert into micro_db_rows (table_id, data, size_bytes, created_at, updated_at)
      select ${tableId}, e.value, octet_length(e.value::text), ${now}, ${now}
      from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) with ordinality e
      order by e.ordinality
      returning id, table_id, data, size_bytes, created_at, updated_at, seq`.pipe(
      Effect.map((inserted) => [...inserted].sort((a, b) => Number(a.seq) - Number(b.seq))),
      Effect.orDie
    )

  const findRow = (tableId: TableId, id: string, lock = false): Effect.Effect<StoredRow | undefined> =>
    isUuid(id)
      ? sql<
        StoredRow
      >`select ${rowColumns} from micro_db_rows r where r.table_id = ${tableId} and r.id = ${id.toLowerCase()}
        ${lock ? sql`for update` : sql``}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)
      : Effect.succeed(undefined)

  const updateRow = (id: RowId, data: Record<string, unknown>, now: Date) =>
    sql<StoredRow>`update micro_db_rows r set data = ${JSON.stringify(data)}::jsonb,
        size_bytes = octet_length(${JSON.stringify(data)}::jsonb::text), updated_at = ${now}
      where r.id = ${id}
      returning ${rowColumns}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

  const deleteRow = (id: RowId) => sql`delete from micro_db_rows where id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  /** One page of a table's rows matching `where`, in `orderBy` order. */
  const query = (
    tableId: TableId,
    where: Statement.Fragment,
    orderBy: Statement.Fragment,
    page: { readonly limit: number; readonly offset: number }
  ) =>
    sql<StoredRow>`select ${rowColumns} from micro_db_rows r
      where r.table_id = ${tableId} and ${where}
      order by ${orderBy}
      limit ${page.limit} offset ${page.offset}`.pipe(Effect.orDie)

  const count = (tableId: TableId, where: Statement.Fragment) =>
    sql<{ total: string }>`select count(*)::bigint as total from micro_db_rows r
      where r.table_id = ${tableId} and ${where}`.pipe(Effect.map((rows) => Number(rows[0]!.total)), Effect.orDie)

  /** Every row of a table in insertion order (snapshots, schema conversions). */
  const allRows = (tableId: TableId) =>
    sql<StoredRow>`select ${rowColumns} from micro_db_rows r where r.table_id = ${tableId} order by r.seq`.pipe(
      Effect.orDie
    )

  /** Every row of the Dock's Micro DB, read in one statement (one consistent view), in insertion order. */
  const rowsOfDock = (dockId: DockId) =>
    sql<StoredRow>`select ${rowColumns} from micro_db_rows r join micro_db_tables t on t.id = r.table_id
      where t.dock_id = ${dockId} order by r.seq`.pipe(Effect.orDie)

  /**
   * Rows of the table (other than `except`) whose `slug` value equals one of `values` (at most one each, the
   * column being unique): a single
   * `@> any(…)` lookup, which the GIN index answers (a lateral lookup per value read the whole table each time).
   */
  const valuesTaken = (tableId: TableId, slug: string, values: ReadonlyArray<unknown>, except: RowId | null = null) =>
    values.length === 0 ?
      Effect.succeed([]) :
      sql<{ value: unknown; id: RowId }>`select r.data -> ${slug}::text as value, r.id
      from micro_db_rows r
      where r.table_id = ${tableId}
        and r.data @> any(${values.map((value) => JSON.stringify({ [slug]: value }))}::jsonb[])
        ${except === null ? sql`` : sql`and r.id <> ${except}`}
      order by r.seq`.pipe(Effect.orDie)

  /**
   * Holds every table of the Dock against writers (row and schema writes lock their table `for update`) until the
   * transaction ends: a snapshot's two reads then see one state. Taken after the shell's lock (the lock order).
   */
  const holdTables = (dockId: DockId) =>
    sql`select id from micro_db_tables where dock_id = ${dockId} order by id for share`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  /**
   * Rewrites many rows' data at once (schema changes: the values mean what they meant, so `updated_at` stays);
   * sizes follow. Returns the change in bytes.
   */
  const rewriteRows = (
    tableId: TableId,
    rows: ReadonlyArray<{ readonly id: RowId; readonly data: Record<string, unknown> }>
  ) =>
    Effect.gen(function*() {
      if (rows.length === 0) return 0
      const [change] = yield* sql<{ bytes: string }>`with incoming as (
          select (e.value ->> 'id')::uuid as id, e.value -> 'data' as data
          from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) e
        ),
        old as (select r.id, r.size_bytes from micro_db_rows r join incoming using (id) where r.table_id = ${tableId}),
        updated as (
          update micro_db_rows r set data = incoming.data, size_bytes = octet_length(incoming.data::text)
          from incoming where r.id = incoming.id and r.table_id = ${tableId}
          returning r.id, r.size_bytes
        )
        select coalesce(sum(updated.size_bytes - old.size_bytes), 0)::bigint as bytes from updated join old using (id)`
      return Number(change!.bytes)
    }).pipe(Effect.orDie)

  /** Row writes change a table's count, not its schema: `updated_at` stays. */
  const changeRowCount = (id: TableId, change: number) =>
    sql`update micro_db_tables set row_count = row_count + ${change} where id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  /** Sets one column's value in every row of the table that has none (a new column's default); returns the bytes added. */
  const fillColumn = (tableId: TableId, slug: string, value: unknown) =>
    Effect.gen(function*() {
      const [change] = yield* sql<{ bytes: string }>`with updated as (
          update micro_db_rows r set data = r.data || jsonb_build_object(${slug}::text, ${
        JSON.stringify(value)
      }::jsonb),
            size_bytes = octet_length((r.data || jsonb_build_object(${slug}::text, ${
        JSON.stringify(value)
      }::jsonb))::text)
          where r.table_id = ${tableId} and r.data -> ${slug}::text is null
          returning r.size_bytes, octet_length(r.data::text) - octet_length((r.data - ${slug}::text)::text) as added
        )
        select coalesce(sum(added), 0)::bigint as bytes from updated`
      return Number(change!.bytes)
    }).pipe(Effect.orDie)

  /** Removes one column's values from every row of the table; returns the bytes released (a negative number). */
  const dropColumnData = (tableId: TableId, slug: string) =>
    Effect.gen(function*() {
      const [change] = yield* sql<{ bytes: string }>`with old as (
          select r.id, r.size_bytes from micro_db_rows r where r.table_id = ${tableId} and r.data -> ${slug}::text is not null
        ),
        updated as (
          update micro_db_rows r set data = r.data - ${slug}::text, size_bytes = octet_length((r.data - ${slug}::text)::text)
          from old where r.id = old.id
          returning r.id, r.size_bytes
        )
        select coalesce(sum(updated.size_bytes - old.size_bytes), 0)::bigint as bytes from updated join old using (id)`
      return Number(change!.bytes)
    }).pipe(Effect.orDie)

  return {
    changeRowCount,
    fillColumn,
    dropColumnData,
    tables,
    findTable,
    insertTable,
    updateTable,
    moveTable,
    deleteTable,
    insertRows,
    findRow,
    updateRow,
    deleteRow,
    query,
    count,
    allRows,
    rowsOfDock,
    valuesTaken,
    holdTables,
    rewriteRows
  } as const
})

export type MicroDbRepo = Effect.Effect.Success<typeof makeMicroDbRepo>
