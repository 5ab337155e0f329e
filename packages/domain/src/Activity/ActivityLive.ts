/** The activity log's one rule: an entry is attributed to the principal in context, at the Clock's time. */
import { Clock, Effect, Layer } from "effect"
import type { DockId } from "../Ids.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { traced } from "../Spans.ts"
import { Activity, ActivityEntry, type NewActivity } from "./Activity.ts"
import { makeActivityRepo } from "./ActivityRepo.ts"

export const ActivityLive = Layer.effect(
  Activity,
  Effect.gen(function*() {
    const repo = yield* makeActivityRepo

    const record = traced("Activity.record")(function*(entry: NewActivity) {
      const principal = yield* CurrentPrincipal
      yield* repo.insert({
        dockId: entry.dockId,
        userId: principal.userId,
        tokenId: principal.tokenId,
        agentLabel: principal.agentLabel,
        action: entry.action,
        subjectType: entry.subjectType ?? null,
        subjectId: entry.subjectId ?? null,
        details: entry.details ?? {},
        createdAt: new Date(yield* Clock.currentTimeMillis)
      })
    })

    const recent = traced("Activity.recent")(function*(dockId: DockId, limit: number) {
      const rows = yield* repo.recentOfDock(dockId, limit)
      return rows.map((row) => new ActivityEntry({ ...row, created_at: row.created_at.toISOString() }))
    })

    return { record, recent }
  })
)
