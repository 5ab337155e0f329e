/**
 * Line diffs of page versions without holding the event loop: a diff is tried on the calling thread with a small
 * work budget, and only one that needs more goes to a content worker with lineDiff's whole budget.
 *
 * lineDiff is bounded (LineDiff.ts), but its bound is tens of milliseconds: a push that rewrites a 64 KiB page held
 * the event loop ~25-60 ms just to count the lines it changed. A usual edit (a few lines; the common prefix and
 * suffix are cut off before any search) stays far under INLINE_DIFF_WORK and costs no more than before; a
 * rewrite costs the calling thread at most that budget, then a worker's round trip.
 */
import { Effect } from "effect"
import { ContentWorkers } from "./ContentWorkers.ts"
import { type LineDiff, lineDiff, type LineDiffOptions } from "./LineDiff.ts"

/** The work (Myers' steps) a diff may take on the calling thread: about a millisecond. */
export const INLINE_DIFF_WORK = 50_000

/**
 * The line diff from `from` to `to`, as lineDiff gives it with its default work budget. When no worker can take
 * it (the queue full, the server stopping, the job past its deadline), the answer is the coarse diff the inline try
 * ended with: a correct diff, not the shortest (`exact` false, counts that are upper bounds), as lineDiff answers
 * past its budget.
 */
export const diffLines = (
  from: string,
  to: string,
  options: Omit<LineDiffOptions, "maxWork"> = {}
): Effect.Effect<LineDiff, never, ContentWorkers> =>
  Effect.suspend(() => {
    const inline = lineDiff(from, to, { ...options, maxWork: INLINE_DIFF_WORK })
    if (inline.exact) return Effect.succeed(inline)
    return Effect.flatMap(ContentWorkers, (workers) => workers.run("lineDiff", { from, to, options })).pipe(
      Effect.orElseSucceed(() => inline)
    )
  })

/** Only the counts of diffLines: what a new version records (part_versions.lines_*). */
export const countChangedLines = (
  from: string,
  to: string
): Effect.Effect<{ readonly added: number; readonly removed: number }, never, ContentWorkers> =>
  Effect.map(diffLines(from, to, { maxBytes: 0 }), ({ added, removed }) => ({ added, removed }))
