/**
 * The Micro DB shell's artifact page (`/a/<public_slug>` of a Dock's micro_db page): its live tables as HTML tables,
 * each under its name, with column headers and the first rows (a note says how many more there are and how to read
 * them), read as the reader (the anonymous public on /a/), so a private shell stays a 404 and only what the
 * Micro DB tools would show that reader appears. Every name and value is escaped here; nothing is markup.
 */
import {
  escapeHtml,
  MicroDb,
  type MicroDbColumn,
  type MicroDbRow,
  type MicroDbTable,
  type PageView
} from "@dock/domain"
import { Effect } from "effect"

/** Rows shown per table; the rest are counted in a note. */
export const MICRO_DB_PAGE_ROWS = 100
/** Tables shown; the rest are named in a note. */
const MICRO_DB_PAGE_TABLES = 50
/** A cell's text longer than this is cut, with an ellipsis. */
const CELL_MAX_CHARS = 300

/** A cell's value as text (JSON for what is not a string), cut with an ellipsis past CELL_MAX_CHARS; not escaped. */
export const cellText = (value: unknown): string => {
  if (value === null || value === undefined) return ""
  const text = typeof value === "string" ? value : JSON.stringify(value)
  return text.length > CELL_MAX_CHARS ? `${text.slice(0, CELL_MAX_CHARS)}…` : text
}

const rowsNote = (shown: number, total: number) =>
  total === 0
    ? "No rows yet."
    : shown < total
    ? `Showing the first ${shown} of ${total} rows; query_micro_db_rows reads the rest.`
    : `${total} ${total === 1 ? "row" : "rows"}.`

/** A table's columns in their order. */
export const columnsInOrder = (table: MicroDbTable): ReadonlyArray<MicroDbColumn> =>
  [...table.columns].sort((a, b) => a.position - b.position)

const tableHtml = (table: MicroDbTable, rows: ReadonlyArray<MicroDbRow>) => {
  const columns = columnsInOrder(table)
  const head = columns.map((column) => `<th scope="col">${escapeHtml(column.name)}</th>`).join("")
  const body = rows.map((row) =>
    `<tr>${columns.map((column) => `<td>${escapeHtml(cellText(row.data[column.slug]))}</td>`).join("")}</tr>`
  ).join("\n")
  return [
    `<section>`,
    `<h2>${escapeHtml(table.name)}</h2>`,
    table.description === null || table.description === "" ? "" : `<p>${escapeHtml(table.description)}</p>`,
    columns.length === 0
      ? `<p>This table has no columns yet.</p>`
      : `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`,
    `<p><small>${escapeHtml(rowsNote(rows.length, table.row_count))}</small></p>`,
    `</section>`
  ].filter((line) => line !== "").join("\n")
}

/** The page's body: its title, summary and live tables. */
export const microDbBody = (view: PageView) =>
  Effect.gen(function*() {
    const microDb = yield* MicroDb
    const target = { bucket: view.part.bucket_id! }
    const tables = yield* microDb.tables(target)
    const shown = tables.slice(0, MICRO_DB_PAGE_TABLES)
    const sections = yield* Effect.forEach(shown, (table) =>
      Effect.map(
        microDb.query(target, table.id, { limit: MICRO_DB_PAGE_ROWS, offset: 0 }),
        ({ rows }) => tableHtml(table, rows)
      ))
    const summary = view.part.summary?.trim() ?? ""
    return [
      `<h1>${escapeHtml(view.part.title ?? "Micro DB")}</h1>`,
      summary === "" ? "" : `<p>${escapeHtml(summary)}</p>`,
      tables.length === 0 ? `<p>This Micro DB has no tables yet.</p>` : "",
      ...sections,
      tables.length > shown.length
        ? `<p><small>${
          tables.length - shown.length
        } more tables are not shown; list_micro_db_tables lists them.</small></p>`
        : ""
    ].filter((line) => line !== "").join("\n")
  })
