/**
 * The Micro DB's rules (docs/micro-db.md). Every write is one transaction that first locks what it changes (the Dock for a new table, the shell for a
 * snapshot, the table for rows and schema, always in that order), so unique columns, the row cap and snapshots hold
 * under concurrent writers.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Layer } from "effect"
import { Activity } from "../Activity/Activity.ts"
import { utf8Bytes } from "../Content/Text.ts"
import { transactional } from "../Database/Transactional.ts"
import type { DockTarget } from "../Docks/Dock.ts"
import { Docks } from "../Docks/Docks.ts"
import { Conflict, NotFound, TierLimitExceeded, ValidationError } from "../Errors.ts"
import type { DockId, RowId, UserId } from "../Ids.ts"
import { Limits } from "../Limits.ts"
import { artifactBaseUrl, newPublicSlug, toPart } from "../Pages/Part.ts"
import { authorOf, type ContentDock, contentDock, type PartFields, type PartRow } from "../Parts/PartRow.ts"
import { Parts } from "../Parts/Parts.ts"
import { checkPublish, checkWrite, type DockAccess, roleOf, setsPublishing } from "../Policy.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { isSlug, SLUG_MAX, slugify } from "../Slug.ts"
import { traced } from "../Spans.ts"
import { WriteRules } from "../WriteRules.ts"
import {
  checkRow,
  type ColumnDef,
  convertValue,
  defineColumn,
  type FieldError,
  hasOptions,
  MAX_COLUMNS_PER_TABLE,
  MAX_TABLES_PER_DOCK,
  MicroDbColumn,
  type RowData
} from "./Columns.ts"
import { MicroDb } from "./MicroDb.ts"
import { makeMicroDbRepo, type RowActor, type StoredRow, type TableRow } from "./MicroDbRepo.ts"
import { compileFilters, compileSort } from "./Query.ts"
import {
  LISTED_INVALID_ROWS,
  MicroDbRow,
  MicroDbSnapshot,
  MicroDbTable,
  type RowsQuery,
  SHELL_SUMMARY_MAX,
  SHELL_TITLE_MAX,
  type ShellInput,
  SNAPSHOT_FORMAT,
  TABLE_DESCRIPTION_MAX,
  TABLE_NAME_MAX,
  type TableInput,
  type TablePatch
} from "./Table.ts"

/** The Dock a Micro DB write changes: the caller's access to it and its content side (the caps). */
type WriteTarget = DockAccess & ContentDock

/**
 * A table and a row as answers show them, built without validating again (`true`, as `toDock`): the rows were
 * decoded by their schemas, and every answer is encoded by its tool's or route's schema, which checks them. A
 * page of 50 rows validated one by one cost a query ~5 ms of the server's CPU.
 */
const toTable = (row: TableRow, rowCount = row.row_count) =>
  new MicroDbTable({
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    position: row.position,
    columns: row.columns,
    row_count: rowCount,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  }, true)

const toRow = (row: StoredRow) =>
  new MicroDbRow({
    id: row.id,
    data: row.data,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  }, true)

const invalid = (message: string, errors: ReadonlyArray<FieldError>, extra: Record<string, unknown> = {}) =>
  new ValidationError({
    message: `${message}: ${errors.map((error) => `${error.column}: ${error.message}`).slice(0, 3).join("; ")}`,
    details: { errors, ...extra }
  })

const checkText = (field: string, value: string | null | undefined, max: number, required: boolean) => {
  const trimmed = value?.trim()
  if (trimmed === undefined || trimmed === "") {
    return required ? [{ column: field, message: "must not be empty" }] : []
  }
  return trimmed.length > max ? [{ column: field, message: `is at most ${max} characters` }] : []
}

/** What search finds the Micro DB by: its tables' names and descriptions and their columns' names. */
const describeTables = (tables: ReadonlyArray<TableRow>) =>
  tables.map((table) =>
    [
      table.name,
      table.description ?? "",
      ...table.columns.map((column) => `${column.name} ${column.description ?? ""}`)
    ]
      .join("\n")
  ).join("\n\n")

export const MicroDbLive = Layer.effect(
  MicroDb,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const repo = yield* makeMicroDbRepo
    const parts = yield* Parts
    const docks = yield* Docks
    const activity = yield* Activity
    const writeRules = yield* WriteRules
    const limits = yield* Limits
    const baseUrl = yield* artifactBaseUrl
    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => transactional(sql, effect)

    /**
     * The named Dock, readable by the caller (a private shell is visible to members only), and the table `ref` names
     * in it when given: one round trip, the resolver's statement (MicroDbRepo.readAlong).
     */
    const readable = (target: DockTarget, ref?: string) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const { dock, along } = yield* docks.namedAlong(target, repo.readAlong(ref))
        if (along.shellVisibility === "private" && roleOf(principal, dock.access) === null) {
          return yield* new NotFound({ message: "This Dock has no Micro DB you can read" })
        }
        return { access: dock.access, table: along.table }
      })

    /** `readable`, with the table `ref` names, which must exist. */
    const readableTable = (target: DockTarget, ref: string) =>
      Effect.flatMap(
        readable(target, ref),
        ({ table }) => table === undefined ? missingTable(ref) : Effect.succeed(table)
      )

    /** The named Dock, writable by the caller (owner or editor, token scope and Dock restriction), one write counted. */
    const writable = (target: DockTarget) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const resolved = yield* docks.named(target)
        yield* checkWrite(principal, resolved.access)
        yield* writeRules.admitWrite(principal)
        return { ...resolved.access, ...contentDock(resolved) }
      })

    /** One activity entry about a Micro DB subject: its page (the shell), a table or a row. */
    const record = (
      dockId: DockId,
      action: string,
      subject: { readonly type: "page" | "micro_db_table" | "micro_db_row"; readonly id: string },
      details?: Record<string, unknown>
    ) => activity.record({ dockId, action, subjectType: subject.type, subjectId: subject.id, details })

    /** The caller as the row change log records them. */
    const actorIn = (dockId: DockId) =>
      Effect.map(CurrentPrincipal, (principal): RowActor => ({
        dockId,
        tokenId: principal.tokenId,
        userId: principal.userId
      }))

    const missingTable = (ref: string) =>
      Effect.fail(new NotFound({ message: `No table "${ref.slice(0, 100)}" in this Dock's Micro DB` }))

    const tableIn = (dockId: DockId, ref: string, lock = false) =>
      Effect.flatMap(
        repo.findTable(dockId, ref, lock),
        (table) => table === undefined ? missingTable(ref) : Effect.succeed(table)
      )

    const rowIn = (table: TableRow, rowId: string, lock = false) =>
      Effect.flatMap(repo.findRow(table.id, rowId, lock), (row) =>
        row === undefined
          ? Effect.fail(new NotFound({ message: `No row ${rowId.slice(0, 40)} in table "${table.slug}"` }))
          : Effect.succeed(row))

    const columnIn = (table: TableRow, slug: string) => {
      const column = table.columns.find((column) => column.slug === slug)
      return column === undefined
        ? Effect.fail(new NotFound({ message: `No column "${slug.slice(0, 100)}" in table "${table.slug}"` }))
        : Effect.succeed(column)
    }

    const shellMissing = () =>
      new NotFound({ message: "This Dock has no Micro DB yet: create a table or push_micro_db" })

    // ---- the shell and snapshots ----

    /** A slug for a new shell: the one asked for (refused when taken), else from the title, made free. */
    const shellSlug = (dockId: DockId, input: ShellInput, except: string | null) =>
      Effect.gen(function*() {
        const taken = (slug: string) =>
          Effect.map(parts.findInDock(dockId, slug), (row) => row !== undefined && row.id !== except)
        if (input.slug !== undefined && input.slug !== null) {
          const slug = input.slug.trim()
          if (!isSlug(slug)) {
            return yield* invalid("Invalid slug", [{
              column: "slug",
              message: `must be 1-${SLUG_MAX} lowercase letters, digits and single hyphens`
            }])
          }
          if (yield* taken(slug)) {
            return yield* invalid("Slug taken", [{
              column: "slug",
              message: `another page of this Dock has the slug "${slug}"`
            }])
          }
          return slug
        }
        const base = slugify(input.title ?? "", 56) || "micro-db"
        let slug = base
        for (let n = 2; yield* taken(slug); n++) slug = `${base}-${n}`
        return slug
      })

    /** The snapshot document of the Dock's Micro DB as it is now (docs/micro-db.md). */
    const snapshotDocument = (dockId: DockId, at: Date) =>
      Effect.gen(function*() {
        yield* repo.holdTables(dockId)
        const tables = yield* repo.tables(dockId)
        const rows = yield* repo.rowsOfDock(dockId)
        const byTable = new Map<string, Array<StoredRow>>()
        for (const row of rows) byTable.set(row.table_id, [...(byTable.get(row.table_id) ?? []), row])
        const content = JSON.stringify({
          format: SNAPSHOT_FORMAT,
          bucket_id: dockId,
          created_at: at.toISOString(),
          tables: tables.map((table) => {
            const own = byTable.get(table.id) ?? []
            return { ...toTable(table, own.length), rows: own.map(toRow) }
          })
        })
        return { content, tables, rows: rows.length }
      })

    /** Creates the Dock's shell when it has none (inside the caller's transaction, which now holds the Dock). */
    const ensureShell = (dock: ContentDock, input: ShellInput) =>
      Effect.gen(function*() {
        const dockId = dock.id
        const principal = yield* CurrentPrincipal
        yield* parts.lockDock(dockId)
        const existing = yield* parts.findKind(dockId, "micro_db", true)
        if (existing !== undefined) return { shell: existing, created: false }
        const at = yield* now
        const slug = yield* shellSlug(dockId, input, null)
        const document = yield* snapshotDocument(dockId, at)
        const fields: PartFields = {
          slug,
          title: input.title?.trim() || "Micro DB",
          summary: input.summary?.trim() ?? "",
          contentType: "json",
          pageKind: "micro_db",
          content: document.content,
          bodyText: describeTables(document.tables),
          frontMatter: {},
          tags: [],
          entities: [],
          concepts: [],
          sourceIds: [],
          links: [],
          claimCount: 0,
          sizeBytes: utf8Bytes(document.content)
        }
        // The shell is one artifact of the Dock; its versions (snapshots) are stored history and count by their bytes.
        const shell = yield* parts.create(dock, {
          ownerId: principal.userId as UserId,
          publicSlug: newPublicSlug(slug),
          fields,
          author: authorOf(principal),
          visibility: input.visibility,
          now: at
        })
        yield* record(dockId, "micro_db.created", { type: "page", id: shell.id }, { slug })
        return { shell, created: true }
      })

    /**
     * A new version of the shell holding the whole Micro DB; the oldest snapshots beyond retention go. Returns the
     * snapshot and the change in stored bytes (its own less the pruned ones), for the caller to reserve with the
     * rest of its change: a table's delete releases its rows in the same reservation, so a full Dock can still
     * delete.
     */
    const takeSnapshot = (dockId: DockId, shell: PartRow) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const at = yield* now
        const document = yield* snapshotDocument(dockId, at)
        const version = shell.version + 1
        const fields: PartFields = {
          ...(yield* parts.fieldsOf(shell.id)),
          content: document.content,
          bodyText: describeTables(document.tables),
          sizeBytes: utf8Bytes(document.content)
        }
        yield* parts.newVersion(shell.id, version, fields, authorOf(principal), "snapshot", at)
        const pruned = yield* parts.pruneVersions(shell.id, "snapshot", limits.planSnapshotRetention)
        yield* record(dockId, "micro_db.snapshot", { type: "page", id: shell.id }, {
          version,
          tables: document.tables.length,
          rows: document.rows,
          pruned: pruned.versions
        })
        const snapshot = new MicroDbSnapshot({
          part_id: shell.id,
          version,
          created_at: at.toISOString(),
          tables: document.tables.length,
          rows: document.rows
        })
        return { snapshot, bytes: fields.sizeBytes - pruned.bytes }
      })

    /** The shell, locked for a snapshot (first in the lock order), or not_found. */
    const lockedShell = (dockId: DockId) =>
      Effect.flatMap(
        parts.findKind(dockId, "micro_db", true),
        (shell) => shell === undefined ? Effect.fail(shellMissing()) : Effect.succeed(shell)
      )

    /** The shell, then the table (the lock order), for a change that snapshots first; no shell means no table. */
    const lockedForSnapshot = (dockId: DockId, ref: string) =>
      Effect.gen(function*() {
        const shell = yield* parts.findKind(dockId, "micro_db", true)
        const table = yield* tableIn(dockId, ref, true)
        return { shell: shell!, table }
      })

    const push = traced("MicroDb.push")(function*(target: DockTarget, input: ShellInput) {
      const principal = yield* CurrentPrincipal
      const resolved = yield* docks.forWrite(target)
      const { access } = resolved
      yield* checkWrite(principal, access)
      if (setsPublishing(input)) yield* checkPublish(principal, access, { visibility: input.visibility })
      const problems = [
        ...checkText("title", input.title, SHELL_TITLE_MAX, false),
        ...checkText("summary", input.summary, SHELL_SUMMARY_MAX, false)
      ]
      if (problems.length > 0) return yield* invalid("Invalid Micro DB fields", problems)
      yield* writeRules.admitWrite(principal)
      // Answers are read inside the writing transaction: after commit another write (or a delete) may have come.
      const written = yield* transaction(Effect.gen(function*() {
        const { created, shell } = yield* ensureShell(contentDock(resolved), input)
        if (created) return shell
        const at = yield* now
        const updated = yield* parts.updateShell(shell.id, {
          title: input.title === undefined ? shell.title : input.title?.trim() || "Micro DB",
          slug: input.slug === undefined ? shell.slug! : yield* shellSlug(access.dockId, input, shell.id),
          summary: input.summary === undefined ? shell.summary : input.summary?.trim() ?? "",
          visibility: input.visibility === undefined ? shell.visibility : input.visibility
        }, at)
        yield* record(access.dockId, "micro_db.updated", { type: "page", id: shell.id })
        return updated
      }))
      return toPart(written, baseUrl)
    })

    const snapshot = traced("MicroDb.snapshot")(function*(target: DockTarget) {
      const access = yield* writable(target)
      return yield* transaction(Effect.gen(function*() {
        const { bytes, snapshot } = yield* takeSnapshot(access.dockId, yield* lockedShell(access.dockId))
        yield* parts.reserve(access, { artifacts: 0, bytes })
        return snapshot
      }))
    })

    // ---- tables ----

    const tables = traced("MicroDb.tables")(function*(target: DockTarget) {
      const { access } = yield* readable(target)
      return (yield* repo.tables(access.dockId)).map((table) => toTable(table))
    })

    const table = traced("MicroDb.table")(function*(target: DockTarget, ref: string) {
      return toTable(yield* readableTable(target, ref))
    })

    const createTable = traced("MicroDb.createTable")(function*(target: DockTarget, input: TableInput) {
      const access = yield* writable(target)
      const name = input.name.trim()
      const slug = input.slug?.trim() ?? (slugify(name, SLUG_MAX) || "table")
      const errors: Array<FieldError> = [
        ...checkText("name", name, TABLE_NAME_MAX, true),
        ...checkText("description", input.description, TABLE_DESCRIPTION_MAX, false)
      ]
      if (!isSlug(slug)) {
        errors.push({ column: "slug", message: `must be 1-${SLUG_MAX} lowercase letters, digits and single hyphens` })
      }
      if (input.columns.length > MAX_COLUMNS_PER_TABLE) {
        errors.push({ column: "columns", message: `a table has at most ${MAX_COLUMNS_PER_TABLE} columns` })
      }
      const columns: Array<MicroDbColumn> = []
      input.columns.forEach((def, index) => {
        const defined = defineColumn(def, index, columns.map((column) => column.slug))
        if ("errors" in defined) {
          errors.push(...defined.errors.map((error) => ({ ...error, message: `columns[${index}]: ${error.message}` })))
        } else columns.push(defined.column)
      })
      if (errors.length > 0) return yield* invalid("Invalid table", errors)
      const created = yield* transaction(Effect.gen(function*() {
        yield* ensureShell(access, {})
        const existing = yield* repo.tables(access.dockId)
        if (existing.length >= MAX_TABLES_PER_DOCK) {
          return yield* new TierLimitExceeded({
            message: `A Micro DB holds at most ${MAX_TABLES_PER_DOCK} tables`,
            details: { max_tables: MAX_TABLES_PER_DOCK }
          })
        }
        if (existing.some((table) => table.slug === slug)) {
          return yield* invalid("Slug taken", [{
            column: "slug",
            message: `the Micro DB already has a table "${slug}"`
          }])
        }
        const at = yield* now
        const id = yield* repo.insertTable(access.dockId, {
          name,
          slug,
          description: input.description?.trim() || null,
          columns
        }, at)
        yield* record(access.dockId, "micro_db.table.created", { type: "micro_db_table", id }, { slug })
        return (yield* repo.findTable(access.dockId, id))!
      }))
      return toTable(created)
    })

    const updateTable = traced("MicroDb.updateTable")(function*(target: DockTarget, ref: string, patch: TablePatch) {
      const access = yield* writable(target)
      const errors = [
        ...(patch.name === undefined ? [] : checkText("name", patch.name, TABLE_NAME_MAX, true)),
        ...checkText("description", patch.description, TABLE_DESCRIPTION_MAX, false),
        ...(patch.position === undefined || (Number.isInteger(patch.position) && patch.position >= 0)
          ? []
          : [{ column: "position", message: "must be an integer of 0 or more" }])
      ]
      if (errors.length > 0) return yield* invalid("Invalid table fields", errors)
      const updated = yield* transaction(Effect.gen(function*() {
        const table = yield* tableIn(access.dockId, ref, true)
        const at = yield* now
        yield* repo.updateTable(table.id, {
          name: patch.name?.trim(),
          description: patch.description === undefined ? undefined : patch.description?.trim() || null
        }, at)
        if (patch.position !== undefined) yield* repo.moveTable(access.dockId, table.id, patch.position)
        yield* record(access.dockId, "micro_db.table.updated", { type: "micro_db_table", id: table.id }, {
          slug: table.slug
        })
        return (yield* repo.findTable(access.dockId, table.id))!
      }))
      return toTable(updated)
    })

    const deleteTable = traced("MicroDb.deleteTable")(function*(target: DockTarget, ref: string) {
      const access = yield* writable(target)
      return yield* transaction(Effect.gen(function*() {
        const { shell, table } = yield* lockedForSnapshot(access.dockId, ref)
        const { bytes: snapshotBytes, snapshot } = yield* takeSnapshot(access.dockId, shell)
        const bytes = yield* repo.deleteTable(access.dockId, table.id)
        yield* parts.reserve(access, { artifacts: 0, bytes: snapshotBytes - bytes })
        yield* record(access.dockId, "micro_db.table.deleted", { type: "micro_db_table", id: table.id }, {
          slug: table.slug,
          rows: table.row_count,
          snapshot_version: snapshot.version
        })
        return snapshot
      }))
    })

    // ---- columns ----

    /** Saves a table's new column list and the rows rewritten for it, counting the change in bytes. */
    const saveColumns = (
      access: WriteTarget,
      table: TableRow,
      columns: ReadonlyArray<MicroDbColumn>,
      bytes: number,
      action: string,
      details: Record<string, unknown>
    ) =>
      Effect.gen(function*() {
        yield* parts.reserve(access, { artifacts: 0, bytes })
        yield* repo.updateTable(table.id, {
          columns: columns.map((column, position) => new MicroDbColumn({ ...column, position }))
        }, yield* now)
        yield* record(access.dockId, action, { type: "micro_db_table", id: table.id }, {
          table: table.slug,
          ...details
        })
      })

    const addColumn = traced("MicroDb.addColumn")(function*(target: DockTarget, ref: string, def: ColumnDef) {
      const access = yield* writable(target)
      return yield* transaction(Effect.gen(function*() {
        const table = yield* tableIn(access.dockId, ref, true)
        if (table.columns.length >= MAX_COLUMNS_PER_TABLE) {
          return yield* invalid("Too many columns", [{
            column: "column_def",
            message: `a table has at most ${MAX_COLUMNS_PER_TABLE} columns`
          }])
        }
        const defined = defineColumn(def, table.columns.length, table.columns.map((column) => column.slug))
        if ("errors" in defined) return yield* invalid("Invalid column", defined.errors)
        const column = defined.column
        if (column.required && column.default === null && table.row_count > 0) {
          return yield* invalid("Invalid column", [{
            column: column.slug,
            message: `a required column needs a default: the table has ${table.row_count} rows without a value`
          }])
        }
        if (column.unique && column.default !== null && table.row_count > 1) {
          return yield* invalid("Invalid column", [{
            column: column.slug,
            message: "a unique column's default would give every existing row the same value"
          }])
        }
        const bytes = column.default === null ? 0 : yield* repo.fillColumn(table.id, column.slug, column.default)
        yield* saveColumns(access, table, [...table.columns, column], bytes, "micro_db.column.added", {
          column: column.slug
        })
        return column
      }))
    })

    const updateColumn = traced("MicroDb.updateColumn")(function*(
      target: DockTarget,
      ref: string,
      slug: string,
      patch: Partial<ColumnDef>
    ) {
      const access = yield* writable(target)
      return yield* transaction(Effect.gen(function*() {
        const table = yield* tableIn(access.dockId, ref, true)
        const old = yield* columnIn(table, slug)
        const defined = defineColumn(
          {
            name: patch.name ?? old.name,
            slug: patch.slug ?? old.slug,
            type: patch.type ?? old.type,
            required: patch.required ?? old.required,
            unique: patch.unique ?? old.unique,
            // A type change drops a default unless a new one is given: the old one may not be a value of the new type.
            default: "default" in patch
              ? patch.default
              : patch.type === undefined || patch.type === old.type
              ? old.default
              : null,
            // Options carry over while the type has options (select ↔ multi_select); other types have none.
            options: patch.options ?? (hasOptions(patch.type ?? old.type) ? old.options : undefined),
            description: "description" in patch ? patch.description : old.description
          },
          old.position,
          table.columns.filter((column) => column.slug !== old.slug).map((column) => column.slug)
        )
        if ("errors" in defined) return yield* invalid("Invalid column", defined.errors)
        const column = defined.column
        const rewrite = column.slug !== old.slug || column.type !== old.type ||
          column.options.join("\u0000") !== old.options.join("\u0000")
        const check = rewrite || (column.required && !old.required) || (column.unique && !old.unique)
        let bytes = 0
        if (check && table.row_count > 0) {
          const rows = yield* repo.allRows(table.id)
          const problems: Array<FieldError> = []
          const changed: Array<{ id: RowId; data: Record<string, unknown> }> = []
          const seen = new Map<string, string>()
          for (const row of rows) {
            const value = row.data[old.slug]
            let next = value
            if (value !== undefined && value !== null) {
              const converted = convertValue(value, column)
              if (!converted.ok) {
                problems.push({ row_id: row.id, column: old.slug, message: converted.message })
                continue
              }
              next = converted.value
              if (column.unique) {
                const key = JSON.stringify(next)
                const other = seen.get(key)
                if (other !== undefined) {
                  problems.push({ row_id: row.id, column: column.slug, message: `has the same value as row ${other}` })
                }
                seen.set(key, row.id)
              }
            } else if (column.required) {
              problems.push({
                row_id: row.id,
                column: column.slug,
                message: "has no value, and the column would be required"
              })
            }
            if (rewrite && value !== undefined && value !== null) {
              const { [old.slug]: _dropped, ...rest } = row.data
              changed.push({ id: row.id, data: { ...rest, [column.slug]: next } })
            }
          }
          if (problems.length > 0) {
            return yield* invalid(
              problems.length === 1
                ? "1 row does not fit the changed column"
                : `${problems.length} rows do not fit the changed column`,
              problems.slice(0, LISTED_INVALID_ROWS),
              { total_invalid: problems.length }
            )
          }
          bytes = yield* repo.rewriteRows(table.id, changed)
        }
        yield* saveColumns(
          access,
          table,
          table.columns.map((existing) => existing.slug === old.slug ? column : existing),
          bytes,
          "micro_db.column.updated",
          { column: old.slug, ...(column.slug === old.slug ? {} : { renamed_to: column.slug }) }
        )
        // A type change that dropped the old default says so (issue 18): inserts no longer fill it in.
        const warnings = column.type !== old.type && old.default !== null && !("default" in patch)
          ? [
            `The column's default (${JSON.stringify(old.default)}) was dropped because its type changed from ` +
            `${old.type} to ${column.type}; set a new one with patch.default`
          ]
          : []
        return { column, warnings }
      }))
    })

    const deleteColumn = traced("MicroDb.deleteColumn")(function*(target: DockTarget, ref: string, slug: string) {
      const access = yield* writable(target)
      return yield* transaction(Effect.gen(function*() {
        const { shell, table } = yield* lockedForSnapshot(access.dockId, ref)
        const column = yield* columnIn(table, slug)
        const { bytes: snapshotBytes, snapshot } = yield* takeSnapshot(access.dockId, shell)
        const bytes = yield* repo.dropColumnData(table.id, column.slug)
        yield* saveColumns(
          access,
          table,
          table.columns.filter((existing) => existing.slug !== column.slug),
          snapshotBytes + bytes,
          "micro_db.column.deleted",
          { column: column.slug, snapshot_version: snapshot.version }
        )
        return snapshot
      }))
    })

    // ---- rows ----

    /** Unique columns' values: none used twice in `rows` nor by another row of the table. */
    const uniqueProblems = (
      table: TableRow,
      rows: ReadonlyArray<{ readonly data: Record<string, unknown>; readonly keys: ReadonlyArray<string> }>,
      except: RowId | null
    ) =>
      Effect.gen(function*() {
        const problems: Array<FieldError> = []
        for (const column of table.columns.filter((column) => column.unique)) {
          const firstAt = new Map<string, number>()
          const values: Array<unknown> = []
          rows.forEach((row, index) => {
            const value = row.data[column.slug]
            if (value === undefined || !row.keys.includes(column.slug)) return
            const key = JSON.stringify(value)
            const first = firstAt.get(key)
            if (first !== undefined) {
              problems.push({
                row: index,
                column: column.slug,
                message: `${key.slice(0, 100)} is also in row ${first} of this write`
              })
              return
            }
            firstAt.set(key, index)
            values.push(value)
          })
          for (const taken of yield* repo.valuesTaken(table.id, column.slug, values, except)) {
            const index = firstAt.get(JSON.stringify(taken.value))!
            problems.push({
              row: index,
              column: column.slug,
              message: `${JSON.stringify(taken.value).slice(0, 100)} is already used by row ${taken.id}`
            })
          }
        }
        return problems.sort((a, b) => (a.row ?? 0) - (b.row ?? 0))
      })

    const insertRows = traced("MicroDb.insertRows")(
      function*(target: DockTarget, ref: string, input: ReadonlyArray<RowData>) {
        const access = yield* writable(target)
        if (input.length === 0) {
          return yield* invalid("Nothing to insert", [{ column: "rows", message: "must hold at least one row" }])
        }
        if (input.length > limits.planMaxBulkRows) {
          return yield* new TierLimitExceeded({
            message: `One insert writes at most ${limits.planMaxBulkRows} rows; this one has ${input.length}`,
            details: { max_rows_per_insert: limits.planMaxBulkRows, rows: input.length }
          })
        }
        return yield* transaction(Effect.gen(function*() {
          const table = yield* tableIn(access.dockId, ref, true)
          const problems: Array<FieldError> = []
          const rows: Array<{ data: Record<string, unknown>; keys: ReadonlyArray<string> }> = []
          input.forEach((data, index) => {
            const checked = checkRow(table.columns, data)
            if ("errors" in checked) problems.push(...checked.errors.map((error) => ({ row: index, ...error })))
            rows.push({
              data: "errors" in checked ? {} : checked.data,
              keys: "errors" in checked ? [] : Object.keys(checked.data)
            })
          })
          problems.push(...(yield* uniqueProblems(table, rows, null)))
          if (problems.length > 0) {
            return yield* invalid(
              input.length === 1
                ? "Invalid row"
                : `${
                  new Set(problems.map((problem) => problem.row)).size
                } of ${input.length} rows are invalid; nothing was written`,
              problems.sort((a, b) => (a.row ?? 0) - (b.row ?? 0))
            )
          }
          if (table.row_count + rows.length > limits.planMaxRowsPerTable) {
            return yield* new TierLimitExceeded({
              message: `A Micro DB table on the free plan holds at most ${limits.planMaxRowsPerTable} rows`,
              details: { max_rows_per_table: limits.planMaxRowsPerTable, rows: table.row_count, adding: rows.length }
            })
          }
          const inserted = yield* repo.insertRows(
            table.id,
            rows.map((row) => row.data),
            yield* now,
            yield* actorIn(access.dockId)
          )
          yield* parts.reserve(access, {
            artifacts: 0,
            bytes: inserted.reduce((sum, row) => sum + row.size_bytes, 0)
          })
          yield* repo.changeRowCount(table.id, inserted.length)
          yield* record(access.dockId, "micro_db.rows.inserted", { type: "micro_db_table", id: table.id }, {
            table: table.slug,
            rows: inserted.length
          })
          return inserted.map(toRow)
        }))
      }
    )

    /**
     * A failed row precondition (checked on the locked row, before anything is written): the row's current
     * version and, in place of a diff (rows keep no history), the row as it is now.
     */
    const staleRow = (row: StoredRow, baseVersion: number) =>
      new Conflict({
        message: `Row ${row.id} is at version ${row.version}, not base_version ${baseVersion}: someone changed it ` +
          "since you read it. Nothing was written; details.row is the row as it is now",
        details: { current_version: row.version, base_version: baseVersion, row: toRow(row) }
      })

    const updateRow = traced("MicroDb.updateRow")(
      function*(target: DockTarget, ref: string, rowId: string, data: RowData, baseVersion?: number) {
        const access = yield* writable(target)
        return yield* transaction(Effect.gen(function*() {
          const table = yield* tableIn(access.dockId, ref, true)
          const row = yield* rowIn(table, rowId, true)
          if (baseVersion !== undefined && row.version !== baseVersion) return yield* staleRow(row, baseVersion)
          const checked = checkRow(table.columns, data, row.data)
          if ("errors" in checked) return yield* invalid("Invalid row", checked.errors)
          const problems = yield* uniqueProblems(table, [{ data: checked.data, keys: Object.keys(data) }], row.id)
          if (problems.length > 0) {
            return yield* invalid(
              "Invalid row",
              problems.map(({ row: _row, ...problem }) => problem)
            )
          }
          const updated = yield* repo.updateRow(row.id, checked.data, yield* now, yield* actorIn(access.dockId))
          yield* parts.reserve(access, { artifacts: 0, bytes: updated.size_bytes - row.size_bytes })
          yield* record(access.dockId, "micro_db.row.updated", { type: "micro_db_row", id: row.id }, {
            table: table.slug
          })
          return toRow(updated)
        }))
      }
    )

    const deleteRow = traced("MicroDb.deleteRow")(function*(
      target: DockTarget,
      ref: string,
      rowId: string,
      baseVersion?: number
    ) {
      const access = yield* writable(target)
      yield* transaction(Effect.gen(function*() {
        const table = yield* tableIn(access.dockId, ref, true)
        const row = yield* rowIn(table, rowId, true)
        if (baseVersion !== undefined && row.version !== baseVersion) return yield* staleRow(row, baseVersion)
        yield* repo.deleteRow(row.id, yield* now, yield* actorIn(access.dockId))
        yield* repo.changeRowCount(table.id, -1)
        yield* parts.reserve(access, { artifacts: 0, bytes: -row.size_bytes })
        yield* record(access.dockId, "micro_db.row.deleted", { type: "micro_db_row", id: row.id }, {
          table: table.slug
        })
      }))
    })

    const row = traced("MicroDb.row")(function*(target: DockTarget, ref: string, rowId: string) {
      return toRow(yield* rowIn(yield* readableTable(target, ref), rowId))
    })

    const query = traced("MicroDb.query")(function*(target: DockTarget, ref: string, query: RowsQuery) {
      const table = yield* readableTable(target, ref)
      const filters = compileFilters(pg, table.columns, query.filter ?? [])
      const sort = compileSort(pg, table.columns, query.sort ?? [])
      const problems = [...("errors" in filters ? filters.errors : []), ...("errors" in sort ? sort.errors : [])]
      if ("errors" in filters || "errors" in sort) return yield* invalid("Invalid query", problems)
      // Without a filter the table's kept count is the total; with one, the matches up to the page's end are
      // numbered, which is all of them when the page comes back short. A full page leaves the total out: counting
      // the matches past it would read every one of them (docs/decisions.md "No count past the page, each Dock from
      // its own index").
      const { inPage, rows } = yield* repo.query(table.id, { conditions: filters.conditions, keys: sort.keys }, query)
      const total = filters.conditions.length === 0
        ? table.row_count
        : inPage < query.offset + query.limit
        ? inPage
        : undefined
      return { rows: rows.map(toRow), ...(total === undefined ? {} : { total }) }
    })

    return {
      push,
      tables,
      table,
      query,
      row,
      createTable,
      updateTable,
      deleteTable,
      addColumn,
      updateColumn,
      deleteColumn,
      insertRows,
      updateRow,
      deleteRow,
      snapshot
    }
  })
)
