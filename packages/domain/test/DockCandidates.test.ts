// Docks.candidates (what `/b/<slug>` without an owner means for the caller) agrees with the one resolver: one
// candidate is exactly the Dock `named({ bucket: slug })` resolves to, several are exactly its `bad_request`
// candidates, none is its `not_found`; own Docks outrank collaborations, which outrank public ones; a Dock the caller
// cannot read is never a candidate; a sandbox token weighs only its sandbox.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  Accounts,
  anonymousPrincipal,
  CurrentPrincipal,
  type Dock,
  Docks,
  type NewDock,
  type Principal,
  type User,
  userPrincipal
} from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)

const newUser = Effect.flatMap(
  Accounts,
  (accounts) => accounts.create({ email: `candidates-${unique()}@example.com`, kind: "person", confirmed: true })
)

const as = (principal: Principal) => Effect.provideService(CurrentPrincipal, principal)
const person = (user: User) => userPrincipal({ id: user.id, username: user.username })

const create = (user: User, input: NewDock) =>
  Effect.flatMap(Docks, (docks) => docks.create(input)).pipe(as(person(user)))

const grant = (dock: Dock, user: User, role: "editor" | "viewer") =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`insert into dock_members ${sql.insert({ dock_id: dock.id, user_id: user.id, role, created_at: new Date() })}`
  )

/** The candidates' `owner/slug` paths, sorted. */
const candidates = (principal: Principal, slug: string) =>
  Effect.flatMap(Docks, (docks) => docks.candidates(slug)).pipe(
    as(principal),
    Effect.map((found) => found.map(({ dock }) => `${dock.owner.username}/${dock.slug}`).sort())
  )

/** What the one resolver answers for the bare slug: the Dock's path, or the error's code and candidates. */
const resolved = (principal: Principal, slug: string) =>
  Effect.flatMap(Docks, (docks) => docks.named({ bucket: slug })).pipe(
    as(principal),
    Effect.map(({ dock }) => ({ path: `${dock.owner.username}/${dock.slug}` })),
    Effect.catchAll((error) =>
      Effect.succeed({
        code: error.code,
        candidates: [...((error.details as { candidates?: Array<string> } | undefined)?.candidates ?? [])].sort()
      })
    )
  )

layer(DomainTest)("Docks.candidates", (it) => {
  it.effect("none, one and several, as the one resolver weighs them", () =>
    Effect.gen(function*() {
      const ada = yield* newUser
      const bo = yield* newUser
      const cy = yield* newUser
      const slug = `notes-${unique()}`

      expect(yield* candidates(anonymousPrincipal, slug)).toEqual([])
      expect(yield* resolved(anonymousPrincipal, slug)).toEqual({ code: "not_found", candidates: [] })

      const adas = yield* create(ada, { title: "Ada's notes", slug, visibility: "public" })
      expect(yield* candidates(anonymousPrincipal, slug)).toEqual([`${ada.username}/${slug}`])
      expect(yield* resolved(anonymousPrincipal, slug)).toEqual({ path: `${ada.username}/${slug}` })

      yield* create(bo, { title: "Bo's notes", slug, visibility: "public" })
      const cys = yield* create(cy, { title: "Cy's notes", slug, visibility: "private" })
      const both = [`${ada.username}/${slug}`, `${bo.username}/${slug}`].sort()
      expect(yield* candidates(anonymousPrincipal, slug)).toEqual(both)
      expect(yield* resolved(anonymousPrincipal, slug)).toEqual({ code: "bad_request", candidates: both })

      // Own first: no ambiguity for an owner.
      expect(yield* candidates(person(ada), slug)).toEqual([`${ada.username}/${slug}`])
      expect(yield* candidates(person(cy), slug)).toEqual([`${cy.username}/${slug}`])
      expect(yield* resolved(person(cy), slug)).toEqual({ path: `${cy.username}/${slug}` })

      // A collaboration outranks public Docks; a private Dock is nobody else's candidate.
      const dee = yield* newUser
      expect(yield* candidates(person(dee), slug)).toEqual(both)
      yield* grant(cys, dee, "viewer")
      expect(yield* candidates(person(dee), slug)).toEqual([`${cy.username}/${slug}`])
      expect(yield* resolved(person(dee), slug)).toEqual({ path: `${cy.username}/${slug}` })

      // A sandbox token weighs only its sandbox: public Docks with the slug are not its candidates.
      const sandboxed: Principal = { ...person(ada), sandbox: true, allowedBucketIds: [adas.id], tokenId: null }
      expect(yield* candidates(sandboxed, slug)).toEqual([`${ada.username}/${slug}`])
      const elsewhere: Principal = { ...person(dee), sandbox: true, allowedBucketIds: [], tokenId: null }
      expect(yield* candidates(elsewhere, slug)).toEqual([])
    }))
})
