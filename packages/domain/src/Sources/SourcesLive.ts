/**
 * The Sources rules. An add extracts the text in a content worker, counts its bytes against the Dock's content
 * and records the activity, in one transaction.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import { Activity } from "../Activity/Activity.ts"
import { ContentWorkers, refusalError } from "../Content/ContentWorkers.ts"
import { utf8Bytes } from "../Content/Text.ts"
import { transactional } from "../Database/Transactional.ts"
import type { DockTarget } from "../Docks/Dock.ts"
import { Docks } from "../Docks/Docks.ts"
import { NotFound, TierLimitExceeded } from "../Errors.ts"
import { isUuid, type SourceId } from "../Ids.ts"
import { Parts } from "../Parts/Parts.ts"
import { CurrentPrincipal, type Principal } from "../Principal.ts"
import { traced } from "../Spans.ts"
import { type AddSourceRequest, SOURCES_PER_DOCK_MAX } from "./Source.ts"
import { sourceMediaType, sourceOrigin, sourceTitle } from "./SourceFields.ts"
import { Sources } from "./Sources.ts"
import { makeSourcesRepo } from "./SourcesRepo.ts"

/** Who the activity log names for operator actions: no user, no token. */
export const operatorPrincipal: Principal = {
  userId: null,
  username: null,
  tokenId: null,
  scopes: [],
  allowedBucketIds: null,
  sandbox: false,
  agentLabel: "operator"
}

export const SourcesLive = Layer.effect(
  Sources,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* makeSourcesRepo
    const docks = yield* Docks
    const activity = yield* Activity
    const parts = yield* Parts
    const workers = yield* ContentWorkers

    const list = traced("Sources.list")(function*(target: DockTarget) {
      const { access, dock } = yield* docks.forRead(target)
      return { dock, sources: yield* repo.listInDock(access.dockId, false) }
    })

    const read = traced("Sources.read")(function*(target: DockTarget, sourceId: string) {
      const { access, dock } = yield* docks.forRead(target)
      const id = sourceId.trim()
      // Another Dock's source, an archived one and an unknown id all read the same.
      const source = isUuid(id) ? yield* repo.findInDock(access.dockId, id.toLowerCase() as SourceId) : undefined
      if (source === undefined) {
        return yield* new NotFound({
          message: `No source "${id.slice(0, 100)}" in this Dock`,
          details: { field: "source_id" }
        })
      }
      return { dock, source }
    })

    const add = traced("Sources.add")(function*(input: AddSourceRequest) {
      const dock = yield* docks.forOperator(input.dock)
      const mediaType = yield* sourceMediaType(input.media_type)
      const origin = yield* sourceOrigin(input.origin)
      // In a content worker under its deadline (5 MiB of HTML holds a thread for a second or more).
      const outcome = yield* workers.run("sourceText", { mediaType, content: input.content })
      if (outcome._tag === "Refused") return yield* refusalError(outcome.refusal)
      const extracted = outcome.extracted
      const title = yield* sourceTitle(input.title, extracted.title, origin)
      return yield* transactional(
        sql,
        Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          // Writers of one Dock take turns (as page saves do), so the count below is exact under bursts.
          const locked = yield* parts.lockDock(dock.id)
          if (!locked) return yield* new NotFound({ message: `No Dock "${input.dock}"`, details: { field: "dock" } })
          const listed = yield* repo.countListed(dock.id)
          if (listed >= SOURCES_PER_DOCK_MAX) {
            return yield* new TierLimitExceeded({
              message: `A Dock lists at most ${SOURCES_PER_DOCK_MAX} sources; archive some first`,
              details: { limit: SOURCES_PER_DOCK_MAX, used: listed }
            })
          }
          // The stored text counts against the Dock's content (a sandbox's 10 MB, the plan's 100 MiB); a source is
          // not an artifact.
          yield* parts.reserve(dock.id, { artifacts: 0, bytes: utf8Bytes(extracted.text) })
          const source = yield* repo.insert({ dockId: dock.id, title, origin, mediaType, text: extracted.text, now })
          yield* activity.record({
            dockId: dock.id,
            action: "source.added",
            subjectType: "source",
            subjectId: source.source_id,
            details: { title, media_type: mediaType, size_bytes: source.size_bytes }
          })
          return source
        })
      ).pipe(Effect.provideService(CurrentPrincipal, operatorPrincipal))
    })

    const archive = traced("Sources.archive")(function*(sourceId: string) {
      const id = sourceId.trim()
      const missing = () =>
        new NotFound({ message: `No source "${id.slice(0, 100)}"`, details: { field: "source_id" } })
      if (!isUuid(id)) return yield* missing()
      return yield* transactional(
        sql,
        Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          const archived = yield* repo.archive(id.toLowerCase() as SourceId, now)
          if (archived === undefined) {
            const existing = yield* repo.findById(id.toLowerCase() as SourceId)
            return existing === undefined ? yield* missing() : existing
          }
          // The text stays stored (and counted): archiving hides a source, it does not delete it.
          yield* activity.record({
            dockId: archived.bucket_id,
            action: "source.archived",
            subjectType: "source",
            subjectId: archived.source_id
          })
          return archived
        })
      ).pipe(Effect.provideService(CurrentPrincipal, operatorPrincipal))
    })

    const listAll = traced("Sources.listAll")(function*(dockName: string) {
      const dock = yield* docks.forOperator(dockName)
      return yield* repo.listInDock(dock.id, true)
    })

    return { list, read, add, archive, listAll }
  })
)
