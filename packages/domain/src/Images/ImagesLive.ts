/**
 * The Images rules: a push is checked (Dock, permission, fields, base64, size) before any decoding, processed by
 * the ImageProcessor, then stored in one transaction: the Dock's content size reserved, the bytes put in the
 * ObjectStore, the record and the activity entry written.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import { Activity } from "../Activity/Activity.ts"
import { ObjectStore } from "../Blobs/ObjectStore.ts"
import { transactional } from "../Database/Transactional.ts"
import type { DockTarget } from "../Docks/Dock.ts"
import { Docks, type ResolvedDock } from "../Docks/Docks.ts"
import { NotFound, ValidationError } from "../Errors.ts"
import { ImageId, isUuid } from "../Ids.ts"
import { artifactBaseUrl } from "../Pages/Part.ts"
import { contentDock } from "../Parts/PartRow.ts"
import { Parts } from "../Parts/Parts.ts"
import { checkWrite } from "../Policy.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { traced } from "../Spans.ts"
import { WriteRules } from "../WriteRules.ts"
import {
  ALT_TEXT_MAX,
  CAPTION_MAX,
  CONTENT_TYPE,
  decodeImageBase64,
  EXTENSION,
  FILENAME_MAX,
  imageKey,
  imagePath,
  markdownSnippet,
  PushedImage
} from "./Image.ts"
import { ImageProcessor } from "./ImageProcessor.ts"
import { type ImageFile, type ImageInput, Images, type ImageSummary } from "./Images.ts"
import { makeImagesRepo } from "./ImagesRepo.ts"

const fieldProblem = (field: string, message: string) =>
  new ValidationError({ message: `${field} ${message}`, details: { field } })

const checkFields = (input: ImageInput) =>
  Effect.gen(function*() {
    const filename = input.filename.trim()
    if (filename === "") return yield* fieldProblem("filename", "must not be empty")
    if (filename.length > FILENAME_MAX) return yield* fieldProblem("filename", `is at most ${FILENAME_MAX} characters`)
    const altText = input.altText.trim()
    if (altText.length > ALT_TEXT_MAX) return yield* fieldProblem("alt_text", `is at most ${ALT_TEXT_MAX} characters`)
    const caption = input.caption?.trim() || null
    if (caption !== null && caption.length > CAPTION_MAX) {
      return yield* fieldProblem("caption", `is at most ${CAPTION_MAX} characters`)
    }
    return { filename, altText, caption }
  })

export const ImagesLive = Layer.effect(
  Images,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* makeImagesRepo
    const docks = yield* Docks
    const activity = yield* Activity
    const writeRules = yield* WriteRules
    const parts = yield* Parts
    const processor = yield* ImageProcessor
    const store = yield* ObjectStore
    const baseUrl = yield* artifactBaseUrl

    const push = traced("Images.push")(function*(target: DockTarget, input: ImageInput) {
      const principal = yield* CurrentPrincipal
      const resolved = yield* docks.forWrite(target)
      const { access } = resolved
      yield* checkWrite(principal, access)
      const fields = yield* checkFields(input)
      const bytes = yield* decodeImageBase64(input.imageBase64)
      // Counted before the decoder runs: the write rate also bounds how much decoding a token can ask for.
      yield* writeRules.admitWrite(principal)
      const image = yield* processor.process(bytes)
      const id = ImageId.make(crypto.randomUUID())
      const key = imageKey(access.dockId, id, image.format)
      yield* transactional(
        sql,
        Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          yield* parts.reserve(contentDock(resolved), { artifacts: 0, bytes: image.data.byteLength })
          yield* store.put(key, image.data, { dockId: access.dockId, contentType: CONTENT_TYPE[image.format] })
          yield* repo.insert({
            id,
            dockId: access.dockId,
            blobKey: key,
            format: image.format,
            width: image.width,
            height: image.height,
            sizeBytes: image.data.byteLength,
            filename: fields.filename,
            altText: fields.altText,
            caption: fields.caption,
            userId: principal.userId,
            tokenId: principal.tokenId,
            agentLabel: principal.agentLabel,
            createdAt: now
          })
          yield* activity.record({
            dockId: access.dockId,
            action: "image.created",
            subjectType: "image",
            subjectId: id,
            details: {
              format: image.format,
              width: image.width,
              height: image.height,
              size_bytes: image.data.byteLength
            }
          })
        })
      )
      const url = `${baseUrl}${imagePath(id, image.format)}`
      return new PushedImage({
        workspace_id: access.dockId,
        image_id: id,
        public_url: url,
        url,
        storage_path: key,
        format: image.format,
        width: image.width,
        height: image.height,
        markdown: markdownSnippet(fields.altText, url, fields.caption)
      })
    })

    const view = traced("Images.view")(function*(ref: { readonly id: string; readonly extension: string }) {
      // Built only when it is the answer (an error captures its stack): most views find their image.
      const missing = () => new NotFound({ message: "No such image, or it is not visible to you" })
      if (!isUuid(ref.id)) return yield* missing()
      const row = yield* repo.findById(ImageId.make(ref.id.toLowerCase()))
      if (row === undefined || EXTENSION[row.format] !== ref.extension) return yield* missing()
      const { access } = yield* docks.byId(row.dock_id).pipe(Effect.mapError(() => missing()))
      const stored = yield* store.get(row.blob_key)
      if (Option.isNone(stored)) return yield* missing()
      return {
        id: row.id,
        format: row.format,
        contentType: CONTENT_TYPE[row.format],
        filename: row.filename,
        data: stored.value.data,
        public: access.visibility === "public"
      } satisfies ImageFile
    })

    const list = traced("Images.list")(function*(resolved: ResolvedDock, limit: number) {
      const rows = yield* repo.listInDock(resolved.dock.id, limit)
      return rows.map((row): ImageSummary => ({
        id: row.id,
        format: row.format,
        filename: row.filename,
        alt_text: row.alt_text,
        width: row.width,
        height: row.height,
        size_bytes: row.size_bytes,
        path: imagePath(row.id, row.format),
        created_at: row.created_at.toISOString()
      }))
    })

    return { push, view, list }
  })
)
