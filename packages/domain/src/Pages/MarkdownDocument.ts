/**
 * Markdown documents as pushed by push_markdown_file / push_markdown: YAML front matter split off and read as
 * inert data, the body rendered through mdast → hast → HTML (GFM, wikilinks), and the plain text for search.
 * The HTML is safe on its own where that is cheap; the one HTML sanitizer still runs on it afterwards.
 */
import { toHtml } from "hast-util-to-html"
import type { Nodes, Parent, PhrasingContent, Root, RootContent, Text } from "mdast"
import { fromMarkdown } from "mdast-util-from-markdown"
import { gfmFromMarkdown } from "mdast-util-gfm"
import { toHast } from "mdast-util-to-hast"
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
  if (isScalar(node)) return scalarValue(node.value)
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
  /** What the renderer dropped or neutralised (raw HTML, unsafe link schemes), for the push result. */
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
  if (deepestContainerPrefix(body) > MARKDOWN_MAX_CONTAINER_PREFIX) return asPlainText(body)
  try {
    return renderTree(body, options)
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

const deepestContainerPrefix = (body: string): number => {
  let deepest = 0
  for (const line of body.split("\n")) {
    const length = CONTAINER_PREFIX.exec(line)?.[0].length ?? 0
    if (length > deepest) deepest = length
  }
  return deepest
}

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

const renderTree = (body: string, options: RenderOptions): RenderedMarkdown => {
  const tree = fromMarkdown(body, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] })
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
  const html = toHtml(toHast(tree))
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
