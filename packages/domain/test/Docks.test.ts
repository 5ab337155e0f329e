// Docks over a real database: creation rules (title, slug, tags, topics, defaults, plan cap), who may create,
// attribution, and reading by id or path where a Dock the caller cannot read does not exist.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  Accounts,
  Activity,
  anonymousPrincipal,
  CurrentPrincipal,
  type Dock,
  type DockRef,
  Docks,
  errorBody,
  type NewDock,
  type Principal,
  type TokenId,
  type User,
  type UserId,
  userPrincipal
} from "../src/index.ts"
import { DomainTest, domainTestWith, TEST_BASE_URL } from "../src/testing.ts"
import { resolvedAt } from "./support/Fixtures.ts"

/** Lowercase letters and digits, unique per call: keeps data apart between tests sharing one database. */
const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)

const newUser = Effect.flatMap(
  Accounts,
  (accounts) => accounts.create({ email: `docks-${unique()}@example.com`, kind: "person", confirmed: true })
)

const as = (principal: Principal) => Effect.provideService(CurrentPrincipal, principal)

const create = (principal: Principal, input: NewDock) =>
  Effect.flatMap(Docks, (docks) => docks.create(input)).pipe(as(principal))

const get = (principal: Principal, ref: DockRef) =>
  Effect.map(resolvedAt(ref), (resolved) => resolved.dock).pipe(as(principal))

const access = (principal: Principal, ref: DockRef) =>
  Effect.map(resolvedAt(ref), (resolved) => resolved.access).pipe(as(principal))

const byId = (dock: Dock): DockRef => ({ _tag: "ById", id: dock.id })
const byPath = (dock: Dock): DockRef => ({ _tag: "ByPath", owner: dock.owner.username, slug: dock.slug })

const grant = (dock: Dock, user: User, role: "editor" | "viewer") =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`insert into dock_members ${sql.insert({ dock_id: dock.id, user_id: user.id, role, created_at: new Date() })}`
  )

const countDocks = (ownerId: UserId) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: number }>`select count(*)::int as n from docks where owner_id = ${ownerId}`.pipe(
        Effect.map((rows) => rows[0]!.n)
      )
  )

const NOT_FOUND = { error: { code: "not_found", status: 404, message: "Dock not found" } }

layer(DomainTest)("Docks", (it) => {
  it.effect("creates a Dock with the documented defaults", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const dock = yield* create(userPrincipal(user), { title: `Defaults ${unique()}` })
      expect(dock).toMatchObject({
        owner: { id: user.id, username: user.username },
        visibility: "private",
        discoverable: false,
        allow_forks: false,
        description: null,
        tags: [],
        topics: []
      })
      expect(dock.url).toBe(`${TEST_BASE_URL}/b/${dock.slug}?owner=${user.username}`)
      expect(dock.url).toMatch(/^http:\/\/dock\.test\/b\/defaults-[a-z0-9]+\?owner=[a-z0-9_-]+$/)
      expect(new Date(dock.created_at).toISOString()).toBe(dock.created_at)
      expect(dock.updated_at).toBe(dock.created_at)
    }))

  it.effect("honours the options given at creation", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const dock = yield* create(userPrincipal(user), {
        title: "  Spaced Title  ",
        slug: `opts-${unique()}`,
        visibility: "public",
        discoverable: true,
        allowForks: true,
        description: "  A description.  "
      })
      expect(dock.title).toBe("Spaced Title")
      expect(dock.visibility).toBe("public")
      expect(dock.discoverable).toBe(true)
      expect(dock.allow_forks).toBe(true)
      expect(dock.description).toBe("A description.")
      const blank = yield* create(userPrincipal(user), { title: `Blank ${unique()}`, description: "   " })
      expect(blank.description).toBeNull()
    }))

  it.effect("takes the title from name when title is absent", () =>
    Effect.gen(function*() {
      const dock = yield* create(userPrincipal(yield* newUser), { name: "Named Dock" })
      expect(dock.title).toBe("Named Dock")
      expect(dock.slug).toBe("named-dock")
    }))

  it.effect.each<[string, NewDock]>([
    ["neither title nor name", {}],
    ["an empty title", { title: "" }],
    ["a blank title", { title: "   " }],
    ["a blank name", { name: "\t\n" }],
    ["a title of 201 characters", { title: "t".repeat(201) }]
  ])("refuses %s with validation_error on the title", ([, input]) =>
    Effect.gen(function*() {
      const user = yield* newUser
      const error = yield* Effect.flip(create(userPrincipal(user), input))
      expect(error.code).toBe("validation_error")
      expect(error.details).toEqual({ field: "title" })
      expect(yield* countDocks(user.id)).toBe(1)
    }))

  it.effect("accepts a title of exactly 200 characters", () =>
    Effect.gen(function*() {
      const dock = yield* create(userPrincipal(yield* newUser), { title: "t".repeat(200) })
      expect(dock.title).toHaveLength(200)
      expect(dock.slug).toBe("t".repeat(56))
    }))

  it.effect.each(["Bad Slug", "UPPER", "-lead", "trail-", "dou--ble", "under_score", "ünï", "", "s".repeat(65)])(
    "refuses the slug %j with validation_error on the slug",
    (slug) =>
      Effect.gen(function*() {
        const user = yield* newUser
        const error = yield* Effect.flip(create(userPrincipal(user), { title: "Slugged", slug }))
        expect(error.code).toBe("validation_error")
        expect(error.details).toMatchObject({ field: "slug" })
        expect(yield* countDocks(user.id)).toBe(1)
      })
  )

  it.effect("uses a valid explicit slug as given, up to 64 characters", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const slug = `${unique()}-${"s".repeat(53)}`
      expect(slug).toHaveLength(64)
      expect((yield* create(userPrincipal(user), { title: "Long slug", slug })).slug).toBe(slug)
    }))

  it.effect("refuses an explicit slug the owner already uses, but not one another owner uses", () =>
    Effect.gen(function*() {
      const alice = yield* newUser
      const bob = yield* newUser
      const slug = `shared-${unique()}`
      const first = yield* create(userPrincipal(alice), { title: "First", slug })
      const error = yield* Effect.flip(create(userPrincipal(alice), { title: "Second", slug }))
      expect(error.code).toBe("validation_error")
      expect(error.details).toEqual({ field: "slug", value: slug })
      // the default Dock's slug is the username: taken too
      const own = yield* Effect.flip(create(userPrincipal(alice), { title: "Third", slug: alice.username }))
      expect(own.details).toEqual({ field: "slug", value: alice.username })
      expect(yield* countDocks(alice.id)).toBe(2)

      const other = yield* create(userPrincipal(bob), { title: "Bob's", slug })
      expect(other.slug).toBe(slug)
      expect(other.id).not.toBe(first.id)
      expect((yield* get(userPrincipal(alice), byPath(first))).id).toBe(first.id)
      expect((yield* get(userPrincipal(bob), byPath(other))).id).toBe(other.id)
    }))

  it.effect("derives the slug from the title, accents dropped, with -2, -3 on collision", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const principal = userPrincipal(user)
      const slugs: Array<string> = []
      for (let n = 0; n < 3; n++) slugs.push((yield* create(principal, { title: "Café Déjà Vu" })).slug)
      expect(slugs).toEqual(["cafe-deja-vu", "cafe-deja-vu-2", "cafe-deja-vu-3"])
      // a derived slug steps around an explicit one
      yield* create(principal, { title: "Explicit", slug: "resume" })
      expect((yield* create(principal, { title: "Résumé" })).slug).toBe("resume-2")
    }))

  it.effect("falls back to the slug dock when the title has no letters or digits", () =>
    Effect.gen(function*() {
      const principal = userPrincipal(yield* newUser)
      expect((yield* create(principal, { title: "日本語のドック" })).slug).toBe("dock")
      expect((yield* create(principal, { title: "!!!" })).slug).toBe("dock-2")
    }))

  it.effect("derives distinct slugs for parallel creates with the same title", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const docks = yield* Effect.all(
        Array.from({ length: 10 }, () => create(userPrincipal(user), { title: "Same Title" })),
        { concurrency: "unbounded" }
      )
      expect(docks.map((dock) => dock.slug).sort()).toEqual(
        ["same-title", ...Array.from({ length: 9 }, (_, n) => `same-title-${n + 2}`)].sort()
      )
      expect(yield* countDocks(user.id)).toBe(11)
    }))

  it.effect("trims tags, drops empty ones and removes duplicates, keeping the first order", () =>
    Effect.gen(function*() {
      const dock = yield* create(userPrincipal(yield* newUser), {
        title: "Tagged",
        tags: [" research ", "research", "", "   ", " Field Notes", "Field Notes ", "research"]
      })
      expect(dock.tags).toEqual(["research", "Field Notes"])
    }))

  it.effect("refuses too many tags and too long a tag", () =>
    Effect.gen(function*() {
      const principal = userPrincipal(yield* newUser)
      const many = yield* Effect.flip(
        create(principal, { title: "Many", tags: Array.from({ length: 33 }, (_, n) => `tag${n}`) })
      )
      expect(many.code).toBe("validation_error")
      expect(many.details).toEqual({ field: "tags" })
      const long = yield* Effect.flip(create(principal, { title: "Long", tags: ["x".repeat(65)] }))
      expect(long.code).toBe("validation_error")
      expect(long.details).toEqual({ field: "tags" })
      const limits = yield* create(principal, {
        title: "At the limits",
        tags: [...Array.from({ length: 31 }, (_, n) => `tag${n}`), "x".repeat(64)]
      })
      expect(limits.tags).toHaveLength(32)
    }))

  it.effect("lowercases, trims and de-duplicates topics", () =>
    Effect.gen(function*() {
      const dock = yield* create(userPrincipal(yield* newUser), {
        title: "Topical",
        topics: ["Machine-Learning", " machine-learning ", "ai"]
      })
      expect(dock.topics).toEqual(["machine-learning", "ai"])
    }))

  it.effect.each(["not a slug", "under_score", "-ai", "ai--ml", "t".repeat(65)])(
    "refuses the topic %j with validation_error on topic_tag_slugs",
    (topic) =>
      Effect.gen(function*() {
        const user = yield* newUser
        const error = yield* Effect.flip(create(userPrincipal(user), { title: "Topical", topics: ["ok", topic] }))
        expect(error.code).toBe("validation_error")
        expect(error.details).toMatchObject({ field: "topic_tag_slugs" })
        expect(yield* countDocks(user.id)).toBe(1)
      })
  )

  it.effect("refuses a description longer than 5000 characters", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        create(userPrincipal(yield* newUser), { title: "Wordy", description: "d".repeat(5001) })
      )
      expect(error.code).toBe("validation_error")
      expect(error.details).toEqual({ field: "description" })
    }))

  it.effect("gets the same Dock by id and by owner/slug path", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const created = yield* create(userPrincipal(user), { title: "Findable", tags: ["a"], topics: ["b"] })
      expect(yield* get(userPrincipal(user), byId(created))).toEqual(created)
      expect(yield* get(userPrincipal(user), byPath(created))).toEqual(created)
    }))

  it.effect("answers not_found for unknown, malformed and mismatched references", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const principal = userPrincipal(user)
      const dock = yield* create(principal, { title: "Somewhere" })
      const stranger = yield* newUser
      for (
        const ref of [
          { _tag: "ById", id: "not-a-uuid" },
          { _tag: "ById", id: "" },
          { _tag: "ById", id: `${dock.id}x` },
          { _tag: "ById", id: crypto.randomUUID() },
          { _tag: "ByPath", owner: user.username, slug: "no-such-slug" },
          { _tag: "ByPath", owner: `nobody-${unique()}`, slug: dock.slug },
          { _tag: "ByPath", owner: stranger.username, slug: dock.slug }
        ] satisfies ReadonlyArray<DockRef>
      ) {
        const error = yield* Effect.flip(get(principal, ref))
        expect(errorBody(error)).toEqual(NOT_FOUND)
        expect((yield* Effect.flip(access(principal, ref))).code).toBe("not_found")
      }
    }))

  it.effect("hides a private Dock from strangers and anonymous readers exactly like a missing one", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const stranger = yield* newUser
      const dock = yield* create(userPrincipal(owner), { title: "Secret" })
      for (const principal of [userPrincipal(stranger), anonymousPrincipal]) {
        for (const ref of [byId(dock), byPath(dock)]) {
          expect(errorBody(yield* Effect.flip(get(principal, ref)))).toEqual(NOT_FOUND)
          expect(errorBody(yield* Effect.flip(access(principal, ref)))).toEqual(NOT_FOUND)
        }
      }
      expect(yield* get(userPrincipal(owner), byId(dock))).toEqual(dock)
      expect(yield* access(userPrincipal(owner), byPath(dock))).toEqual({
        dockId: dock.id,
        ownerId: owner.id,
        visibility: "private",
        grant: null
      })
    }))

  it.effect("shows a private Dock to collaborators granted through dock_members", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const viewer = yield* newUser
      const editor = yield* newUser
      const dock = yield* create(userPrincipal(owner), { title: "Shared" })
      yield* grant(dock, viewer, "viewer")
      yield* grant(dock, editor, "editor")
      for (const ref of [byId(dock), byPath(dock)]) {
        expect(yield* get(userPrincipal(viewer), ref)).toEqual(dock)
        expect(yield* get(userPrincipal(editor), ref)).toEqual(dock)
      }
      expect((yield* access(userPrincipal(viewer), byId(dock))).grant).toBe("viewer")
      expect((yield* access(userPrincipal(editor), byId(dock))).grant).toBe("editor")
      // a grant on one Dock shows nothing else of the owner's
      const other = yield* create(userPrincipal(owner), { title: "Not shared" })
      expect((yield* Effect.flip(get(userPrincipal(viewer), byId(other)))).code).toBe("not_found")
    }))

  it.effect("lets anyone read a public Dock", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const stranger = yield* newUser
      const dock = yield* create(userPrincipal(owner), { title: "Open", visibility: "public" })
      for (const principal of [userPrincipal(stranger), anonymousPrincipal, userPrincipal(owner)]) {
        expect(yield* get(principal, byId(dock))).toEqual(dock)
        expect(yield* get(principal, byPath(dock))).toEqual(dock)
      }
      expect(yield* access(anonymousPrincipal, byId(dock))).toEqual({
        dockId: dock.id,
        ownerId: owner.id,
        visibility: "public",
        grant: null
      })
    }))

  it.effect("refuses creation to sandbox, restricted and read-only tokens, and to anonymous callers", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const tokenId = crypto.randomUUID() as TokenId
      const refusals: ReadonlyArray<[Principal, string]> = [
        [
          userPrincipal(user, { tokenId, sandbox: true, allowedBucketIds: [user.default_bucket_id!] }),
          "permission_denied"
        ],
        [userPrincipal(user, { tokenId, sandbox: true }), "permission_denied"],
        [userPrincipal(user, { tokenId, allowedBucketIds: [user.default_bucket_id!] }), "permission_denied"],
        [userPrincipal(user, { tokenId, scopes: ["mcp:read"] }), "permission_denied"],
        [anonymousPrincipal, "unauthorized"]
      ]
      for (const [principal, code] of refusals) {
        const error = yield* Effect.flip(create(principal, { title: "Not allowed" }))
        expect(error.code).toBe(code)
      }
      expect(yield* countDocks(user.id)).toBe(1)
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`select id from docks where title = 'Not allowed' and owner_id = ${user.id}`).toEqual([])
    }))

  it.effect("records dock.created with the user, token and agent label", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const tokenId = crypto.randomUUID() as TokenId
      const dock = yield* create(userPrincipal(user, { tokenId, agentLabel: "claude-test" }), { title: "Attributed" })
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`select dock_id, user_id, token_id, agent_label, action, subject_type, subject_id
        from activity where dock_id = ${dock.id}`
      expect(rows).toEqual([{
        dock_id: dock.id,
        user_id: user.id,
        token_id: tokenId,
        agent_label: "claude-test",
        action: "dock.created",
        subject_type: "dock",
        subject_id: dock.id
      }])
      const recent = yield* (yield* Activity).recent(dock.id, 10)
      expect(recent.map((entry) => [entry.action, entry.user_id, entry.token_id, entry.agent_label])).toEqual([
        ["dock.created", user.id, tokenId, "claude-test"]
      ])
    }))

  it.effect("records nothing when creation is refused", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const slug = `once-${unique()}`
      yield* create(userPrincipal(user), { title: "Once", slug })
      yield* Effect.flip(create(userPrincipal(user), { title: "Twice", slug }))
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ action: string }>`select a.action from activity a join docks d on d.id = a.dock_id
        where d.owner_id = ${user.id}`
      expect(rows).toEqual([{ action: "dock.created" }])
    }))
})

layer(domainTestWith({ planMaxDocks: 3 }))("Docks under a plan cap of 3", (it) => {
  it.effect("counts the default Dock: the third extra create is refused with tier_limit_exceeded", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      yield* create(userPrincipal(user), { title: "Extra one" })
      yield* create(userPrincipal(user), { title: "Extra two" })
      const error = yield* Effect.flip(create(userPrincipal(user), { title: "Extra three" }))
      expect(error.code).toBe("tier_limit_exceeded")
      expect(error.status).toBe(403)
      expect(error.details).toEqual({ limit: 3, used: 3 })
      expect(yield* countDocks(user.id)).toBe(3)
    }))

  it.effect("caps each user separately", () =>
    Effect.gen(function*() {
      const full = yield* newUser
      yield* create(userPrincipal(full), { title: "A" })
      yield* create(userPrincipal(full), { title: "B" })
      const other = yield* newUser
      expect((yield* create(userPrincipal(other), { title: "A" })).owner.id).toBe(other.id)
    }))

  it.effect("never lets parallel creates pass the cap", () =>
    Effect.gen(function*() {
      const user = yield* newUser
      const results = yield* Effect.all(
        Array.from({ length: 10 }, (_, n) => Effect.either(create(userPrincipal(user), { title: `Parallel ${n}` }))),
        { concurrency: "unbounded" }
      )
      expect(results.filter((result) => result._tag === "Right")).toHaveLength(2)
      expect(results.flatMap((result) => result._tag === "Left" ? [result.left.code] : [])).toEqual(
        Array(8).fill("tier_limit_exceeded")
      )
      expect(yield* countDocks(user.id)).toBe(3)
    }))
})
