/** The Accounts rules: username and email validation, and one transaction for a user and their default Dock. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { transactional } from "../Database/Transactional.ts"
import { Docks } from "../Docks/Docks.ts"
import { Conflict, NotFound, ValidationError } from "../Errors.ts"
import { UserId } from "../Ids.ts"
import { isSlug, slugify } from "../Slug.ts"
import { traced } from "../Spans.ts"
import { Accounts, type NewUser } from "./Accounts.ts"
import { makeAccountsRepo } from "./AccountsRepo.ts"
import { normalizeEmail, USERNAME_MAX } from "./User.ts"

/** Names that would be confusing as `owner_username` in paths. */
const RESERVED = new Set(["admin", "api", "app", "mcp", "agent", "anonymous", "root", "system", "dock", "public"])

const checkUsername = (username: string) =>
  isSlug(username, USERNAME_MAX) && !RESERVED.has(username)
    ? Effect.succeed(username)
    : Effect.fail(
      new ValidationError({
        message:
          `username must be 1-${USERNAME_MAX} lowercase letters, digits and single hyphens (and not a reserved name)`,
        details: { field: "username", value: username }
      })
    )

const randomSuffix = () => Math.floor(1000 + Math.random() * 9000).toString()

export const AccountsLive = Layer.effect(
  Accounts,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* makeAccountsRepo
    const docks = yield* Docks

    const insertWithDefaultDock = (input: NewUser, email: string | null, username: string) =>
      transactional(
        sql,
        Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          const userId = yield* repo.insert({
            username,
            email,
            kind: input.kind,
            confirmed: input.confirmed,
            identity_provider: input.identityProvider ?? null,
            now
          })
          const dockId = yield* docks.createOwned(userId, {
            title: `${username}'s Dock`,
            slug: username,
            description: null,
            visibility: "private",
            discoverable: false,
            allowForks: false,
            tags: [],
            topics: []
          })
          yield* repo.setDefaultDock(userId, dockId)
          return userId
        })
      ).pipe(
        Effect.catchTag("ValidationError", Effect.die) // the default Dock's slug is the username: always free
      )

    const create = traced("Accounts.create")(function*(input: NewUser) {
      const email = input.email === null ? null : yield* normalizeEmail(input.email)
      const requested = input.username === undefined ? undefined : yield* checkUsername(input.username.trim())
      const derived = slugify(email?.split("@")[0] ?? "agent", USERNAME_MAX - 5) || "user"
      const base = RESERVED.has(derived) ? `${derived}-user` : derived
      for (let attempt = 0; attempt < 20; attempt++) {
        const username = requested ?? (attempt === 0 ? base : `${base}-${randomSuffix()}`)
        const result = yield* Effect.either(insertWithDefaultDock(input, email, username))
        if (result._tag === "Right") return yield* repo.findById(result.right).pipe(Effect.map(Option.getOrThrow))
        if (result.left.field === "email") {
          return yield* new Conflict({ message: "A user with this email already exists", details: { field: "email" } })
        }
        if (requested !== undefined) {
          return yield* new Conflict({
            message: `The username "${requested}" is taken`,
            details: { field: "username" }
          })
        }
      }
      return yield* Effect.dieMessage("Could not find a free username after 20 attempts")
    })

    const notFound = () => new NotFound({ message: "User not found" })

    const findById = traced("Accounts.findById")(function*(id: UserId) {
      if (!Schema.is(UserId)(id)) return yield* notFound()
      return yield* repo.findById(id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound()), onSome: Effect.succeed }))
      )
    })

    const findByIdentifier = traced("Accounts.findByIdentifier")(function*(identifier: string) {
      return yield* repo.findByIdentifier(identifier.trim()).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound()), onSome: Effect.succeed }))
      )
    })

    const list = traced("Accounts.list")(
      function*(options?: { readonly limit?: number | undefined; readonly offset?: number | undefined }) {
        const limit = Math.min(Math.max(options?.limit ?? 100, 1), 1000)
        return yield* repo.list(limit, Math.max(options?.offset ?? 0, 0))
      }
    )

    const createByOperator = (input: { readonly email: string; readonly username?: string | undefined }) =>
      create({ email: input.email, username: input.username, kind: "person", confirmed: true })

    return { create, createByOperator, findById, findByIdentifier, list }
  })
)
