/**
 * A unified line diff of two texts (the source of two page versions): `@@ -a,b +c,d @@` hunks with three lines of
 * context, optionally under `---`/`+++` headers. Pure and bounded against hostile input, so it may run on the
 * calling thread for texts of a page's size (1 MiB):
 *
 * - Lines are interned to numbers, the common prefix and suffix are cut off, and only the changed middle goes
 *   through Myers' O(ND) algorithm. Its work (loop steps and snake steps, which also bounds the trace it keeps
 *   for the backtrack) is capped at `maxWork` (2 million by default, tens of milliseconds and at most ~8 MB).
 * - When the cap is hit, the answer is the coarse diff: the whole changed middle removed, then the whole of it
 *   added. It is still a correct diff (applying it gives `to`), only not the shortest; `truncated` is true and
 *   `exact` false, and `added`/`removed` then count the lines of that middle (upper bounds of the true counts).
 * - The diff text is at most `maxBytes` of UTF-8 (64 KiB by default), cut at a line boundary; `truncated` says
 *   it was cut. `added` and `removed` always count the whole diff, not only the text kept.
 *
 * Lines are split at "\n" (a "\r" stays part of its line); a final newline does not start another line, and
 * whether the last line ends in one is not shown.
 */
import { utf8Bytes } from "./Text.ts"

export interface LineDiffOptions {
  /** Lines of context around each change (3). */
  readonly context?: number | undefined
  /** The most UTF-8 bytes of diff text (65,536); the text is cut at a line boundary past it. */
  readonly maxBytes?: number | undefined
  /** The most work Myers' algorithm may do before the coarse diff is answered (2,000,000 steps). */
  readonly maxWork?: number | undefined
  /** With both labels, the diff starts with `--- fromLabel` and `+++ toLabel` lines. */
  readonly fromLabel?: string | undefined
  readonly toLabel?: string | undefined
}

export interface LineDiff {
  /** The unified diff text ("" when the texts have the same lines). */
  readonly diff: string
  /** Lines added (lines only in `to`). */
  readonly added: number
  /** Lines removed (lines only in `from`). */
  readonly removed: number
  /** The diff text was cut at `maxBytes`, or the diff is the coarse one (`exact` false). */
  readonly truncated: boolean
  /** The diff is a shortest one (false when the work cap gave the coarse diff). */
  readonly exact: boolean
}

export const LINE_DIFF_MAX_BYTES = 65_536
export const LINE_DIFF_MAX_WORK = 2_000_000
const DEFAULT_CONTEXT = 3

const EQUAL = 0
const REMOVE = 1
const ADD = 2

/** The lines of a text: split at "\n", a final newline does not start another line, "" has none. */
export const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** How many lines a text has (as splitLines counts them), without splitting it. */
export const countLines = (text: string): number => {
  if (text === "") return 0
  let count = 0
  let at = text.indexOf("\n")
  while (at !== -1) {
    count++
    at = text.indexOf("\n", at + 1)
  }
  return text.endsWith("\n") ? count : count + 1
}

/**
 * The edit script of the middles a[lo..aHi) and b[lo..bHi) (Myers, forward, with a trace for the backtrack), as
 * operations appended to `ops`; false (and nothing appended) when the work cap is hit first.
 */
const myers = (
  a: Int32Array,
  aLo: number,
  aHi: number,
  b: Int32Array,
  bLo: number,
  bHi: number,
  maxWork: number,
  ops: Array<number>
): boolean => {
  const n = aHi - aLo
  const m = bHi - bLo
  // Step d costs at least 2d + 1 work, so no step past √maxWork + 1 runs: v needs no more room than that.
  const max = Math.min(n + m, Math.ceil(Math.sqrt(maxWork)) + 2)
  const offset = max + 1
  const v = new Int32Array(2 * max + 3)
  const trace: Array<Int32Array> = []
  let work = 0
  let found = -1
  for (let d = 0; d <= max; d++) {
    // The part of v this step reads (k in -d..d, as x values), kept for the backtrack.
    trace.push(v.slice(offset - d, offset + d + 1))
    work += 2 * d + 1
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
        ? v[offset + k + 1]!
        : v[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
        x++
        y++
        work++
      }
      v[offset + k] = x
      if (x >= n && y >= m) {
        found = d
        break
      }
    }
    if (found !== -1) break
    if (work > maxWork) return false
  }
  if (found === -1) return false
  // Backtrack from (n, m) through the trace; the operations come out in reverse.
  const reversed: Array<number> = []
  let x = n
  let y = m
  for (let d = found; d > 0; d--) {
    const before = trace[d]! // v as it was at the start of step d (k in -d..d, index k + d)
    const at = (k: number) => before[k + d]!
    const k = x - y
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1
    const prevX = at(prevK)
    const prevY = prevX - prevK
    while (x > prevX && y > prevY) {
      reversed.push(EQUAL)
      x--
      y--
    }
    reversed.push(prevK === k + 1 ? ADD : REMOVE)
    x = prevX
    y = prevY
  }
  while (x > 0 && y > 0) {
    reversed.push(EQUAL)
    x--
    y--
  }
  for (let i = reversed.length - 1; i >= 0; i--) ops.push(reversed[i]!)
  return true
}

/** The unified line diff from `from` to `to` (see the module comment for its bounds). */
export const lineDiff = (from: string, to: string, options: LineDiffOptions = {}): LineDiff => {
  const context = Math.max(0, options.context ?? DEFAULT_CONTEXT)
  const maxBytes = options.maxBytes ?? LINE_DIFF_MAX_BYTES
  const maxWork = options.maxWork ?? LINE_DIFF_MAX_WORK
  const aLines = splitLines(from)
  const bLines = splitLines(to)
  const ids = new Map<string, number>()
  const intern = (lines: ReadonlyArray<string>) => {
    const out = new Int32Array(lines.length)
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      let id = ids.get(line)
      if (id === undefined) {
        id = ids.size
        ids.set(line, id)
      }
      out[i] = id
    }
    return out
  }
  const a = intern(aLines)
  const b = intern(bLines)
  let prefix = 0
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++
  let suffix = 0
  while (
    suffix < a.length - prefix && suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  ) suffix++
  const aHi = a.length - suffix
  const bHi = b.length - suffix

  const ops: Array<number> = []
  for (let i = 0; i < prefix; i++) ops.push(EQUAL)
  let exact = true
  if (!myers(a, prefix, aHi, b, prefix, bHi, maxWork, ops)) {
    exact = false
    for (let i = prefix; i < aHi; i++) ops.push(REMOVE)
    for (let i = prefix; i < bHi; i++) ops.push(ADD)
  }
  for (let i = 0; i < suffix; i++) ops.push(EQUAL)

  let added = 0
  let removed = 0
  for (const op of ops) {
    if (op === ADD) added++
    else if (op === REMOVE) removed++
  }
  if (added === 0 && removed === 0) return { diff: "", added, removed, truncated: false, exact: true }

  // Hunks: changes closer than 2 × context equal lines share one.
  const out: Array<string> = []
  let bytes = 0
  let cut = false
  const emit = (line: string) => {
    if (cut) return
    const size = utf8Bytes(line) + 1
    if (bytes + size > maxBytes) {
      cut = true
      return
    }
    out.push(line)
    bytes += size
  }
  if (options.fromLabel !== undefined && options.toLabel !== undefined) {
    emit(`--- ${options.fromLabel}`)
    emit(`+++ ${options.toLabel}`)
  }
  // Old and new line positions before each op, walked forward.
  let oldAt = 0
  let newAt = 0
  let i = 0
  while (i < ops.length && !cut) {
    if (ops[i] === EQUAL) {
      oldAt++
      newAt++
      i++
      continue
    }
    const lead = Math.min(context, i)
    const start = i - lead
    let end = i
    for (;;) {
      while (end < ops.length && ops[end] !== EQUAL) end++
      let run = 0
      while (end + run < ops.length && ops[end + run] === EQUAL) run++
      if (end + run >= ops.length || run > 2 * context) {
        end = Math.min(ops.length, end + context)
        break
      }
      end += run
    }
    const oldStart = oldAt - lead
    const newStart = newAt - lead
    let oldCount = 0
    let newCount = 0
    for (let j = start; j < end; j++) {
      if (ops[j] !== ADD) oldCount++
      if (ops[j] !== REMOVE) newCount++
    }
    emit(
      `@@ -${oldCount === 0 ? oldStart : oldStart + 1},${oldCount} +${
        newCount === 0 ? newStart : newStart + 1
      },${newCount} @@`
    )
    let o = oldStart
    let n = newStart
    for (let j = start; j < end && !cut; j++) {
      const op = ops[j]!
      if (op === EQUAL) {
        emit(` ${aLines[o]!}`)
        o++
        n++
      } else if (op === REMOVE) {
        emit(`-${aLines[o]!}`)
        o++
      } else {
        emit(`+${bLines[n]!}`)
        n++
      }
    }
    oldAt = o
    newAt = n
    i = end
  }
  return {
    diff: out.length === 0 ? "" : `${out.join("\n")}\n`,
    added,
    removed,
    truncated: cut || !exact,
    exact
  }
}
