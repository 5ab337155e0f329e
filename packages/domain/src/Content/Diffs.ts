/**
 * Line diffs of page versions without holding the event loop: a diff of two texts of at most INLINE_DIFF_CHARS is
 * tried on the calling thread with a small work budget, and a bigger one, or one that needs more work, goes to a
 * content worker with lineDiff's whole budget.
 *
 * lineDiff is bounded (LineDiff.ts), but its bound is tens of milliseconds of search, plus splitting and interning
 * the lines, ~150 ms for two 1 MiB pages: a push that rewrote a 64 KiB page held the event loop 9-64 ms just to
 * count the lines it changed. A usual edit of a usual page (a few lines; the common prefix and suffix are cut off
 * before any search) stays far under both bounds and costs what it did; anything bigger costs the calling thread
 * at most those bounds, then a worker's round trip.
 */
import { Effect } from "effect"
import { ContentWorkers } from "./ContentWorkers.ts"
import { type LineDiff, lineDiff, type LineDiffOptions } from "./LineDiff.ts"

/** The work (Myers' steps) a diff may take on the calling thread: under a millisecond (a usual edit needs far less). */
export const INLINE_DIFF_WORK = 20_000

/** The characters of both texts together a diff on the calling thread may read: two 128 KiB pages. */
export const INLINE_DIFF_CHARS = 262_144

/**
 * The line diff from `from` to `to`, as lineDiff gives it with its default work budget. When no worker can take
 * it (the queue full, the server stopping, the job past its deadline), the answer is lineDiff's within the inline
 * budget: the coarse diff when that is not enough, a correct diff but not the shortest (`exact` false, counts that
 * are upper bounds), as lineDiff answers past its own budget.
 */
export const diffLines = (
  from: string,
  to: string,
  options: Omit<LineDiffOptions, "maxWork"> = {}
): Effect.Effect<LineDiff, never, ContentWorkers> =>
  Effect.suspend(() => {
    const withinInlineBudget = () => lineDiff(from, to, { ...options, maxWork: INLINE_DIFF_WORK })
    const inline = from.length + to.length <= INLINE_DIFF_CHARS ? withinInlineBudget() : undefined
    if (inline?.exact === true) return Effect.succeed(inline)
    return Effect.flatMap(ContentWorkers, (workers) => workers.run("lineDiff", { from, to, options })).pipe(
      Effect.orElse(() => Effect.sync(() => inline ?? withinInlineBudget()))
    )
  })

/** Only the counts of diffLines: what a new version records (part_versions.lines_*). */
export const countChangedLines = (
  from: string,
  to: string
): Effect.Effect<{ readonly added: number; readonly removed: number }, never, ContentWorkers> =>
  Effect.map(diffLines(from, to, { maxBytes: 0 }), ({ added, removed }) => ({ added, removed }))
