// Line diffs off the event loop (Diffs.ts): a small diff is made on the calling thread, a big one in a content
// worker with lineDiff's whole budget, and the coarse diff stands when no worker can take it.
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { ContentWorkers, contentWorkersLayer, makeContentWorkers } from "../src/Content/ContentWorkers.ts"
import { countChangedLines, diffLines, INLINE_DIFF_CHARS, INLINE_DIFF_WORK } from "../src/Content/Diffs.ts"
import { lineDiff } from "../src/Content/LineDiff.ts"

/** `lines` numbered lines, each ending in `tag`. */
const document = (lines: number, tag: string) => Array.from({ length: lines }, (_, i) => `line ${i} ${tag}`).join("\n")

/** Every other line of `base` replaced: a diff whose search needs far more than INLINE_DIFF_WORK steps. */
const rewrite = (base: string) =>
  base.split("\n").map((line, i) => (i % 2 === 0 ? `${line} rewritten` : line)).join("\n")

const base = document(600, "a")
const rewritten = rewrite(base)

/** A pool of one content worker, closed when the test ends. */
const oneWorker = contentWorkersLayer({ workers: 1, deadline: Duration.seconds(30) })

const jobsRun = Effect.map(
  Effect.flatMap(ContentWorkers, (workers) => workers.stats),
  (stats) => stats.started["lineDiff"] ?? 0
)

describe("diffLines", () => {
  it("needs more than the inline budget for the rewrite these tests use", () => {
    expect(lineDiff(base, rewritten, { maxWork: INLINE_DIFF_WORK }).exact).toBe(false)
    expect(lineDiff(base, rewritten).exact).toBe(true)
  })

  it.scoped("makes a small diff on the calling thread: no worker job", () =>
    Effect.gen(function*() {
      const edited = base.replace("line 7 a", "line 7 edited")
      const diff = yield* diffLines(base, edited, { fromLabel: "version 1", toLabel: "version 2" })
      expect(diff).toEqual(lineDiff(base, edited, { fromLabel: "version 1", toLabel: "version 2" }))
      expect(diff.added).toBe(1)
      expect(yield* countChangedLines(base, edited)).toEqual({ added: 1, removed: 1 })
      expect(yield* jobsRun).toBe(0)
    }).pipe(Effect.provide(oneWorker)))

  it.scoped("makes a big diff in a content worker, exactly as lineDiff with its whole budget", () =>
    Effect.gen(function*() {
      const diff = yield* diffLines(base, rewritten)
      expect(diff).toEqual(lineDiff(base, rewritten))
      expect(diff.exact).toBe(true)
      expect(diff.added).toBe(300)
      expect(diff.removed).toBe(300)
      expect(yield* countChangedLines(base, rewritten)).toEqual({ added: 300, removed: 300 })
      expect(yield* jobsRun).toBe(2)
    }).pipe(Effect.provide(oneWorker)))

  it.scoped("diffs texts too long for the calling thread in a content worker, even for one changed line", () =>
    Effect.gen(function*() {
      const long = document(30_000, "long")
      expect(long.length * 2).toBeGreaterThan(INLINE_DIFF_CHARS)
      const edited = long.replace("line 20000 long", "line 20000 edited")
      expect(yield* countChangedLines(long, edited)).toEqual({ added: 1, removed: 1 })
      expect(yield* jobsRun).toBe(1)
    }).pipe(Effect.provide(oneWorker)))

  it.effect("answers the coarse diff when no worker can take the job", () =>
    Effect.gen(function*() {
      const pool = makeContentWorkers({ workers: 1, deadline: Duration.seconds(30) })
      yield* pool.close
      const diff = yield* diffLines(base, rewritten).pipe(Effect.provideService(ContentWorkers, pool))
      expect(diff).toEqual(lineDiff(base, rewritten, { maxWork: INLINE_DIFF_WORK }))
      expect(diff.exact).toBe(false)
      // The coarse diff removes the whole changed middle and adds it again: upper bounds of the true counts.
      expect(diff.added).toBe(599)
      expect(diff.removed).toBe(599)
    }))
})
