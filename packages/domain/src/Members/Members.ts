/**
 * Collaborators: owner/editor/viewer grants on a Dock, as the operator manages them (admin API, `dock members`).
 * Editors can write and see the Dock in list_my_buckets; viewers can read a private Dock.
 */
import { Context, type Effect } from "effect"
import type { NotFound, ValidationError } from "../Errors.ts"
import type { Member, Role } from "./Member.ts"

export class Members extends Context.Tag("@dock/domain/Members")<Members, {
  /** Grants (or changes) a role; the Dock by id or `owner/slug`, the user by email, username or id. */
  readonly add: (dock: string, user: string, role: Role) => Effect.Effect<Member, NotFound | ValidationError>
  readonly list: (dock: string) => Effect.Effect<ReadonlyArray<Member>, NotFound | ValidationError>
  readonly remove: (dock: string, user: string) => Effect.Effect<Member, NotFound | ValidationError>
}>() {}
