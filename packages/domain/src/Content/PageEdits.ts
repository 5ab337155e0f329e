/**
 * Patch edits (issue 18): a page's stored source changed by a list of operations, in order, all or none. Runs in
 * the content workers (it parses Markdown and YAML). What comes out is a new source, saved as a push of it would
 * be (sanitized, checked, versioned) by Pages.edit.
 *
 * - `replace_text` / `insert_text` work on the exact source text; what they look for must occur exactly once
 *   (or, for `replace_text` with `occurrence: "all"`, at least once).
 * - `replace_section` finds a heading by its path ("Setup > Install": each `>` one level down; levels may be
 *   skipped; case and runs of whitespace do not matter) among the document's top-level headings as the parser
 *   sees them (ATX and setext; never a `#` line in fenced code), and replaces its body: the lines after the
 *   heading up to the next heading of the same or a higher level. The heading line stays.
 * - `set_front_matter` / `delete_front_matter` change one top-level key of the YAML front matter through the
 *   `yaml` package's Document, so the other keys keep their order, comments and style.
 *
 * Every intermediate result obeys the page limit (1 MiB of UTF-8): an operation that would pass it is refused with
 * the push's size error, before the text is built.
 */
import { Effect } from "effect"
import { isCollection, isMap, isScalar, parseDocument } from "yaml"
import { type InvalidFrontMatter, ValidationError } from "../Errors.ts"
import { EDIT_OPERATIONS_MAX, type EditFormat, type PageEdit, TEXT_EDIT_OPS } from "../Pages/Edit.ts"
import { frontMatterSpan, frontMatterYamlOptions, readFrontMatter } from "./FrontMatter.ts"
import { type HeadingLine, headingLines } from "./MarkdownParse.ts"
import { collapseWhitespace, contentTooLarge, FORBIDDEN_KEYS, PAGE_CONTENT_MAX_BYTES, utf8Bytes } from "./Text.ts"

/** The text an error quotes: short enough to read, long enough to recognise. */
const QUOTE_MAX = 80
const quote = (text: string) => {
  const cut = text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX).replace(/[\uD800-\uDBFF]$/, "")}…` : text
  return JSON.stringify(cut)
}

/** Heading paths an error lists, when a path matches nowhere. */
const LISTED_HEADINGS_MAX = 30

const refuse = (index: number, op: string, message: string, details?: Record<string, unknown>) =>
  new ValidationError({
    message: `operations[${index}] (${op}): ${message}`,
    details: { operation: index, op, ...details }
  })

/** Where `find` occurs, without overlaps, left to right (at most `limit` of them). */
const occurrences = (text: string, find: string, limit = Number.POSITIVE_INFINITY): Array<number> => {
  const found: Array<number> = []
  let from = 0
  while (found.length < limit) {
    const at = text.indexOf(find, from)
    if (at === -1) break
    found.push(at)
    from = at + find.length
  }
  return found
}

interface State {
  readonly text: string
  /** `text` in UTF-8 bytes, kept up to date by each operation's difference. */
  readonly bytes: number
}

/** The state after replacing `[start, end)` by `insert`, or the push's size error when that would be too large. */
const splice = (index: number, state: State, start: number, end: number, insert: string) => {
  const bytes = state.bytes - utf8Bytes(state.text.slice(start, end)) + utf8Bytes(insert)
  return bytes > PAGE_CONTENT_MAX_BYTES
    ? Effect.fail(contentTooLarge(bytes, { operation: index }))
    : Effect.succeed({ text: state.text.slice(0, start) + insert + state.text.slice(end), bytes })
}

/** One exact match of `anchor` (the operation's `field`), or why not. */
const theOnly = (index: number, op: string, field: string, text: string, anchor: string) => {
  if (anchor === "") return Effect.fail(refuse(index, op, `${field} must not be empty`, { field }))
  const found = occurrences(text, anchor, 2)
  if (found.length === 1) return Effect.succeed(found[0]!)
  return Effect.fail(
    found.length === 0
      ? refuse(index, op, `${field} ${quote(anchor)} matches nowhere in the page (the match is exact)`, {
        field,
        value: anchor.slice(0, QUOTE_MAX),
        matches: 0
      })
      : refuse(
        index,
        op,
        `${field} ${quote(anchor)} matches ${occurrences(text, anchor).length} times; ` +
          (op === "replace_text"
            ? "include more of the text around it so it matches once, or set occurrence \"all\""
            : "include more of the text around it so it matches once"),
        { field, value: anchor.slice(0, QUOTE_MAX), matches: occurrences(text, anchor).length }
      )
  )
}

const replaceText = (index: number, state: State, edit: Extract<PageEdit, { op: "replace_text" }>) =>
  Effect.gen(function*() {
    if (edit.occurrence !== "all") {
      const at = yield* theOnly(index, edit.op, "find", state.text, edit.find)
      return yield* splice(index, state, at, at + edit.find.length, edit.replace)
    }
    if (edit.find === "") return yield* refuse(index, edit.op, "find must not be empty", { field: "find" })
    const found = occurrences(state.text, edit.find)
    if (found.length === 0) {
      return yield* refuse(
        index,
        edit.op,
        `find ${quote(edit.find)} matches nowhere in the page (the match is exact)`,
        {
          field: "find",
          value: edit.find.slice(0, QUOTE_MAX),
          matches: 0
        }
      )
    }
    const bytes = state.bytes + found.length * (utf8Bytes(edit.replace) - utf8Bytes(edit.find))
    if (bytes > PAGE_CONTENT_MAX_BYTES) return yield* contentTooLarge(bytes, { operation: index })
    return { text: state.text.split(edit.find).join(edit.replace), bytes }
  })

const insertText = (index: number, state: State, edit: Extract<PageEdit, { op: "insert_text" }>) =>
  Effect.gen(function*() {
    if ((edit.before === undefined) === (edit.after === undefined)) {
      return yield* refuse(index, edit.op, "give exactly one of `before` and `after`", { field: "before" })
    }
    const field = edit.before === undefined ? "after" : "before"
    const anchor = (edit.before ?? edit.after)!
    const at = yield* theOnly(index, edit.op, field, state.text, anchor)
    const position = field === "before" ? at : at + anchor.length
    return yield* splice(index, state, position, position, edit.text)
  })

// ---------------------------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------------------------

/** A heading's name as a path compares it: leading `#`s dropped, whitespace collapsed, case folded. */
const headingName = (text: string) => collapseWhitespace(text.replace(/^\s*#{1,6}(?=\s|$)/, "")).trim().toLowerCase()

/** Where each line of `text` starts, lines ended as markdown-it ends them (`\r\n`, `\r` or `\n`). */
const lineStarts = (text: string): Array<number> => {
  const starts = [0]
  const newline = /\r\n?|\n/g
  for (let match = newline.exec(text); match !== null; match = newline.exec(text)) {
    starts.push(match.index + match[0].length)
  }
  return starts
}

interface PlacedHeading {
  readonly heading: HeadingLine
  /** Its ancestors, outermost first: the nearest heading of each higher level before it. */
  readonly ancestors: ReadonlyArray<HeadingLine>
}

const placeHeadings = (headings: ReadonlyArray<HeadingLine>): Array<PlacedHeading> => {
  const stack: Array<HeadingLine> = []
  return headings.map((heading) => {
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= heading.depth) stack.pop()
    const placed = { heading, ancestors: [...stack] }
    stack.push(heading)
    return placed
  })
}

const names = (heading: HeadingLine) => [headingName(heading.text), headingName(heading.source)]
const pathOf = ({ ancestors, heading }: PlacedHeading) =>
  [...ancestors, heading].map((each) => collapseWhitespace(each.text).trim()).join(" > ")

/** The path's last segment names the heading; the others name its ancestors in order (levels may be skipped). */
const matchesPath = ({ ancestors, heading }: PlacedHeading, segments: ReadonlyArray<string>) => {
  if (!names(heading).includes(segments[segments.length - 1]!)) return false
  let segment = segments.length - 2
  for (let index = ancestors.length - 1; index >= 0 && segment >= 0; index--) {
    if (names(ancestors[index]!).includes(segments[segment]!)) segment--
  }
  return segment < 0
}

/** Where the body of a Markdown document starts: after its front matter (and a byte order mark). */
const bodyOffset = (text: string) => {
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0
  const span = frontMatterSpan(text.slice(bom))
  return bom + (span._tag === "Found" ? span.bodyStart : 0)
}

const replaceSection = (index: number, state: State, edit: Extract<PageEdit, { op: "replace_section" }>) =>
  Effect.gen(function*() {
    const segments = edit.heading.split(">").map(headingName)
    if (segments.some((segment) => segment === "")) {
      return yield* refuse(index, edit.op, `heading ${quote(edit.heading)} has an empty level`, {
        field: "heading",
        value: edit.heading.slice(0, QUOTE_MAX)
      })
    }
    const offset = bodyOffset(state.text)
    const body = state.text.slice(offset)
    const placed = placeHeadings(headingLines(body))
    const matched = placed.filter((heading) => matchesPath(heading, segments))
    if (matched.length !== 1) {
      const listed = (matched.length === 0 ? placed : matched).slice(0, LISTED_HEADINGS_MAX).map(pathOf)
      return yield* refuse(
        index,
        edit.op,
        matched.length === 0
          ? `heading ${quote(edit.heading)} matches no heading of the document` +
            (placed.length === 0 ? " (it has none)" : `; its headings: ${listed.join("; ")}`)
          : `heading ${quote(edit.heading)} matches ${matched.length} headings (${listed.join("; ")}); ` +
            "give more of its path, such as \"Parent > Heading\"",
        { field: "heading", value: edit.heading.slice(0, QUOTE_MAX), matches: matched.length, headings: listed }
      )
    }
    const { heading } = matched[0]!
    const next = placed.find((other) =>
      other.heading.startLine > heading.startLine && other.heading.depth <= heading.depth
    )
    const starts = lineStarts(body)
    const lineStart = (line: number) => starts[line] ?? body.length
    const start = lineStart(heading.endLine)
    const end = next === undefined ? body.length : lineStart(next.heading.startLine)
    // Blank lines around the new body keep it apart from the heading and from the next heading (a last line of
    // text right above a setext underline would otherwise join that heading).
    const content = edit.content.replace(/^(?:[ \t]*(?:\r\n?|\n))+/, "").replace(/\s+$/, "")
    const headingEnded = start > 0 && /[\r\n]/.test(body[start - 1]!)
    const insert = (headingEnded ? "" : "\n") +
      (content === "" ? "" : `\n${content}\n`) +
      (next === undefined ? "" : "\n")
    return yield* splice(index, state, offset + start, offset + end, insert)
  })

// ---------------------------------------------------------------------------------------------------------------
// Front matter
// ---------------------------------------------------------------------------------------------------------------

/** YAML written back as people write it: long lines unfolded, `[a, b]` rather than `[ a, b ]`. */
const WRITE_YAML = { lineWidth: 0, flowCollectionPadding: false } as const

const frontMatterEdit = (
  index: number,
  state: State,
  edit: Extract<PageEdit, { op: "set_front_matter" | "delete_front_matter" }>
) =>
  Effect.gen(function*() {
    const key = edit.key
    if (key.trim() === "" || FORBIDDEN_KEYS.has(key)) {
      return yield* refuse(index, edit.op, `key ${quote(key)} is not a front matter key one may set`, {
        field: "key",
        value: key.slice(0, QUOTE_MAX)
      })
    }
    const bom = state.text.charCodeAt(0) === 0xfeff ? 1 : 0
    const text = state.text.slice(bom)
    const span = frontMatterSpan(text)
    if (span._tag === "Refused") return yield* span.error
    if (span._tag === "Absent") {
      if (edit.op === "delete_front_matter") {
        return yield* refuse(index, edit.op, `key ${quote(key)} is not in the front matter (the page has none)`, {
          field: "key",
          value: key.slice(0, QUOTE_MAX)
        })
      }
      const doc = parseDocument("", frontMatterYamlOptions())
      doc.set(key, doc.createNode(edit.value))
      return yield* splice(index, state, bom, bom, `---\n${doc.toString(WRITE_YAML)}---\n`)
    }
    const yaml = text.slice(span.yamlStart, span.yamlEnd)
    // Read as a push reads it first: the bounds (depth, aliases) hold before the Document is worked on.
    yield* readFrontMatter(yaml)
    const doc = parseDocument(yaml, frontMatterYamlOptions())
    if (edit.op === "delete_front_matter") {
      if (!isMap(doc.contents) || !doc.contents.items.some((pair) => isScalar(pair.key) && pair.key.value === key)) {
        return yield* refuse(index, edit.op, `key ${quote(key)} is not in the front matter`, {
          field: "key",
          value: key.slice(0, QUOTE_MAX)
        })
      }
      doc.delete(key)
    } else {
      // An existing key keeps its place and the comments on it (a scalar given a scalar keeps its own too);
      // a new key goes last.
      const current = doc.get(key, true)
      const value = edit.value
      if (
        isScalar(current) && (value === null || ["string", "number", "boolean"].includes(typeof value))
      ) current.value = value
      // A list or map written inline (`[a, b]`) stays inline.
      else doc.set(key, doc.createNode(value, { flow: isCollection(current) && current.flow === true }))
    }
    const written = isMap(doc.contents) && doc.contents.items.length === 0 && doc.commentBefore == null &&
        doc.comment == null
      ? ""
      : doc.toString(WRITE_YAML)
    return yield* splice(index, state, bom + span.yamlStart, bom + span.yamlEnd, written)
  }) as Effect.Effect<State, ValidationError | InvalidFrontMatter>

// ---------------------------------------------------------------------------------------------------------------

/**
 * The page's source after `operations`, in order, or the first refusal (nothing applies then). Web pages (`html`)
 * take the text operations only.
 */
export const applyPageEdits = (
  source: string,
  operations: ReadonlyArray<PageEdit>,
  format: EditFormat
): Effect.Effect<string, ValidationError | InvalidFrontMatter> =>
  Effect.gen(function*() {
    if (operations.length === 0) {
      return yield* new ValidationError({
        message: "operations must list at least one operation",
        details: { field: "operations" }
      })
    }
    if (operations.length > EDIT_OPERATIONS_MAX) {
      return yield* new ValidationError({
        message: `operations lists ${operations.length} operations; the limit is ${EDIT_OPERATIONS_MAX}`,
        details: { field: "operations", limit: EDIT_OPERATIONS_MAX }
      })
    }
    let state: State = { text: source, bytes: utf8Bytes(source) }
    for (const [index, edit] of operations.entries()) {
      if (format === "html" && !TEXT_EDIT_OPS.includes(edit.op)) {
        return yield* refuse(index, edit.op, "a web page takes replace_text and insert_text only")
      }
      switch (edit.op) {
        case "replace_text":
          state = yield* replaceText(index, state, edit)
          break
        case "insert_text":
          state = yield* insertText(index, state, edit)
          break
        case "replace_section":
          state = yield* replaceSection(index, state, edit)
          break
        case "set_front_matter":
        case "delete_front_matter":
          state = yield* frontMatterEdit(index, state, edit)
          break
      }
    }
    return state.text
  })

export const applyMarkdownEdits = (source: string, operations: ReadonlyArray<PageEdit>) =>
  applyPageEdits(source, operations, "markdown")

export const applyHtmlEdits = (source: string, operations: ReadonlyArray<PageEdit>) =>
  applyPageEdits(source, operations, "html")

/**
 * The title a push of this Markdown document without `page_title` would take, as near as the source tells it:
 * its front matter `title`, else its first heading's text. Pages.edit keeps a stored title that differs from
 * this (one given as `page_title`) and lets an edited document's own title through otherwise.
 */
export const markdownSourceTitle = (source: string): string | null =>
  Effect.runSync(
    Effect.gen(function*() {
      const bom = source.charCodeAt(0) === 0xfeff ? 1 : 0
      const span = frontMatterSpan(source.slice(bom))
      if (span._tag === "Found") {
        const data = yield* readFrontMatter(source.slice(bom + span.yamlStart, bom + span.yamlEnd))
        const title = typeof data.title === "string" ? data.title.trim() : ""
        if (title !== "") return title
      }
      return headingLines(source.slice(bodyOffset(source)))[0]?.text.trim() || null
    }).pipe(Effect.orElseSucceed(() => null))
  )

/** Whether a Markdown document starts with front matter (readable or not). */
export const hasFrontMatter = (source: string): boolean =>
  frontMatterSpan(source.charCodeAt(0) === 0xfeff ? source.slice(1) : source)._tag !== "Absent"
