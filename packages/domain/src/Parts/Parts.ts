/**
 * The Parts port: the one writer of pages (`parts`) and their versions (`part_versions`), of the Dock lock that
 * makes a Dock's writers take turns, and of the content caps (a sandbox's 25 artifacts and 10 MB, the plan's
 * per-Dock limits, a user's standalone artifacts), reserved in the write's own transaction so parallel bursts
 * cannot overshoot. Pages, the Micro DB and forks all write through it; the rules of who may write stay with them.
 * Every operation runs inside its caller's transaction.
 */
import { Context, type Effect } from "effect"
import type { TierLimitExceeded } from "../Errors.ts"
import type { DockId, PageId, UserId } from "../Ids.ts"
import type { PageKind } from "../Pages/Part.ts"
import type {
  Author,
  ContentChange,
  ContentDock,
  PartFields,
  PartRow,
  ShellFields,
  VersionLines,
  VersionReason
} from "./PartRow.ts"

export interface NewPart {
  readonly ownerId: UserId
  readonly publicSlug: string
  readonly fields: PartFields
  readonly author: Author
  readonly visibility?: "private" | "public" | undefined
  readonly now: Date
}

export class Parts extends Context.Tag("@dock/domain/Parts")<Parts, {
  /**
   * Writers of one Dock take turns: the caller's transaction holds the Dock until it ends. Answers whether the
   * Dock is still there (a writer that must not write into a Dock deleted meanwhile checks it).
   */
  readonly lockDock: (dockId: DockId) => Effect.Effect<boolean>
  /**
   * Reserves a content change on a Dock: fails with tier_limit_exceeded when the sandbox or plan cap would be
   * passed; negative changes release space. A ContentDock carries its sandbox flag from the resolver; given only
   * the Dock's id (a writer without a resolved Dock), the flag is read.
   */
  readonly reserve: (dock: ContentDock | DockId, change: ContentChange) => Effect.Effect<void, TierLimitExceeded>
  /**
   * A new page, version 1 ("created", all its lines added), its artifact and bytes reserved: in the Dock, or with none a standalone
   * artifact of its owner (the owner's standalone artifacts count as one Dock for the plan caps).
   */
  readonly create: (dock: ContentDock | DockId | null, part: NewPart) => Effect.Effect<PartRow, TierLimitExceeded>
  /**
   * A new version of a page with the reason for it (updated, restored, snapshot). The caller reserves the bytes,
   * with the rest of its change when it has more (a snapshot with the rows a table's delete releases). `lines`:
   * what the version added and removed against the current one (the caller diffs them, outside the Dock lock
   * where it can: Content/LineDiff.ts); without it the version records none (null).
   */
  readonly newVersion: (
    id: PageId,
    version: number,
    fields: PartFields,
    author: Author,
    reason: VersionReason,
    now: Date,
    restoredFrom?: number,
    lines?: VersionLines
  ) => Effect.Effect<PartRow>
  /**
   * Deletes a page with its versions and releases the artifact and every stored version's bytes. With a deleter
   * (who and when), the page and its versions go to the trash in the same transaction, for a revert to bring back
   * (`untrash`) until the trash sweep purges them.
   */
  readonly remove: (
    dock: ContentDock | DockId,
    id: PageId,
    deleter?: { readonly author: Author; readonly now: Date }
  ) => Effect.Effect<void>
  /**
   * Brings a trashed page back with its history, reserving its artifact and bytes again. Answers the page, or
   * undefined when it is not in the trash or its slug is taken in its Dock now (then nothing changes).
   */
  readonly untrash: (dock: ContentDock | DockId, id: PageId) => Effect.Effect<PartRow | undefined, TierLimitExceeded>
  /** Purges the trash of pages deleted before `before`; answers how many. */
  readonly purgeTrash: (before: Date) => Effect.Effect<number>
  /**
   * A fork's copy of every page of `from` that is not private (and the Micro DB's tables and rows with its shell)
   * into the new Dock `to`, version 1 ("forked") by `author`; reserves what the copy holds. Returns how many pages.
   */
  readonly copyForFork: (
    from: DockId,
    to: ContentDock,
    ownerId: UserId,
    author: Author,
    now: Date
  ) => Effect.Effect<{ readonly pages: number }, TierLimitExceeded>
  /** Keeps the newest `keep` versions of a reason (snapshots); returns the versions dropped and their bytes. */
  readonly pruneVersions: (
    id: PageId,
    reason: VersionReason,
    keep: number
  ) => Effect.Effect<{ readonly versions: ReadonlyArray<number>; readonly bytes: number }>
  /** The Micro DB shell's own fields, changed in place (its versions are snapshots). */
  readonly updateShell: (
    id: PageId,
    fields: ShellFields,
    now: Date
  ) => Effect.Effect<PartRow>
  /** A page by its UUID in whatever Dock holds it (or none: a standalone artifact); no rule applied. */
  readonly findById: (id: PageId) => Effect.Effect<PartRow | undefined>
  /** A page of the Dock by UUID or slug; `lock` makes the caller's transaction its one writer. */
  readonly findInDock: (dockId: DockId, ref: string, lock?: boolean) => Effect.Effect<PartRow | undefined>
  /**
   * A page of the Dock locked for the caller's transaction, as it is now; `read`, the page as read before the lock,
   * gives its content when the page is still at that version, which is then not read again.
   */
  readonly lockInDock: (dockId: DockId, ref: string, read: PartRow | undefined) => Effect.Effect<PartRow | undefined>
  /** The Dock's page of a kind it has at most one of (the Micro DB shell). */
  readonly findKind: (dockId: DockId, kind: PageKind, lock?: boolean) => Effect.Effect<PartRow | undefined>
  /** Everything a new version starts from: the page's current fields. */
  readonly fieldsOf: (id: PageId) => Effect.Effect<PartFields>
}>() {}
