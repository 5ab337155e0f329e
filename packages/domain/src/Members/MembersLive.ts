/** The Members rules: the operator names the Dock and the user; an owner needs no grant on their own Dock. */
import { Clock, Effect, Layer } from "effect"
import { Accounts } from "../Accounts/Accounts.ts"
import { Docks } from "../Docks/Docks.ts"
import { NotFound, ValidationError } from "../Errors.ts"
import type { UserId } from "../Ids.ts"
import { Member, type Role } from "./Member.ts"
import { Members } from "./Members.ts"
import { makeMembersRepo } from "./MembersRepo.ts"

export const MembersLive = Layer.effect(
  Members,
  Effect.gen(function*() {
    const repo = yield* makeMembersRepo
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
        return yield* new ValidationError({
          message: `${user.username} owns this Dock already`,
          details: { field: "user" }
        })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* repo.upsert(dock.id, user.id, role, now)
      return new Member({ bucket_id: dock.id, user_id: user.id, username: user.username, role })
    })

    const list = Effect.fn("Members.list")(function*(dockName: string) {
      const dock = yield* docks.forOperator(dockName)
      const rows = yield* repo.list(dock.id)
      return rows.map((row) => new Member({ bucket_id: dock.id, ...row }))
    })

    const remove = Effect.fn("Members.remove")(function*(dockName: string, userName: string) {
      const dock = yield* docks.forOperator(dockName)
      const user = yield* findUser(userName)
      const removed = yield* repo.remove(dock.id, user.id)
      if (removed === undefined) {
        return yield* new NotFound({ message: `${user.username} has no grant on this Dock` })
      }
      return new Member({ bucket_id: dock.id, user_id: user.id, username: user.username, role: removed })
    })

    return { add, list, remove }
  })
)
