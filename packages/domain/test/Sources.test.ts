// The Sources service over a real database: the text's bytes count against the Dock's content (exact under a
// burst of parallel adds), archiving keeps them counted, the cap on listed sources per Dock, and reads that go
// through the one resolver (another Dock's source is not_found).
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { ContentWorkers } from "../src/Content/ContentWorkers.ts"
import { type DockId, type Source, Sources, SOURCES_PER_DOCK_MAX, userPrincipal } from "../src/index.ts"
import { domainTestWith } from "../src/testing.ts"
import { as, createDock, newUser } from "./support/Fixtures.ts"

const DOCK_BYTES = 1000

const add = (dock: string, content: string, title?: string) =>
  Effect.flatMap(
    Sources,
    (sources) =>
      sources.add({
        dock,
        origin: "notes.txt",
        media_type: "text/plain",
        content,
        ...(title === undefined ? {} : { title })
      })
  )

const usedBytes = (dockId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ bytes: string }>`select bytes from dock_usage where dock_id = ${dockId}`.pipe(
        Effect.map((rows) => Number(rows[0]?.bytes ?? 0))
      )
  )

const errorOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") {
      return expect.fail(`expected a failure, got ${String(exit)}`)
    }
    const error = exit.cause.error as { code: string; message: string; details?: unknown }
    return {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details })
    }
  })

layer(domainTestWith({ planMaxDockBytes: DOCK_BYTES }))("Sources", (it) => {
  it.effect("the extracted text's bytes count against the Dock's content; over the limit is tier_limit_exceeded", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("sources")
      const dock = owner.default_bucket_id!
      const html = `<p>${"é".repeat(300)}</p><script>${"x".repeat(5000)}</script>`
      const workers = yield* ContentWorkers
      const before = (yield* workers.stats).started.sourceText
      const source = yield* Effect.flatMap(
        Sources,
        (sources) => sources.add({ dock, origin: "page.html", media_type: "text/html", content: html })
      )
      // extracted in a content worker (under its deadline), not on the event loop
      expect((yield* workers.stats).started.sourceText).toBe(before + 1)
      // the stored text is what counts, not what was sent
      expect(source.size_bytes).toBe(600)
      expect(yield* usedBytes(dock)).toBe(600)
      yield* add(dock, "y".repeat(400))
      expect(yield* usedBytes(dock)).toBe(1000)
      const refused = yield* errorOf(add(dock, "z"))
      expect(refused).toMatchObject({
        code: "tier_limit_exceeded",
        details: { max_bytes: DOCK_BYTES, used: { bytes: 1000 } }
      })
      expect((yield* Effect.flatMap(Sources, (sources) => sources.listAll(dock))).length).toBe(2)

      // archiving hides a source but keeps its text, and so its bytes
      yield* Effect.flatMap(Sources, (sources) => sources.archive(source.source_id))
      expect(yield* usedBytes(dock)).toBe(1000)
      expect((yield* errorOf(add(dock, "z"))).code).toBe("tier_limit_exceeded")
    }))

  it.effect("a burst of parallel adds passes the content limit exactly", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("burst")
      const dock = owner.default_bucket_id!
      const results = yield* Effect.forEach(
        Array.from({ length: 30 }, (_, i) => i),
        (i) => Effect.either(add(dock, `${String(i).padStart(2, "0")}${"b".repeat(98)}`)),
        { concurrency: "unbounded" }
      )
      const added = results.filter((result) => result._tag === "Right")
      expect(added).toHaveLength(10)
      expect(results.filter((result) => result._tag === "Left").map((result) => (result as any).left.code)).toEqual(
        Array(20).fill("tier_limit_exceeded")
      )
      expect(yield* usedBytes(dock)).toBe(DOCK_BYTES)
    }))

  it.effect(`a Dock lists at most ${SOURCES_PER_DOCK_MAX} sources; archiving one makes room`, () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const owner = yield* newUser("many")
      const dock = owner.default_bucket_id!
      yield* sql`insert into sources (dock_id, title, origin, media_type, body_text, created_at)
        select ${dock}, 'seeded ' || n, 'seed.txt', 'text/plain', '', now() from generate_series(1, ${
        SOURCES_PER_DOCK_MAX - 1
      }) n`
      const last = yield* add(dock, "the thousandth")
      const refused = yield* errorOf(add(dock, "one too many"))
      expect(refused).toEqual({
        code: "tier_limit_exceeded",
        message: `A Dock lists at most ${SOURCES_PER_DOCK_MAX} sources; archive some first`,
        details: { limit: SOURCES_PER_DOCK_MAX, used: SOURCES_PER_DOCK_MAX }
      })
      yield* Effect.flatMap(Sources, (sources) => sources.archive(last.source_id))
      const again = yield* add(dock, "fits again")
      expect(again.archived).toBe(false)
    }))

  it.effect("reads go through the resolver: the source of another Dock is not_found, an outsider sees no private Dock", () =>
    Effect.gen(function*() {
      const owner = yield* newUser("reader")
      const outsider = yield* newUser("outsider")
      const other = yield* createDock(owner, { title: "Other" })
      const mine: Source = yield* add(owner.default_bucket_id!, "default text", "In default")
      const theirs = yield* add(other.id, "other text", "In other")
      const read = (principal: ReturnType<typeof userPrincipal>, bucket: string, id: string) =>
        Effect.flatMap(Sources, (sources) => sources.read({ bucket }, id)).pipe(as(principal))

      const asOwner = userPrincipal(owner)
      expect((yield* read(asOwner, other.id, theirs.source_id)).source).toMatchObject({
        title: "In other",
        text: "other text"
      })
      expect(yield* errorOf(read(asOwner, other.id, mine.source_id))).toMatchObject({ code: "not_found" })
      expect(yield* errorOf(read(userPrincipal(outsider), other.id, theirs.source_id))).toEqual({
        code: "not_found",
        message: "Dock not found"
      })
      const listed = yield* Effect.flatMap(Sources, (sources) => sources.list({})).pipe(as(asOwner))
      expect(listed.dock.id).toBe(owner.default_bucket_id as DockId)
      expect(listed.sources).toEqual([mine])
    }))
})
