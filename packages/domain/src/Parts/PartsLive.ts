/** The Parts port over PostgreSQL: the caps' arithmetic here, every statement in PartsRepo. */
import { Effect, Layer } from "effect"
import { countLines } from "../Content/LineDiff.ts"
import { TierLimitExceeded } from "../Errors.ts"
import type { DockId, UserId } from "../Ids.ts"
import { Limits } from "../Limits.ts"
import { spanned, traced } from "../Spans.ts"
import type { ContentChange, ContentDock } from "./PartRow.ts"
import { Parts } from "./Parts.ts"
import { makePartsRepo } from "./PartsRepo.ts"

export const PartsLive = Layer.effect(
  Parts,
  Effect.gen(function*() {
    const repo = yield* makePartsRepo
    const limits = yield* Limits

    const reserve = traced("Parts.reserve")(function*(target: ContentDock | DockId, change: ContentChange) {
      const dock = typeof target === "string" ? { id: target, sandbox: yield* repo.sandboxOf(target) } : target
      const sandbox = dock.sandbox
      const maxArtifacts = sandbox
        ? Math.min(limits.sandboxMaxArtifacts, limits.planMaxArtifactsPerDock)
        : limits.planMaxArtifactsPerDock
      const maxBytes = sandbox ? Math.min(limits.sandboxMaxBytes, limits.planMaxDockBytes) : limits.planMaxDockBytes
      if (yield* repo.addUsage(dock.id, change, { artifacts: maxArtifacts, bytes: maxBytes })) return
      const used = yield* repo.usage(dock.id)
      const what = used.artifacts + change.artifacts > maxArtifacts
        ? `${maxArtifacts} artifacts`
        : `${maxBytes} bytes of content`
      return yield* new TierLimitExceeded({
        message: `${sandbox ? "An anonymous sandbox" : "A Dock on the free plan"} holds at most ${what}`,
        details: { max_artifacts: maxArtifacts, max_bytes: maxBytes, used, sandbox }
      })
    })

    /** A user's standalone artifacts count as one Dock for the plan caps; their user's lock makes them exact. */
    const reserveStandalone = (userId: UserId, bytes: number) =>
      Effect.gen(function*() {
        const used = yield* repo.standaloneUsage(userId)
        if (used.artifacts + 1 > limits.planMaxArtifactsPerDock || used.bytes + bytes > limits.planMaxDockBytes) {
          return yield* new TierLimitExceeded({
            message:
              `Standalone artifacts on the free plan are limited to ${limits.planMaxArtifactsPerDock} artifacts ` +
              `and ${limits.planMaxDockBytes} bytes per user`,
            details: { max_artifacts: limits.planMaxArtifactsPerDock, max_bytes: limits.planMaxDockBytes, used }
          })
        }
      })

    return Parts.of({
      lockDock: repo.lockDock,
      reserve,
      create: traced("Parts.create")(function*(dock, part) {
        if (dock === null) yield* reserveStandalone(part.ownerId, part.fields.sizeBytes)
        else yield* reserve(dock, { artifacts: 1, bytes: part.fields.sizeBytes })
        const dockId = dock === null ? null : typeof dock === "string" ? dock : dock.id
        return yield* repo.insert(dockId, {
          ownerId: part.ownerId,
          publicSlug: part.publicSlug,
          fields: part.fields,
          visibility: part.visibility ?? null,
          author: part.author,
          now: part.now,
          lines: { added: countLines(part.fields.content), removed: 0 }
        })
      }),
      newVersion: (id, version, fields, author, reason, now, restoredFrom, lines) =>
        repo.update(id, version, { fields, author, reason, now, restoredFrom: restoredFrom ?? null, lines }).pipe(
          spanned("Parts.newVersion")
        ),
      remove: traced("Parts.remove")(function*(dock, id, deleter) {
        const stored = yield* repo.remove(id, deleter)
        // A release never passes a cap.
        yield* reserve(dock, { artifacts: -1, bytes: -stored }).pipe(Effect.orDie)
      }),
      untrash: traced("Parts.untrash")(function*(dock, id) {
        const back = yield* repo.untrash(id)
        if (back === undefined) return undefined
        yield* reserve(dock, { artifacts: 1, bytes: back.bytes })
        return back.row
      }),
      purgeTrash: repo.purgeTrash,
      copyForFork: traced("Parts.copyForFork")(function*(from, to, ownerId, author, now) {
        const copied = yield* repo.copyDock(from, to.id, ownerId, author, now)
        yield* reserve(to, { artifacts: copied.pages, bytes: copied.bytes })
        return { pages: copied.pages }
      }),
      pruneVersions: repo.pruneVersions,
      updateShell: repo.updateShell,
      findById: repo.findById,
      findInDock: repo.findInDock,
      lockInDock: repo.lockInDock,
      findKind: repo.findKind,
      fieldsOf: repo.fieldsOf
    })
  })
)
