/** A collaborator's grant on a Dock: owner, editor or viewer. */
import { Schema } from "effect"
import { DockId, UserId } from "../Ids.ts"

export const Role = Schema.Literal("owner", "editor", "viewer")
export type Role = typeof Role.Type

/** `dock members … --json`: `{bucket_id, user_id, role}` (architecture §14), plus the username for people. */
export class Member extends Schema.Class<Member>("Member")({
  bucket_id: DockId,
  user_id: UserId,
  username: Schema.String,
  role: Role
}) {}
