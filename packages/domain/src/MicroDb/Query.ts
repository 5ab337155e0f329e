/**
 * query_micro_db_rows' filters and sorts, checked against a table's columns and turned into SQL fragments. Column
 * slugs and values only ever reach SQL as bound parameters; what a comparison means follows the column's type
 * (numbers numerically, dates and datetimes as their ISO text, which orders chronologically, text by code point).
 * Comparisons on numbers, booleans and strings are answered by the table's cells (migration 10: each scalar value
 * typed, in btree order), the others by the row's JSON; both give the same answer.
 */
import type { Statement } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Schema } from "effect"
import { escapeLike } from "../Database/Like.ts"
import { isUuid } from "../Ids.ts"
import {
  checkValue,
  type ColumnType,
  type FieldError,
  type MicroDbColumn,
  SYSTEM_COLUMNS,
  type SystemColumn
} from "./Columns.ts"

export const FilterOp = Schema.Literal(
  "eq",
  "neq",
  "gt",
  "gte",
  "lt",
  "lte",
  "contains",
  "starts_with",
  "in",
  "not_in",
  "is_null",
  "is_not_null"
)
export type FilterOp = typeof FilterOp.Type

export interface MicroDbFilter {
  readonly column: string
  readonly op: FilterOp
  readonly value?: unknown
}

export interface MicroDbSort {
  readonly column: string
  readonly direction: "asc" | "desc"
}

export const MAX_SORT_KEYS = 5
export const MAX_IN_VALUES = 500

type Fragment = Statement.Fragment
type Sql = PgClient.PgClient

const STRING_TYPES: ReadonlySet<ColumnType> = new Set(["text", "long_text", "url", "email", "select"])
const ORDERED_TYPES: ReadonlySet<ColumnType> = new Set([...STRING_TYPES, "number", "integer", "date", "datetime"])
const NUMERIC_TYPES: ReadonlySet<ColumnType> = new Set(["number", "integer"])

/**
 * How many characters of a string its cell keeps (migration 10 cuts at the same place). A value compared with a
 * shorter string compares as its cell does, so only filter values this long or longer go to the row's JSON.
 */
export const CELL_TEXT_CHARS = 200

/** Which of a cell's columns holds a column's values: `num` (numbers; booleans as 0 and 1) or `txt` (strings). */
export type CellKind = "num" | "txt"

const cellKindOf = (type: ColumnType): CellKind | undefined =>
  NUMERIC_TYPES.has(type) || type === "boolean"
    ? "num"
    : STRING_TYPES.has(type) || type === "date" || type === "datetime"
    ? "txt"
    : undefined

/** A checked value as its cell holds it, or undefined for a string longer than cells keep. */
const cellValue = (kind: CellKind, value: unknown): string | undefined => {
  if (kind === "num") return typeof value === "boolean" ? (value ? "1" : "0") : String(value)
  return String(value).length < CELL_TEXT_CHARS ? String(value) : undefined
}

const cellParameter = (sql: Sql, kind: CellKind, value: string): Fragment =>
  kind === "num" ? sql`${value}::numeric` : sql`${value}::text`

/**
 * One filter as SQL: its condition on the row's JSON (`r.data`), and when the column's cells answer it too (`eq`,
 * the ranges and `in` on a column with cells), the test on a cell's value (`c.num`, `c.txt`), found by the row's
 * seq: sorts walk and count through cells without reading rows.
 */
export interface Condition {
  readonly row: Fragment
  readonly cell?: { readonly slug: string; readonly kind: CellKind; readonly test: (value: Fragment) => Fragment }
}

/** One sort key: its expression on the row's JSON, and the column's cells when it has them. */
export interface SortKey {
  readonly expression: Fragment
  readonly direction: "asc" | "desc"
  readonly cell?: { readonly slug: string; readonly kind: CellKind }
}

/** Which ops each type has (docs/micro-db.md). */
const opsOf = (type: ColumnType | "id"): ReadonlySet<FilterOp> => {
  const ops = new Set<FilterOp>(["eq", "neq", "in", "not_in", "is_null", "is_not_null"])
  if (type === "id") return ops
  if (ORDERED_TYPES.has(type)) { for (const op of ["gt", "gte", "lt", "lte"] as const) ops.add(op) }
  if (STRING_TYPES.has(type)) ops.add("contains").add("starts_with")
  if (type === "multi_select") ops.add("contains")
  if (type === "json") {
    ops.delete("in")
    ops.delete("not_in")
    ops.add("contains")
  }
  return ops
}

/** A filter's or sort's column: a column of the table, or one of the fields every row has. */
type Target =
  | { readonly kind: "column"; readonly column: MicroDbColumn }
  | { readonly kind: "system"; readonly name: SystemColumn }

const targetOf = (columns: ReadonlyArray<MicroDbColumn>, slug: string): Target | undefined => {
  if ((SYSTEM_COLUMNS as ReadonlyArray<string>).includes(slug)) return { kind: "system", name: slug as SystemColumn }
  const column = columns.find((column) => column.slug === slug)
  return column === undefined ? undefined : { kind: "column", column }
}

const typeOf = (target: Target): ColumnType | "id" =>
  target.kind === "column" ? target.column.type : target.name === "id" ? "id" : "datetime"

/** A filter value as the column stores it (a datetime in UTC, say), or why it is not one. */
const valueFor = (target: Target, value: unknown): { ok: true; value: unknown } | { ok: false; message: string } => {
  if (target.kind === "system" && target.name === "id") {
    return typeof value === "string" && isUuid(value)
      ? { ok: true, value: value.toLowerCase() }
      : { ok: false, message: "an id must be a row's UUID" }
  }
  if (target.kind === "system") return checkValue({ type: "datetime", options: [] }, value)
  // contains on multi_select takes one option; the type's own check wants an array.
  return checkValue(target.column, value)
}

/** The SQL expression a column's values are compared and sorted by, typed like the column. */
const expressionOf = (sql: Sql, target: Target): Fragment => {
  if (target.kind === "system") return sql`r.${sql(target.name)}`
  const slug = target.column.slug
  if (NUMERIC_TYPES.has(target.column.type)) return sql`(r.data -> ${slug}::text)::numeric`
  if (target.column.type === "boolean") return sql`(r.data -> ${slug}::text)::boolean`
  return sql`(r.data ->> ${slug}::text) collate "C"`
}

/** A typed value as a bound parameter compared with `expressionOf`. */
const parameterOf = (sql: Sql, target: Target, value: unknown): Fragment => {
  if (target.kind === "system") {
    return target.name === "id"
      ? sql`${value as string}::uuid`
      : sql`${value as string}::timestamptz`
  }
  if (NUMERIC_TYPES.has(target.column.type)) return sql`${String(value)}::numeric`
  if (target.column.type === "boolean") return sql`${value as boolean}::boolean`
  return sql`${String(value)}::text`
}

/** A stored value equals `value`: containment, which the GIN index answers, for a column's scalar values. */
const equals = (sql: Sql, target: Target, value: unknown): Fragment => {
  if (target.kind === "system") return sql`${expressionOf(sql, target)} = ${parameterOf(sql, target, value)}`
  const slug = target.column.slug
  // Containment is subset matching for arrays and objects: whole multi_select and json values compare by equality.
  if (target.column.type === "multi_select" || target.column.type === "json") {
    return sql`r.data -> ${slug}::text = ${JSON.stringify(value)}::jsonb`
  }
  return sql`r.data @> ${JSON.stringify({ [slug]: value })}::jsonb`
}

const isMissing = (sql: Sql, target: Target): Fragment =>
  target.kind === "system" ? sql`false` : sql`r.data -> ${target.column.slug}::text is null`

/**
 * The filters as conditions (combined with AND), or the problems with them. Every problem is reported, each naming
 * the filter's index and column. `eq`, the ranges and `in` on a column with cells are conditions on its cell; the
 * other ops (and values longer than a cell keeps) read the row's JSON.
 */
export const compileFilters = (
  sql: Sql,
  columns: ReadonlyArray<MicroDbColumn>,
  filters: ReadonlyArray<MicroDbFilter>
): { readonly conditions: ReadonlyArray<Condition> } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  const conditions: Array<Condition> = []
  // The cell test of the filter at hand, when there is one: it goes with the filter's JSON condition.
  let cell: Condition["cell"]
  const onRow = (row: Fragment) => conditions.push(cell === undefined ? { row } : { row, cell })
  filters.forEach((filter, index) => {
    cell = undefined
    const fail = (message: string) => errors.push({ column: filter.column, message: `filter[${index}]: ${message}` })
    const target = targetOf(columns, filter.column)
    if (target === undefined) {
      return fail(
        `unknown column; the columns are: ${[...columns.map((column) => column.slug), ...SYSTEM_COLUMNS].join(", ")}`
      )
    }
    const type = typeOf(target)
    if (!opsOf(type).has(filter.op)) {
      return fail(`${filter.op} does not apply to a ${type} column; it has ${[...opsOf(type)].join(", ")}`)
    }
    const expression = expressionOf(sql, target)
    switch (filter.op) {
      case "is_null":
      case "is_not_null": {
        if (filter.value !== undefined && filter.value !== null) return fail(`${filter.op} takes no value`)
        return onRow(filter.op === "is_null" ? isMissing(sql, target) : sql`not (${isMissing(sql, target)})`)
      }
      case "in":
      case "not_in": {
        if (!Array.isArray(filter.value) || filter.value.length === 0 || filter.value.length > MAX_IN_VALUES) {
          return fail(`${filter.op} takes an array of 1-${MAX_IN_VALUES} values`)
        }
        const values: Array<unknown> = []
        for (const item of filter.value) {
          const checked = type === "multi_select"
            ? valueFor(target, [item])
            : valueFor(target, item)
          if (!checked.ok) return fail(checked.message)
          values.push(type === "multi_select" ? (checked.value as Array<unknown>)[0] : checked.value)
        }
        const kind = target.kind === "column" ? cellKindOf(type as ColumnType) : undefined
        const cellValues = kind === undefined ? [] : values.map((value) => cellValue(kind, value))
        if (filter.op === "in" && kind !== undefined && cellValues.every((value) => value !== undefined)) {
          const list = kind === "num"
            ? sql`${cellValues as Array<string>}::numeric[]`
            : sql`${cellValues as Array<string>}::text[]`
          cell = {
            slug: (target as { column: MicroDbColumn }).column.slug,
            kind,
            test: (value) => sql`${value} = any(${list})`
          }
        }
        const any = target.kind === "column" && type === "multi_select"
          ? sql`exists (select 1 from jsonb_array_elements_text(r.data -> ${target.column.slug}::text) e
              where e = any(${values as Array<string>}::text[]))`
          : target.kind === "column"
          ? sql`r.data -> ${target.column.slug}::text in (select jsonb_array_elements(${
            JSON.stringify(values)
          }::jsonb))`
          : target.name === "id"
          ? sql`r.id = any(${values as Array<string>}::uuid[])`
          : sql`${expression} = any(${values as Array<string>}::timestamptz[])`
        return onRow(filter.op === "in" ? any : sql`not coalesce(${any}, false)`)
      }
      default:
        break
    }
    if (filter.value === undefined || filter.value === null) return fail(`${filter.op} needs a value`)
    if (filter.op === "contains" && type === "json") {
      return onRow(
        sql`r.data -> ${(target as { column: MicroDbColumn }).column.slug}::text @> ${
          JSON.stringify(filter.value)
        }::jsonb`
      )
    }
    if (filter.op === "contains" || filter.op === "starts_with") {
      if (type === "multi_select") {
        const checked = valueFor(target, [filter.value])
        if (!checked.ok) return fail(checked.message)
        return onRow(equalsSubset(sql, target, checked.value))
      }
      if (typeof filter.value !== "string") return fail(`${filter.op} takes a string`)
      const pattern = filter.op === "contains" ? `%${escapeLike(filter.value)}%` : `${escapeLike(filter.value)}%`
      return onRow(sql`(r.data ->> ${(target as { column: MicroDbColumn }).column.slug}::text) ilike ${pattern}`)
    }
    const checked = valueFor(target, filter.value)
    if (!checked.ok) return fail(checked.message)
    const kind = target.kind === "column" ? cellKindOf(type as ColumnType) : undefined
    const stored = kind === undefined ? undefined : cellValue(kind, checked.value)
    if (kind !== undefined && stored !== undefined && filter.op !== "neq") {
      const parameter = cellParameter(sql, kind, stored)
      const op = { eq: sql`=`, gt: sql`>`, gte: sql`>=`, lt: sql`<`, lte: sql`<=` }[filter.op]
      cell = {
        slug: (target as { column: MicroDbColumn }).column.slug,
        kind,
        test: (value) => sql`${value} ${op} ${parameter}`
      }
    }
    switch (filter.op) {
      case "eq":
        return onRow(equals(sql, target, checked.value))
      case "neq":
        return onRow(sql`not coalesce(${equals(sql, target, checked.value)}, false)`)
      case "gt":
        return onRow(sql`${expression} > ${parameterOf(sql, target, checked.value)}`)
      case "gte":
        return onRow(sql`${expression} >= ${parameterOf(sql, target, checked.value)}`)
      case "lt":
        return onRow(sql`${expression} < ${parameterOf(sql, target, checked.value)}`)
      case "lte":
        return onRow(sql`${expression} <= ${parameterOf(sql, target, checked.value)}`)
    }
  })
  return errors.length > 0 ? { errors } : { conditions }
}

/** A multi_select value holds every option of `options` (containment: the GIN index answers it). */
const equalsSubset = (sql: Sql, target: Target, options: unknown): Fragment =>
  sql`r.data @> ${JSON.stringify({ [(target as { column: MicroDbColumn }).column.slug]: options })}::jsonb`

/** The sort keys (rows without a value last; ties, then, in insertion order), or the problems. */
export const compileSort = (
  sql: Sql,
  columns: ReadonlyArray<MicroDbColumn>,
  sorts: ReadonlyArray<MicroDbSort>
): { readonly keys: ReadonlyArray<SortKey> } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  const keys: Array<SortKey> = []
  if (sorts.length > MAX_SORT_KEYS) errors.push({ column: "sort", message: `at most ${MAX_SORT_KEYS} sort keys` })
  sorts.forEach((sort, index) => {
    const target = targetOf(columns, sort.column)
    if (target === undefined) {
      errors.push({ column: sort.column, message: `sort[${index}]: unknown column` })
      return
    }
    const kind = target.kind === "column" ? cellKindOf(target.column.type) : undefined
    keys.push({
      expression: expressionOf(sql, target),
      direction: sort.direction,
      ...(kind === undefined ? {} : { cell: { slug: (target as { column: MicroDbColumn }).column.slug, kind } })
    })
  })
  return errors.length > 0 ? { errors } : { keys }
}
