/** User rows: SQL in, typed rows out. SqlError is a defect here, except the taken name or email a rule answers. */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Data, Effect, Schema } from "effect"
import { isUniqueViolation } from "../Database/SqlErrors.ts"
import { DockId, UserId } from "../Ids.ts"
import { User } from "./User.ts"

const userColumns = (sql: SqlClient.SqlClient) =>
  sql`select id, username, email, kind, confirmed, default_dock_id as default_bucket_id from users`

export interface InsertUser {
  readonly username: string
  readonly email: string | null
  readonly kind: "person" | "anonymous"
  readonly confirmed: boolean
  readonly identity_provider: string | null
  readonly now: Date
}

/**
 * The username or email of a new user belongs to someone else: seen by the check before the insert or, when two
 * creates race, by the unique violation of the insert. A failure, so that the caller's transaction rolls back.
 */
export class UserTaken extends Data.TaggedError("UserTaken")<{ readonly field: "email" | "username" }> {}

export const makeAccountsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const findById = SqlSchema.findOne({
    Request: UserId,
    Result: User,
    execute: (id) => sql`${userColumns(sql)} where id = ${id}`
  })
  const findByIdentifier = SqlSchema.findOne({
    Request: Schema.String,
    Result: User,
    execute: (identifier) =>
      sql`${userColumns(sql)} where username = ${identifier.toLowerCase()} or email = ${identifier.toLowerCase()}
        order by (username = ${identifier.toLowerCase()}) desc limit 1`
  })
  const list = SqlSchema.findAll({
    Request: Schema.Struct({ limit: Schema.Number, offset: Schema.Number }),
    Result: User,
    execute: ({ limit, offset }) => sql`${userColumns(sql)} order by created_at, id limit ${limit} offset ${offset}`
  })

  /** Inserts unless the username or email is taken; fails with which one collided otherwise. */
  const insert = (user: InsertUser) =>
    Effect.gen(function*() {
      const taken = yield* sql<{ username_taken: boolean; email_taken: boolean }>`select
          exists(select 1 from users where username = ${user.username}) as username_taken,
          exists(select 1 from users where email = ${user.email}) as email_taken`
      if (taken[0]?.email_taken) return yield* new UserTaken({ field: "email" })
      if (taken[0]?.username_taken) return yield* new UserTaken({ field: "username" })
      const rows = yield* sql<{ id: UserId }>`insert into users (username, email, kind, confirmed, identity_provider,
          created_at, updated_at)
        values (${user.username}, ${user.email}, ${user.kind}, ${user.confirmed}, ${user.identity_provider},
          ${user.now}, ${user.now})
        returning id`
      return rows[0]!.id
    }).pipe(
      Effect.catchTag("SqlError", (error) =>
        isUniqueViolation(error, "users_email_key")
          ? Effect.fail(new UserTaken({ field: "email" }))
          : isUniqueViolation(error, "users_username_key")
          ? Effect.fail(new UserTaken({ field: "username" }))
          : Effect.die(error))
    )

  const setDefaultDock = (userId: UserId, dockId: DockId) =>
    sql`update users set default_dock_id = ${dockId} where id = ${userId}`.pipe(Effect.asVoid, Effect.orDie)

  return {
    findById: (id: UserId) => Effect.orDie(findById(id)),
    findByIdentifier: (identifier: string) => Effect.orDie(findByIdentifier(identifier)),
    list: (limit: number, offset: number) => Effect.orDie(list({ limit, offset })),
    insert,
    setDefaultDock
  } as const
})
