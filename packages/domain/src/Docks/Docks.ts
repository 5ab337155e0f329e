/** The Docks port. Every method acts as the CurrentPrincipal and applies the policy after resolving the Dock. */
import { Context, type Effect } from "effect"
import type {
  NotFound,
  PermissionDenied,
  RateLimited,
  TierLimitExceeded,
  Unauthorized,
  ValidationError
} from "../Errors.ts"
import type { DockAccess } from "../Policy.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { Dock, DockRef, NewDock } from "./Dock.ts"

export class Docks extends Context.Tag("@dock/domain/Docks")<Docks, {
  readonly create: (
    input: NewDock
  ) => Effect.Effect<
    Dock,
    ValidationError | TierLimitExceeded | Unauthorized | PermissionDenied | RateLimited,
    CurrentPrincipal
  >
  /** A Dock the caller can read; anything else is `not_found`. */
  readonly get: (ref: DockRef) => Effect.Effect<Dock, NotFound, CurrentPrincipal>
  /** What the policy needs about a Dock the caller can read, for services that check writes themselves. */
  readonly access: (ref: DockRef) => Effect.Effect<DockAccess, NotFound, CurrentPrincipal>
}>() {}
