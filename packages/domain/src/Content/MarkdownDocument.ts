/**
 * Markdown documents as pushed by push_markdown_file / push_markdown: YAML front matter split off and read as
 * inert data, the body rendered through mdast → hast → HTML (GFM, wikilinks), and the plain text for search.
 * The HTML is safe on its own where that is cheap; the one HTML sanitizer still runs on it afterwards.
 */
import { toHtml } from "hast-util-to-html"
import type { List, Nodes, Parent, PhrasingContent, Root, RootContent, Text } from "mdast"
import { fromMarkdown } from "mdast-util-from-markdown"
import { gfmFromMarkdown } from "mdast-util-gfm"
import { defaultHandlers, type Handlers, type State, toHast } from "mdast-util-to-hast"
import { gfm } from "micromark-extension-gfm"
import { Effect } from "effect"
import { CST, type Document, isAlias, isMap, isScalar, isSeq, Lexer, LineCounter, parseDocument } from "yaml"
import { InvalidFrontMatter, InvalidSlug } from "../Errors.ts"
import { isSlug, SLUG_MAX } from "../Slug.ts"

// ---------------------------------------------------------------------------------------------------------
// Front matter
// ---------------------------------------------------------------------------------------------------------

/** The YAML between the fences, in UTF-8 bytes. */
export const FRONT_MATTER_MAX_BYTES = 64 * 1024
/** Flow nesting, block indicators on one line, and the depth of the parsed data: all capped here. */
export const FRONT_MATTER_MAX_DEPTH = 64
/** Alias dereferences (nested expansions included) and values produced: an alias bomb hits one of them. */
export const FRONT_MATTER_MAX_ALIASES = 100
export const FRONT_MATTER_MAX_VALUES = 100_000
/** Keys that could reach an object's prototype if anything downstream merged front matter naively. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"])

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
    const firstEnd = lineEnd(text, 0)
    const first = lineAt(text, 0, firstEnd)
    if (!OPEN_FENCE.test(first)) {
      if (LANGUAGE_FENCE.test(first) || TOML_FENCE.test(first)) {
        return Effect.fail(
          invalid("front matter must be YAML between `---` lines (no language tag such as ---js or ---json)", {
            line: 1,
            fence: first.slice(0, 40)
          })
        )
      }
      return options.required
        ? Effect.fail(invalid("the Markdown file must start with YAML front matter between `---` lines"))
        : Effect.succeed({ frontMatter: {}, body: text })
    }
    const yamlStart = firstEnd + 1
    let position = yamlStart
    while (position <= text.length) {
      // Characters never outnumber UTF-8 bytes, so this bounds the scan before the exact count below.
      if (position - yamlStart > FRONT_MATTER_MAX_BYTES) break
      const end = lineEnd(text, position)
      if (CLOSE_FENCE.test(lineAt(text, position, end))) {
        const yaml = text.slice(yamlStart, position)
        if (new TextEncoder().encode(yaml).length > FRONT_MATTER_MAX_BYTES) break
        return Effect.map(parseFrontMatter(yaml), (frontMatter) => ({
          frontMatter,
          body: text.slice(Math.min(end + 1, text.length))
        }))
      }
      position = end + 1
    }
    if (position - yamlStart > FRONT_MATTER_MAX_BYTES || position <= text.length) {
      return Effect.fail(
        invalid(`front matter is larger than ${FRONT_MATTER_MAX_BYTES} bytes`, { max_bytes: FRONT_MATTER_MAX_BYTES })
      )
    }
    return Effect.fail(invalid("front matter is not closed: add a line `---` after it", { line: 1 }))
  })

/** A rejection found while reading the YAML; becomes InvalidFrontMatter. */
class Problem {
  constructor(readonly message: string, readonly details: Record<string, unknown>) {}
}

// The YAML text starts on document line 2 (after the opening fence).
const FIRST_YAML_LINE = 2

const parseFrontMatter = (yaml: string): Effect.Effect<Record<string, unknown>, InvalidFrontMatter> =>
  Effect.try({
    try: () => readYaml(yaml),
    catch: (error) =>
      error instanceof Problem
        ? invalid(error.message, error.details)
        : invalid("front matter could not be read as YAML", { reason: String(error) })
  })

const readYaml = (yaml: string): Record<string, unknown> => {
  checkShape(yaml)
  const lineCounter = new LineCounter()
  const doc = parseDocument(yaml, {
    // The core schema: strings, numbers, booleans, null. No timestamps, binary, sets, merge keys or JS types
    // (not even as explicit `!!timestamp`/`!!binary` tags), and no custom tags; an unresolved tag is a
    // warning, which is rejected below.
    schema: "core",
    customTags: [],
    resolveKnownTags: false,
    merge: false,
    strict: true,
    prettyErrors: true,
    // Duplicate keys are found while converting (a Set per map); the library's own check is quadratic.
    uniqueKeys: false,
    lineCounter
  })
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
  return new Problem(`front matter "${path}" is not valid Unicode text (an unpaired surrogate escape)`, { path, ...line })
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

// ---------------------------------------------------------------------------------------------------------
// Known fields
// ---------------------------------------------------------------------------------------------------------

export const FIELD_LIST_MAX_ITEMS = 64
export const FIELD_ITEM_MAX_CHARS = 200

export type Claim = string | Readonly<Record<string, unknown>>

/**
 * What a page takes from its front matter. Everything else stays in `data`, inert: front matter never sets
 * visibility, owner or target, so keys such as `visibility`, `owner`, `bucket`, `dock` or `public` are kept
 * as data only and nothing reads them for access or placement.
 */
export interface PageFields {
  readonly title: string | undefined
  readonly summary: string | undefined
  readonly slug: string | undefined
  readonly tags: ReadonlyArray<string>
  readonly entities: ReadonlyArray<string>
  readonly concepts: ReadonlyArray<string>
  readonly claims: ReadonlyArray<Claim>
  readonly claimCount: number
  readonly sources: ReadonlyArray<string>
  readonly data: Record<string, unknown>
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  "title",
  "summary",
  "slug",
  "tags",
  "entities",
  "concepts",
  "claims",
  "sources"
])

const wrongType = (field: string, expected: string, value: unknown) =>
  invalid(`front matter field "${field}" must be ${expected}`, { field, found: describe(value) })

const describe = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "list" : typeof value === "object" ? "mapping" : typeof value

/** `null` or a missing key means "not given"; blank strings count as not given too. */
const optionalText = (frontMatter: Record<string, unknown>, field: string) =>
  Effect.suspend((): Effect.Effect<string | undefined, InvalidFrontMatter> => {
    const value = frontMatter[field]
    if (value === undefined || value === null) return Effect.succeed(undefined)
    if (typeof value !== "string") return Effect.fail(wrongType(field, "a string", value))
    const trimmed = value.trim()
    return Effect.succeed(trimmed === "" ? undefined : trimmed)
  })

/** A string or a list of strings → trimmed, blanks dropped, deduplicated (first occurrence wins), capped. */
const stringList = (frontMatter: Record<string, unknown>, field: string) =>
  Effect.suspend((): Effect.Effect<ReadonlyArray<string>, InvalidFrontMatter> => {
    const value = frontMatter[field]
    if (value === undefined || value === null) return Effect.succeed([])
    if (typeof value !== "string" && !Array.isArray(value)) {
      return Effect.fail(wrongType(field, "a string or a list of strings", value))
    }
    const items: ReadonlyArray<unknown> = typeof value === "string" ? [value] : value
    const result: Array<string> = []
    for (const [index, item] of items.entries()) {
      if (typeof item !== "string") {
        return Effect.fail(
          invalid(`front matter field "${field}" must contain only strings`, { field, index, found: describe(item) })
        )
      }
      const trimmed = item.trim()
      if (trimmed.length > FIELD_ITEM_MAX_CHARS) {
        return Effect.fail(
          invalid(`front matter field "${field}" has an item longer than ${FIELD_ITEM_MAX_CHARS} characters`, {
            field,
            index,
            max_chars: FIELD_ITEM_MAX_CHARS
          })
        )
      }
      if (trimmed !== "" && !result.includes(trimmed)) result.push(trimmed)
    }
    return result.length > FIELD_LIST_MAX_ITEMS
      ? Effect.fail(
        invalid(`front matter field "${field}" has more than ${FIELD_LIST_MAX_ITEMS} items`, {
          field,
          count: result.length,
          max_items: FIELD_LIST_MAX_ITEMS
        })
      )
      : Effect.succeed(result)
  })

const claimList = (frontMatter: Record<string, unknown>) =>
  Effect.suspend((): Effect.Effect<ReadonlyArray<Claim>, InvalidFrontMatter> => {
    const value = frontMatter.claims
    if (value === undefined || value === null) return Effect.succeed([])
    if (!Array.isArray(value)) return Effect.fail(wrongType("claims", "a list", value))
    const index = value.findIndex((item) => typeof item !== "string" && describe(item) !== "mapping")
    return index === -1
      ? Effect.succeed(value as ReadonlyArray<Claim>)
      : Effect.fail(
        invalid(`front matter field "claims" must contain strings or mappings`, {
          field: "claims",
          index,
          found: describe(value[index])
        })
      )
  })

const slugField = (frontMatter: Record<string, unknown>) =>
  Effect.suspend((): Effect.Effect<string | undefined, InvalidFrontMatter | InvalidSlug> => {
    const value = frontMatter.slug
    if (value === undefined || value === null) return Effect.succeed(undefined)
    if (typeof value !== "string") return Effect.fail(wrongType("slug", "a string (quote numbers)", value))
    return isSlug(value)
      ? Effect.succeed(value)
      : Effect.fail(
        new InvalidSlug({
          message:
            `front matter slug must be 1-${SLUG_MAX} lowercase letters, digits and single hyphens, starting and ending with a letter or digit`,
          details: { field: "slug", value: value.slice(0, 200) }
        })
      )
  })

/** Reads the known fields of parsed front matter (from `splitFrontMatter`); wrong types name the field. */
export const pageFields = (
  frontMatter: Record<string, unknown>
): Effect.Effect<PageFields, InvalidFrontMatter | InvalidSlug> =>
  Effect.gen(function*() {
    const title = yield* optionalText(frontMatter, "title")
    const summary = yield* optionalText(frontMatter, "summary")
    const slug = yield* slugField(frontMatter)
    const tags = yield* stringList(frontMatter, "tags")
    const entities = yield* stringList(frontMatter, "entities")
    const concepts = yield* stringList(frontMatter, "concepts")
    const claims = yield* claimList(frontMatter)
    const sources = yield* stringList(frontMatter, "sources")
    const data: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(frontMatter)) {
      if (!KNOWN_FIELDS.has(key) && !FORBIDDEN_KEYS.has(key)) data[key] = value
    }
    return { title, summary, slug, tags, entities, concepts, claims, claimCount: claims.length, sources, data }
  })

// ---------------------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------------------

export interface Wikilink {
  readonly target: string
  readonly label: string | undefined
}

export interface RenderOptions {
  /** Where `[[target]]` points, or undefined when no readable page matches (rendered as unresolved). */
  readonly resolveWikilink: (target: string) => { readonly href: string } | undefined
}

export interface RenderedMarkdown {
  readonly html: string
  /** The text-readable content (search, format "text"): blocks separated by blank lines. */
  readonly text: string
  /** Every distinct wikilink, in document order. */
  readonly wikilinks: ReadonlyArray<Wikilink>
  readonly firstHeading: string | undefined
  /** The text of the first paragraph: a better source for `deriveSummary` than `text` when a heading leads. */
  readonly lead: string | undefined
  /**
   * What the renderer dropped or neutralised (raw HTML, unsafe link schemes) or showed as plain text (input too
   * costly to parse), for the push result.
   */
  readonly warnings: ReadonlyArray<string>
}

/** `[[owner/dock/page-slug]]` points into another Dock; anything else names a page in the same Dock. */
export const wikilinkParts = (
  target: string
): { readonly page: string } | { readonly owner: string; readonly dock: string; readonly page: string } => {
  const parts = target.split("/")
  return parts.length === 3 && parts.every((part) => part.trim() !== "")
    ? { owner: parts[0]!.trim(), dock: parts[1]!.trim(), page: parts[2]!.trim() }
    : { page: target }
}

const LINK_SCHEMES: ReadonlySet<string> = new Set(["http", "https", "mailto"])
const IMAGE_SCHEMES: ReadonlySet<string> = new Set(["http", "https"])
const DATA_IMAGE = /^data:image\/(?:png|jpeg|jpg|gif|webp)[;,]/i

/**
 * Whether a URL is safe to emit: relative, or one of the allowed schemes. Markdown has already decoded
 * character references (`&#106;avascript:`); browsers also ignore tabs, newlines and leading controls in a
 * scheme, so all controls and spaces are removed before reading it (stricter than a browser, never looser).
 */
export const isSafeUrl = (url: string, kind: "link" | "image"): boolean => {
  const compact = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, "")
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(compact)?.[1]?.toLowerCase()
  if (scheme === undefined) return true
  if (kind === "image") return IMAGE_SCHEMES.has(scheme) || DATA_IMAGE.test(compact)
  return LINK_SCHEMES.has(scheme)
}

const WIKILINK = /\[\[([^[\]|\n]+)(?:\|([^[\]\n]*))?\]\]/g

/**
 * Renders a Markdown body (front matter already removed) to HTML with GitHub-flavoured Markdown: tables, task
 * lists, strikethrough, autolinks and footnotes.
 *
 * - Raw HTML in Markdown is dropped, not escaped: mdast-util-to-hast runs without `allowDangerousHtml`, so
 *   `html` nodes produce nothing. Each drop is reported in `warnings`.
 * - Links, autolinks, reference definitions and images with a scheme other than http(s)/mailto (images:
 *   http(s) and raster `data:image/…`) are neutralised before conversion: a link keeps its text without the
 *   link, an image becomes its alt text. Titles and every other attribute are escaped by hast-util-to-html.
 * - Wikilinks `[[Page]]`, `[[slug|label]]`, `[[owner/dock/page-slug]]` in text (never in code, inline code,
 *   or inside another link) become links when `resolveWikilink` finds them, and otherwise
 *   `<span class="wikilink-unresolved">label</span>`, so the text survives even if a sanitizer drops the class.
 *   Inside a GFM table cell write `[[slug\|label]]`: an unescaped `|` splits the cell first. A reference
 *   definition whose label matches (`[page]: https://…` next to `[[Page]]`) wins, as CommonMark says.
 */
export const renderMarkdown = (body: string, options: RenderOptions): RenderedMarkdown => {
  const scan = scanMarkdown(body)
  if (scan.deepestPrefix > MARKDOWN_MAX_CONTAINER_PREFIX) return asPlainText(body)
  try {
    return renderChunks(body, scan.chunks, options)
  } catch (error) {
    // Nesting the prefix check does not see can still exhaust the stack of the recursive tree walkers.
    if (error instanceof RangeError) return asPlainText(body)
    throw error
  }
}

/**
 * Leading characters of a line that open containers (blockquote `>`, list markers, indentation). The parser's
 * cost grows with the square of the nesting depth (`>>>>…` 1 MiB long never finishes) and deep trees overflow
 * the stack, so a document with a longer prefix on any line is shown as plain text instead.
 */
export const MARKDOWN_MAX_CONTAINER_PREFIX = 128
const CONTAINER_PREFIX = /^(?:[ \t]|>|[-*+](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))*/

const asPlainText = (body: string): RenderedMarkdown => {
  const text = body.replace(/[ \t]+/g, " ").trim()
  return {
    html: toHtml({ type: "element", tagName: "pre", properties: {}, children: [{ type: "text", value: body }] }),
    text,
    wikilinks: [],
    firstHeading: undefined,
    lead: undefined,
    warnings: ["the Markdown is nested too deeply to render; it is shown as plain text"]
  }
}

// ---------------------------------------------------------------------------------------------------------
// Bounded rendering
//
// The parser (micromark) is slow on some input, and rendering runs on every push and every read. Its cost grows
// with the square of the emphasis, bracket and code markers in one paragraph (`*a **a ***a …`, `a]` runs,
// unmatched `[`), with the square of a paragraph's lines, with the blocks in one parse times the containers that
// end in it (`- > a` quotes in a list), and it spends tens of microseconds on each list item, quote, table cell
// and autolink. So:
//
// - The body is parsed in chunks of a few KiB, cut before a line at column 0 that follows a blank line and is
//   not a list item: there every block has ended, unless fenced code or an HTML block runs on, which the parse
//   itself tells (a marker paragraph after the chunk must come out as a top-level paragraph; if not, the chunk
//   is parsed again with the next one). The trees of the chunks, in order, are the tree of the whole body.
// - A paragraph (list item, heading, table row) weighing more than MARKDOWN_MAX_PARAGRAPH_WEIGHT (inline markers
//   plus lines) is shown as plain text, with the lines around it up to the nearest cuts, and a warning.
// - A linear scan estimates each chunk's cost; once the chunks rendered would cost more than
//   MARKDOWN_RENDER_BUDGET, the rest of the body is shown as plain text, with a warning.
//
// Reference and footnote definitions apply document-wide: a chunk is parsed with stand-ins for the definitions
// of other chunks that its brackets name. The stand-ins come from a line-by-line guess; the parsed trees say
// which definitions really exist, and a chunk whose stand-ins were wrong is parsed again with the right ones.
// ---------------------------------------------------------------------------------------------------------

/** Chunks are cut at the first place allowed after this many characters. */
export const MARKDOWN_CHUNK_CHARS = 4096
/**
 * The most a paragraph, list item, heading or table row may weigh: one for each line and each inline marker
 * (a run of `*`, `_`, `~` or `` ` ``; each `[`, `]`, `!`, `<`, `&` or `\`). Ordinary paragraphs weigh tens.
 */
export const MARKDOWN_MAX_PARAGRAPH_WEIGHT = 2000
/**
 * The estimated cost of the part of a body that is rendered, in the units of `chunkCost`. 1 MiB of ordinary prose
 * with headings, lists, tables and code costs 2.9-3.4 million and takes about 1.4 s to render here (2 s with
 * micromark's development build, which `--conditions=development` would load; bench/markdown.ts). Input that
 * costs more for its size is cut off sooner, and takes about as long: a higher budget renders more of it, slower.
 */
export const MARKDOWN_RENDER_BUDGET = 3_600_000

/** A run of whole lines of the body, and what the scan found in it. */
interface Chunk {
  readonly start: number
  end: number
  /** 1-based body lines of the chunk. */
  readonly firstLine: number
  lastLine: number
  chars: number
  lines: number
  /** Lines that start a block: after a blank line, or with a container marker, heading or fence. */
  blocks: number
  /** `>` and list markers in line prefixes, and the sum over lines of their square (nesting costs its square). */
  markers: number
  nesting: number
  /** Containers that end (quotes at a blank line, nesting a line leaves): each costs a pass over the chunk. */
  closings: number
  /**
   * The weight of each inline unit (paragraph, list item, table row, heading) is its inline markers plus its
   * lines: `inline` sums them, `squares` sums their squares, `largestUnit` is the heaviest.
   */
  inline: number
  squares: number
  largestUnit: number
  /** The line where the heaviest unit starts. */
  largestUnitLine: number
  /** Sum over the inline units of the markers that look ahead times the unit's characters. */
  scans: number
  /** `www.` and `@`, where GFM autolink literals start; `|`, which divide table cells. */
  autolinks: number
  pipes: number
  /** `]` anywhere, and lines that look like definitions: the parser checks each label against each definition. */
  brackets: number
  readonly definitions: Array<DefinitionLabel>
}

interface DefinitionLabel {
  /** `normalizeIdentifier` of the label, with `^` in front for a footnote. */
  readonly key: string
  /** The label as written (without the footnote's `^`). */
  readonly raw: string
}

interface Scan {
  readonly chunks: ReadonlyArray<Chunk>
  readonly deepestPrefix: number
}

const LINE_BREAK = /\r\n|\r|\n/g
const BLANK = /^[ \t]*$/
const LIST_ITEM_START = /^(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)/
const QUOTES = /^(?: {0,3}>)*/
const BULLET_ITEM = /^[-+*]([ \t]+)\S/
const ORDERED_ITEM = /^(\d{1,9})[.)]([ \t]+)\S/
const ATX_HEADING = /^#{1,6}(?:[ \t]|$)/
const THEMATIC_BREAK = /^(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/
const FENCE_LIKE = /^[ \t]*(?:```|~~~)/
const TABLE_ROW = /^\|(?:[ \t]*[^|\\ \t][^|\\]*\|)+[ \t]*$/
const TABLE_DELIMITER = /^\|(?:[ \t]*:?-+:?[ \t]*\|)+[ \t]*$/
const DEFINITION = /^\[((?:[^\\[\]]|\\.){1,999})\]:/
const HTML_BLOCKS: ReadonlyArray<readonly [RegExp, RegExp]> = [
  [/^ {0,3}<(?:script|pre|style|textarea)(?:[ \t>]|$)/i, /<\/(?:script|pre|style|textarea)>/i],
  [/^ {0,3}<!--/, /-->/],
  [/^ {0,3}<\?/, /\?>/],
  [/^ {0,3}<![A-Za-z]/, />/],
  [/^ {0,3}<!\[CDATA\[/, /\]\]>/]
]
/** 2: counted once per run of the same character; 1: counted each. */
const INLINE_MARKER = new Uint8Array(128)
for (const marker of "[]!<&\\") INLINE_MARKER[marker.charCodeAt(0)] = 1
for (const marker of "*_~`") INLINE_MARKER[marker.charCodeAt(0)] = 2

const newChunk = (start: number, firstLine: number): Chunk => ({
  start,
  end: start,
  firstLine,
  lastLine: firstLine,
  chars: 0,
  lines: 0,
  blocks: 0,
  markers: 0,
  nesting: 0,
  closings: 0,
  inline: 0,
  squares: 0,
  scans: 0,
  largestUnit: 0,
  largestUnitLine: firstLine,
  brackets: 0,
  autolinks: 0,
  pipes: 0,
  definitions: []
})

const countPipes = (line: string): number => {
  let count = 0
  for (let i = 0; i < line.length; i++) if (line.charCodeAt(i) === 124) count += 1
  return count
}

/**
 * One pass over the lines: where chunks may be cut, and what each costs. Cuts are made only before a line that
 * starts at column 0 after a blank line, is not a list item, and is not inside fenced code or an HTML block that
 * runs over blank lines (comments, `<pre>`, `<script>`…) as far as this scan can tell.
 *
 * The weight of a paragraph must never be underestimated, or a hostile one gets parsed: units are cut only where
 * a paragraph surely ends (blank lines, list items, headings, fences, table rows), and fenced code is left out
 * only while the fences seen so far leave no doubt where code starts and ends.
 */
const scanMarkdown = (body: string): Scan => {
  // Segments run from one place where a cut is allowed to the next. Chunks gather segments up to
  // MARKDOWN_CHUNK_CHARS; a segment with a paragraph over the weight limit is a chunk of its own, so that only
  // it is shown as plain text.
  const chunks: Array<Chunk> = []
  let chunk: Chunk | undefined
  let segment = newChunk(0, 1)
  const cut = (end: number) => {
    segment.end = end
    if (segment.largestUnit > MARKDOWN_MAX_PARAGRAPH_WEIGHT) {
      if (chunk !== undefined) chunks.push(chunk)
      chunks.push(segment)
      chunk = undefined
    } else {
      chunk = chunk === undefined ? segment : mergeChunks(chunk, segment)
      if (chunk.chars >= MARKDOWN_CHUNK_CHARS) {
        chunks.push(chunk)
        chunk = undefined
      }
    }
  }
  let deepestPrefix = 0
  // Fenced code and long HTML blocks, for cutting chunks: any fence at the top level (even one that turns
  // out to be inside a list item) keeps the chunk open until its closing fence.
  let fence: { readonly marker: string; readonly length: number; readonly sure: boolean } | undefined
  // Whether the fence tracking is surely in step with the parser: it is while every fence-like line was a
  // fence at column 0 after a blank line or the closing of one. Only then is fenced code left out of the units.
  let fencesTrusted = true
  let htmlEnd: RegExp | undefined
  let table: { readonly header: number } | undefined
  let previousBlank = true
  let previousQuotes = 0
  let previousLevel = 0
  let lineNumber = 0
  // The current inline unit.
  let unit = 0
  let unitChars = 0
  let unitScanners = 0
  let unitLine = 1
  let unitItemIndent = -1
  let unitQuotes = 0
  let unitOneLine = false
  const endUnit = () => {
    segment.inline += unit
    segment.squares += unit * unit
    segment.scans += unitScanners * unitChars
    if (unit > segment.largestUnit) {
      segment.largestUnit = unit
      segment.largestUnitLine = unitLine
    }
    unit = 0
    unitChars = 0
    unitScanners = 0
    unitItemIndent = -1
    unitOneLine = false
  }
  let position = 0
  while (position <= body.length) {
    LINE_BREAK.lastIndex = position
    const lineBreak = LINE_BREAK.exec(body)
    const end = lineBreak === null ? body.length : lineBreak.index
    const next = lineBreak === null ? body.length + 1 : end + lineBreak[0].length
    const line = body.slice(position, end)
    lineNumber += 1
    const blank = BLANK.test(line)
    if (previousBlank && !blank && fence === undefined && htmlEnd === undefined && position > segment.start) {
      const first = line.charCodeAt(0)
      if (first !== 32 && first !== 9 && !LIST_ITEM_START.test(line)) {
        endUnit()
        cut(position)
        segment = newChunk(position, lineNumber)
      }
    }
    segment.lines += 1
    if (!blank) segment.lastLine = lineNumber
    segment.chars += next - position
    const prefix = CONTAINER_PREFIX.exec(line)![0]
    if (prefix.length > deepestPrefix) deepestPrefix = prefix.length
    let quoteMarks = 0
    let containers = 0
    for (let i = 0; i < prefix.length; i++) {
      const code = prefix.charCodeAt(i)
      if (code === 62) quoteMarks += 1
      if (code !== 32 && code !== 9 && (code < 48 || code > 57)) containers += 1
    }
    // How deep the line is nested: its markers, and its indentation before the first one (two columns a level).
    let indentation = 0
    while (indentation < prefix.length && prefix.charCodeAt(indentation) === 32) indentation += 1
    const level = containers + (containers > 0 ? indentation >> 1 : 0)
    segment.markers += containers
    segment.nesting += level * level
    // Containers that end here: quotes at a blank line, and any nesting a non-blank line leaves.
    if (blank) segment.closings += previousQuotes
    else segment.closings += Math.max(0, previousQuotes - quoteMarks, previousLevel - level)
    previousQuotes = blank ? 0 : quoteMarks
    if (!blank) previousLevel = level
    // A run of `*`, `_`, `~` or `` ` `` is one delimiter for the parser; every other marker is one on its own.
    // Code spans, HTML and autolinks (`` ` ``, `<`) and link destinations (`](`) look ahead for their end.
    let markers = 0
    let scanners = 0
    for (let i = 0; i < line.length; i++) {
      const code = line.charCodeAt(i)
      if (code < 128 && INLINE_MARKER[code] !== 0 && (INLINE_MARKER[code] === 1 || line.charCodeAt(i - 1) !== code)) {
        markers += 1
        if (code === 93) {
          segment.brackets += 1
          if (line.charCodeAt(i + 1) === 40) scanners += 1
        } else if (code === 96 || code === 60) scanners += 1
      }
    }
    for (let at = line.indexOf("@"); at !== -1; at = line.indexOf("@", at + 1)) segment.autolinks += 1
    for (let at = line.indexOf("."); at !== -1; at = line.indexOf(".", at + 1)) {
      // `www.`, in either case (`| 32` lowers an ASCII letter).
      const www = (line.charCodeAt(at - 1) | 32) === 119 && (line.charCodeAt(at - 2) | 32) === 119 &&
        (line.charCodeAt(at - 3) | 32) === 119
      if (www) segment.autolinks += 1
    }
    segment.pipes += countPipes(line)
    if (line.includes("]:")) {
      const label = DEFINITION.exec(line.slice(prefix.length))?.[1]
      if (label !== undefined) {
        segment.brackets += 1
        const footnote = label.startsWith("^")
        const raw = footnote ? label.slice(1) : label
        segment.definitions.push({ key: (footnote ? "^" : "") + normalizeLabel(raw), raw })
      }
    }

    // Inline units, and blocks.
    const quotes = QUOTES.exec(line)![0]
    const depth = countQuotes(quotes)
    let rest = line.slice(quotes.length)
    let indent = 0
    while (indent < rest.length && rest.charCodeAt(indent) === 32) indent += 1
    const tab = rest.charCodeAt(indent) === 9
    rest = rest.slice(indent)
    if (depth > 0 && indent > 0) indent -= 1
    const insideSureFence = fence?.sure === true && fencesTrusted
    if (blank || rest === "" || tab && BLANK.test(rest)) {
      endUnit()
    } else if (insideSureFence) {
      // Code: not parsed for emphasis or links.
    } else {
      let boundary = previousBlank || unitOneLine || depth > unitQuotes
      let oneLine = false
      let item = false
      if (!tab && indent <= 3) {
        const ordered = ORDERED_ITEM.exec(rest)
        item = ordered !== null || BULLET_ITEM.test(rest)
        if (item) {
          // A bullet item, or an ordered one starting at 1, always ends a paragraph; another ordered item does
          // when the line is less indented than the list item the unit is in (that item has ended).
          const ends = ordered === null || ordered[1] === "1" || (depth === unitQuotes && indent < unitItemIndent)
          if (ends) boundary = true
        } else if (ATX_HEADING.test(rest) || THEMATIC_BREAK.test(rest) || fenceOpening(rest) !== undefined) {
          boundary = true
          oneLine = true
        } else if (
          table !== undefined && depth === 0 && indent === 0 && countPipes(rest) === table.header &&
          TABLE_DELIMITER.test(rest)
        ) {
          // The delimiter row of a table whose header is the previous line.
          boundary = true
          oneLine = true
          table = { header: -1 }
        } else if (table?.header === -1 && depth === 0 && indent === 0 && rest.charCodeAt(0) === 124) {
          boundary = true
          oneLine = true
        }
      }
      if (boundary) {
        endUnit()
        // Where the item's content starts, at the least (a marker and a space).
        unitItemIndent = item ? indent + 2 : -1
        unitQuotes = depth
        segment.blocks += 1
      } else if (quoteMarks > 0 || LIST_ITEM_START.test(rest)) {
        segment.blocks += 1
      }
      if (unit === 0) unitLine = lineNumber
      unit += markers + 1
      unitChars += line.length + 1
      unitScanners += scanners
      unitOneLine = oneLine
      // A table starts with a header row right after a blank line; any other line ends a table.
      if (table?.header !== -1 || rest.charCodeAt(0) !== 124 || depth > 0 || indent > 0) table = undefined
      if (previousBlank && depth === 0 && indent === 0 && !tab && TABLE_ROW.test(rest)) {
        table = { header: countPipes(rest) }
      }
    }

    // Fenced code and HTML blocks (for cutting chunks; sure fences also for the inline units).
    const fenceLike = FENCE_LIKE.test(line.slice(prefix.length))
    if (fence !== undefined) {
      const close = FENCE_CLOSE.exec(line)
      if (close !== null && close[1]![0] === fence.marker && close[1]!.length >= fence.length) {
        fence = undefined
      } else if (fenceLike && !fence.sure) {
        fencesTrusted = false
      }
    } else if (htmlEnd !== undefined) {
      if (htmlEnd.test(line)) htmlEnd = undefined
      if (fenceLike) fencesTrusted = false
    } else {
      const open = fenceOpening(line)
      if (open !== undefined) {
        const sure = previousBlank && line.charCodeAt(0) !== 32
        if (!sure) fencesTrusted = false
        fence = { ...open, sure }
      } else if (fenceLike) {
        fencesTrusted = false
      } else if (line.includes("<")) {
        for (const [start, stop] of HTML_BLOCKS) {
          const opened = start.exec(line)
          if (opened !== null) {
            if (!stop.test(line.slice(opened[0].length))) htmlEnd = stop
            break
          }
        }
      }
    }
    previousBlank = blank
    position = next
  }
  endUnit()
  cut(body.length)
  if (chunk !== undefined) chunks.push(chunk)
  return { chunks, deepestPrefix }
}

/** A fenced code block's opening line (a backtick fence's info string has no backtick). */
const fenceOpening = (line: string): { readonly marker: string; readonly length: number } | undefined => {
  const open = FENCE_OPEN.exec(line)
  if (open === null || open[1]![0] === "`" && open[2]!.includes("`")) return undefined
  return { marker: open[1]![0]!, length: open[1]!.length }
}

const countQuotes = (quotes: string): number => {
  let count = 0
  for (let i = 0; i < quotes.length; i++) if (quotes.charCodeAt(i) === 62) count += 1
  return count
}

/** CommonMark's label matching: whitespace collapsed and trimmed, case folded (as micromark does it). */
const normalizeLabel = (label: string): string =>
  label.replace(/[\t\n\r ]+/g, " ").replace(/^ | $/g, "").toLowerCase().toUpperCase()

/**
 * What rendering a chunk costs, roughly in microseconds of CPU (parallel garbage collection included, on a busy
 * two-core machine; on an idle one the wall-clock time is about half). Each term is one of the parser's costs
 * found by measuring (bench/markdown.ts shows the result): per character, line, block, container marker, nesting
 * level squared, paragraph weight and its square (emphasis and brackets look back over the paragraph), markers
 * that look ahead to the paragraph's end (`` ` ``, `<`, `](`), autolink literal, table cell and definition, and
 * a pass over the chunk for each container that ends in it.
 */
const chunkCost = (chunk: Chunk, definitions: number): number =>
  100 + 1.5 * chunk.chars + 10 * chunk.lines + 60 * chunk.blocks + 60 * chunk.markers + 3 * chunk.nesting +
  10 * chunk.inline + 0.04 * chunk.squares + 0.01 * chunk.scans + 0.1 * chunk.closings * chunk.lines +
  100 * chunk.autolinks + 50 * chunk.pipes + 100 * definitions + 0.01 * chunk.brackets * definitions

/** The labels a chunk's brackets could name: the text of every innermost `[…]`. */
const bracketLabels = (text: string): Set<string> => {
  const labels = new Set<string>()
  let open = -1
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 92) i += 1
    else if (code === 91) open = i + 1
    else if (code === 93 && open >= 0) {
      if (i - open <= 1000) {
        const label = text.slice(open, i)
        labels.add(label.startsWith("^") ? "^" + normalizeLabel(label.slice(1)) : normalizeLabel(label))
      }
      open = -1
    }
  }
  return labels
}

interface ParsedChunk {
  readonly chunk: Chunk
  readonly text: string
  readonly cost: number
  children: Array<RootContent>
  /** The stand-in definitions it was parsed with. */
  standIns: ReadonlySet<string>
  /** The definitions it really has (keys). */
  own: Map<string, string>
  labels: Set<string> | undefined
}

const PARSE_OPTIONS = { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }

/**
 * A paragraph parsed after a chunk: if it comes out as a top-level paragraph of its own, everything in the chunk
 * was closed before it, so the next chunk starts as it would in the whole document; if the chunk ends inside
 * fenced code, an HTML block or a container, it does not, and the chunk is parsed again with the next one.
 */
const SENTINEL = "\uE000"

const parseChunk = (
  text: string,
  standIns: ReadonlyArray<DefinitionLabel>,
  sentinel: boolean
): Array<RootContent> | undefined => {
  const prefix = standIns.map(({ key, raw }) => key.startsWith("^") ? `[^${raw}]: x\n\n` : `[${raw}]: <>\n\n`).join("")
  const children = fromMarkdown(prefix + text + (sentinel ? `\n\n${SENTINEL}` : ""), PARSE_OPTIONS).children
  if (sentinel) {
    const last = children.pop()
    if (
      last?.type !== "paragraph" || last.position?.start.offset !== prefix.length + text.length + 2 ||
      last.children.length !== 1 || last.children[0]!.type !== "text" || last.children[0]!.value !== SENTINEL
    ) return undefined
  }
  return prefix === ""
    ? children
    : children.filter((node) => (node.position?.end.offset ?? Number.POSITIVE_INFINITY) > prefix.length)
}

/** Adds the chunk `b`, which follows `a`, to `a`. */
const mergeChunks = (a: Chunk, b: Chunk): Chunk => {
  a.end = b.end
  a.lastLine = b.lastLine
  a.chars += b.chars
  a.lines += b.lines
  a.blocks += b.blocks
  a.markers += b.markers
  a.nesting += b.nesting
  a.closings += b.closings
  a.inline += b.inline
  a.squares += b.squares
  a.scans += b.scans
  if (b.largestUnit > a.largestUnit) {
    a.largestUnit = b.largestUnit
    a.largestUnitLine = b.largestUnitLine
  }
  a.brackets += b.brackets
  a.autolinks += b.autolinks
  a.pipes += b.pipes
  for (const definition of b.definitions) a.definitions.push(definition)
  return a
}

/** The definitions and footnote definitions in parsed nodes (anywhere: also inside quotes and lists). */
const definitionsIn = (nodes: ReadonlyArray<Nodes>, found: Map<string, string>): Map<string, string> => {
  for (const node of nodes) {
    // The identifier keeps the label's escapes (`label` has them decoded), so it is itself a label for it.
    if (node.type === "definition") found.set(normalizeLabel(node.identifier), node.identifier)
    else if (node.type === "footnoteDefinition") found.set("^" + normalizeLabel(node.identifier), node.identifier)
    if ("children" in node) definitionsIn(node.children, found)
  }
  return found
}

const renderChunks = (body: string, chunks: ReadonlyArray<Chunk>, options: RenderOptions): RenderedMarkdown => {
  const candidates = new Map<string, string>()
  for (const chunk of chunks) {
    for (const { key, raw } of chunk.definitions) if (!candidates.has(key)) candidates.set(key, raw)
  }
  const parts: Array<ParsedChunk | { readonly plain: string }> = []
  const crowded: Array<Chunk> = []
  let exhaustedAt: number | undefined
  let spent = 0
  let index = 0
  while (index < chunks.length) {
    let chunk = chunks[index]!
    let next = index + 1
    for (;;) {
      const text = body.slice(chunk.start, chunk.end)
      if (exhaustedAt !== undefined) {
        parts.push({ plain: text })
        break
      }
      if (chunk.largestUnit > MARKDOWN_MAX_PARAGRAPH_WEIGHT) {
        crowded.push(chunk)
        parts.push({ plain: text })
        break
      }
      const labels = candidates.size > 0 && chunk.brackets > 0 ? bracketLabels(text) : undefined
      const standIns: Array<DefinitionLabel> = []
      if (labels !== undefined) {
        const own = new Set(chunk.definitions.map(({ key }) => key))
        for (const key of labels) {
          const raw = candidates.get(key)
          if (raw !== undefined && !own.has(key)) standIns.push({ key, raw })
        }
      }
      const cost = chunkCost(chunk, chunk.definitions.length + standIns.length)
      if (spent + cost > MARKDOWN_RENDER_BUDGET) {
        exhaustedAt = chunk.firstLine
        parts.push({ plain: text })
        break
      }
      spent += cost
      const children = parseChunk(text, standIns, next < chunks.length)
      if (children === undefined) {
        // Cut inside a block: take at least as much again, so repeated failures cost at most twice the parse.
        const size = 2 * (chunk.end - chunk.start)
        while (next < chunks.length && chunk.end - chunk.start < size) chunk = mergeChunks(chunk, chunks[next++]!)
        continue
      }
      parts.push({
        chunk,
        text,
        cost,
        children,
        standIns: new Set(standIns.map(({ key }) => key)),
        own: text.includes("]:") ? definitionsIn(children, new Map()) : new Map(),
        labels
      })
      break
    }
    index = next
  }

  // The stand-ins were a guess from the definition scan: check them against the parsed definitions, and
  // parse again (within the budget) the chunks whose brackets name a definition missed or assumed wrongly.
  const parsed = parts.filter((part): part is ParsedChunk => "chunk" in part)
  const defined = new Map<string, string>()
  for (const part of parsed) for (const [key, raw] of part.own) if (!defined.has(key)) defined.set(key, raw)
  if (defined.size > 0 || parsed.some((part) => part.standIns.size > 0)) {
    for (const part of parsed) {
      const labels = part.labels ?? (part.chunk.brackets > 0 ? bracketLabels(part.text) : new Set<string>())
      const wrong = [...labels].some((key) =>
        defined.has(key) !== (part.standIns.has(key) || part.own.has(key))
      )
      if (!wrong || spent + part.cost > MARKDOWN_RENDER_BUDGET) continue
      spent += part.cost
      const standIns: Array<DefinitionLabel> = []
      for (const key of labels) {
        const raw = defined.get(key)
        if (raw !== undefined && !part.own.has(key)) standIns.push({ key, raw })
      }
      part.children = parseChunk(part.text, standIns, false) ?? part.children
    }
  }

  const root: Root = { type: "root", children: [] }
  let plain = ""
  const flushPlain = () => {
    const value = plain.replace(/\r\n?/g, "\n").replace(/\n+$/, "")
    if (value.trim() !== "") root.children.push({ type: "code", lang: null, meta: null, value })
    plain = ""
  }
  for (const part of parts) {
    if ("plain" in part) {
      plain += part.plain
      continue
    }
    flushPlain()
    for (const child of part.children) root.children.push(child)
  }
  flushPlain()
  const rendered = renderTree(root, options)
  const warnings = [...rendered.warnings]
  if (crowded.length > 0) warnings.push(crowdedWarning(crowded))
  if (exhaustedAt !== undefined) {
    warnings.push(
      `the Markdown is too long or too complex to render in full; from line ${exhaustedAt} of the body on, it is ` +
        `shown as plain text`
    )
  }
  return { ...rendered, warnings }
}

const crowdedWarning = (crowded: ReadonlyArray<Chunk>): string => {
  const lines = (chunk: Chunk) =>
    chunk.firstLine === chunk.lastLine ? `line ${chunk.firstLine}` : `lines ${chunk.firstLine}-${chunk.lastLine}`
  const why = `too long or has too many emphasis, link or code markers to render (more than ` +
    `${MARKDOWN_MAX_PARAGRAPH_WEIGHT}, counting each marker and each line)`
  const [first] = crowded
  if (crowded.length === 1) {
    const shown = first!.firstLine === first!.lastLine ? `${lines(first!)} is` : `${lines(first!)} are`
    return `the paragraph at line ${first!.largestUnitLine} is ${why}; ${shown} shown as plain text`
  }
  const places = crowded.slice(0, 3).map(lines).join(", ") +
    (crowded.length > 3 ? ` and ${crowded.length - 3} more places` : "")
  return `${crowded.length} paragraphs (the first at line ${first!.largestUnitLine}) are each ${why}; ` +
    `${places} are shown as plain text`
}

/**
 * mdast-util-to-hast's list item, table row and footnote call handlers look through all their siblings for every
 * node (quadratic on a long list, table or many footnotes): the same handlers, given what they look for.
 */
const looseLists = new WeakMap<List, boolean>()
const indexedOrders = new WeakSet<Array<string>>()

const HAST_HANDLERS: Handlers = {
  // Each list item asks whether its list is loose; the answer is kept per list.
  listItem: (state, node, parent) =>
    defaultHandlers.listItem(
      state,
      node,
      parent?.type === "list" ? { type: "list", spread: isLoose(parent), children: [] } : parent
    ),
  // Each row looks for its index among the rows, only to tell the head row from the others.
  tableRow: (state, node, parent) =>
    defaultHandlers.tableRow(
      state,
      node,
      parent?.type === "table"
        ? { type: "table", align: parent.align, children: parent.children[0] === node ? [node] : [] }
        : parent
    ),
  // Each footnote call looks for its number in the list of footnotes called so far.
  footnoteReference: (state, node) => {
    indexFootnoteOrder(state)
    return defaultHandlers.footnoteReference(state, node)
  }
}

const isLoose = (list: List): boolean => {
  let loose = looseLists.get(list)
  if (loose === undefined) {
    loose = list.spread === true ||
      list.children.some((item) => item.spread ?? item.children.length > 1)
    looseLists.set(list, loose)
  }
  return loose
}

const indexFootnoteOrder = (state: State): void => {
  if (indexedOrders.has(state.footnoteOrder)) return
  const order = [...state.footnoteOrder]
  const positions = new Map<string, number>()
  order.forEach((id, index) => positions.has(id) || positions.set(id, index))
  const push = Array.prototype.push.bind(order)
  Object.defineProperties(order, {
    push: {
      value: (...ids: Array<string>) => {
        for (const id of ids) {
          if (!positions.has(id)) positions.set(id, order.length)
          push(id)
        }
        return order.length
      }
    },
    indexOf: { value: (id: string) => positions.get(id) ?? -1 }
  })
  indexedOrders.add(order)
  state.footnoteOrder = order
}

const renderTree = (tree: Root, options: RenderOptions): RenderedMarkdown => {
  const state: TransformState = {
    options,
    wikilinks: [],
    seenWikilinks: new Set(),
    unsafeDefinitions: new Set(),
    rawHtml: 0,
    unsafeUrls: 0
  }
  collectUnsafeDefinitions(tree, state)
  transformChildren(tree, state, false)
  const html = toHtml(toHast(tree, { handlers: HAST_HANDLERS }))
  const blocks = plainTextBlocks(tree)
  const warnings: Array<string> = []
  if (state.rawHtml > 0) warnings.push(`raw HTML in Markdown is not rendered (${state.rawHtml} dropped)`)
  if (state.unsafeUrls > 0) {
    warnings.push(`links or images with unsupported URL schemes were rendered as text (${state.unsafeUrls})`)
  }
  return {
    html,
    text: blocks.map((block) => block.text).join("\n\n"),
    wikilinks: state.wikilinks,
    firstHeading: blocks.find((block) => block.type === "heading")?.text,
    lead: blocks.find((block) => block.type === "paragraph")?.text,
    warnings
  }
}

interface TransformState {
  readonly options: RenderOptions
  readonly wikilinks: Array<Wikilink>
  readonly seenWikilinks: Set<string>
  /** Identifiers of reference definitions whose URL is unsafe; references to them are unwrapped. */
  readonly unsafeDefinitions: Set<string>
  rawHtml: number
  unsafeUrls: number
}

const collectUnsafeDefinitions = (node: Nodes, state: TransformState): void => {
  if (node.type === "definition" && !isSafeUrl(node.url, "link")) {
    state.unsafeDefinitions.add(node.identifier)
    node.url = ""
    state.unsafeUrls += 1
  }
  if ("children" in node) for (const child of node.children) collectUnsafeDefinitions(child, state)
}

/** Rewrites `parent.children` in place: unsafe URLs neutralised, raw HTML counted and removed, wikilinks made. */
const transformChildren = (parent: Parent, state: TransformState, insideLink: boolean): void => {
  const next: Array<RootContent> = []
  for (const child of parent.children as Array<RootContent>) {
    for (const replacement of transformNode(child, state, insideLink)) next.push(replacement)
  }
  parent.children = next
}

const transformNode = (node: RootContent, state: TransformState, insideLink: boolean): Array<RootContent> => {
  switch (node.type) {
    case "html":
      state.rawHtml += 1
      return []
    case "link":
      if (!isSafeUrl(node.url, "link")) {
        state.unsafeUrls += 1
        transformChildren(node, state, true)
        return node.children
      }
      transformChildren(node, state, true)
      return [node]
    case "linkReference":
      transformChildren(node, state, true)
      return state.unsafeDefinitions.has(node.identifier) ? node.children : [node]
    case "image":
      if (!isSafeUrl(node.url, "image")) {
        state.unsafeUrls += 1
        return altText(node.alt)
      }
      return [node]
    case "imageReference":
      return state.unsafeDefinitions.has(node.identifier) ? altText(node.alt) : [node]
    case "text":
      return insideLink ? [node] : wikilinksIn(node, state)
    default:
      if ("children" in node) transformChildren(node, state, insideLink)
      return [node]
  }
}

const altText = (alt: string | null | undefined): Array<RootContent> =>
  alt === null || alt === undefined || alt === "" ? [] : [{ type: "text", value: alt }]

const wikilinksIn = (node: Text, state: TransformState): Array<PhrasingContent> => {
  const value = node.value
  if (!value.includes("[[")) return [node]
  const result: Array<PhrasingContent> = []
  let last = 0
  for (const match of value.matchAll(WIKILINK)) {
    const target = match[1]!.trim()
    if (target === "") continue
    const label = match[2]?.trim() || undefined
    if (match.index > last) result.push({ type: "text", value: value.slice(last, match.index) })
    last = match.index + match[0].length
    const key = `${target}\u0000${label ?? ""}`
    if (!state.seenWikilinks.has(key)) {
      state.seenWikilinks.add(key)
      state.wikilinks.push({ target, label })
    }
    const shown = label ?? target
    const resolved = state.options.resolveWikilink(target)
    result.push(
      resolved !== undefined && isSafeUrl(resolved.href, "link")
        ? {
          type: "link",
          url: resolved.href,
          children: [{ type: "text", value: shown }],
          data: { hProperties: { className: ["wikilink"] } }
        }
        : {
          type: "text",
          value: shown,
          data: { hName: "span", hProperties: { className: ["wikilink-unresolved"] } }
        }
    )
  }
  if (last === 0) return [node]
  if (last < value.length) result.push({ type: "text", value: value.slice(last) })
  return result
}

interface TextBlock {
  readonly type: string
  readonly text: string
}

const BLOCKS: ReadonlySet<string> = new Set([
  "paragraph",
  "heading",
  "code",
  "tableRow",
  "thematicBreak",
  "blockquote",
  "list",
  "listItem",
  "table",
  "footnoteDefinition"
])

/** The document's text as blocks (paragraphs, headings, code, table rows), without markup or raw HTML. */
const plainTextBlocks = (tree: Root): Array<TextBlock> => {
  const blocks: Array<TextBlock> = []
  let current = ""
  let currentType = "paragraph"
  const flush = () => {
    const text = current.replace(/\s+/g, " ").trim()
    if (text !== "") blocks.push({ type: currentType, text })
    current = ""
  }
  const visit = (node: Nodes): void => {
    switch (node.type) {
      case "text":
      case "inlineCode":
        current += node.value
        return
      case "code": {
        flush()
        const code = node.value.trim()
        if (code !== "") blocks.push({ type: "code", text: code })
        return
      }
      case "break":
        current += "\n"
        return
      case "image":
      case "imageReference":
        current += node.alt ?? ""
        return
      case "tableCell":
        for (const child of node.children) visit(child)
        current += " "
        return
      case "html":
      case "definition":
      case "footnoteReference":
        return
    }
    if (!("children" in node)) return
    if (BLOCKS.has(node.type)) {
      flush()
      currentType = node.type
    }
    for (const child of node.children) visit(child)
    if (BLOCKS.has(node.type)) {
      currentType = node.type
      flush()
    }
  }
  visit(tree)
  flush()
  return blocks
}

/**
 * A summary from plain text: the first paragraph (text up to the first blank line), whitespace collapsed,
 * cut at a word boundary to at most `max` characters with "…" when it is longer.
 */
export const deriveSummary = (text: string, max = 280): string => {
  const paragraph = text
    .split(/\n[ \t]*\n/)
    .map((block) => block.replace(/\s+/g, " ").trim())
    .find((block) => block !== "") ?? ""
  if (paragraph.length <= max) return paragraph
  let cut = paragraph.slice(0, Math.max(0, max - 1))
  const space = cut.lastIndexOf(" ")
  // Cut at the last word boundary unless that throws away more than half (one very long word).
  if (space > max / 2) cut = cut.slice(0, space)
  // Never end on half a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1)
  return `${cut.replace(/[\s,;:.\-–—]+$/, "")}…`
}
