/**
 * How the operator names a Dock (admin API, `dock members`, `dock sources`): its id or `owner/slug`. A bare slug
 * is refused, since an operator acts for no user whose Docks it could mean. Hidden Docks are not found.
 */
import { Effect, Option, Schema } from "effect"
import { NotFound, ValidationError } from "../Errors.ts"
import { DockId } from "../Ids.ts"
import { dockRefOf } from "./Dock.ts"
import { makeDocksRepo } from "./DocksRepo.ts"

export const makeOperatorDocks = Effect.gen(function*() {
  const docks = yield* makeDocksRepo
  return (name: string) =>
    Effect.gen(function*() {
      const ref = dockRefOf(name)
      if (ref._tag === "BySlug") {
        return yield* new ValidationError({
          message: `Name the Dock by its id or as owner/slug, not "${name}"`,
          details: { field: "dock" }
        })
      }
      const found = ref._tag === "ById"
        ? (Schema.is(DockId)(ref.id) ? yield* docks.findById(ref.id) : Option.none())
        : yield* docks.findByPath(ref.owner.toLowerCase(), ref.slug)
      return yield* Option.match(found, {
        onNone: () => Effect.fail(new NotFound({ message: `No Dock "${name}"`, details: { field: "dock" } })),
        onSome: Effect.succeed
      })
    })
})
