/**
 * Shared fixtures for the Docks, resolver and Members tests: unique users, acting as a principal, Docks made by
 * their owner and grants made the way operators make them (`Members.add`).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import {
  Accounts,
  CurrentPrincipal,
  type Dock,
  type DockRef,
  Docks,
  type DockTarget,
  Members,
  type NewDock,
  type Principal,
  type User,
  userPrincipal
} from "../../src/index.ts"

/** Lowercase letters and digits, unique per call: keeps data apart between tests sharing one database. */
export const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)

/** A confirmed person with a unique email (and so a unique username and default Dock). */
export const newUser = (prefix = "user") =>
  Effect.flatMap(
    Accounts,
    (accounts) => accounts.create({ email: `${prefix}-${unique()}@example.com`, kind: "person", confirmed: true })
  )

export const as = (principal: Principal) => Effect.provideService(CurrentPrincipal, principal)

/** A Dock created by `owner` with full rights. */
export const createDock = (owner: User, input: NewDock) =>
  Effect.flatMap(Docks, (docks) => docks.create(input)).pipe(as(userPrincipal(owner)))

/** An operator grant on the Dock (by id) for the user (by username). */
export const grant = (dock: Dock, user: User, role: "editor" | "viewer") =>
  Effect.flatMap(Members, (members) => members.add(dock.id, user.username, role))

/**
 * A dock_members row with role `owner`, as a database from before grants were limited to editor and viewer may
 * hold (no port writes one any more): it must act as an editor at most.
 */
export const storedOwnerGrant = (dock: Dock, user: User) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`insert into dock_members (dock_id, user_id, role, created_at) values (${dock.id}, ${user.id}, 'owner', now())
      on conflict (dock_id, user_id) do update set role = 'owner'`
  ).pipe(Effect.asVoid)

export const resolveAs = (principal: Principal, target: DockTarget) =>
  Effect.flatMap(Docks, (docks) => docks.find(target)).pipe(as(principal))

/** The Dock a reference names, as the caller resolves it (for the port methods that take a ResolvedDock). */
export const resolvedAt = (ref: DockRef) =>
  Effect.flatMap(
    Docks,
    (docks) =>
      docks.named({
        bucket: ref._tag === "ByPath" ? `${ref.owner}/${ref.slug}` : ref._tag === "ById" ? ref.id : ref.slug
      })
  )

/** `owner_username/dock_slug` */
export const pathOf = (dock: Dock) => `${dock.owner.username}/${dock.slug}`

export const NOT_FOUND_BODY = { error: { code: "not_found", status: 404, message: "Dock not found" } } as const
