/** The Docks port. Every method acts as the CurrentPrincipal and applies the policy after resolving the Dock. */
import { Context, type Effect } from "effect"
import type {
  BadRequest,
  NotFound,
  PermissionDenied,
  RateLimited,
  TierLimitExceeded,
  Unauthorized,
  ValidationError
} from "../Errors.ts"
import type { DockAccess } from "../Policy.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { Option } from "effect"
import type { Dock, DockRef, DockTarget, NewDock } from "./Dock.ts"

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

export class Docks extends Context.Tag("@dock/domain/Docks")<Docks, {
  readonly create: (
    input: NewDock
  ) => Effect.Effect<
    Dock,
    ValidationError | TierLimitExceeded | Unauthorized | PermissionDenied | RateLimited,
    CurrentPrincipal
  >
  /** A Dock the caller can read; anything else is `not_found`; an ambiguous bare slug is `bad_request`. */
  readonly get: (ref: DockRef) => Effect.Effect<Dock, NotFound | BadRequest, CurrentPrincipal>
  /** What the policy needs about a Dock the caller can read, for services that check writes themselves. */
  readonly access: (ref: DockRef) => Effect.Effect<DockAccess, NotFound | BadRequest, CurrentPrincipal>
  /**
   * The one resolver: every targeting form of a tool call to at most one readable Dock. Forms naming different
   * Docks are `bad_request`; naming none is `None` (the caller falls back to the default or grounding Dock).
   */
  readonly resolve: (
    target: DockTarget
  ) => Effect.Effect<Option.Option<{ readonly dock: Dock; readonly access: DockAccess }>, NotFound | BadRequest, CurrentPrincipal>
  /** Docks the caller can push to: owned, plus editor collaborations when asked. */
  readonly listWritable: (filter: WritableFilter) => Effect.Effect<ReadonlyArray<Dock>, Unauthorized, CurrentPrincipal>
  /** Owner only; a sandbox token cannot make its Dock public. */
  readonly update: (
    ref: DockRef,
    patch: DockPatch
  ) => Effect.Effect<Dock, NotFound | BadRequest | Unauthorized | PermissionDenied | ValidationError | RateLimited, CurrentPrincipal>
  /** Owner only; deletes the Dock and everything in it. */
  readonly remove: (
    ref: DockRef
  ) => Effect.Effect<void, NotFound | BadRequest | Unauthorized | PermissionDenied | RateLimited, CurrentPrincipal>
}>() {}
