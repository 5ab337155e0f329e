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

/**
 * The caller's effective role: owning the Dock beats any grant. Only the owner is ever "owner": a grant gives
 * editor or viewer, and a dock_members row stored with role `owner` (from before grants were limited) counts as
 * an editor, never as an owner (issue 16, item 6).
 */
export const roleOf = (principal: Principal, dock: DockAccess): Role | null => {
  if (principal.userId === null) return null
  if (principal.userId === dock.ownerId) return "owner"
  if (dock.grant === "owner") return "editor"
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

/**
 * What a write would do beyond changing content: who can see, find or copy a Dock or its Micro DB, or anything
 * else a sandbox token may not do.
 */
export interface Exposure {
  readonly visibility?: "private" | "public" | undefined
  readonly discoverable?: boolean | undefined
  readonly allowForks?: boolean | undefined
  readonly publish?: boolean | undefined
  readonly share?: boolean | undefined
  readonly grant?: boolean | undefined
  readonly fork?: boolean | undefined
  readonly createDock?: boolean | undefined
}

/** A sandbox token may author inside its sandbox and nothing more. */
export const checkSandboxExposure = (
  principal: Principal,
  exposure: Exposure
): Effect.Effect<void, PermissionDenied> => {
  if (!principal.sandbox) return Effect.void
  const refused = [
    exposure.visibility === "public" ? "make a Dock public" : null,
    exposure.discoverable === true ? "make a Dock discoverable" : null,
    exposure.allowForks === true ? "allow forks" : null,
    exposure.publish ? "publish" : null,
    exposure.share ? "create share links" : null,
    exposure.grant ? "grant collaborators" : null,
    exposure.fork ? "fork Docks" : null,
    exposure.createDock ? "create Docks" : null
  ].filter((what) => what !== null)
  if (refused.length === 0) return Effect.void
  return Effect.fail(
    new PermissionDenied({
      message: `A sandbox token cannot ${refused.join(", ")}; claim the sandbox first (see /auth.md)`,
      details: { sandbox: true }
    })
  )
}

/**
 * Publishing: the one check for every setting of who can see, find or copy a Dock or its Micro DB (visibility,
 * discoverable, allow_forks, on any path) and for grants. Setting any of them, whatever the value, is the owner's
 * alone (an editor could otherwise expose the owner's private data); exposing anything is never a sandbox
 * token's. Writes that set none of them need only checkWrite.
 */
export const checkPublish = (
  principal: Principal,
  dock: DockAccess,
  exposure: Exposure = { publish: true }
): Effect.Effect<void, NotFound | Unauthorized | PermissionDenied> =>
  Effect.gen(function*() {
    yield* checkOwner(principal, dock)
    yield* checkSandboxExposure(principal, exposure)
  })

/** Whether a write sets any publishing setting (a given visibility, discoverable or allow_forks, whatever its value). */
export const setsPublishing = (exposure: Exposure): boolean =>
  exposure.visibility !== undefined || exposure.discoverable !== undefined || exposure.allowForks !== undefined

/**
 * Deleting a Dock: the owner's, never a sandbox token's. An unclaimed sandbox is deleted by the sweep after its
 * claim window; deleted earlier, its registration would have nothing left to claim (spec §3: a sandbox token
 * authors inside its sandbox, nothing more).
 */
export const checkDeleteDock = (
  principal: Principal,
  dock: DockAccess
): Effect.Effect<void, NotFound | Unauthorized | PermissionDenied> =>
  Effect.gen(function*() {
    yield* checkOwner(principal, dock)
    if (principal.sandbox) {
      return yield* new PermissionDenied({
        message:
          "A sandbox token cannot delete its sandbox: unclaimed, it is deleted after the claim window; claim it first",
        details: { sandbox: true }
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
