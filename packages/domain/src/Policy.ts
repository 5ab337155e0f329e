/**
 * The permission policy: who may read, write and own a Dock. Pure functions, no I/O; every service calls
 * them after the one resolver has turned a target into a Dock. Not visible looks exactly like not existing.
 */
import { Effect } from "effect"
import { NotFound, PermissionDenied, Unauthorized } from "./Errors.ts"
import type { DockId, UserId } from "./Ids.ts"
import { hasScope, type Principal } from "./Principal.ts"

export type Role = "owner" | "editor" | "viewer"
export type Visibility = "private" | "public"

/** What the policy needs to know about one Dock and the caller's grant on it. */
export interface DockAccess {
  readonly dockId: DockId
  readonly ownerId: UserId
  readonly visibility: Visibility
  /** The caller's collaborator grant on this Dock, if any. */
  readonly grant: Role | null
}

/** The caller's effective role: owning the Dock beats any grant. */
export const roleOf = (principal: Principal, dock: DockAccess): Role | null => {
  if (principal.userId === null) return null
  if (principal.userId === dock.ownerId) return "owner"
  return dock.grant
}

export const canRead = (principal: Principal, dock: DockAccess): boolean =>
  dock.visibility === "public" || roleOf(principal, dock) !== null

const notFound = () => new NotFound({ message: "Dock not found" })

export const checkRead = (principal: Principal, dock: DockAccess): Effect.Effect<void, NotFound> =>
  canRead(principal, dock) ? Effect.void : Effect.fail(notFound())

/** Scope, token restriction and sandbox confinement: what every write needs before roles are considered. */
const checkWriteToken = (
  principal: Principal,
  dockId: DockId | null
): Effect.Effect<void, Unauthorized | PermissionDenied> => {
  if (principal.userId === null) {
    return Effect.fail(new Unauthorized({ message: "Writing requires a bearer token with the mcp:write scope" }))
  }
  if (!hasScope(principal, "mcp:write")) {
    return Effect.fail(new PermissionDenied({ message: "This token is read-only: it lacks the mcp:write scope" }))
  }
  // A sandbox principal without its Dock list is confined to nothing rather than to everything.
  const allowed = principal.sandbox ? principal.allowedBucketIds ?? [] : principal.allowedBucketIds
  if (allowed !== null && (dockId === null || !allowed.includes(dockId))) {
    return Effect.fail(
      new PermissionDenied({
        message: principal.sandbox
          ? "A sandbox token can only write inside its own sandbox Dock"
          : "This token is restricted to other Docks (allowed_bucket_ids)",
        details: { allowed_bucket_ids: allowed }
      })
    )
  }
  return Effect.void
}

export const checkWrite = (
  principal: Principal,
  dock: DockAccess
): Effect.Effect<void, NotFound | Unauthorized | PermissionDenied> =>
  Effect.gen(function*() {
    if (!canRead(principal, dock)) return yield* notFound()
    yield* checkWriteToken(principal, dock.dockId)
    const role = roleOf(principal, dock)
    if (role !== "owner" && role !== "editor") {
      return yield* new PermissionDenied({ message: "You cannot write to this Dock: it needs an owner or editor" })
    }
  })

/** Delete, visibility, metadata, fork settings and grants. */
export const checkOwner = (
  principal: Principal,
  dock: DockAccess
): Effect.Effect<void, NotFound | Unauthorized | PermissionDenied> =>
  Effect.gen(function*() {
    yield* checkWrite(principal, dock)
    if (roleOf(principal, dock) !== "owner") {
      return yield* new PermissionDenied({ message: "Only the Dock's owner can do this" })
    }
  })

/** Making a Dock public or discoverable, or granting others access: owner only, never from a sandbox token. */
export const checkPublish = (
  principal: Principal,
  dock: DockAccess
): Effect.Effect<void, NotFound | Unauthorized | PermissionDenied> =>
  Effect.gen(function*() {
    yield* checkOwner(principal, dock)
    if (principal.sandbox) {
      return yield* new PermissionDenied({
        message: "A sandbox token cannot publish, share or grant access; claim the sandbox first"
      })
    }
  })

/** Creating a Dock is a write not scoped to any Dock: restricted and sandbox tokens get a structured 403. */
export const checkCreateDock = (principal: Principal): Effect.Effect<void, Unauthorized | PermissionDenied> =>
  Effect.gen(function*() {
    if (principal.sandbox) {
      return yield* new PermissionDenied({ message: "A sandbox token cannot create Docks; claim the sandbox first" })
    }
    yield* checkWriteToken(principal, null)
  })
