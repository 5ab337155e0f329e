/**
 * Plan caps on pushes (architecture §11), with tight limits: a Dock's artifact and byte caps, and a user's
 * standalone artifacts (push_markdown without a Dock), which count as one Dock of their own. And a sandbox's
 * byte cap with history: every stored page version and Micro DB snapshot counts, so the cap bounds what is stored.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { actor, call, connect, createBucket, ok, refused } from "./support/McpTools.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const TightServer = Layer.scoped(
  TestServer,
  startTestServer({ DOCK_PLAN_MAX_ARTIFACTS_PER_DOCK: "2", DOCK_PLAN_MAX_DOCK_BYTES: "3000" })
)

const standaloneOf = (userId: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      server.sql<{ n: number }>`select count(*)::int as n from parts where dock_id is null and owner_id = ${userId}`
        .pipe(
          Effect.map((rows) => rows[0]!.n)
        )
  )

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
      expect(
        refused(
          yield* call(owner.client, "push_web_page", { bucket: dock.id, page_slug: "c", page_content: "<p>1</p>" })
        ).error
      )
        .toMatchObject({ code: "tier_limit_exceeded", details: { max_artifacts: 2 } })
      expect(
        ok(yield* call(owner.client, "push_web_page", { bucket: dock.id, page_slug: "a", page_content: "<p>2</p>" }))
          .action
      )
        .toBe("updated")
    }))
})

/** A sandbox capped at 10,000 bytes: every stored version (and Micro DB snapshot) counts against it. */
const SANDBOX_CAP = 10_000
const TightSandbox = Layer.scoped(TestServer, startTestServer({ DOCK_SANDBOX_MAX_BYTES: String(SANDBOX_CAP) }))

/** Everything a Dock stores of its pages and Micro DB: each page's and snapshot's every version, and the rows. */
const storedBytes = (dockId: string) =>
  Effect.flatMap(TestServer, (server) =>
    server.sql<{ bytes: number }>`select (
        (select coalesce(sum(v.size_bytes), 0) from part_versions v join parts p on p.id = v.part_id where p.dock_id = ${dockId})
        + (select coalesce(sum(r.size_bytes), 0) from micro_db_rows r join micro_db_tables t on t.id = r.table_id
          where t.dock_id = ${dockId})
      )::int as bytes`.pipe(Effect.map((rows) => rows[0]!.bytes)))

const sandboxClient = Effect.gen(function*() {
  const server = yield* TestServer
  const registration = yield* register(server.url)
  expect(registration.status, registration.text).toBe(201)
  return {
    client: yield* connect(registration.json.credential as string, "v2 modern"),
    sandboxId: registration.json.sandbox_bucket.id as string
  }
})

layer(TightSandbox, { excludeTestServices: true, timeout: 60_000 })(
  "history counts against a sandbox's content cap",
  (it) => {
    it.scoped("updates of one page: refused with tier_limit_exceeded once its versions would pass the cap; a delete frees them", () =>
      Effect.gen(function*() {
        const { client, sandboxId } = yield* sandboxClient
        const page = (n: number) => `${n}`.padEnd(3_000, ".")
        const answers: Array<string> = []
        for (let n = 1; n <= 20; n++) {
          const result = yield* call(client, "push_web_page", {
            page_slug: "big",
            content_type: "markdown",
            page_content: page(n)
          })
          answers.push(result.isError ? refused(result).error.code : ok(result).action)
          expect(yield* storedBytes(sandboxId)).toBeLessThanOrEqual(SANDBOX_CAP)
        }
        // 3 × 3,000 bytes stored; a fourth version would make 12,000
        expect(answers.slice(0, 4)).toEqual(["created", "updated", "updated", "tier_limit_exceeded"])
        expect(new Set(answers.slice(3))).toEqual(new Set(["tier_limit_exceeded"]))
        const refusal = refused(
          yield* call(client, "push_web_page", { page_slug: "big", content_type: "markdown", page_content: page(99) })
        )
        expect(refusal.error).toMatchObject({
          code: "tier_limit_exceeded",
          details: { max_bytes: SANDBOX_CAP, used: { bytes: 9_000 } }
        })
        // restoring an old version is a new version too
        expect(
          refused(yield* call(client, "restore_web_page_version", { bucket: sandboxId, web_page: "big", version: 1 }))
            .error.code
        )
          .toBe("tier_limit_exceeded")
        // deleting the page releases every version it stored
        ok(yield* call(client, "delete_web_page", { bucket: sandboxId, web_page: "big" }))
        expect(yield* storedBytes(sandboxId)).toBe(0)
        expect(
          ok(
            yield* call(client, "push_web_page", { page_slug: "big", content_type: "markdown", page_content: page(1) })
          ).action
        )
          .toBe("created")
      }))

    it.scoped("Micro DB snapshots count too: snapshot_micro_db is refused past the cap; a table delete offsets its snapshot by its rows", () =>
      Effect.gen(function*() {
        const { client, sandboxId } = yield* sandboxClient
        ok(
          yield* call(client, "create_micro_db_table", {
            bucket: sandboxId,
            name: "Notes",
            columns: [{ name: "Text", type: "text" }]
          })
        )
        ok(
          yield* call(client, "insert_micro_db_rows", {
            bucket: sandboxId,
            table: "notes",
            rows: [1, 2, 3].map((n) => ({ text: `${n}`.padEnd(600, "x") }))
          })
        )
        const answers: Array<string> = []
        for (let n = 0; n < 12; n++) {
          const result = yield* call(client, "snapshot_micro_db", { bucket: sandboxId })
          answers.push(result.isError ? refused(result).error.code : "ok")
          expect(yield* storedBytes(sandboxId)).toBeLessThanOrEqual(SANDBOX_CAP)
        }
        expect(answers).toContain("tier_limit_exceeded")
        expect(answers.indexOf("tier_limit_exceeded")).toBeGreaterThan(0)
        // the delete's snapshot is paid for by the rows it removes
        expect(ok(yield* call(client, "delete_micro_db_table", { bucket: sandboxId, table: "notes" }))).toMatchObject({
          ok: true
        })
        expect(yield* storedBytes(sandboxId)).toBeLessThanOrEqual(SANDBOX_CAP)
      }))
  }
)
