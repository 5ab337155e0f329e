/** Users: people and anonymous agents. The wire shape is what the admin API and `dock users --json` show. */
import { Effect, Schema } from "effect"
import { ValidationError } from "../Errors.ts"
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

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** The one email rule: trimmed, lower-cased, at most 254 characters, something@domain.tld. */
export const normalizeEmail = (email: string): Effect.Effect<string, ValidationError> => {
  const normalized = email.trim().toLowerCase()
  return normalized.length <= EMAIL_MAX && EMAIL.test(normalized)
    ? Effect.succeed(normalized)
    : Effect.fail(new ValidationError({ message: "email is not a valid email address", details: { field: "email" } }))
}
