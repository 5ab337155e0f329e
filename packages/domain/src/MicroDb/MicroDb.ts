/**
 * The Micro DB port: one Micro DB per Dock, its typed tables, their rows, queries and snapshots (docs/micro-db.md).
 * Schemas in Table.ts; rules in MicroDbLive.ts; SQL in MicroDbRepo.ts (tables and rows) and through Parts (the
 * shell and its snapshots).
 */
import { Context, type Effect } from "effect"
import type { DockTarget } from "../Docks/Dock.ts"
import type {
  BadRequest,
  Conflict,
  NotFound,
  PermissionDenied,
  RateLimited,
  TierLimitExceeded,
  Unauthorized,
  ValidationError
} from "../Errors.ts"
import type { Part } from "../Pages/Part.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { ColumnDef, MicroDbColumn, RowData } from "./Columns.ts"
import type {
  MicroDbRow,
  MicroDbSnapshot,
  MicroDbTable,
  RowsQuery,
  ShellInput,
  TableInput,
  TablePatch
} from "./Table.ts"

type ReadError = NotFound | BadRequest
type WriteError =
  | NotFound
  | BadRequest
  | Unauthorized
  | PermissionDenied
  | RateLimited
  | ValidationError
  | TierLimitExceeded
type Read<A> = Effect.Effect<A, ReadError, CurrentPrincipal>
type Write<A> = Effect.Effect<A, WriteError, CurrentPrincipal>

export class MicroDb extends Context.Tag("@dock/domain/MicroDb")<MicroDb, {
  /** push_micro_db: creates the shell of the Dock named (else the default Dock) or updates its fields. */
  readonly push: (target: DockTarget, input: ShellInput) => Write<Part>
  readonly tables: (target: DockTarget) => Read<ReadonlyArray<MicroDbTable>>
  readonly table: (target: DockTarget, table: string) => Read<MicroDbTable>
  readonly query: (
    target: DockTarget,
    table: string,
    query: RowsQuery
  ) => Effect.Effect<
    { readonly rows: ReadonlyArray<MicroDbRow>; readonly total?: number },
    ReadError | ValidationError,
    CurrentPrincipal
  >
  readonly row: (target: DockTarget, table: string, rowId: string) => Read<MicroDbRow>
  readonly createTable: (target: DockTarget, input: TableInput) => Write<MicroDbTable>
  readonly updateTable: (target: DockTarget, table: string, patch: TablePatch) => Write<MicroDbTable>
  readonly deleteTable: (target: DockTarget, table: string) => Write<MicroDbSnapshot>
  readonly addColumn: (target: DockTarget, table: string, def: ColumnDef) => Write<MicroDbColumn>
  readonly updateColumn: (
    target: DockTarget,
    table: string,
    column: string,
    patch: Partial<ColumnDef>
  ) => Write<{ readonly column: MicroDbColumn; readonly warnings: ReadonlyArray<string> }>
  readonly deleteColumn: (target: DockTarget, table: string, column: string) => Write<MicroDbSnapshot>
  /** All rows or none; validation errors name each failing row by its index. */
  readonly insertRows: (
    target: DockTarget,
    table: string,
    rows: ReadonlyArray<RowData>
  ) => Write<ReadonlyArray<MicroDbRow>>
  /**
   * Raises the row's version. With `baseVersion` the row must be at that version (checked on the locked row),
   * else Conflict (details.current_version, base_version and the current `row`) and nothing written.
   */
  readonly updateRow: (
    target: DockTarget,
    table: string,
    rowId: string,
    data: RowData,
    baseVersion?: number
  ) => Effect.Effect<MicroDbRow, WriteError | Conflict, CurrentPrincipal>
  /** With `baseVersion`, as updateRow: a row at another version is not deleted (Conflict). */
  readonly deleteRow: (
    target: DockTarget,
    table: string,
    rowId: string,
    baseVersion?: number
  ) => Effect.Effect<void, WriteError | Conflict, CurrentPrincipal>
  readonly snapshot: (target: DockTarget) => Write<MicroDbSnapshot>
}>() {}
