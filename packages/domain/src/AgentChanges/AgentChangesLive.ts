/**
 * The AgentChanges rules (docs/undo.md). A revert, per Dock, in one transaction under the Dock's lock:
 * - a page returns to the last version someone else left it in: the newest version that is not one of the token's
 *   since `since` (a trailing run of the token's versions is undone by a new version equal to the one before it,
 *   reason "reverted"); a page whose versions are all the token's (it created it since `since`) is deleted (into
 *   the trash); a page someone else changed after the token is left alone (a `skip` step says so);
 * - a page the token deleted comes back from the trash with its history (unless its slug is taken now), then the
 *   rule above applies to it;
 * - a row returns to the data it had before the token's trailing run of changes in the row change log: deleted
 *   when that run began with its insert, restored (or re-inserted under its id) otherwise; a row someone else
 *   changed after the token is left alone, as is a restore that would break a unique column or the row cap;
 * - schema changes are listed as `not_reverted`.
 * Nothing others wrote after the token is overwritten. The dry run builds the same plan and writes nothing.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import { Activity } from "../Activity/Activity.ts"
import { ContentWorkers } from "../Content/ContentWorkers.ts"
import { countChangedLines } from "../Content/Diffs.ts"
import { transactional } from "../Database/Transactional.ts"
import { type DockTarget, targetRefs } from "../Docks/Dock.ts"
import { Docks, type ResolvedDock } from "../Docks/Docks.ts"
import { PermissionDenied, type TierLimitExceeded, type Unavailable, ValidationError } from "../Errors.ts"
import { type DockId, isUuid, type TokenId } from "../Ids.ts"
import { Limits } from "../Limits.ts"
import { makeMicroDbRepo, type RowActor } from "../MicroDb/MicroDbRepo.ts"
import { fieldsOfVersion } from "../Pages/VersionFields.ts"
import { type Author, authorOf, type ContentDock } from "../Parts/PartRow.ts"
import { Parts } from "../Parts/Parts.ts"
import { canRead, checkOwner, roleOf } from "../Policy.ts"
import { CurrentPrincipal, type Principal } from "../Principal.ts"
import { operatorPrincipal } from "../Sources/SourcesLive.ts"
import { spanned, traced } from "../Spans.ts"
import {
  AgentChangeList,
  ChangedPage,
  DeletedPage,
  DockChanges,
  DockRevert,
  LIST_CAP,
  RevertResult,
  RevertStep,
  RowChange,
  SchemaChange,
  SINCE_SKEW_MS,
  STEPS_SHOWN,
  TRASH_RETENTION_DAYS
} from "./AgentChange.ts"
import { AgentChanges, type AgentQuery } from "./AgentChanges.ts"
import { makeAgentChangesRepo, type RowEntry, type VersionMeta } from "./AgentChangesRepo.ts"

/** A Dock a list or revert covers: its content side and its owner/slug. */
interface Covered {
  readonly dock: ContentDock
  readonly path: string
}

/** A step to take: what it shows, and what it does when run. */
type Planned =
  | { readonly step: RevertStep; readonly run?: undefined }
  | {
    readonly step: RevertStep
    readonly run: Effect.Effect<RevertStep, ValidationError | TierLimitExceeded | Unavailable, CurrentPrincipal>
  }

const invalid = (field: string, message: string, value?: string) =>
  new ValidationError({
    message,
    details: { field, ...(value === undefined ? {} : { value: value.slice(0, 100) }) }
  })

/** An ISO 8601 time: a date, then a time and an offset (Z or ±hh:mm) when a time is given. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i

/** The longest run at the end of `items` that `mine` holds for (its first index; items.length when none). */
const trailingRun = <A>(items: ReadonlyArray<A>, mine: (item: A) => boolean) => {
  let start = items.length
  while (start > 0 && mine(items[start - 1]!)) start--
  return start
}

const groupBy = <A, K>(items: ReadonlyArray<A>, key: (item: A) => K) => {
  const groups = new Map<K, Array<A>>()
  for (const item of items) {
    const k = key(item)
    const group = groups.get(k)
    if (group === undefined) groups.set(k, [item])
    else group.push(item)
  }
  return groups
}

export const AgentChangesLive = Layer.effect(
  AgentChanges,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* makeAgentChangesRepo
    const rows = yield* makeMicroDbRepo
    const parts = yield* Parts
    const docks = yield* Docks
    const activity = yield* Activity
    const workers = yield* ContentWorkers
    const limits = yield* Limits
    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

    /** The token's id and the time, checked. */
    const checked = (query: AgentQuery) =>
      Effect.gen(function*() {
        const tokenId = query.tokenId.trim()
        if (!isUuid(tokenId)) {
          return yield* invalid("token_id", "token_id must be a token's UUID (get_bucket's recent_activity shows them)")
        }
        const text = query.since.trim()
        // A time without an offset is UTC (as a date alone is), not the server's local time.
        const millis = Date.parse(/[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/i.test(text) ? `${text}Z` : text)
        if (!ISO_8601.test(text) || Number.isNaN(millis)) {
          return yield* invalid(
            "since",
            "since must be an ISO 8601 time, such as 2026-05-01T12:00:00Z",
            text
          )
        }
        if (millis > (yield* Clock.currentTimeMillis) + SINCE_SKEW_MS) {
          return yield* invalid("since", "since is in the future: nothing was changed after it yet", text)
        }
        // Nothing was written before 1970: an older time means "everything" (and stays a time PostgreSQL has).
        return { tokenId: tokenId.toLowerCase() as TokenId, since: new Date(Math.max(millis, 0)) }
      })

    const pathOf = (resolved: ResolvedDock) => `${resolved.dock.owner.username}/${resolved.dock.slug}`
    const coveredOf = (resolved: ResolvedDock): Covered => ({
      dock: { id: resolved.access.dockId, sandbox: resolved.sandbox },
      path: pathOf(resolved)
    })

    /** Owners only: listing needs to read the Dock and own it; reverting needs the owner's right to write. */
    const checkOwnerOf = (principal: Principal, resolved: ResolvedDock, write: boolean) =>
      write
        ? checkOwner(principal, resolved.access)
        : canRead(principal, resolved.access) && roleOf(principal, resolved.access) === "owner"
        ? Effect.void
        : Effect.fail(new PermissionDenied({ message: "Only the Dock's owner can see what an agent changed in it" }))

    /** The named Dock (owned by the caller), or every Dock of the caller's that the token changed. */
    const ownedDocks = (target: DockTarget | undefined, tokenId: TokenId, since: Date, write: boolean) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        if (target !== undefined && targetRefs(target).length > 0) {
          const resolved = yield* docks.named(target)
          yield* checkOwnerOf(principal, resolved, write)
          return [coveredOf(resolved)]
        }
        if (principal.userId === null) {
          return yield* new PermissionDenied({ message: "Only a Dock's owner can see what an agent changed in it" })
        }
        const touched = yield* repo.touchedDocks(tokenId, since, principal.userId)
        const covered: Array<Covered> = []
        for (const { id } of touched) {
          // A Dock this token may not act on (restricted tokens, sandboxes) is left out.
          const resolved = yield* docks.byId(id).pipe(Effect.option)
          if (resolved._tag === "None") continue
          const allowed = yield* checkOwnerOf(principal, resolved.value, write).pipe(Effect.isSuccess)
          if (allowed) covered.push(coveredOf(resolved.value))
        }
        return covered
      })

    // --- list ----------------------------------------------------------------------------------------------------

    const changesIn = (covered: Covered, tokenId: TokenId, since: Date) =>
      Effect.gen(function*() {
        const dockId = covered.dock.id
        const mine = (v: { readonly token_id: string | null; readonly created_at: Date }) =>
          v.token_id === tokenId && v.created_at >= since
        const versions = groupBy(yield* repo.pageVersions(dockId, tokenId, since), (v) => v.page_id)
        const pages = [...versions.values()].slice(0, LIST_CAP).map((all) =>
          new ChangedPage({
            page_id: all[0]!.page_id,
            slug: all[0]!.slug,
            title: all[0]!.title,
            version: all[0]!.current,
            versions: all.filter(mine).map((v) => ({
              version: v.version,
              reason: v.reason,
              created_at: v.created_at.toISOString()
            })),
            created: all[0]!.version === 1 && mine(all[0]!)
          })
        )
        const trashed = groupBy(yield* repo.trashedVersions(dockId, tokenId, since), (v) => v.page_id)
        const deleted = [...trashed.values()].slice(0, LIST_CAP).map(([first]) =>
          new DeletedPage({
            page_id: first!.page_id,
            slug: first!.slug,
            title: first!.title,
            version: first!.current,
            deleted_at: first!.deleted_at.toISOString()
          })
        )
        const rowChanges = yield* repo.ownRowEntries(dockId, tokenId, since, LIST_CAP + 1)
        const schema = yield* repo.schemaEntries(dockId, tokenId, since, LIST_CAP + 1)
        return new DockChanges({
          bucket_id: dockId,
          bucket_path: covered.path,
          pages,
          deleted_pages: deleted,
          row_changes: rowChanges.slice(0, LIST_CAP).map((row) =>
            new RowChange({
              table_id: row.table_id,
              table: row.table_slug,
              row_id: row.row_id,
              op: row.op,
              at: row.at.toISOString()
            })
          ),
          schema_changes: schema.slice(0, LIST_CAP).map((entry) =>
            new SchemaChange({
              action: entry.action,
              subject_id: entry.subject_id,
              details: entry.details,
              at: entry.created_at.toISOString()
            })
          ),
          truncated: versions.size > LIST_CAP || trashed.size > LIST_CAP || rowChanges.length > LIST_CAP ||
            schema.length > LIST_CAP
        })
      })

    const list = traced("AgentChanges.list")(function*(target: DockTarget | undefined, query: AgentQuery) {
      const { since, tokenId } = yield* checked(query)
      const covered = yield* ownedDocks(target, tokenId, since, false)
      const buckets = yield* Effect.forEach(covered, (dock) => changesIn(dock, tokenId, since))
      return new AgentChangeList({ token_id: tokenId, since: since.toISOString(), buckets })
    })

    // --- revert --------------------------------------------------------------------------------------------------

    /** The steps for the Dock's pages: the trashed ones first (back, then as the others), then the others. */
    const pageSteps = (covered: Covered, tokenId: TokenId, since: Date, author: Author, at: Date) =>
      Effect.gen(function*() {
        const dock = covered.dock
        const mine = (v: VersionMeta) => v.token_id === tokenId && v.created_at >= since
        const steps: Array<Planned> = []
        const base = (page: VersionMeta) => ({ subject: "page" as const, page_id: page.page_id, slug: page.slug })

        /** The step that undoes the trailing run of the token's versions of one page (after `back`, if trashed). */
        const undoRun = (all: ReadonlyArray<VersionMeta>, current: number): Planned | undefined => {
          const page = all[0]!
          const start = trailingRun(all, mine)
          if (start === all.length) return undefined
          if (start === 0) {
            return {
              step: new RevertStep({ ...base(page), action: "delete_page", from_version: current }),
              run: Effect.gen(function*() {
                yield* parts.remove(dock, page.page_id, { author, now: at })
                return new RevertStep({ ...base(page), action: "delete_page", from_version: current })
              })
            }
          }
          const to = all[start - 1]!.version
          const step = new RevertStep({
            ...base(page),
            action: "restore_version",
            from_version: current,
            to_version: to
          })
          return {
            step,
            run: Effect.gen(function*() {
              const row = yield* parts.findInDock(dock.id, page.page_id, true)
              const old = yield* repo.versionContent(page.page_id, to)
              if (row === undefined || old === undefined) {
                return new RevertStep({ ...base(page), action: "skip", note: "the page or its version is gone" })
              }
              if (row.version !== current) {
                return new RevertStep({
                  ...base(page),
                  action: "skip",
                  from_version: row.version,
                  note: "someone else changed this page while the revert was planned: left as they left it"
                })
              }
              const fields = yield* fieldsOfVersion(old, yield* parts.fieldsOf(page.page_id)).pipe(
                Effect.provideService(ContentWorkers, workers)
              )
              yield* parts.reserve(dock, { artifacts: 0, bytes: fields.sizeBytes })
              // Under the Dock lock, as a revert is rare; a big diff is counted in a content worker (Diffs.ts).
              const lines = yield* countChangedLines(row.content, fields.content).pipe(
                Effect.provideService(ContentWorkers, workers)
              )
              const written = yield* parts.newVersion(
                page.page_id,
                row.version + 1,
                fields,
                author,
                "reverted",
                at,
                to,
                lines
              )
              yield* activity.record({
                dockId: dock.id,
                action: "page.reverted",
                subjectType: "page",
                subjectId: page.page_id,
                details: { version: written.version, restored_from: to, token_id: tokenId }
              })
              return new RevertStep({
                ...base(page),
                action: "restore_version",
                from_version: row.version,
                to_version: to,
                new_version: written.version
              })
            })
          }
        }

        for (const all of groupBy(yield* repo.trashedVersions(dock.id, tokenId, since), (v) => v.page_id).values()) {
          const page = all[0]!
          if (trailingRun(all, mine) === 0) {
            steps.push({
              step: new RevertStep({
                ...base(page),
                action: "skip",
                note: "the agent created and deleted this page: nothing to bring back"
              })
            })
            continue
          }
          if (yield* repo.slugTaken(dock.id, page.slug, page.page_id)) {
            steps.push({
              step: new RevertStep({
                ...base(page),
                action: "skip",
                note: `deleted by the agent, but another page has the slug "${page.slug}" now: not brought back`
              })
            })
            continue
          }
          const back = new RevertStep({ ...base(page), action: "undelete_page", from_version: page.current })
          steps.push({
            step: back,
            run: Effect.gen(function*() {
              const row = yield* parts.untrash(dock, page.page_id)
              if (row === undefined) {
                return new RevertStep({ ...base(page), action: "skip", note: "not in the trash any more" })
              }
              yield* activity.record({
                dockId: dock.id,
                action: "page.undeleted",
                subjectType: "page",
                subjectId: page.page_id,
                details: { slug: page.slug, token_id: tokenId }
              })
              return back
            })
          })
          const undo = undoRun(all, page.current)
          if (undo !== undefined) steps.push(undo)
        }

        for (const all of groupBy(yield* repo.pageVersions(dock.id, tokenId, since), (v) => v.page_id).values()) {
          const page = all[0]!
          const undo = undoRun(all, page.current)
          steps.push(
            undo ?? {
              step: new RevertStep({
                ...base(page),
                action: "skip",
                from_version: page.current,
                note: "someone else changed this page after the agent: left as they left it"
              })
            }
          )
        }
        return steps
      })

    /** The steps for the Dock's rows the token changed (see the rule above). */
    const rowSteps = (covered: Covered, tokenId: TokenId, since: Date, at: Date, actor: RowActor) =>
      Effect.gen(function*() {
        const dock = covered.dock
        const mine = (entry: RowEntry) => entry.token_id === tokenId
        const steps: Array<Planned> = []
        const base = (entry: RowEntry) => ({
          subject: "row" as const,
          table: entry.table_slug,
          row_id: entry.row_id
        })
        const entries = yield* repo.rowEntries(dock.id, tokenId, since)
        // The rows each table gets back: their count against the table's row cap.
        const reinserted = new Map<string, number>()
        const deletions = new Map<string, Array<RowEntry>>()
        for (const all of groupBy(entries, (entry) => entry.row_id).values()) {
          const last = all[all.length - 1]!
          const start = trailingRun(all, mine)
          if (start === all.length) {
            steps.push({
              step: new RevertStep({
                ...base(last),
                action: "skip",
                note: "someone else changed this row after the agent: left as they left it"
              })
            })
            continue
          }
          const first = all[start]!
          if (last.table_slug === null) {
            steps.push({ step: new RevertStep({ ...base(last), action: "skip", note: "its table was deleted" }) })
            continue
          }
          if (first.op === "insert") {
            if (!last.exists) {
              steps.push({
                step: new RevertStep({
                  ...base(last),
                  action: "skip",
                  note: "the agent inserted and deleted this row: nothing to undo"
                })
              })
              continue
            }
            // Deleted together, one statement per table.
            const group = deletions.get(last.table_id) ?? []
            group.push(last)
            deletions.set(last.table_id, group)
            continue
          }
          const data = first.data_before ?? {}
          const action = last.exists ? "restore_row" as const : "reinsert_row" as const
          const step = new RevertStep({ ...base(last), action })
          steps.push({
            step,
            run: Effect.gen(function*() {
              const table = yield* rows.findTable(dock.id, last.table_id, true)
              if (table === undefined) {
                return new RevertStep({ ...base(last), action: "skip", note: "its table was deleted" })
              }
              for (const column of table.columns) {
                const value = data[column.slug]
                if (!column.unique || value === undefined || value === null) continue
                const [taken] = yield* rows.valuesTaken(table.id, column.slug, [value], last.row_id)
                if (taken !== undefined) {
                  return new RevertStep({
                    ...base(last),
                    action: "skip",
                    note: `its ${column.slug} ${JSON.stringify(value).slice(0, 100)} is used by row ${taken.id} now`
                  })
                }
              }
              if (action === "restore_row") {
                const before = yield* rows.findRow(table.id, last.row_id, true)
                if (before === undefined) {
                  return new RevertStep({ ...base(last), action: "skip", note: "the row is gone" })
                }
                const updated = yield* rows.updateRow(last.row_id, data, at, actor)
                yield* parts.reserve(dock, { artifacts: 0, bytes: updated.size_bytes - before.size_bytes })
                return step
              }
              const count = table.row_count + (reinserted.get(table.id) ?? 0)
              if (count + 1 > limits.planMaxRowsPerTable) {
                return new RevertStep({
                  ...base(last),
                  action: "skip",
                  note: `the table holds ${limits.planMaxRowsPerTable} rows, its most`
                })
              }
              const back = yield* rows.restoreRow(table.id, last.row_id, data, at, actor)
              if (back === undefined) return new RevertStep({ ...base(last), action: "skip", note: "the row exists" })
              reinserted.set(table.id, (reinserted.get(table.id) ?? 0) + 1)
              yield* rows.changeRowCount(table.id, 1)
              yield* parts.reserve(dock, { artifacts: 0, bytes: back.size_bytes })
              return step
            })
          })
        }
        for (const [tableId, group] of deletions) {
          group.forEach((entry, index) => {
            const step = new RevertStep({ ...base(entry), action: "delete_row" })
            steps.push({
              step,
              run: index > 0 ? Effect.succeed(step) : Effect.gen(function*() {
                const table = yield* rows.findTable(dock.id, tableId, true)
                if (table === undefined) return step
                const released = yield* rows.deleteRows(table.id, group.map((entry) => entry.row_id), at, actor)
                yield* rows.changeRowCount(table.id, -released.rows)
                yield* parts.reserve(dock, { artifacts: 0, bytes: -released.bytes })
                return step
              })
            })
          })
        }
        return steps
      })

    const schemaSteps = (covered: Covered, tokenId: TokenId, since: Date) =>
      Effect.map(
        repo.schemaEntries(covered.dock.id, tokenId, since, STEPS_SHOWN),
        (entries): Array<Planned> =>
          entries.map((entry) => ({
            step: new RevertStep({
              subject: "schema",
              action: "not_reverted",
              change: entry.action,
              note: "schema changes (tables, columns) are not reverted; undo them with the Micro DB tools"
            })
          }))
      )

    const revertIn = (
      covered: Covered,
      query: { readonly tokenId: TokenId; readonly since: Date; readonly dryRun: boolean },
      principal: Principal
    ) =>
      transactional(
        sql,
        Effect.gen(function*() {
          const at = yield* now
          const dock = covered.dock
          yield* parts.lockDock(dock.id)
          // Row writers wait until the revert ends (they lock their table for update): the log read is the truth.
          yield* rows.holdTables(dock.id)
          const author = authorOf(principal)
          const actor: RowActor = { dockId: dock.id, tokenId: principal.tokenId, userId: principal.userId }
          const planned = [
            ...(yield* pageSteps(covered, query.tokenId, query.since, author, at)),
            ...(yield* rowSteps(covered, query.tokenId, query.since, at, actor)),
            ...(yield* schemaSteps(covered, query.tokenId, query.since))
          ]
          const steps: Array<RevertStep> = []
          for (const { run, step } of planned) {
            steps.push(query.dryRun || run === undefined ? step : yield* run)
          }
          const counts: Record<string, number> = {}
          for (const step of steps) counts[step.action] = (counts[step.action] ?? 0) + 1
          if (!query.dryRun) {
            yield* activity.record({
              dockId: dock.id,
              action: "agent.reverted",
              details: { token_id: query.tokenId, since: query.since.toISOString(), counts }
            })
          }
          return new DockRevert({
            bucket_id: dock.id,
            bucket_path: covered.path,
            steps: steps.slice(0, STEPS_SHOWN),
            counts,
            truncated: steps.length > STEPS_SHOWN
          })
        }).pipe(Effect.provideService(CurrentPrincipal, principal))
      )

    const revertAll = (
      covered: ReadonlyArray<Covered>,
      query: { readonly tokenId: TokenId; readonly since: Date; readonly dryRun: boolean },
      principal: Principal
    ) =>
      Effect.map(
        Effect.forEach(covered, (dock) => revertIn(dock, query, principal)),
        (buckets) =>
          new RevertResult({
            dry_run: query.dryRun,
            token_id: query.tokenId,
            since: query.since.toISOString(),
            buckets
          })
      )

    const revert = traced("AgentChanges.revert")(function*(
      target: DockTarget | undefined,
      query: AgentQuery & { readonly dryRun: boolean }
    ) {
      const principal = yield* CurrentPrincipal
      const { since, tokenId } = yield* checked(query)
      const covered = yield* ownedDocks(target, tokenId, since, true)
      return yield* revertAll(covered, { tokenId, since, dryRun: query.dryRun }, principal)
    })

    const revertAsOperator = traced("AgentChanges.revertAsOperator")(function*(
      name: string | undefined,
      query: AgentQuery & { readonly dryRun: boolean }
    ) {
      const { since, tokenId } = yield* checked(query)
      const found = name === undefined
        ? yield* repo.touchedDocks(tokenId, since, null)
        : [yield* docks.forOperator(name)].map((dock) => ({ id: dock.id, path: `${dock.owner.username}/${dock.slug}` }))
      const covered: Array<Covered> = []
      for (const { id, path } of found) {
        covered.push({ dock: { id: id as DockId, sandbox: yield* repo.sandboxOf(id as DockId) }, path })
      }
      return yield* revertAll(covered, { tokenId, since, dryRun: query.dryRun }, operatorPrincipal)
    })

    const sweep = Effect.gen(function*() {
      const before = new Date((yield* Clock.currentTimeMillis) - TRASH_RETENTION_DAYS * 24 * 60 * 60 * 1000)
      const pages = yield* parts.purgeTrash(before)
      const rowChanges = yield* rows.purgeChanges(before)
      return { pages, rowChanges }
    }).pipe(spanned("AgentChanges.sweep"))

    return AgentChanges.of({ list, revert, revertAsOperator, sweep })
  })
)
