/** The Accounts port: creating and finding users. Every user is created together with a default Dock. */
import { Context, type Effect } from "effect"
import type { Conflict, NotFound, ValidationError } from "../Errors.ts"
import type { UserId } from "../Ids.ts"
import type { User, UserKind } from "./User.ts"

export interface NewUser {
  readonly email: string | null
  /** Derived from the email (or "agent") when absent. */
  readonly username?: string | undefined
  readonly kind: UserKind
  readonly confirmed: boolean
  readonly identityProvider?: string | undefined
}

export class Accounts extends Context.Tag("@dock/domain/Accounts")<Accounts, {
  readonly create: (input: NewUser) => Effect.Effect<User, ValidationError | Conflict>
  /** A person added by an operator (admin API, `dock users create`): confirmed from the start. */
  readonly createByOperator: (
    input: { readonly email: string; readonly username?: string | undefined }
  ) => Effect.Effect<
    User,
    ValidationError | Conflict
  >
  readonly findById: (id: UserId) => Effect.Effect<User, NotFound>
  /** By username or (case-insensitive) email, as operators type them. */
  readonly findByIdentifier: (identifier: string) => Effect.Effect<User, NotFound>
  readonly list: (
    options?: { readonly limit?: number | undefined; readonly offset?: number | undefined }
  ) => Effect.Effect<ReadonlyArray<User>>
}>() {}
