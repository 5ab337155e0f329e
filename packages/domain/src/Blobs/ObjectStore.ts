/**
 * The ObjectStore port: large binaries (images) by key, like an S3 bucket. The default implementation keeps them
 * in PostgreSQL (`blobs`, bytea): it works with any number of instances, is backed up with the data, and joins the
 * caller's transaction, so an object exists exactly when the record that names it does. An S3-compatible store can
 * implement the same port later; keys start with `docks/<dock_id>/`, so a Dock's objects can be deleted by prefix.
 *
 * Failures of the store are defects (like SqlError in repositories): callers have nothing to decide about them.
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { DockId } from "../Ids.ts"
import { traced } from "../Spans.ts"

export interface StoredObject {
  readonly data: Uint8Array
  readonly contentType: string
}

export class ObjectStore extends Context.Tag("@dock/domain/ObjectStore")<ObjectStore, {
  /** Stores (or replaces) the bytes under the key; the object belongs to the Dock and is deleted with it. */
  readonly put: (
    key: string,
    data: Uint8Array,
    meta: { readonly dockId: DockId; readonly contentType: string }
  ) => Effect.Effect<void>
  readonly get: (key: string) => Effect.Effect<Option.Option<StoredObject>>
  readonly delete: (key: string) => Effect.Effect<void>
}>() {}

/** `blobs` rows, deleted by `on delete cascade` with their Dock. */
export const PostgresObjectStore = Layer.effect(
  ObjectStore,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient

    const put = traced("ObjectStore.put")(function*(
      key: string,
      data: Uint8Array,
      meta: { readonly dockId: DockId; readonly contentType: string }
    ) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      yield* sql`insert into blobs (key, dock_id, content_type, size_bytes, data, created_at)
        values (${key}, ${meta.dockId}, ${meta.contentType}, ${bytes.byteLength}, ${bytes}, ${now})
        on conflict (key) do update set dock_id = excluded.dock_id, content_type = excluded.content_type,
          size_bytes = excluded.size_bytes, data = excluded.data`.pipe(Effect.orDie)
    })

    const get = traced("ObjectStore.get")(function*(key: string) {
      const rows = yield* sql<{ data: Uint8Array; content_type: string }>`select data, content_type from blobs
        where key = ${key}`.pipe(Effect.orDie)
      const row = rows[0]
      return row === undefined ? Option.none() : Option.some({ data: row.data, contentType: row.content_type })
    })

    const remove = traced("ObjectStore.delete")(function*(key: string) {
      yield* sql`delete from blobs where key = ${key}`.pipe(Effect.orDie)
    })

    return { put, get, delete: remove }
  })
)
