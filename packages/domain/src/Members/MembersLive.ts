/**
 * The Members rules: no grant makes an owner (only editor or viewer are granted; a stored `owner` row is listed
 * and acts as editor); an owner needs no grant on their own Dock; an unclaimed sandbox gets no grants.
 */
import { Clock, Effect, Layer } from "effect"
import { Accounts } from "../Accounts/Accounts.ts"
import type { Dock } from "../Docks/Dock.ts"
import { Docks, type ResolvedDock } from "../Docks/Docks.ts"
import { NotFound, PermissionDenied, ValidationError } from "../Errors.ts"
import type { UserId } from "../Ids.ts"
import { checkOwner, checkPublish } from "../Policy.ts"
import { CurrentPrincipal } from "../Principal.ts"
import { traced } from "../Spans.ts"
import { grantedRole, Member, type Role } from "./Member.ts"
import { Members } from "./Members.ts"
import { makeMembersRepo } from "./MembersRepo.ts"

const noSuchUser = (name: string, person = false) =>
  new NotFound({
    message: person && name.includes("@")
      ? `No account has the email "${name}": the person must sign in to Dock once before they can be granted access`
      : `No user "${name}"`,
    details: { field: "user" }
  })

export const MembersLive = Layer.effect(
  Members,
  Effect.gen(function*() {
    const repo = yield* makeMembersRepo
    const docks = yield* Docks
    const accounts = yield* Accounts

    /** The operator's forms: email, username or id. */
    const findUser = (name: string) =>
      accounts.findByIdentifier(name).pipe(
        Effect.catchTag("NotFound", () => accounts.findById(name as UserId)),
        Effect.mapError(() => noSuchUser(name))
      )

    /** A person's forms (the web app): username or email. */
    const findPerson = (name: string) =>
      accounts.findByIdentifier(name.trim()).pipe(Effect.mapError(() => noSuchUser(name, true)))

    const upsert = traced("Members.upsert")(
      function*(dock: Dock, userName: string, role: Role, byOperator: boolean) {
        // The wire schema refuses other roles; this holds for every caller, whatever it passes.
        if (role !== "editor" && role !== "viewer") {
          return yield* new ValidationError({
            message: "A grant is editor or viewer: only the Dock's owner is its owner",
            details: { field: "role" }
          })
        }
        if (yield* repo.isSandbox(dock.id)) {
          return yield* new ValidationError({
            message: "An unclaimed sandbox Dock cannot have collaborators: claim it first (see /auth.md)",
            details: { field: "dock" }
          })
        }
        const user = yield* (byOperator ? findUser(userName) : findPerson(userName))
        if (user.id === dock.owner.id) {
          return yield* new ValidationError({
            message: `${user.username} owns this Dock already`,
            details: { field: "user" }
          })
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* repo.upsert(dock.id, user.id, role, now)
        return new Member({ bucket_id: dock.id, user_id: user.id, username: user.username, role }, true)
      }
    )

    const listOf = (dock: Dock) =>
      Effect.map(
        repo.list(dock.id),
        (rows) => rows.map((row) => new Member({ bucket_id: dock.id, ...row, role: grantedRole(row.role) }, true))
      )

    const removeFrom = traced("Members.removeFrom")(function*(dock: Dock, userName: string, byOperator: boolean) {
      const user = yield* (byOperator ? findUser(userName) : findPerson(userName))
      const removed = yield* repo.remove(dock.id, user.id)
      if (removed === undefined) {
        return yield* new NotFound({ message: `${user.username} has no grant on this Dock` })
      }
      return new Member(
        { bucket_id: dock.id, user_id: user.id, username: user.username, role: grantedRole(removed) },
        true
      )
    })

    const add = traced("Members.add")(function*(dockName: string, userName: string, role: Role) {
      return yield* upsert(yield* docks.forOperator(dockName), userName, role, true)
    })

    const list = traced("Members.list")(function*(dockName: string) {
      return yield* listOf(yield* docks.forOperator(dockName))
    })

    const remove = traced("Members.remove")(function*(dockName: string, userName: string) {
      return yield* removeFrom(yield* docks.forOperator(dockName), userName, true)
    })

    /** The owner's, never a sandbox token's nor on an unclaimed sandbox. */
    const checkGrant = (resolved: ResolvedDock) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        yield* checkPublish(principal, resolved.access, { grant: true })
        if (resolved.sandbox) {
          return yield* new PermissionDenied({
            message: "An unclaimed sandbox Dock cannot have collaborators: claim it first (see /auth.md)",
            details: { sandbox: true }
          })
        }
      })

    const grant = traced("Members.grant")(function*(resolved: ResolvedDock, userName: string, role: Role) {
      yield* checkGrant(resolved)
      return yield* upsert(resolved.dock, userName, role, false)
    })

    const revoke = traced("Members.revoke")(function*(resolved: ResolvedDock, userName: string) {
      yield* checkGrant(resolved)
      return yield* removeFrom(resolved.dock, userName, false)
    })

    const members = traced("Members.members")(function*(resolved: ResolvedDock) {
      yield* checkOwner(yield* CurrentPrincipal, resolved.access)
      return yield* listOf(resolved.dock)
    })

    const sharedWithMe = traced("Members.sharedWithMe")(function*(limit: number) {
      const principal = yield* CurrentPrincipal
      if (principal.userId === null) return []
      const grants = yield* repo.grantsOf(principal.userId, limit)
      // Each through the resolver's read rule (a sandbox token sees only its own Dock, …); what fails is left out.
      const found = yield* Effect.forEach(grants, (grant) =>
        docks.byId(grant.dock_id).pipe(
          Effect.map((resolved) => [{ dock: resolved.dock, role: grantedRole(grant.role) }]),
          Effect.orElseSucceed(() => [])
        ))
      return found.flat()
    })

    return { add, list, remove, grant, revoke, members, sharedWithMe }
  })
)
