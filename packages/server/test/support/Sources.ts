/** Sources made and archived through the operator's admin API, for the source tests over the wire. */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, fetchReply, postJson } from "./Http.ts"
import { TestServer } from "./TestServer.ts"

export interface SourceBody {
  readonly source_id: string
  readonly bucket_id: string
  readonly title: string
  readonly origin: string
  readonly media_type: string
  readonly size_bytes: number
  readonly archived: boolean
  readonly created_at: string
}

/** Every field of a source as lists show it (read_source adds `text`). */
export const SOURCE_KEYS = [
  "archived",
  "bucket_id",
  "created_at",
  "media_type",
  "origin",
  "size_bytes",
  "source_id",
  "title"
]

/** POST /admin/sources as given (the admin token unless other headers are given). */
export const postSource = (body: unknown, headers?: Record<string, string>) =>
  Effect.flatMap(
    TestServer,
    (server) => postJson(`${server.url}/admin/sources`, body, headers ?? bearer(server.adminToken))
  )

/** A source added to the Dock (id or owner/slug): plain text unless said otherwise. */
export const addSource = (
  dock: string,
  fields: { title?: string; origin?: string; media_type?: string; content?: string } = {}
) =>
  Effect.gen(function*() {
    const reply = yield* postSource({
      dock,
      origin: fields.origin ?? "notes.txt",
      media_type: fields.media_type ?? "text/plain",
      content: fields.content ?? "Some reference text.",
      ...(fields.title === undefined ? {} : { title: fields.title })
    })
    expect(reply.status, reply.text).toBe(201)
    return reply.json as SourceBody
  })

/** POST /admin/sources/{id}/archive */
export const archiveSource = (id: string, headers?: Record<string, string>) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      postJson(
        `${server.url}/admin/sources/${encodeURIComponent(id)}/archive`,
        {},
        headers ?? bearer(server.adminToken)
      )
  )

/** GET /admin/sources?dock= */
export const listSourcesAdmin = (dock: string, headers?: Record<string, string>) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      fetchReply(`${server.url}/admin/sources?dock=${encodeURIComponent(dock)}`, {
        headers: headers ?? bearer(server.adminToken)
      })
  )
