// The example of README "Embedding the domain layer in your tests", kept runnable: the suite runs it.
import { Accounts, CurrentPrincipal, Docks, userPrincipal } from "@dock/domain"
import { DomainTest } from "@dock/domain/testing"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"

layer(DomainTest)("embedding the domain layer", (it) => {
  it.effect("a new user owns a private default Dock and can create a public one", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const docks = yield* Docks
      const ada = yield* accounts.create({ email: "ada@example.com", kind: "person", confirmed: true })

      const notes = yield* docks.create({ title: "Field notes", visibility: "public" }).pipe(
        Effect.provideService(CurrentPrincipal, userPrincipal(ada))
      )

      expect(notes.slug).toBe("field-notes")
      expect(notes.owner.username).toBe("ada")
      expect(notes.visibility).toBe("public")
    }))
})
