/**
 * Collaborators: owner/editor/viewer grants on a Dock, as the operator manages them (admin API, `dock members`).
 * Editors can write and see the Dock in list_my_buckets; viewers can read a private Dock.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { PgClient } from "@effect/sql-pg"
import { Accounts } from "../Accounts/Accounts.ts"
import { Docks } from "../Docks/Docks.ts"
import { NotFound, ValidationError } from "../Errors.ts"
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

export class Members extends Context.Tag("@dock/domain/Members")<Members, {
  /** Grants (or changes) a role; the Dock by id or `owner/slug`, the user by email, username or id. */
  readonly add: (dock: string, user: string, role: Role) => Effect.Effect<Member, NotFound | ValidationError>
  readonly list: (dock: string) => Effect.Effect<ReadonlyArray<Member>, NotFound | ValidationError>
  readonly remove: (dock: string, user: string) => Effect.Effect<Member, NotFound | ValidationError>
}>() {}

export const MembersLive = Layer.effect(
  Members,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const docks = yield* Docks
    const accounts = yield* Accounts

    const findUser = (name: string) =>
      accounts.findByIdentifier(name).pipe(
        Effect.catchTag("NotFound", () => accounts.findById(name as UserId)),
        Effect.mapError(() => new NotFound({ message: `No user "${name}"`, details: { field: "user" } }))
      )

    const add = Effect.fn("Members.add")(function*(dockName: string, userName: string, role: Role) {
      const dock = yield* docks.forOperator(dockName)
      const user = yield* findUser(userName)
      if (user.id === dock.owner.id) {
        return yield* new ValidationError({ message: `${user.username} owns this Dock already`, details: { field: "user" } })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* sql`insert into dock_members (dock_id, user_id, role, created_at) values (${dock.id}, ${user.id}, ${role}, ${now})
        on conflict (dock_id, user_id) do update set role = excluded.role`.pipe(Effect.orDie)
      return new Member({ bucket_id: dock.id, user_id: user.id, username: user.username, role })
    })

    const list = Effect.fn("Members.list")(function*(dockName: string) {
      const dock = yield* docks.forOperator(dockName)
      const rows = yield* sql<{ user_id: UserId; username: string; role: Role }>`select m.user_id, u.username, m.role
        from dock_members m join users u on u.id = m.user_id where m.dock_id = ${dock.id}
        order by m.created_at, u.username`.pipe(Effect.orDie)
      return rows.map((row) => new Member({ bucket_id: dock.id, ...row }))
    })

    const remove = Effect.fn("Members.remove")(function*(dockName: string, userName: string) {
      const dock = yield* docks.forOperator(dockName)
      const user = yield* findUser(userName)
      const rows = yield* sql<{ role: Role }>`delete from dock_members where dock_id = ${dock.id} and user_id = ${user.id}
        returning role`.pipe(Effect.orDie)
      if (rows[0] === undefined) {
        return yield* new NotFound({ message: `${user.username} has no grant on this Dock` })
      }
      return new Member({ bucket_id: dock.id, user_id: user.id, username: user.username, role: rows[0].role })
    })

    return { add, list, remove }
  })
)
