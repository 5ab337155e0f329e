/**
 * Source rows: SQL in, typed rows out. Every lookup a reader makes is scoped by the resolved Dock
 * (`where dock_id = … and id = …`). SqlError is a defect here; absence is undefined.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"
import { DockId, SourceId } from "../Ids.ts"
import { Source, SourceWithText } from "./Source.ts"

const SourceRow = Schema.Struct({
  id: SourceId,
  dock_id: DockId,
  title: Schema.String,
  origin: Schema.String,
  media_type: Schema.String,
  size_bytes: Schema.Int,
  archived_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})
type SourceRow = typeof SourceRow.Type

const TextRow = Schema.Struct({ ...SourceRow.fields, body_text: Schema.String })

export const toSource = (row: SourceRow): Source =>
  new Source({
    source_id: row.id,
    bucket_id: row.dock_id,
    title: row.title,
    origin: row.origin,
    media_type: row.media_type,
    size_bytes: row.size_bytes,
    archived: row.archived_at !== null,
    created_at: row.created_at.toISOString()
  })

export interface NewSourceRow {
  readonly dockId: DockId
  readonly title: string
  readonly origin: string
  readonly mediaType: string
  readonly text: string
  readonly now: Date
}

export const makeSourcesRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  // octet_length reads the stored size from the value's header: no text is read for a list.
  const columns = sql`id, dock_id, title, origin, media_type, octet_length(body_text)::int as size_bytes, archived_at,
    created_at`

  /** Oldest first (insertion order within one instant); archived ones only when asked. */
  const listInDock = (dockId: DockId, includeArchived: boolean) =>
    sql`select ${columns} from sources where dock_id = ${dockId}
      ${includeArchived ? sql`` : sql`and archived_at is null`}
      order by created_at, id`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(SourceRow))),
      Effect.map((rows) => rows.map(toSource)),
      Effect.orDie
    )

  /** A source of this Dock that is not archived, with its text. */
  const findInDock = (dockId: DockId, id: SourceId) =>
    sql`select ${columns}, body_text from sources
      where dock_id = ${dockId} and id = ${id} and archived_at is null`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(TextRow))),
      Effect.map((rows) => {
        const row = rows[0]
        return row === undefined ? undefined : new SourceWithText({ ...toSource(row), text: row.body_text })
      }),
      Effect.orDie
    )

  const countListed = (dockId: DockId) =>
    sql<{ n: number }>`select count(*)::int as n from sources where dock_id = ${dockId} and archived_at is null`.pipe(
      Effect.map((rows) => rows[0]?.n ?? 0),
      Effect.orDie
    )

  const insert = (source: NewSourceRow) =>
    sql`insert into sources (dock_id, title, origin, media_type, body_text, created_at)
      values (${source.dockId}, ${source.title}, ${source.origin}, ${source.mediaType}, ${source.text}, ${source.now})
      returning ${columns}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(SourceRow))),
      Effect.map((rows) => toSource(rows[0]!)),
      Effect.orDie
    )

  /** The source (archived or not) with this id, in whatever Dock: the operator's lookups. */
  const findById = (id: SourceId) =>
    sql`select ${columns} from sources where id = ${id}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(SourceRow))),
      Effect.map((rows) => rows[0] === undefined ? undefined : toSource(rows[0])),
      Effect.orDie
    )

  /** Archives a source that is not archived yet; undefined when there is no such source. */
  const archive = (id: SourceId, now: Date) =>
    sql`update sources set archived_at = ${now} where id = ${id} and archived_at is null returning ${columns}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(SourceRow))),
      Effect.map((rows) => rows[0] === undefined ? undefined : toSource(rows[0])),
      Effect.orDie
    )

  return { listInDock, findInDock, findById, countListed, insert, archive } as const
})
