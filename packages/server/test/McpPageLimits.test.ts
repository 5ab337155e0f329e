/**
 * Plan caps on pushes (architecture §11), with tight limits: a Dock's artifact and byte caps, and a user's
 * standalone artifacts (push_markdown without a Dock), which count as one Dock of their own.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { unique } from "./support/Http.ts"
import { actor, call, createBucket, ok, refused } from "./support/McpTools.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const TightServer = Layer.scoped(
  TestServer,
  startTestServer({ DOCK_PLAN_MAX_ARTIFACTS_PER_DOCK: "2", DOCK_PLAN_MAX_DOCK_BYTES: "3000" })
)

const standaloneOf = (userId: string) =>
  Effect.flatMap(TestServer, (server) =>
    server.sql<{ n: number }>`select count(*)::int as n from parts where dock_id is null and owner_id = ${userId}`.pipe(
      Effect.map((rows) => rows[0]!.n)
    ))

layer(TightServer, { excludeTestServices: true, timeout: 60_000 })("plan caps on pushes", (it) => {
  it.scoped("standalone artifacts: at most the per-Dock artifact cap per user, then tier_limit_exceeded", () =>
    Effect.gen(function*() {
      const author = yield* actor("v2 modern")
      const other = yield* actor("v2 modern")
      for (const n of [1, 2]) {
        expect(ok(yield* call(author.client, "push_markdown", { page_content: `# Note ${n}` })).action).toBe("created")
      }
      const error = refused(yield* call(author.client, "push_markdown", { page_content: "# Note 3" })).error
      expect(error).toMatchObject({
        code: "tier_limit_exceeded",
        details: { max_artifacts: 2, max_bytes: 3000, used: { artifacts: 2 } }
      })
      expect(yield* standaloneOf(author.user.id)).toBe(2)
      // Another user's allowance is their own, and Dock pushes are counted per Dock.
      expect(ok(yield* call(other.client, "push_markdown", { page_content: "# Mine" })).action).toBe("created")
      const dock = yield* createBucket(author.client, { title: "Room", slug: `room-${unique()}` })
      expect(ok(yield* call(author.client, "push_markdown", { bucket: dock.id, page_content: "# In a Dock" })).action)
        .toBe("created")
    }))

  it.scoped("standalone artifacts: the byte cap counts every standalone artifact of the user", () =>
    Effect.gen(function*() {
      const author = yield* actor("v2 modern")
      expect(ok(yield* call(author.client, "push_markdown", { page_content: "x".repeat(2000) })).action).toBe("created")
      const error = refused(yield* call(author.client, "push_markdown", { page_content: "y".repeat(1500) })).error
      expect(error).toMatchObject({ code: "tier_limit_exceeded", details: { used: { artifacts: 1, bytes: 2000 } } })
      expect(yield* standaloneOf(author.user.id)).toBe(1)
    }))

  it.scoped("a Dock holds at most the plan's artifacts; an update within the cap still works", () =>
    Effect.gen(function*() {
      const owner = yield* actor("v2 modern")
      const dock = yield* createBucket(owner.client, { title: "Full", slug: `full-${unique()}` })
      for (const slug of ["a", "b"]) {
        ok(yield* call(owner.client, "push_web_page", { bucket: dock.id, page_slug: slug, page_content: "<p>1</p>" }))
      }
      expect(refused(yield* call(owner.client, "push_web_page", { bucket: dock.id, page_slug: "c", page_content: "<p>1</p>" })).error)
        .toMatchObject({ code: "tier_limit_exceeded", details: { max_artifacts: 2 } })
      expect(ok(yield* call(owner.client, "push_web_page", { bucket: dock.id, page_slug: "a", page_content: "<p>2</p>" })).action)
        .toBe("updated")
    }))
})
