/**
 * Bounds on untrusted JSON before anything expensive sees it. Work on a request must be proportional to a small
 * bound, not to what the caller sent: a 21 MiB `arguments` object of 1.8 M unknown keys once cost 28 s of event
 * loop and a 358 MB error body. Two passes, both linear and stopping at the first bound crossed:
 * - `jsonTextBounds` scans the raw body text (depth and value count) before JSON.parse and the SDK's own schema
 *   pass copy it;
 * - `inspectArguments` walks one call's parsed arguments once: value count, array and object sizes, and the
 *   text PostgreSQL cannot store (NUL, lone UTF-16 surrogates), naming the path of what it refuses.
 */
import { ValidationError } from "@dock/domain"

/** Deeper JSON than any tool needs is refused before it is parsed (JSON-bomb defence). */
export const JSON_DEPTH_MAX = 64
/**
 * Values (objects, arrays, strings, numbers, booleans, nulls) in one tool call's arguments. The largest legitimate
 * call, push_micro_db with 500 rows of 100 columns, has about 50,000.
 */
export const ARGUMENT_VALUES_MAX = 100_000
/** Values in one request body: a batch may carry a few calls. */
export const BODY_VALUES_MAX = 2 * ARGUMENT_VALUES_MAX
/** Items of one array or keys of one object (tool schemas' own maxItems, all far below, still apply). */
export const ARGUMENT_ENTRIES_MAX = 10_000
/** Issues an error body lists: the first few are enough to fix a call, and the body stays a few KB. */
export const ISSUES_MAX = 10
/**
 * Up to this many values, the schema reports every issue (a small call gets all its mistakes at once); above it,
 * only the first — collecting and formatting 10,000 issues only to list 10 cost 300 ms of event loop.
 */
export const ALL_ISSUES_MAX_VALUES = 1_000

export type TextBoundsProblem =
  | { readonly _tag: "TooDeep" }
  | { readonly _tag: "TooManyValues" }
  | { readonly _tag: "TooManyEntries" }

/**
 * One pass over JSON text that counts nesting, values and each container's entries without building them: `{`,
 * `[` and `,` outside strings each start a value (a close enough count; scalars at the top level do not matter),
 * and a `,` adds an entry to the innermost open container. No container of a request may hold more than
 * ARGUMENT_ENTRIES_MAX entries (a batch holds at most 100 messages, and arguments are bounded so), so a body of
 * 100,000 unknown keys is refused here rather than parsed and walked. Malformed text is not judged here:
 * JSON.parse answers it.
 */
export const jsonTextBounds = (text: string): TextBoundsProblem | undefined => {
  let depth = 0
  let values = 0
  // Entries (commas) of each open container, by depth.
  const entries = new Uint32Array(JSON_DEPTH_MAX + 2)
  const length = text.length
  for (let index = 0; index < length; index++) {
    const char = text.charCodeAt(index)
    if (char === 0x22) {
      // Skip the string: to the next quote not escaped, i.e. after an even run of backslashes (each escapes the
      // character after it). indexOf skips a page's text many times faster than a loop over its characters.
      let quote = text.indexOf("\"", index + 1)
      while (quote !== -1 && escaped(text, quote)) quote = text.indexOf("\"", quote + 1)
      if (quote === -1) return undefined
      index = quote
    } else if (char === 0x7b || char === 0x5b) {
      if (++depth > JSON_DEPTH_MAX) return { _tag: "TooDeep" }
      if (++values > BODY_VALUES_MAX) return { _tag: "TooManyValues" }
      entries[depth] = 1
    } else if (char === 0x7d || char === 0x5d) {
      if (depth > 0) depth--
    } else if (char === 0x2c) {
      if (++values > BODY_VALUES_MAX) return { _tag: "TooManyValues" }
      if (++entries[depth]! > ARGUMENT_ENTRIES_MAX) return { _tag: "TooManyEntries" }
    }
  }
  return undefined
}

/** Whether the character at `at` follows an odd run of backslashes. */
const escaped = (text: string, at: number): boolean => {
  let backslashes = 0
  while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++
  return backslashes % 2 === 1
}

interface Issue {
  readonly path: ReadonlyArray<string>
  readonly message: string
}

/** A value being walked; the path is rebuilt from the parent chain only for a value that is refused. */
interface Frame {
  readonly value: unknown
  readonly parent: Frame | undefined
  readonly key: string
}

const pathOf = (frame: Frame | undefined): Array<string> => {
  const path: Array<string> = []
  for (let at = frame; at?.parent !== undefined; at = at.parent) path.push(at.key)
  return path.reverse()
}

/**
 * PostgreSQL text holds neither U+0000 nor half a surrogate pair (its UTF-8 has no encoding for either), so no
 * tool could store them: with the `u` flag, `\p{Cs}` matches only a surrogate that is not part of a pair.
 */
const UNSTORABLE = /[\u0000\p{Cs}]/u
const unstorable = (text: string, what: "text" | "a key"): string | undefined => {
  if (!UNSTORABLE.test(text)) return undefined
  return text.includes("\u0000")
    ? `${what} cannot contain the NUL character (U+0000)`
    : `${what} cannot contain a lone UTF-16 surrogate (half of a surrogate pair, e.g. \\ud800)`
}

const refusal = (issues: ReadonlyArray<Issue>) => {
  const first = issues[0]!
  return new ValidationError({
    message: `Invalid arguments: ${first.path.length === 0 ? "" : `${first.path.join(".")}: `}${first.message}`,
    details: { issues }
  })
}

/**
 * One linear walk of a call's arguments: too many values, an oversized array or object, or unstorable text is a
 * validation_error naming where (stopping after ISSUES_MAX hits); otherwise how many values the arguments hold.
 */
export const inspectArguments = (args: unknown): ValidationError | { readonly values: number } => {
  const issues: Array<Issue> = []
  const stack: Array<Frame> = [{ value: args, parent: undefined, key: "" }]
  let values = 0
  while (stack.length > 0 && issues.length < ISSUES_MAX) {
    const frame = stack.pop()!
    const value = frame.value
    if (++values > ARGUMENT_VALUES_MAX) {
      return refusal([{ path: [], message: `more than ${ARGUMENT_VALUES_MAX} values in one call` }])
    }
    if (typeof value === "string") {
      const problem = unstorable(value, "text")
      if (problem !== undefined) issues.push({ path: pathOf(frame), message: problem })
    } else if (Array.isArray(value)) {
      if (value.length > ARGUMENT_ENTRIES_MAX) {
        return refusal([{ path: pathOf(frame), message: `more than ${ARGUMENT_ENTRIES_MAX} items` }])
      }
      for (let index = value.length - 1; index >= 0; index--) {
        stack.push({ value: value[index], parent: frame, key: String(index) })
      }
    } else if (typeof value === "object" && value !== null) {
      const keys = Object.keys(value)
      if (keys.length > ARGUMENT_ENTRIES_MAX) {
        return refusal([{ path: pathOf(frame), message: `more than ${ARGUMENT_ENTRIES_MAX} keys` }])
      }
      for (const key of keys) {
        const problem = unstorable(key, "a key")
        if (problem !== undefined) issues.push({ path: pathOf(frame), message: problem })
      }
      for (let index = keys.length - 1; index >= 0; index--) {
        const key = keys[index]!
        stack.push({ value: (value as Record<string, unknown>)[key], parent: frame, key })
      }
    }
  }
  return issues.length === 0 ? { values } : refusal(issues.slice(0, ISSUES_MAX))
}
