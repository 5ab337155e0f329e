/**
 * Micro DB columns: the twelve types, what a value of each is, column definitions, row validation and the
 * conversions a type change may make. Pure: no I/O. The rules are documented in docs/micro-db.md.
 */
import { Schema } from "effect"
import { FORBIDDEN_KEYS, utf8Bytes } from "../Content/Text.ts"

export const ColumnType = Schema.Literal(
  "text",
  "long_text",
  "number",
  "integer",
  "boolean",
  "date",
  "datetime",
  "select",
  "multi_select",
  "url",
  "email",
  "json"
)
export type ColumnType = typeof ColumnType.Type

/** A column as stored and returned: every field of MicroDbColumnDef filled in, plus its place. */
export class MicroDbColumn extends Schema.Class<MicroDbColumn>("MicroDbColumn")({
  name: Schema.String,
  slug: Schema.String,
  type: ColumnType,
  required: Schema.Boolean,
  unique: Schema.Boolean,
  default: Schema.Unknown,
  options: Schema.Array(Schema.String),
  description: Schema.NullOr(Schema.String),
  position: Schema.Int
}) {}

/** What an agent writes to define a column (create_micro_db_table, add_micro_db_column). */
export interface ColumnDef {
  readonly name: string
  readonly slug?: string | undefined
  readonly type: ColumnType
  readonly required?: boolean | undefined
  readonly unique?: boolean | undefined
  readonly default?: unknown
  readonly options?: ReadonlyArray<string> | undefined
  readonly description?: string | null | undefined
}

/** One thing wrong with a write: which column (or field), why, and for bulk writes which row. */
export interface FieldError {
  readonly column: string
  readonly message: string
  readonly row?: number
  readonly row_id?: string
}

export const TEXT_MAX_CHARS = 10_000
export const ROW_MAX_BYTES = 256 * 1024
export const COLUMN_NAME_MAX = 100
export const COLUMN_DESCRIPTION_MAX = 1_000
export const OPTIONS_MAX = 200
export const OPTION_MAX_CHARS = 100
export const MAX_COLUMNS_PER_TABLE = 100
export const MAX_TABLES_PER_DOCK = 100

/** The row fields every table has besides its columns; column slugs may not take these names. */
export const SYSTEM_COLUMNS = ["id", "created_at", "updated_at"] as const
export type SystemColumn = (typeof SYSTEM_COLUMNS)[number]

const COLUMN_SLUG = /^[a-z][a-z0-9_-]{0,63}$/
/**
 * `constructor` and `prototype` are refused like in front matter (FORBIDDEN_KEYS): a plain object inherits a
 * `constructor`, so `slug in row` would find a value that was never given (a required column never enforced).
 */
export const isColumnSlug = (slug: string) =>
  COLUMN_SLUG.test(slug) && !(SYSTEM_COLUMNS as ReadonlyArray<string>).includes(slug) && !FORBIDDEN_KEYS.has(slug)

/** The keys of row data that could reach an object's prototype (`__proto__`, `constructor`, `prototype`). */
export const forbiddenRowKeys = (data: object): ReadonlyArray<string> =>
  Object.keys(data).filter((key) => FORBIDDEN_KEYS.has(key))

const forbiddenKeyMessage = (keys: ReadonlyArray<string>) =>
  `${keys.map((key) => `"${key}"`).join(", ")} cannot be a key of row data (it could reach an object's prototype)`

/**
 * Row data as tools take it: a JSON object keyed by column slug. The forbidden keys are refused on the object
 * as parsed, before decoding copies it: a copy drops an own `__proto__` key silently (assigning it sets the
 * prototype instead), and the row would be written without telling the caller.
 */
export const RowDataInput = Schema.Unknown.pipe(
  Schema.filter((input) => {
    if (typeof input !== "object" || input === null) return true
    const forbidden = forbiddenRowKeys(input)
    return forbidden.length === 0 || forbiddenKeyMessage(forbidden)
  }),
  Schema.compose(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  // What clients see in tools/list: the object it decodes to.
  Schema.annotations({ jsonSchema: { type: "object" } })
)

/** A column slug from its name: "First name" → "first_name". */
export const columnSlugOf = (name: string): string => {
  const slug = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "_")
    .replace(/^[_0-9]+/, "").slice(0, 64).replace(/_+$/, "")
  return slug === "" ? "column" : slug
}

/** Types whose values can be told apart by equality in a way a unique rule means something. */
const UNIQUE_TYPES: ReadonlySet<ColumnType> = new Set([
  "text",
  "long_text",
  "number",
  "integer",
  "date",
  "datetime",
  "select",
  "url",
  "email"
])
export const hasOptions = (type: ColumnType) => type === "select" || type === "multi_select"

type Checked = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }
const valid = (value: unknown): Checked => ({ ok: true, value })
const invalid = (message: string): Checked => ({ ok: false, message })

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:?\d{2})?$/
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/

const isRealDate = (year: number, month: number, day: number) => {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false
  const date = new Date(Date.UTC(2000, month - 1, day))
  date.setUTCFullYear(year)
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/** `YYYY-MM-DD` of a real calendar day (years 0001-9999), or undefined. */
const parseDate = (text: string): string | undefined => {
  const match = DATE.exec(text)
  return match !== null && isRealDate(Number(match[1]), Number(match[2]), Number(match[3])) ? text : undefined
}

/** An ISO 8601 date and time (no offset means UTC) as UTC with milliseconds, or undefined. */
const parseDatetime = (text: string): string | undefined => {
  const match = DATETIME.exec(text)
  if (match === null) return undefined
  const [, year, month, day, hour, minute, second = "0", fraction = "0", zone = "Z"] = match
  if (!isRealDate(Number(year), Number(month), Number(day))) return undefined
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined
  const offset = /^[zZ]$/.test(zone) ? 0 : (zone.startsWith("-") ? -1 : 1) *
    (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)))
  if (Math.abs(offset) > 18 * 60) return undefined
  const millis = Math.round(Number(`0.${fraction}`) * 1000)
  const date = new Date(
    Date.UTC(2000, Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), millis)
  )
  date.setUTCFullYear(Number(year))
  date.setTime(date.getTime() - offset * 60_000)
  const utcYear = date.getUTCFullYear()
  if (utcYear < 1 || utcYear > 9999) return undefined
  // toISOString writes years beyond 9999 or before 0 with six digits and a sign; within range it is the plain form.
  return date.toISOString()
}

const isUrl = (text: string) => {
  if (text.length > 2048 || /\s/.test(text)) return false
  try {
    const url = new URL(text)
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== ""
  } catch {
    return false
  }
}

const typeName = (value: unknown) =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "an array"
    : typeof value === "object"
    ? "an object"
    : `a ${typeof value}`

/**
 * Is `value` a value of the column, and in what form is it stored? (datetimes in UTC, multi_select values in the
 * order of the options). Nothing is coerced: "5" is not a number.
 */
export const checkValue = (
  column: Pick<MicroDbColumn, "type" | "options">,
  value: unknown
): Checked => {
  switch (column.type) {
    case "text":
    case "long_text": {
      if (typeof value !== "string") return invalid(`expected a string, got ${typeName(value)}`)
      if (column.type === "text" && value.length > TEXT_MAX_CHARS) {
        return invalid(`text is at most ${TEXT_MAX_CHARS} characters (use long_text for more)`)
      }
      return valid(value)
    }
    case "number":
      return typeof value === "number" && Number.isFinite(value)
        ? valid(value)
        : invalid(`expected a number, got ${typeName(value)}`)
    case "integer":
      return typeof value === "number" && Number.isSafeInteger(value)
        ? valid(value)
        : invalid(
          typeof value === "number"
            ? `expected a whole number within ±2^53, got ${value}`
            : `expected an integer, got ${typeName(value)}`
        )
    case "boolean":
      return typeof value === "boolean" ? valid(value) : invalid(`expected true or false, got ${typeName(value)}`)
    case "date": {
      if (typeof value !== "string") return invalid(`expected a date string YYYY-MM-DD, got ${typeName(value)}`)
      const date = parseDate(value)
      return date === undefined ? invalid(`"${value.slice(0, 40)}" is not a date YYYY-MM-DD`) : valid(date)
    }
    case "datetime": {
      if (typeof value !== "string") return invalid(`expected an ISO 8601 date and time string, got ${typeName(value)}`)
      const datetime = parseDatetime(value)
      return datetime === undefined
        ? invalid(`"${value.slice(0, 40)}" is not an ISO 8601 date and time (2026-11-21T09:30:00Z)`)
        : valid(datetime)
    }
    case "select":
      if (typeof value !== "string") return invalid(`expected one of the options, got ${typeName(value)}`)
      return column.options.includes(value)
        ? valid(value)
        : invalid(`"${value.slice(0, 100)}" is not one of the options: ${column.options.join(", ")}`)
    case "multi_select": {
      if (!Array.isArray(value)) return invalid(`expected an array of options, got ${typeName(value)}`)
      const unknown = value.filter((item) => typeof item !== "string" || !column.options.includes(item))
      if (unknown.length > 0) {
        return invalid(
          `${JSON.stringify(unknown[0]).slice(0, 100)} is not one of the options: ${column.options.join(", ")}`
        )
      }
      if (new Set(value).size !== value.length) return invalid("an option is listed twice")
      return valid(column.options.filter((option) => value.includes(option)))
    }
    case "url":
      if (typeof value !== "string") return invalid(`expected a URL string, got ${typeName(value)}`)
      return isUrl(value) ? valid(value) : invalid(`"${value.slice(0, 100)}" is not an absolute http(s) URL`)
    case "email":
      if (typeof value !== "string") return invalid(`expected an email address, got ${typeName(value)}`)
      return value.length <= 320 && EMAIL.test(value)
        ? valid(value)
        : invalid(`"${value.slice(0, 100)}" is not an email address`)
    case "json":
      return valid(value)
  }
}

const textOf = (value: unknown) => typeof value === "string" ? value : JSON.stringify(value)

/**
 * A stored value under a column's new definition (update_micro_db_column): the value itself when it is valid
 * already, else the conversions docs/micro-db.md lists (text parsed as a number, a date as midnight UTC, …).
 */
export const convertValue = (value: unknown, to: Pick<MicroDbColumn, "type" | "options">): Checked => {
  const direct = checkValue(to, value)
  if (direct.ok) return direct
  const candidates: Array<unknown> = []
  switch (to.type) {
    case "text":
    case "long_text":
      candidates.push(textOf(value))
      break
    case "number":
    case "integer":
      if (typeof value === "string" && /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) {
        candidates.push(Number(value))
      }
      break
    case "boolean":
      if (value === "true" || value === "false") candidates.push(value === "true")
      break
    case "date":
      if (typeof value === "string") {
        const datetime = parseDatetime(value)
        if (datetime !== undefined) candidates.push(datetime.slice(0, 10))
      }
      break
    case "datetime":
      if (typeof value === "string" && parseDate(value) !== undefined) candidates.push(`${value}T00:00:00.000Z`)
      break
    case "select":
      if (Array.isArray(value) && value.length === 1) candidates.push(value[0])
      if (typeof value === "number" || typeof value === "boolean") candidates.push(String(value))
      break
    case "multi_select":
      if (typeof value === "string") candidates.push([value])
      break
    default:
      break
  }
  for (const candidate of candidates) {
    const converted = checkValue(to, candidate)
    if (converted.ok) return converted
  }
  return invalid(`${JSON.stringify(value).slice(0, 60)} cannot become ${valueNoun[to.type]}: ${direct.message}`)
}

/** What a value of each type is called in a sentence ("cannot become an integer"). */
const valueNoun: Readonly<Record<ColumnType, string>> = {
  text: "text",
  long_text: "long text",
  number: "a number",
  integer: "an integer",
  boolean: "a boolean",
  date: "a date",
  datetime: "a date and time",
  select: "one of the options",
  multi_select: "a list of options",
  url: "a URL",
  email: "an email address",
  json: "JSON"
}

/**
 * A column definition checked and filled in at `position`, or what is wrong with it. `taken` holds the slugs of
 * the table's other columns.
 */
export const defineColumn = (
  def: ColumnDef,
  position: number,
  taken: ReadonlyArray<string>
): { readonly column: MicroDbColumn } | { readonly errors: ReadonlyArray<FieldError> } => {
  const name = def.name.trim()
  const slug = (def.slug ?? columnSlugOf(name)).trim()
  const label = def.slug ?? (name || `#${position}`)
  const errors: Array<FieldError> = []
  const fail = (message: string) => errors.push({ column: label, message })
  if (name.length === 0 || name.length > COLUMN_NAME_MAX) fail(`name must be 1-${COLUMN_NAME_MAX} characters`)
  if (!isColumnSlug(slug)) {
    fail(
      (SYSTEM_COLUMNS as ReadonlyArray<string>).includes(slug) || FORBIDDEN_KEYS.has(slug)
        ? `slug "${slug}" is reserved (${[...SYSTEM_COLUMNS, ...FORBIDDEN_KEYS].join(", ")})`
        : "slug must be a lowercase letter followed by at most 63 lowercase letters, digits, _ or -"
    )
  } else if (taken.includes(slug)) fail(`the table already has a column "${slug}"`)
  if ((def.description ?? "").length > COLUMN_DESCRIPTION_MAX) {
    fail(`description is at most ${COLUMN_DESCRIPTION_MAX} characters`)
  }
  const options = def.options ?? []
  if (hasOptions(def.type)) {
    if (options.length === 0 || options.length > OPTIONS_MAX) {
      fail(`a ${def.type} column needs 1-${OPTIONS_MAX} options`)
    }
    if (options.some((option) => option.trim().length === 0 || option.length > OPTION_MAX_CHARS)) {
      fail(`options are non-empty strings of at most ${OPTION_MAX_CHARS} characters`)
    }
    if (new Set(options).size !== options.length) fail("options must be distinct")
  } else if (def.options !== undefined && def.options.length > 0) {
    fail(`only select and multi_select columns have options`)
  }
  if (def.unique === true && !UNIQUE_TYPES.has(def.type)) fail(`a ${def.type} column cannot be unique`)
  const column = new MicroDbColumn({
    name,
    slug,
    type: def.type,
    required: def.required ?? false,
    unique: def.unique ?? false,
    default: null,
    options: hasOptions(def.type) ? [...options] : [],
    description: def.description?.trim() || null,
    position
  })
  if (def.default !== undefined && def.default !== null && errors.length === 0) {
    const checked = checkValue(column, def.default)
    if (!checked.ok) fail(`default: ${checked.message}`)
    else return { column: new MicroDbColumn({ ...column, default: checked.value }) }
  }
  return errors.length > 0 ? { errors } : { column }
}

export type RowData = Readonly<Record<string, unknown>>

/**
 * A row's data checked against the columns: unknown keys, wrong types, missing required values and the row size.
 * `base` is the existing row for an update (its keys merge under `data`'s; null clears a key); a new row gets the
 * columns' defaults. Returns the data as stored (only keys with values) or what is wrong, one entry per field.
 */
export const checkRow = (
  columns: ReadonlyArray<MicroDbColumn>,
  data: RowData,
  base?: RowData
): { readonly data: Record<string, unknown>; readonly bytes: number } | {
  readonly errors: ReadonlyArray<FieldError>
} => {
  const errors: Array<FieldError> = []
  const bySlug = new Map(columns.map((column) => [column.slug, column]))
  const merged: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(data)) {
    const column = bySlug.get(key)
    if (FORBIDDEN_KEYS.has(key)) {
      errors.push({ column: key, message: forbiddenKeyMessage([key]) })
      continue
    }
    if (column === undefined) {
      errors.push({
        column: key,
        message: `unknown column; the columns are: ${[...bySlug.keys()].join(", ") || "(none)"}`
      })
      continue
    }
    if (value === null || value === undefined) {
      delete merged[key]
      continue
    }
    const checked = checkValue(column, value)
    if (checked.ok) merged[key] = checked.value
    else errors.push({ column: key, message: checked.message })
  }
  if (base === undefined) {
    for (const column of columns) {
      if (!(column.slug in merged) && column.default !== null && !(column.slug in data)) {
        merged[column.slug] = column.default
      }
    }
  }
  for (const column of columns) {
    if (column.required && !(column.slug in merged) && !errors.some((error) => error.column === column.slug)) {
      errors.push({ column: column.slug, message: "a value is required" })
    }
  }
  if (errors.length > 0) return { errors }
  const stored = Object.fromEntries(
    columns.filter((column) => column.slug in merged).map((column) => [column.slug, merged[column.slug]])
  )
  const bytes = utf8Bytes(JSON.stringify(stored))
  if (bytes > ROW_MAX_BYTES) {
    return {
      errors: [{ column: "data", message: `a row is at most ${ROW_MAX_BYTES} bytes of JSON; this one is ${bytes}` }]
    }
  }
  return { data: stored, bytes }
}
