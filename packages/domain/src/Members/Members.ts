/**
 * Collaborators: editor/viewer grants on a Dock. Editors can write and see the Dock in list_my_buckets; viewers
 * can read a private Dock. No grant ever makes an owner. Two ways in: the operator's (admin API, `dock members`),
 * which names the Dock and checks nothing, and the owner's (the web app), which acts as the CurrentPrincipal on
 * a Dock the one resolver found and is the owner's alone, never a sandbox token's nor on an unclaimed sandbox.
 */
import { Context, type Effect } from "effect"
import type { Dock } from "../Docks/Dock.ts"
import type { ResolvedDock } from "../Docks/Docks.ts"
import type { NotFound, PermissionDenied, RateLimited, Unauthorized, ValidationError } from "../Errors.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { Member, Role } from "./Member.ts"

type OwnerError = NotFound | Unauthorized | PermissionDenied | ValidationError | RateLimited

export class Members extends Context.Tag("@dock/domain/Members")<Members, {
  /**
   * Grants (or changes) a role; the Dock by id or `owner/slug`, the user by email, username or id. A role other
   * than editor or viewer (`owner`), the owner themself and an unclaimed sandbox are `validation_error`.
   */
  readonly add: (dock: string, user: string, role: Role) => Effect.Effect<Member, NotFound | ValidationError>
  readonly list: (dock: string) => Effect.Effect<ReadonlyArray<Member>, NotFound | ValidationError>
  readonly remove: (dock: string, user: string) => Effect.Effect<Member, NotFound | ValidationError>
  /**
   * The owner grants editor or viewer to a person named by username or email (an unknown one is `not_found`,
   * field `user`). Not the owner: `permission_denied` (or `not_found` when they cannot see the Dock); a sandbox
   * token or an unclaimed sandbox Dock: `permission_denied`.
   */
  readonly grant: (
    dock: ResolvedDock,
    user: string,
    role: Role
  ) => Effect.Effect<Member, OwnerError, CurrentPrincipal>
  /** The owner revokes a grant (by username or email); no grant is `not_found`. */
  readonly revoke: (dock: ResolvedDock, user: string) => Effect.Effect<Member, OwnerError, CurrentPrincipal>
  /**
   * The Docks shared with the caller (their grants, editor or viewer), each as the one resolver finds it for them;
   * at most `limit`. The public and a caller without a user have none.
   */
  readonly sharedWithMe: (
    limit: number
  ) => Effect.Effect<ReadonlyArray<{ readonly dock: Dock; readonly role: Role }>, never, CurrentPrincipal>
  /** The grants on the Dock, for its owner. */
  readonly members: (dock: ResolvedDock) => Effect.Effect<ReadonlyArray<Member>, OwnerError, CurrentPrincipal>
}>() {}
