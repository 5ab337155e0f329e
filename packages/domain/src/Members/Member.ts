/**
 * A collaborator's grant on a Dock: editor or viewer. Only the Dock's owner is its owner: no grant carries owner
 * powers (issue 16, item 6). A row stored with role `owner` before that rule counts as `editor` (Policy.roleOf).
 */
import { Schema } from "effect"
import { DockId, UserId } from "../Ids.ts"

/** What a grant can give. */
export const Role = Schema.Literal("editor", "viewer")
export type Role = typeof Role.Type

/** A stored role as the table may hold it (`owner` only from before the rule); `grantedRole` reads it. */
export type StoredRole = "owner" | "editor" | "viewer"

/** A stored grant's role as it acts: an `owner` row is an editor at most. */
export const grantedRole = (stored: StoredRole): Role => stored === "viewer" ? "viewer" : "editor"

/** `dock members … --json`: `{bucket_id, user_id, role}` (architecture §14), plus the username for people. */
export class Member extends Schema.Class<Member>("Member")({
  bucket_id: DockId,
  user_id: UserId,
  username: Schema.String,
  role: Role
}) {}
