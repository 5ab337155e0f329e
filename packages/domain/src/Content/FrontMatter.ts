/**
 * The YAML front matter of a Markdown document (push_markdown_file / push_markdown, Markdown sources): split off
 * the body and read as inert, bounded data (no other languages, no alias bombs, no prototype-reaching keys).
 */
import { Effect } from "effect"
import {
  CST,
  type Document,
  type DocumentOptions,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  parseDocument,
  type ParseOptions,
  type SchemaOptions
} from "yaml"
import { InvalidFrontMatter } from "../Errors.ts"
import { FORBIDDEN_KEYS } from "./Text.ts"

/** The YAML between the fences, in UTF-8 bytes. */
export const FRONT_MATTER_MAX_BYTES = 64 * 1024
/** Flow nesting, block indicators on one line, and the depth of the parsed data: all capped here. */
export const FRONT_MATTER_MAX_DEPTH = 64
/** Alias dereferences (nested expansions included) and values produced: an alias bomb hits one of them. */
export const FRONT_MATTER_MAX_ALIASES = 100
export const FRONT_MATTER_MAX_VALUES = 100_000
export interface SplitDocument {
  readonly frontMatter: Record<string, unknown>
  readonly body: string
}

const OPEN_FENCE = /^---[ \t]*$/
const CLOSE_FENCE = /^(?:---|\.\.\.)[ \t]*$/
// `---js`, `---json`, `--- toml`, `---yaml`: a language tag asks for a non-YAML (or executable) parser.
const LANGUAGE_FENCE = /^---[ \t]*[A-Za-z][\w+.-]*[ \t]*$/
// TOML front matter (`+++`) is not YAML either.
const TOML_FENCE = /^\+\+\+[ \t]*$/

const invalid = (message: string, details?: Record<string, unknown>) =>
  new InvalidFrontMatter(details === undefined ? { message } : { message, details })

const lineEnd = (text: string, from: number): number => {
  const index = text.indexOf("\n", from)
  return index === -1 ? text.length : index
}
const lineAt = (text: string, start: number, end: number): string =>
  text.slice(start, end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end)

/**
 * Where the front matter of a document lies (`text` without its BOM): the YAML between `yamlStart` and
 * `yamlEnd`, the body from `bodyStart`; or why there is none (`absent`: the first line is no fence) or it cannot
 * be read. Front matter starts at the very first line (no leading blank lines) with `---` and ends at the next
 * line that is `---` or `...`.
 */
export type FrontMatterSpan =
  | { readonly _tag: "Found"; readonly yamlStart: number; readonly yamlEnd: number; readonly bodyStart: number }
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Refused"; readonly error: InvalidFrontMatter }

export const frontMatterSpan = (text: string): FrontMatterSpan => {
  const firstEnd = lineEnd(text, 0)
  const first = lineAt(text, 0, firstEnd)
  if (!OPEN_FENCE.test(first)) {
    if (LANGUAGE_FENCE.test(first) || TOML_FENCE.test(first)) {
      return {
        _tag: "Refused",
        error: invalid("front matter must be YAML between `---` lines (no language tag such as ---js or ---json)", {
          line: 1,
          fence: first.slice(0, 40)
        })
      }
    }
    return { _tag: "Absent" }
  }
  const yamlStart = firstEnd + 1
  let position = yamlStart
  while (position <= text.length) {
    // Characters never outnumber UTF-8 bytes, so this bounds the scan before the exact count below.
    if (position - yamlStart > FRONT_MATTER_MAX_BYTES) break
    const end = lineEnd(text, position)
    if (CLOSE_FENCE.test(lineAt(text, position, end))) {
      if (new TextEncoder().encode(text.slice(yamlStart, position)).length > FRONT_MATTER_MAX_BYTES) break
      return { _tag: "Found", yamlStart, yamlEnd: position, bodyStart: Math.min(end + 1, text.length) }
    }
    position = end + 1
  }
  if (position - yamlStart > FRONT_MATTER_MAX_BYTES || position <= text.length) {
    return {
      _tag: "Refused",
      error: invalid(`front matter is larger than ${FRONT_MATTER_MAX_BYTES} bytes`, {
        max_bytes: FRONT_MATTER_MAX_BYTES
      })
    }
  }
  return { _tag: "Refused", error: invalid("front matter is not closed: add a line `---` after it", { line: 1 }) }
}

/**
 * Splits a Markdown document into its YAML front matter (parsed into JSON-safe data) and its body.
 * Front matter starts at the very first line (after an optional BOM; no leading blank lines) with `---`
 * and ends at the next line that is `---` or `...`.
 */
export const splitFrontMatter = (
  source: string,
  options: { readonly required: boolean }
): Effect.Effect<SplitDocument, InvalidFrontMatter> =>
  Effect.suspend(() => {
    const text = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source
    const span = frontMatterSpan(text)
    switch (span._tag) {
      case "Refused":
        return Effect.fail(span.error)
      case "Absent":
        return options.required
          ? Effect.fail(invalid("the Markdown file must start with YAML front matter between `---` lines"))
          : Effect.succeed({ frontMatter: {}, body: text })
      case "Found":
        return Effect.map(readFrontMatter(text.slice(span.yamlStart, span.yamlEnd)), (frontMatter) => ({
          frontMatter,
          body: text.slice(span.bodyStart)
        }))
    }
  })

/** A rejection found while reading the YAML; becomes InvalidFrontMatter. */
class Problem {
  constructor(readonly message: string, readonly details: Record<string, unknown>) {}
}

// The YAML text starts on document line 2 (after the opening fence).
const FIRST_YAML_LINE = 2

/** The YAML of front matter (the text between its fences) read as data, or why it cannot be. */
export const readFrontMatter = (yaml: string): Effect.Effect<Record<string, unknown>, InvalidFrontMatter> =>
  Effect.try({
    try: () => readYaml(yaml),
    catch: (error) =>
      error instanceof Problem
        ? invalid(error.message, error.details)
        : invalid("front matter could not be read as YAML", { reason: String(error) })
  })

/**
 * The options every parse of front matter uses. The core schema: strings, numbers, booleans, null. No timestamps,
 * binary, sets, merge keys or JS types (not even as explicit `!!timestamp`/`!!binary` tags), and no custom tags;
 * an unresolved tag is a warning, which is rejected.
 */
export const frontMatterYamlOptions = (): DocumentOptions & ParseOptions & SchemaOptions => ({
  schema: "core",
  customTags: [],
  resolveKnownTags: false,
  merge: false,
  strict: true,
  prettyErrors: true,
  // Duplicate keys are found while converting (a Set per map); the library's own check is quadratic.
  uniqueKeys: false
})

const readYaml = (yaml: string): Record<string, unknown> => {
  checkShape(yaml)
  const lineCounter = new LineCounter()
  const doc = parseDocument(yaml, { ...frontMatterYamlOptions(), lineCounter })
  const problem = doc.errors[0] ?? doc.warnings[0]
  if (problem !== undefined) {
    const at = problem.linePos?.[0]
    const reason = problem.message.split(/ at line \d+|\n/)[0] ?? problem.message
    throw new Problem(
      at === undefined
        ? `front matter is not valid YAML: ${reason}`
        : `front matter is not valid YAML at line ${at.line + FIRST_YAML_LINE - 1}, column ${at.col}: ${reason}`,
      {
        yaml_code: problem.code,
        ...(at === undefined ? {} : { line: at.line + FIRST_YAML_LINE - 1, column: at.col })
      }
    )
  }
  // Empty front matter, only comments, or an explicit `null`/`~`: no fields.
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return {}
  if (!isMap(doc.contents)) {
    throw new Problem("front matter must be a mapping of keys to values", {
      found: isSeq(doc.contents) ? "sequence" : "scalar"
    })
  }
  const budget = { aliases: FRONT_MATTER_MAX_ALIASES, values: FRONT_MATTER_MAX_VALUES }
  return toData(doc.contents, doc, lineCounter, budget, 0, "") as Record<string, unknown>
}

/**
 * A linear pass over the YAML tokens before parsing: the parser's cost grows badly with nesting (`[[[[…`,
 * `? ? ? …`, `- - - …`), so deep flow nesting and long runs of block indicators on one line are refused here.
 */
const checkShape = (yaml: string): void => {
  let flowDepth = 0
  let indicatorsOnLine = 0
  let skipScalar = false
  for (const token of new Lexer().lex(yaml)) {
    if (skipScalar) {
      skipScalar = false
      continue
    }
    switch (token) {
      case CST.SCALAR:
        skipScalar = true
        break
      case "[":
      case "{":
        flowDepth += 1
        if (flowDepth > FRONT_MATTER_MAX_DEPTH) throw tooDeep()
        break
      case "]":
      case "}":
        flowDepth = Math.max(0, flowDepth - 1)
        break
      case "-":
      case "?":
      case ":":
        // A block indicator opens a level; `:` inside flow collections (`{a: 1, b: 2}`) does not.
        if (token === ":" && flowDepth > 0) break
        indicatorsOnLine += 1
        if (indicatorsOnLine > FRONT_MATTER_MAX_DEPTH) throw tooDeep()
        break
      case "\n":
      case "\r\n":
        indicatorsOnLine = 0
        break
    }
  }
}

const tooDeep = () =>
  new Problem(`front matter is nested more than ${FRONT_MATTER_MAX_DEPTH} levels deep`, {
    max_depth: FRONT_MATTER_MAX_DEPTH
  })

/** Half of a UTF-16 pair without its other half: a double-quoted YAML "\ud800" makes one; no UTF-8 text holds it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Where, with the offending halves shown as U+FFFD (an error must not carry them either). */
const notUnicode = (where: string, line: Record<string, number>) => {
  const path = where.replace(new RegExp(LONE_SURROGATE.source, "g"), "\uFFFD")
  return new Problem(`front matter "${path}" is not valid Unicode text (an unpaired surrogate escape)`, {
    path,
    ...line
  })
}

const lineOf = (node: unknown, lineCounter: LineCounter): Record<string, number> => {
  const range = (node as { range?: [number, number, number] }).range
  return range === undefined ? {} : { line: lineCounter.linePos(range[0]).line + FIRST_YAML_LINE - 1 }
}

/**
 * The YAML tree as JSON-safe data: plain objects and arrays, strings, finite numbers, booleans and null.
 * Non-finite numbers (`.inf`, `.nan`) become null, as JSON.stringify would make them. Keys must be scalars;
 * `__proto__`, `constructor` and `prototype` are refused anywhere, so assigning keys can never reach a prototype.
 */
const toData = (
  node: unknown,
  doc: Document,
  lineCounter: LineCounter,
  budget: { aliases: number; values: number },
  depth: number,
  path: string
): unknown => {
  if (depth > FRONT_MATTER_MAX_DEPTH) throw tooDeep()
  budget.values -= 1
  if (budget.values < 0) {
    throw new Problem("front matter expands to too many values (alias bomb?)", { max_values: FRONT_MATTER_MAX_VALUES })
  }
  if (node === null || node === undefined) return null
  if (isAlias(node)) {
    budget.aliases -= 1
    if (budget.aliases < 0) {
      throw new Problem(`front matter uses more than ${FRONT_MATTER_MAX_ALIASES} aliases (alias bomb?)`, {
        max_aliases: FRONT_MATTER_MAX_ALIASES
      })
    }
    const target = node.resolve(doc)
    if (target === undefined) {
      throw new Problem(`front matter alias ${node.source} has no anchor`, lineOf(node, lineCounter))
    }
    return toData(target, doc, lineCounter, budget, depth + 1, path)
  }
  if (isScalar(node)) {
    const value = scalarValue(node.value)
    if (typeof value === "string" && LONE_SURROGATE.test(value)) throw notUnicode(path, lineOf(node, lineCounter))
    return value
  }
  if (isSeq(node)) {
    return node.items.map((item, index) => toData(item, doc, lineCounter, budget, depth + 1, `${path}[${index}]`))
  }
  if (isMap(node)) {
    const result: Record<string, unknown> = {}
    const seen = new Set<string>()
    for (const pair of node.items) {
      const keyNode = isAlias(pair.key) ? pair.key.resolve(doc) : pair.key
      if (keyNode !== null && keyNode !== undefined && !isScalar(keyNode)) {
        throw new Problem("front matter keys must be plain strings", { path, ...lineOf(pair.key, lineCounter) })
      }
      const rawKey = isScalar(keyNode) ? scalarValue(keyNode.value) : null
      const key = rawKey === null ? "" : String(rawKey)
      const keyPath = path === "" ? key : `${path}.${key}`
      if (LONE_SURROGATE.test(key)) throw notUnicode(keyPath, lineOf(pair.key, lineCounter))
      if (FORBIDDEN_KEYS.has(key)) {
        throw new Problem(`front matter key "${key}" is not allowed`, {
          key,
          path: keyPath,
          ...lineOf(pair.key, lineCounter)
        })
      }
      if (seen.has(key)) {
        throw new Problem(`front matter key "${keyPath}" appears twice`, {
          key,
          path: keyPath,
          ...lineOf(pair.key, lineCounter)
        })
      }
      seen.add(key)
      result[key] = toData(pair.value, doc, lineCounter, budget, depth + 1, keyPath)
    }
    return result
  }
  throw new Problem("front matter contains an unsupported YAML node", { path })
}

const scalarValue = (value: unknown): string | number | boolean | null => {
  if (typeof value === "string" || typeof value === "boolean") return value
  if (typeof value === "number") return Number.isFinite(value) ? value : null
  if (typeof value === "bigint") return value.toString()
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
  return null
}
