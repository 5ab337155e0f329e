/**
 * The Docks port. Lookups and actions act as the CurrentPrincipal and apply the policy after resolving the Dock;
 * forOperator, createOwned and storedById serve flows that act for no caller (operator, account creation,
 * registration) and check nothing.
 */
import type { Statement } from "@effect/sql"
import { Context, type Effect } from "effect"
import type { Option } from "effect"
import type {
  BadRequest,
  Forbidden,
  NotFound,
  PermissionDenied,
  RateLimited,
  TierLimitExceeded,
  Unauthorized,
  ValidationError
} from "../Errors.ts"
import type { DockId, UserId } from "../Ids.ts"
import type { DockAccess, Role } from "../Policy.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { Dock, DockDetails, DockTarget, NewDock } from "./Dock.ts"

/**
 * A Dock as the one resolver found it for the caller: the Dock, what the policy needs, the caller's effective
 * role (Policy.roleOf) and whether it is an anonymous sandbox. Services take this value and pass it down
 * instead of looking the Dock up again.
 */
export interface ResolvedDock {
  readonly dock: Dock
  readonly access: DockAccess
  readonly role: Role | null
  readonly sandbox: boolean
}

/**
 * A row of another capability that a read needs from the Dock it resolves (get_web_page's page), read in the
 * resolver's own statement so that the Dock and the row cost one round trip: a subquery of at most one row over
 * the Dock whose id is `dockId`, its columns named so as not to clash with the Dock's (`page_id`, …), and how its
 * columns (null when it found nothing) decode. The policy still decides on the Dock first: the row of a Dock the
 * caller may not read is never decoded.
 */
export interface Along<A> {
  readonly from: (dockId: Statement.Fragment) => Statement.Fragment
  readonly decode: (row: Readonly<Record<string, unknown>>) => Effect.Effect<A>
}

/**
 * The columns of an `along` row named `<prefix>…` (its own, beside the Dock's), each with the prefix taken off. A
 * loop rather than entries → filter → fromEntries: it runs on every get_web_page, over some forty columns.
 */
export const alongColumns = (row: Readonly<Record<string, unknown>>, prefix: string): Record<string, unknown> => {
  const columns: Record<string, unknown> = {}
  for (const key in row) {
    if (key.startsWith(prefix)) columns[key.slice(prefix.length)] = row[key]
  }
  return columns
}

/** A resolution of `target` that also reads what `along` reads beside the Dock. */
export type ResolveAlong = <A>(
  target: DockTarget,
  along: Along<A>
) => Effect.Effect<{ readonly dock: ResolvedDock; readonly along: A }, NotFound | BadRequest, CurrentPrincipal>

/** A change to a Dock's own fields (update_bucket). */
export interface DockPatch {
  readonly title?: string | undefined
  readonly description?: string | null | undefined
  readonly visibility?: "private" | "public" | undefined
  readonly tags?: ReadonlyArray<string> | undefined
}

export interface WritableFilter {
  readonly includeCollaborations?: boolean | undefined
  readonly visibility?: "private" | "public" | undefined
  readonly tag?: string | undefined
}

/** list_buckets: `private` = the caller's own private Docks; `all` = everything the caller can read and find. */
export interface DockListFilter {
  readonly visibility?: "public" | "private" | "all" | undefined
  readonly ownedByMe?: boolean | undefined
}

/** update_bucket_metadata (owner only). */
export interface MetadataPatch {
  readonly name?: string | undefined
  readonly description?: string | null | undefined
  readonly visibility?: "private" | "public" | undefined
  readonly discoverable?: boolean | undefined
  readonly allowForks?: boolean | undefined
  readonly addTopics?: ReadonlyArray<string> | undefined
  readonly removeTopics?: ReadonlyArray<string> | undefined
}

export interface ForkOptions {
  readonly newName?: string | null | undefined
  readonly visibility?: "private" | "public" | undefined
}

/** A Dock made for an owner by a flow that has already decided (account creation, an anonymous registration). */
export interface OwnedDock {
  readonly title: string
  /** taken: validation_error; absent: derived from the title, with -2, -3… appended until free */
  readonly slug: string | undefined
  readonly description: string | null
  readonly visibility: "private" | "public"
  readonly discoverable: boolean
  readonly allowForks: boolean
  readonly tags: ReadonlyArray<string>
  readonly topics: ReadonlyArray<string>
  /** An anonymous registration's sandbox (the sandbox rules apply while it is unclaimed). */
  readonly sandbox?: boolean | undefined
}

/** At most this many Docks in one list answer (most recently updated first). */
export const LIST_MAX = 200

type WriteError = NotFound | BadRequest | Unauthorized | PermissionDenied | ValidationError | RateLimited

export class Docks extends Context.Tag("@dock/domain/Docks")<Docks, {
  readonly create: (
    input: NewDock
  ) => Effect.Effect<
    Dock,
    ValidationError | TierLimitExceeded | Unauthorized | PermissionDenied | RateLimited,
    CurrentPrincipal
  >
  /**
   * The one resolver: every targeting form of a tool call to at most one readable Dock. Forms naming different
   * Docks are `bad_request`; naming none is `None`; a missing or unreadable Dock is `not_found`.
   */
  readonly find: (
    target: DockTarget
  ) => Effect.Effect<Option.Option<ResolvedDock>, NotFound | BadRequest, CurrentPrincipal>
  /** The Dock a target names (tools that act on one Dock); naming none is `bad_request`. */
  readonly named: (target: DockTarget) => Effect.Effect<ResolvedDock, NotFound | BadRequest, CurrentPrincipal>
  /**
   * The Dock an untargeted read means: the target when one is named, else the token's grounding Dock (while it
   * is set, unexpired and still readable), else the caller's default Dock; with none of these, `bad_request`.
   */
  readonly forRead: (target: DockTarget) => Effect.Effect<ResolvedDock, NotFound | BadRequest, CurrentPrincipal>
  /** `forRead`, and what `along` reads beside that Dock, in the same statement (one round trip for both). */
  readonly forReadAlong: ResolveAlong
  /** `named`, and what `along` reads beside that Dock, in the same statement (one round trip for both). */
  readonly namedAlong: ResolveAlong
  /**
   * The Dock an untargeted write means: the target when one is named, else the caller's default Dock (a sandbox
   * token's sandbox); with neither, `not_found`.
   */
  readonly forWrite: (target: DockTarget) => Effect.Effect<ResolvedDock, NotFound | BadRequest, CurrentPrincipal>
  /** A Dock by id for callers that hold one (a page's own Dock), under the same read rule; else `not_found`. */
  readonly byId: (id: DockId) => Effect.Effect<ResolvedDock, NotFound, CurrentPrincipal>
  /**
   * The readable Docks at many `owner/slug` paths, by `owner/slug` as stored (lowercase), in one statement
   * however many paths (wikilinks): the same rules as `find`; a missing or unreadable Dock is absent.
   */
  readonly readableAt: (
    paths: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, ResolvedDock>, never, CurrentPrincipal>
  /**
   * What a bare slug could mean for the caller: the readable Docks with that slug of the one resolver's best rank
   * (own, else collaborations, else public). One: the Dock `named({ bucket: slug })` resolves to; several: its
   * ambiguity; none: not found. For `/b/<slug>`, which shows a chooser where a tool answers `bad_request`.
   */
  readonly candidates: (slug: string) => Effect.Effect<ReadonlyArray<ResolvedDock>, never, CurrentPrincipal>
  /**
   * How the operator names a Dock (admin API, `dock members`, `dock sources`): its id or `owner/slug`, any Dock
   * but a hidden one; a bare slug is `validation_error` (the operator acts for no user whose Docks it could mean).
   */
  readonly forOperator: (name: string) => Effect.Effect<Dock, NotFound | ValidationError>
  /**
   * Inserts a Dock for `ownerId` with no policy check, inside the caller's transaction: for account creation and
   * registration, which have already decided. Answers its id.
   */
  readonly createOwned: (ownerId: UserId, fields: OwnedDock) => Effect.Effect<DockId, ValidationError>
  /** A Dock by id as stored, whoever asks (no policy): for the account and registration flows. Hidden is None. */
  readonly storedById: (id: DockId) => Effect.Effect<Option.Option<Dock>>
  /** Docks the caller can push to: owned, plus editor collaborations when asked. */
  readonly listWritable: (filter: WritableFilter) => Effect.Effect<ReadonlyArray<Dock>, Unauthorized, CurrentPrincipal>
  /** Owner only; a sandbox token cannot make its Dock public. */
  readonly update: (
    dock: ResolvedDock,
    patch: DockPatch
  ) => Effect.Effect<
    Dock,
    NotFound | BadRequest | Unauthorized | PermissionDenied | ValidationError | RateLimited,
    CurrentPrincipal
  >
  /** Owner only; deletes the Dock and everything in it. */
  readonly remove: (
    dock: ResolvedDock
  ) => Effect.Effect<void, NotFound | BadRequest | Unauthorized | PermissionDenied | RateLimited, CurrentPrincipal>
  /** search_buckets: Docks the caller can find whose title, description, slug, tags or topics match. */
  readonly search: (
    query: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Dock>, ValidationError, CurrentPrincipal>
  /** list_buckets */
  readonly list: (filter: DockListFilter) => Effect.Effect<ReadonlyArray<Dock>, Unauthorized, CurrentPrincipal>
  /**
   * get_bucket: the Dock a read means (as `forRead`) with counts, activity, breakdown, entities, concepts and
   * fork tracking.
   */
  readonly details: (target: DockTarget) => Effect.Effect<DockDetails, NotFound | BadRequest, CurrentPrincipal>
  /** fork_bucket: a copy of a public Dock that allows forks, owned by the caller. */
  readonly fork: (
    upstream: DockTarget,
    options: ForkOptions
  ) => Effect.Effect<Dock, NotFound | BadRequest | Forbidden | TierLimitExceeded | WriteError, CurrentPrincipal>
  readonly updateMetadata: (
    dock: ResolvedDock,
    patch: MetadataPatch
  ) => Effect.Effect<Dock, WriteError, CurrentPrincipal>
  /** set_cover_web_page: owner only; the page by UUID or slug in that Dock. */
  readonly setCover: (dock: ResolvedDock, page: string) => Effect.Effect<Dock, WriteError, CurrentPrincipal>
  /** set_grounding_bucket: remembers a readable Dock for the calling token; answers its owner/slug path. */
  readonly setGrounding: (dock: ResolvedDock) => Effect.Effect<string, WriteError, CurrentPrincipal>
}>() {}
