/** Users: people and anonymous agents. The wire shape is what the admin API and `dock users --json` show. */
import { Schema } from "effect"
import { DockId, UserId } from "../Ids.ts"

export const UserKind = Schema.Literal("person", "anonymous")
export type UserKind = typeof UserKind.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  username: Schema.String,
  email: Schema.NullOr(Schema.String),
  kind: UserKind,
  confirmed: Schema.Boolean,
  default_bucket_id: Schema.NullOr(DockId)
}) {}

export const USERNAME_MAX = 32
export const EMAIL_MAX = 254

/** Operator input for creating a person. Users created by an operator are confirmed. */
export class CreateUser extends Schema.Class<CreateUser>("CreateUser")({
  email: Schema.String.pipe(Schema.maxLength(EMAIL_MAX)),
  username: Schema.optional(Schema.String.pipe(Schema.maxLength(USERNAME_MAX)))
}) {}
