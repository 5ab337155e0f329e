/** Micro DB tables and rows: SQL in, typed rows out. SqlError is a defect here. */
import type { SqlClient, Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"
import { rowsOf } from "../Database/Rows.ts"
import { type Along, alongColumns } from "../Docks/Docks.ts"
import { DockId, isUuid, type RowId, TableId, type TokenId, type UserId } from "../Ids.ts"
import { MicroDbColumn } from "./Columns.ts"
import { CELL_TEXT_CHARS, type CellKind, type Condition, type SortKey } from "./Query.ts"

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
  /** 1 at insert, raised by every update of the row (the base_version of an update or delete). */
  readonly version: number
  readonly created_at: Date
  readonly updated_at: Date
}

/** Who writes a row (the row change log's attribution) and in which Dock. */
export interface RowActor {
  readonly dockId: DockId
  readonly tokenId: TokenId | null
  readonly userId: UserId | null
}

/** A checked query: its filters as conditions and its sort keys (Query.ts). */
export interface RowsPlan {
  readonly conditions: ReadonlyArray<Condition>
  readonly keys: ReadonlyArray<SortKey>
}

/**
 * The most matching cells a walk tests a filter against as a hash (MicroDbRepo `query`): a bound on its memory
 * (~10 MB) and its time (~50 ms). The database's own settings bound it further (`hashCellsOf`).
 */
const HASH_CELLS_MAX = 200_000

/**
 * The cells a hash may hold on a database whose hash memory (work_mem × hash_mem_multiplier, 4 MB × 2 by default
 * since PostgreSQL 15) is `bytes`: half of what the planner lets a hashed subquery have at 32 bytes a row (131,072
 * by default). It hashes a subquery only when its rows fit; one that did not would be scanned for each row instead.
 */
export const hashCellsOf = (bytes: number) => Math.min(HASH_CELLS_MAX, Math.floor(bytes / 64))

/** The database's hash memory in bytes: work_mem × hash_mem_multiplier (the multiplier is 1 before PostgreSQL 13). */
export const hashMemoryBytes = (sql: SqlClient.SqlClient) =>
  sql<{ bytes: string }>`select (pg_size_bytes(current_setting('work_mem')) *
    coalesce(current_setting('hash_mem_multiplier', true)::float8, 1))::bigint::text as bytes`.pipe(
    Effect.map(([memory]) => Number(memory!.bytes))
  )

/** The rows a walk meets, without filling its page, before it decides whether to hash a filter (see `query`). */
export const HASH_SAMPLE = 200

/**
 * What a lookup of a row's cell costs in cells counted and hashed: ~2.4 µs against ~0.1 µs to count a matching cell
 * and ~0.25 µs to hash it (PostgreSQL 15, 106,500 rows, docs/decisions.md "A hash chosen by a sample").
 */
const LOOKUP_CELLS = 7

/**
 * Cells few enough to hash whatever the sample says (~2.5 ms at most): a sample taken at the head of a sort can
 * overrate a filter (13 matches in 200 where the table has 1 in 37), and the lookups that follow cost far more.
 */
const HASH_CELLS_CHEAP = 10_000

/** With more filters on other columns than this, a walk looks every one up (each hash choice is a branch of SQL). */
const HASH_FILTERS_MAX = 4

export const makeMicroDbRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  // Read once: the server's settings when the service starts (a `set` in a session does not reach this pool's).
  const hashCells = hashCellsOf(yield* hashMemoryBytes(sql).pipe(Effect.orDie))
  const decodeTables = rowsOf(TableRow)
  const tableColumnNames = [
    "id",
    "dock_id",
    "name",
    "slug",
    "description",
    "position",
    "columns",
    "row_count",
    "created_at",
    "updated_at"
  ]
  const tableColumns = sql.literal(tableColumnNames.join(", "))
  const tableColumnsAlong = sql.literal(tableColumnNames.map((name) => `t.${name} as table_${name}`).join(", "))
  const rowColumns = sql`r.id, r.table_id, r.data, r.size_bytes, r.version, r.created_at, r.updated_at`

  const tables = (dockId: DockId) =>
    sql`/* prepared */ select ${tableColumns} from micro_db_tables where dock_id = ${dockId}
      order by position, created_at`.pipe(
      Effect.flatMap(decodeTables),
      Effect.orDie
    )

  /** The table `ref` names (its UUID or its slug), as `t`. */
  const tableNamed = (ref: string) => {
    const trimmed = ref.trim()
    return isUuid(trimmed) ? sql`t.id = ${trimmed.toLowerCase()}` : sql`t.slug = ${trimmed}`
  }

  /** A table of the Dock by UUID or slug; `lock` makes the caller's transaction the table's one writer. */
  const findTable = (dockId: DockId, ref: string, lock = false) =>
    sql`/* prepared */ select ${tableColumns} from micro_db_tables t where t.dock_id = ${dockId} and ${tableNamed(ref)}
      ${lock ? sql`for update` : sql``}`.pipe(
      Effect.flatMap(decodeTables),
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  /**
   * What a read of the Micro DB needs beside the Dock, read in the resolver's own statement (Docks.namedAlong): the
   * visibility of the Dock's Micro DB page (its shell, which decides who reads the tables) and, when `ref` is given,
   * the table it names (`findTable`'s columns, each named `table_…`; undefined when the Dock has no such table, or
   * when no table is named).
   */
  const readAlong = (ref: string | undefined): Along<{
    readonly table: TableRow | undefined
    readonly shellVisibility: "private" | "public" | null
  }> => ({
    from: (dockId) =>
      sql`select (select visibility from parts where dock_id = ${dockId} and page_kind = 'micro_db' limit 1)
          as shell_visibility, ${tableColumnsAlong}
        from (select) one left join micro_db_tables t
          on t.dock_id = ${dockId} and ${ref === undefined ? sql`false` : tableNamed(ref)}`,
    decode: (row) => {
      const shellVisibility = (row["shell_visibility"] ?? null) as "private" | "public" | null
      if (row["table_id"] == null) return Effect.succeed({ table: undefined, shellVisibility })
      return decodeTables([alongColumns(row, "table_")]).pipe(
        Effect.map((tables) => ({ table: tables[0], shellVisibility })),
        Effect.orDie
      )
    }
  })

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

  /**
   * Inserts rows in order (one statement); each row's size is its stored JSON text's. The row change log gets one
   * entry per row in the same statement (one insert … select over the inserted rows, however many).
   */
  const insertRows = (
    tableId: TableId,
    rows: ReadonlyArray<Record<string, unknown>>,
    now: Date,
    actor: RowActor
  ) =>
    sql<StoredRow & { seq: string }>`with inserted as (
        insert into micro_db_rows (table_id, data, size_bytes, created_at, updated_at)
        select ${tableId}, e.value, octet_length(e.value::text), ${now}, ${now}
        from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) with ordinality e
        order by e.ordinality
        returning id, table_id, data, size_bytes, version, created_at, updated_at, seq
      ),
      logged as (
        insert into micro_db_row_changes (dock_id, table_id, row_id, token_id, user_id, op, data_before, at)
        select ${actor.dockId}, table_id, id, ${actor.tokenId}, ${actor.userId}, 'insert', null, ${now}
        from inserted order by seq
      )
      select * from inserted`.pipe(
      Effect.map((inserted) => [...inserted].sort((a, b) => Number(a.seq) - Number(b.seq))),
      Effect.orDie
    )

  /**
   * Puts a row back under its own id (a revert of its delete), logged as an insert by `actor`. Answers the row, or
   * undefined when a row of that id exists.
   */
  const restoreRow = (tableId: TableId, id: RowId, data: Record<string, unknown>, now: Date, actor: RowActor) =>
    sql<StoredRow>`with inserted as (
        insert into micro_db_rows (id, table_id, data, size_bytes, created_at, updated_at)
        values (${id}, ${tableId}, ${JSON.stringify(data)}::jsonb, octet_length(${JSON.stringify(data)}::jsonb::text),
          ${now}, ${now})
        on conflict (id) do nothing
        returning id, table_id, data, size_bytes, version, created_at, updated_at
      ),
      logged as (
        insert into micro_db_row_changes (dock_id, table_id, row_id, token_id, user_id, op, data_before, at)
        select ${actor.dockId}, table_id, id, ${actor.tokenId}, ${actor.userId}, 'insert', null, ${now} from inserted
      )
      select id, table_id, data, size_bytes, version, created_at, updated_at from inserted`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  const findRow = (tableId: TableId, id: string, lock = false): Effect.Effect<StoredRow | undefined> =>
    isUuid(id)
      ? sql<
        StoredRow
      >`/* prepared */ select ${rowColumns} from micro_db_rows r
        where r.table_id = ${tableId} and r.id = ${id.toLowerCase()}
        ${lock ? sql`for update` : sql``}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)
      : Effect.succeed(undefined)

  /** Changes a row's data; its data before goes to the row change log in the same statement. */
  const updateRow = (id: RowId, data: Record<string, unknown>, now: Date, actor: RowActor) =>
    sql<StoredRow>`with logged as (
        insert into micro_db_row_changes (dock_id, table_id, row_id, token_id, user_id, op, data_before, at)
        select ${actor.dockId}, table_id, id, ${actor.tokenId}, ${actor.userId}, 'update', data, ${now}
        from micro_db_rows where id = ${id}
      )
      update micro_db_rows r set data = ${JSON.stringify(data)}::jsonb,
        size_bytes = octet_length(${JSON.stringify(data)}::jsonb::text), version = r.version + 1,
        updated_at = ${now}
      where r.id = ${id}
      returning ${rowColumns}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

  /** Deletes a row; its data goes to the row change log in the same statement. */
  const deleteRow = (id: RowId, now: Date, actor: RowActor) =>
    sql`with logged as (
        insert into micro_db_row_changes (dock_id, table_id, row_id, token_id, user_id, op, data_before, at)
        select ${actor.dockId}, table_id, id, ${actor.tokenId}, ${actor.userId}, 'delete', data, ${now}
        from micro_db_rows where id = ${id}
      )
      delete from micro_db_rows where id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  /**
   * Deletes many rows of a table at once (a revert of their inserts), each logged with its data in the same
   * statement; answers how many went and the bytes they held.
   */
  const deleteRows = (tableId: TableId, ids: ReadonlyArray<RowId>, now: Date, actor: RowActor) =>
    sql<{ rows: number; bytes: string }>`with gone as (
        delete from micro_db_rows where table_id = ${tableId} and id = any(${ids}::uuid[])
        returning id, table_id, data, size_bytes
      ),
      logged as (
        insert into micro_db_row_changes (dock_id, table_id, row_id, token_id, user_id, op, data_before, at)
        select ${actor.dockId}, table_id, id, ${actor.tokenId}, ${actor.userId}, 'delete', data, ${now} from gone
      )
      select count(*)::int as rows, coalesce(sum(size_bytes), 0)::bigint as bytes from gone`.pipe(
      Effect.map(([row]) => ({ rows: row!.rows, bytes: Number(row!.bytes) })),
      Effect.orDie
    )

  /** Purges the row change log of entries before `before`; answers how many went. */
  const purgeChanges = (before: Date) =>
    sql`delete from micro_db_row_changes where at < ${before} returning seq`.pipe(
      Effect.map((rows) => rows.length),
      Effect.orDie
    )

  const and = (fragments: ReadonlyArray<Statement.Fragment>) => fragments.length === 0 ? sql`true` : sql.and(fragments)
  const direction = (key: SortKey) => key.direction === "desc" ? sql`desc` : sql`asc`
  /** The value of the cell called `alias` (one of these fixed names, never a caller's text). */
  const valueOf = (alias: string, kind: CellKind) => sql`${sql(alias)}.${sql(kind)}`
  type Tests = {
    readonly kind: CellKind
    readonly tests: ReadonlyArray<(value: Statement.Fragment) => Statement.Fragment>
  }
  type Page = { readonly limit: number; readonly offset: number }
  type Found = { readonly rows: ReadonlyArray<StoredRow>; readonly inPage: number }
  type Placed = StoredRow & { in_page: number; retry: boolean; id: RowId | null }

  /**
   * How many of the first sort key's cells a walk reads (with the ties of the last) before it leaves the page to a
   * sort of the rows that match: a walk that met too few matches in them meets a narrow filter.
   */
  const walkLength = (want: number) => Math.max(10_000, 4 * want)

  /**
   * One page of a table's rows matching the plan, in its order, and `inPage`, the matches up to the page's end: all
   * of them when it is smaller than that. Matches past the page's end are never counted (counting them would read
   * every one; docs/decisions.md "No count past the page, each Dock from its own index").
   *
   * When the first sort key's column has cells, the page is a walk of that column's index in order (filters on the
   * column bound it) that stops at the page's end; each row met is checked first against the filters with cells,
   * a cell looked up by the row's seq, and only then, when a filter reads JSON or a later sort key needs it, its row
   * read: a narrow filter reads few rows. Rows without a value come after it, in the order of the other keys. A
   * walk that meets too few matches in walkLength cells gives way to what the others do: the rows found through
   * their JSON (the GIN index answers `eq`) and sorted.
   *
   * Every lookup is spelled as a lateral subquery with `limit 1`: the planner cannot turn it into a join of whole
   * sets, so the cost of a page follows the rows it meets whatever the statistics (the embedded database has none).
   */
  const query = (tableId: TableId, plan: RowsPlan, page: Page): Effect.Effect<Found> => {
    const want = page.offset + page.limit
    const groups = new Map<string, Tests>()
    for (const { cell } of plan.conditions) {
      if (cell !== undefined) {
        groups.set(cell.slug, { kind: cell.kind, tests: [...(groups.get(cell.slug)?.tests ?? []), cell.test] })
      }
    }
    const onRows = plan.conditions.filter((condition) => condition.cell === undefined).map(({ row }) => row)
    const allOnRows = and(plan.conditions.map(({ row }) => row))
    const tested = (alias: string, { kind, tests }: Tests) => and(tests.map((test) => test(valueOf(alias, kind))))
    /** The page of `m` (seq, place) with its rows, and the count of `m`. */
    const pageOf = (matches: Statement.Fragment, retry: Statement.Fragment = sql`false`) =>
      sql<Placed>`with ${matches}
        select c.in_page, c.retry, ${rowColumns}
        from (select count(*)::int as in_page, ${retry} as retry from m) c
        left join (select seq, place from m where place > ${page.offset} order by place limit ${page.limit}) p on true
        left join micro_db_rows r on r.table_id = ${tableId} and r.seq = p.seq
        order by p.place`.pipe(Effect.orDie)
    const found = (rows: ReadonlyArray<Placed>): Found => ({
      rows: rows.filter((row) => row.id !== null),
      inPage: rows[0]!.in_page
    })

    /** The rows whose JSON matches, sorted: what a query without cells to walk does. */
    const sorted = () => {
      const order = sql.csv([
        ...plan.keys.map((key) => sql`${key.expression} ${direction(key)} nulls last`),
        sql`r.seq`
      ])
      if (plan.conditions.length === 0) {
        // Every row matches: the page itself, straight. In insertion order, a deep offset finds its first row in
        // the first index alone (an index-only walk) and reads the page's rows only: an offset skipped by the page's
        // own walk reads every row it skips (53,000 rows: 12 ms against 4.6 ms).
        const seek = plan.keys.length === 0 && page.offset > 0
        return sql<StoredRow>`select ${rowColumns} from micro_db_rows r
          where r.table_id = ${tableId} ${
          seek
            ? sql`and r.seq >= (select x.seq from micro_db_rows x where x.table_id = ${tableId}
              order by x.seq offset ${page.offset} limit 1)`
            : sql``
        }
          order by ${order}
          limit ${page.limit} ${seek ? sql`` : sql`offset ${page.offset}`}`.pipe(
          Effect.map((rows): Found => ({ rows, inPage: page.offset + rows.length })),
          Effect.orDie
        )
      }
      return pageOf(
        sql`m as materialized (
          select r.seq, row_number() over (order by ${order}) as place
          from micro_db_rows r
          where r.table_id = ${tableId} and ${allOnRows}
          order by ${order}
          limit ${want})`
      ).pipe(Effect.map(found))
    }

    const [first, ...rest] = plan.keys
    if (first?.cell === undefined) return sorted()
    const { kind, slug } = first.cell
    const value = valueOf("k", kind)
    const pushed = groups.get(slug)
    const others = [...groups].filter(([other]) => other !== slug)
    const keyCells = sql`micro_db_cells k where k.table_id = ${tableId} and k.slug = ${slug} and ${value} is not null
      and ${pushed === undefined ? sql`true` : tested("k", pushed)}
      order by ${value} ${direction(first)} fetch first ${walkLength(want)} rows with ties`
    // A cell keeps the start of a long string: equal starts are ordered by the whole values, read only for them.
    const whole = kind === "txt"
      ? sql`, case when length(k.txt) >= ${CELL_TEXT_CHARS} then (select x.data ->> ${slug}::text
          from micro_db_rows x where x.table_id = ${tableId} and x.seq = k.row_seq) end collate "C" as whole`
      : sql``
    const restOrder = rest.map((key) => sql`${key.expression} ${direction(key)} nulls last`)
    const order = sql.csv([
      sql`k.key ${direction(first)}`,
      ...(kind === "txt" ? [sql`k.whole ${direction(first)}`] : []),
      ...restOrder,
      sql`k.row_seq`
    ])
    // Rows without a value of the key come after the walk, unless a filter on its column leaves none.
    const withoutValue = pushed !== undefined
      ? sql`m as (select seq, place from v)`
      : sql`n as materialized (
          select r.seq, (select count(*) from v) + row_number() over (order by ${
        sql.csv([...restOrder, sql`r.seq`])
      }) as place
          from micro_db_rows r
          where r.table_id = ${tableId} and r.data -> ${slug}::text is null and ${allOnRows}
            and (select count(*) from v) < ${want} and (select complete from walked)
          order by ${sql.csv([...restOrder, sql`r.seq`])}
          limit ${want}),
        m as (select seq, place from v union all select seq, place from n where place <= ${want})`
    // The other filters' columns: each row the walk meets is tested against their cells, in the filters' order.
    // A test looks the row's cell up by the primary key (no other index can answer a lookup without a value: none
    // is taken for one); `offset 0` keeps PostgreSQL from turning it into a hash of every matching cell of the
    // column, whatever their number, on its estimates.
    //
    // A walk that meets HASH_SAMPLE rows without filling its page meets a narrow filter, and may do better from
    // there to test one filter against a hash of its matching cells (each hashed once, ~0.25 µs, against ~2.4 µs a
    // lookup). Which one, if any, is decided once, then, from those first rows (the sample, looked up again, one
    // lookup a filter a row): the walk still to go is about `want` rows at the sample's rate of matches, and the
    // first filter whose cells, estimated at its own rate in the sample, cost less than LOOKUP_CELLS a lookup left,
    // or number HASH_CELLS_CHEAP at most, is hashed. A table of more than `hashCells` rows has that filter's cells
    // counted first, up to the same bound: a hash must hold them all, and a wrong estimate then costs at most the
    // count. A deep page is where this pays (offset 1,000 at one row in five: ~5,300 lookups against ~21,000 cells
    // hashed); a walk whose sample sends it on with lookups pays for the sample (~0.5 ms) and for numbering its rows.
    const cellsOf = ([other, tests]: readonly [string, Tests], alias: string) =>
      sql`micro_db_cells ${sql(alias)} where ${sql(alias)}.table_id = ${tableId} and ${sql(alias)}.slug = ${other}
        and ${tested(alias, tests)}`
    const lookedUp = (group: readonly [string, Tests]) =>
      sql`exists (select from ${cellsOf(group, "c")} and c.row_seq = k.row_seq offset 0)`
    // In a CASE, PostgreSQL runs the tests in their order (a WHERE's own are reordered by its estimates).
    const inOrder = (tests: ReadonlyArray<Statement.Fragment>) =>
      tests.length <= 1
        ? and(tests)
        : sql`case ${sql.join(" ", false)(tests.map((test) => sql`when not ${test} then false`))} else true end`
    const allLookedUp = inOrder(others.map(lookedUp))
    const hashable = others.length > 0 && others.length <= HASH_FILTERS_MAX && HASH_SAMPLE < walkLength(want)
    const literal = (n: number) => sql.literal(String(n))
    /** The sample's column of whether a row passed the `index`th other filter, then of how many did. */
    const met = (index: number) => sql(`met${index}`)
    // The rows the walk has still to meet to fill its page at the sample's rate, at most the rest of its cells; the
    // most cells worth hashing for them, or HASH_CELLS_CHEAP, within what a hash may hold.
    const walkLeft = sql`least(${literal(walkLength(want) - HASH_SAMPLE)},
      ${literal(want)} * s.seen / greatest(s.met, 1) - s.seen)`
    const cap = sql`least(${literal(hashCells)}, greatest(${literal(HASH_CELLS_CHEAP)},
      ${literal(LOOKUP_CELLS)} * ${walkLeft}))`
    const sampled = sql`select ${sql.csv(others.map((group, index) => sql`${lookedUp(group)} as ${met(index)}`))}
      from (select w.row_seq from (select k.row_seq from ${keyCells}) w limit ${literal(HASH_SAMPLE)}) k offset 0`
    const hashed = hashable
      ? sql`sample as materialized (
          select count(*) as seen, count(*) filter (where ${
        and(others.map((_, index) => sql`k.${met(index)}`))
      }) as met,
            ${sql.csv(others.map((_, index) => sql`count(*) filter (where ${met(index)}) as ${met(index)}`))}
          from (${sampled}) k),
        worth as materialized (
          select s.*, t.row_count, ${cap} as cap from sample s, micro_db_tables t where t.id = ${tableId}),
        hashed as materialized (select case ${
        sql.join(" ", false)(others.map((group, index) =>
          sql`when w.row_count * w.${met(index)} <= w.cap * w.seen and (w.row_count <= ${literal(hashCells)}
              or (select count(*) from (select from ${cellsOf(group, "h")} limit w.cap + 1) h) <= w.cap)
            then ${literal(index)}`
        ))
      } else -1 end as filter from worth w),`
      : sql``
    const othersPass = !hashable ?
      allLookedUp :
      inOrder(
        others.map((group, index) =>
          sql`(case when k.walk_index > ${literal(HASH_SAMPLE)} and (select filter from hashed) = ${literal(index)}
          then k.row_seq in (select h.row_seq from ${cellsOf(group, "h")} limit ${literal(hashCells)})
          else ${lookedUp(group)} end)`
        )
      )
    const cellChecked = sql`(select k.* from (select k.row_seq, ${value} as key ${whole},
          row_number() over (order by ${value} ${direction(first)}) as walk_index
        from ${keyCells}) k
        where ${othersPass}
        order by k.key ${direction(first)} offset 0) k`
    const withRow = rest.length > 0 || onRows.length > 0
      ? sql`cross join lateral (select * from micro_db_rows r where r.table_id = ${tableId} and r.seq = k.row_seq
          limit 1) r`
      : sql``
    const walk = sql`${hashed} v as materialized (
        select k.row_seq as seq, row_number() over (order by ${order}) as place
        from ${cellChecked} ${withRow}
        where ${and(onRows)}
        order by ${order}
        limit ${want}),
      walked as (select count(*) < ${walkLength(want)} as complete from (select 1 from ${keyCells}) x),
      ${withoutValue}`
    const gaveUp = sql`((select count(*) from v) < ${want} and not (select complete from walked))`
    return pageOf(walk, gaveUp).pipe(
      Effect.flatMap((rows) => rows[0]!.retry ? sorted() : Effect.succeed(found(rows)))
    )
  }

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
    readAlong,
    findTable,
    insertTable,
    updateTable,
    moveTable,
    deleteTable,
    insertRows,
    restoreRow,
    deleteRows,
    purgeChanges,
    findRow,
    updateRow,
    deleteRow,
    query,
    allRows,
    rowsOfDock,
    valuesTaken,
    holdTables,
    rewriteRows
  } as const
})

export type MicroDbRepo = Effect.Effect.Success<typeof makeMicroDbRepo>
