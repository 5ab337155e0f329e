/**
 * Markdown parsed within a budget, chunk by chunk, so that rendering stays bounded on hostile input.
 *
 * The parser until issue 15 (micromark) was slow on some input, and rendering runs on every push and every read.
 * markdown-it (MarkdownParse.ts) parses the same chunks 14-19× faster; the cut points, weights and budget below
 * are kept as micromark's measurements set them, so the same documents render the same parts. micromark's cost grew
 * with the square of the emphasis, bracket and code markers in one paragraph (`*a **a ***a …`, `a]` runs,
 * unmatched `[`), with the square of a paragraph's lines, with the blocks in one parse times the containers that
 * end in it (`- > a` quotes in a list), and it spends tens of microseconds on each list item, quote, table cell
 * and autolink. So:
 *
 * - The body is parsed in chunks of a few KiB, cut before a line at column 0 that follows a blank line and is
 *   not a list item: there every block has ended, unless fenced code or an HTML block runs on, which the parse
 *   itself tells (a marker paragraph after the chunk must come out as a top-level paragraph; if not, the chunk
 *   is parsed again with the next one). The trees of the chunks, in order, are the tree of the whole body.
 * - A paragraph (list item, heading, table row) weighing more than MARKDOWN_MAX_PARAGRAPH_WEIGHT (inline markers
 *   plus lines) is shown as plain text, with the lines around it up to the nearest cuts, and a warning.
 * - A linear scan estimates each chunk's cost; once the chunks rendered would cost more than
 *   MARKDOWN_RENDER_BUDGET, the rest of the body is shown as plain text, with a warning.
 *
 * Reference and footnote definitions apply document-wide: a chunk is parsed with stand-ins for the definitions
 * of other chunks that its brackets name. The stand-ins come from a line-by-line guess; the parsed trees say
 * which definitions really exist, and a chunk whose stand-ins were wrong is parsed again with the right ones.
 */
import type { Nodes, Root, RootContent } from "mdast"
import {
  bracketLabels,
  type Chunk,
  chunkCost,
  type DefinitionLabel,
  MARKDOWN_MAX_PARAGRAPH_WEIGHT,
  mergeChunks,
  normalizeLabel
} from "./MarkdownChunks.ts"
import { parseMarkdown } from "./MarkdownParse.ts"

/**
 * The estimated cost of the part of a body that is rendered, in the units of `chunkCost`. 1 MiB of ordinary prose
 * with headings, lists, tables and code costs 2.9-3.4 million and took about 1.4 s to render here with micromark,
 * about a tenth of that with markdown-it (bench/markdown.ts). Input that costs more for its size is cut off sooner,
 * and takes about as long: a higher budget renders more of it, slower.
 */
export const MARKDOWN_RENDER_BUDGET = 3_600_000

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
  const references: Array<string> = []
  const footnotes: Array<string> = []
  for (const { key, raw } of standIns) {
    if (key.startsWith("^")) footnotes.push(key.slice(1))
    else references.push(raw)
  }
  const children = parseMarkdown(sentinel ? `${text}\n\n${SENTINEL}` : text, { references, footnotes })
  if (sentinel) {
    const last = children.pop()
    if (
      last?.type !== "paragraph" || last.children.length !== 1 || last.children[0]!.type !== "text" ||
      last.children[0]!.value !== SENTINEL
    ) return undefined
  }
  return children
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

/**
 * The tree of the whole body from the chunks of its scan, each parsed while the budget lasts; what is not parsed
 * (a crowded paragraph, everything after the budget ran out) is a code block of plain text, and `warnings` say so.
 */
export const parseWithinBudget = (
  body: string,
  chunks: ReadonlyArray<Chunk>
): { readonly tree: Root; readonly warnings: ReadonlyArray<string> } => {
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
      const wrong = [...labels].some((key) => defined.has(key) !== (part.standIns.has(key) || part.own.has(key)))
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
  const warnings: Array<string> = []
  if (crowded.length > 0) warnings.push(crowdedWarning(crowded))
  if (exhaustedAt !== undefined) {
    warnings.push(
      `the Markdown is too long or too complex to render in full; from line ${exhaustedAt} of the body on, it is ` +
        `shown as plain text`
    )
  }
  return { tree: root, warnings }
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
