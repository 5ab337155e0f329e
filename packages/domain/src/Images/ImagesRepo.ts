/** Image records: SQL in, typed rows out. SqlError is a defect here. */
import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import type { DockId, ImageId, TokenId, UserId } from "../Ids.ts"
import type { ImageFormat } from "./Image.ts"

export interface ImageRow {
  readonly id: ImageId
  readonly dock_id: DockId
  readonly blob_key: string
  readonly format: ImageFormat
  readonly width: number
  readonly height: number
  readonly size_bytes: number
  readonly filename: string
  readonly alt_text: string
  readonly caption: string | null
}

export interface NewImage {
  readonly id: ImageId
  readonly dockId: DockId
  readonly blobKey: string
  readonly format: ImageFormat
  readonly width: number
  readonly height: number
  readonly sizeBytes: number
  readonly filename: string
  readonly altText: string
  readonly caption: string | null
  readonly userId: UserId | null
  readonly tokenId: TokenId | null
  readonly agentLabel: string | null
  readonly createdAt: Date
}

export const makeImagesRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  const insert = (image: NewImage) =>
    sql`insert into images (id, dock_id, blob_key, format, width, height, size_bytes, filename, alt_text, caption,
        user_id, token_id, agent_label, created_at)
      values (${image.id}, ${image.dockId}, ${image.blobKey}, ${image.format}, ${image.width}, ${image.height},
        ${image.sizeBytes}, ${image.filename}, ${image.altText}, ${image.caption}, ${image.userId}, ${image.tokenId},
        ${image.agentLabel}, ${image.createdAt})`.pipe(Effect.asVoid, Effect.orDie)

  /** The record by id, whatever Dock it is in: the caller checks that the Dock is readable. */
  const findById = (id: ImageId) =>
    sql<ImageRow>`select id, dock_id, blob_key, format, width, height, size_bytes, filename, alt_text, caption
      from images where id = ${id}`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  /** A Dock's images, newest first: the web app's Dock view (the caller has resolved the Dock for its reader). */
  const listInDock = (dockId: DockId, limit: number) =>
    sql<
      ImageRow & { readonly created_at: Date }
    >`select id, dock_id, blob_key, format, width, height, size_bytes, filename, alt_text, caption, created_at
      from images where dock_id = ${dockId} order by created_at desc, id limit ${limit}`.pipe(Effect.orDie)

  return { insert, findById, listInDock } as const
})
