/**
 * The one linear pass over a Markdown body that bounded rendering (BoundedMarkdown.ts) plans with: where the body
 * may be cut into chunks, and what parsing each chunk costs.
 */

/** Chunks are cut at the first place allowed after this many characters. */
export const MARKDOWN_CHUNK_CHARS = 4096
/**
 * The most a paragraph, list item, heading or table row may weigh: one for each line and each inline marker
 * (a run of `*`, `_`, `~` or `` ` ``; each `[`, `]`, `!`, `<`, `&` or `\`). Ordinary paragraphs weigh tens.
 */
export const MARKDOWN_MAX_PARAGRAPH_WEIGHT = 2000

/** A run of whole lines of the body, and what the scan found in it. */
export interface Chunk {
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

export interface DefinitionLabel {
  /** `normalizeIdentifier` of the label, with `^` in front for a footnote. */
  readonly key: string
  /** The label as written (without the footnote's `^`). */
  readonly raw: string
}

export interface Scan {
  readonly chunks: ReadonlyArray<Chunk>
  /** The longest run of container-opening characters (`>`, list markers, indentation) that starts a line. */
  readonly deepestPrefix: number
}

const CONTAINER_PREFIX = /^(?:[ \t]|>|[-*+](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))*/
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
/** What an ASCII character counts for in the scan (0: nothing). */
const CHARACTER_KIND = new Uint8Array(128)
/** An inline marker counted each time. */
const MARKER = 1
/** An inline marker counted once per run of the same character. */
const RUN_MARKER = 2
const AT = 3
const DOT = 4
const PIPE = 5
for (const marker of "[]!<&\\") CHARACTER_KIND[marker.charCodeAt(0)] = MARKER
for (const marker of "*_~`") CHARACTER_KIND[marker.charCodeAt(0)] = RUN_MARKER
CHARACTER_KIND[64] = AT
CHARACTER_KIND[46] = DOT
CHARACTER_KIND[124] = PIPE

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
export const scanMarkdown = (body: string): Scan => {
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
    // A line that starts with an ASCII letter (most lines of prose) opens no container, list item, heading, fence,
    // table row, definition or HTML block, and is not blank: the tests for those are skipped for it.
    const first = line.charCodeAt(0)
    const plain = (first | 32) >= 97 && (first | 32) <= 122
    const blank = !plain && BLANK.test(line)
    if (previousBlank && !blank && fence === undefined && htmlEnd === undefined && position > segment.start) {
      if (first !== 32 && first !== 9 && (plain || !LIST_ITEM_START.test(line))) {
        endUnit()
        cut(position)
        segment = newChunk(position, lineNumber)
      }
    }
    segment.lines += 1
    if (!blank) segment.lastLine = lineNumber
    segment.chars += next - position
    const prefix = plain ? "" : CONTAINER_PREFIX.exec(line)![0]
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
    // One pass over the line's characters for its markers, autolink starts (`@`, `www.`) and table pipes, read from
    // the body (a character of a slice costs an indirection; a character before or after the line is a line break).
    let markers = 0
    let scanners = 0
    for (let i = position; i < end; i++) {
      const code = body.charCodeAt(i)
      const kind = code < 128 ? CHARACTER_KIND[code]! : 0
      if (kind === 0) continue
      if (kind === MARKER || (kind === RUN_MARKER && body.charCodeAt(i - 1) !== code)) {
        markers += 1
        if (code === 93) {
          segment.brackets += 1
          if (body.charCodeAt(i + 1) === 40) scanners += 1
        } else if (code === 96 || code === 60) scanners += 1
      } else if (kind === AT) {
        segment.autolinks += 1
      } else if (
        // `www.`, in either case (`| 32` lowers an ASCII letter).
        kind === DOT && (body.charCodeAt(i - 1) | 32) === 119 && (body.charCodeAt(i - 2) | 32) === 119 &&
        (body.charCodeAt(i - 3) | 32) === 119
      ) {
        segment.autolinks += 1
      } else if (kind === PIPE) {
        segment.pipes += 1
      }
    }
    if (!plain && line.includes("]:")) {
      const label = DEFINITION.exec(line.slice(prefix.length))?.[1]
      if (label !== undefined) {
        segment.brackets += 1
        const footnote = label.startsWith("^")
        const raw = footnote ? label.slice(1) : label
        segment.definitions.push({ key: (footnote ? "^" : "") + normalizeLabel(raw), raw })
      }
    }

    // Inline units, and blocks.
    const quotes = plain ? "" : QUOTES.exec(line)![0]
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
      if (!plain && !tab && indent <= 3) {
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
      } else if (quoteMarks > 0 || (!plain && LIST_ITEM_START.test(rest))) {
        segment.blocks += 1
      }
      if (unit === 0) unitLine = lineNumber
      unit += markers + 1
      unitChars += line.length + 1
      unitScanners += scanners
      unitOneLine = oneLine
      // A table starts with a header row right after a blank line; any other line ends a table.
      if (table?.header !== -1 || rest.charCodeAt(0) !== 124 || depth > 0 || indent > 0) table = undefined
      if (!plain && previousBlank && depth === 0 && indent === 0 && !tab && TABLE_ROW.test(rest)) {
        table = { header: countPipes(rest) }
      }
    }

    // Fenced code and HTML blocks (for cutting chunks; sure fences also for the inline units).
    const fenceLike = !plain && FENCE_LIKE.test(line.slice(prefix.length))
    if (fence !== undefined) {
      const close = plain ? null : FENCE_CLOSE.exec(line)
      if (close !== null && close[1]![0] === fence.marker && close[1]!.length >= fence.length) {
        fence = undefined
      } else if (fenceLike && !fence.sure) {
        fencesTrusted = false
      }
    } else if (htmlEnd !== undefined) {
      if (htmlEnd.test(line)) htmlEnd = undefined
      if (fenceLike) fencesTrusted = false
    } else if (!plain) {
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
export const normalizeLabel = (label: string): string =>
  label.replace(/[\t\n\r ]+/g, " ").replace(/^ | $/g, "").toLowerCase().toUpperCase()

/**
 * What rendering a chunk costs, roughly in microseconds of CPU (parallel garbage collection included, on a busy
 * two-core machine; on an idle one the wall-clock time is about half). Each term is one of the parser's costs
 * found by measuring (bench/markdown.ts shows the result): per character, line, block, container marker, nesting
 * level squared, paragraph weight and its square (emphasis and brackets look back over the paragraph), markers
 * that look ahead to the paragraph's end (`` ` ``, `<`, `](`), autolink literal, table cell and definition, and
 * a pass over the chunk for each container that ends in it.
 */
export const chunkCost = (chunk: Chunk, definitions: number): number =>
  100 + 1.5 * chunk.chars + 10 * chunk.lines + 60 * chunk.blocks + 60 * chunk.markers + 3 * chunk.nesting +
  10 * chunk.inline + 0.04 * chunk.squares + 0.01 * chunk.scans + 0.1 * chunk.closings * chunk.lines +
  100 * chunk.autolinks + 50 * chunk.pipes + 100 * definitions + 0.01 * chunk.brackets * definitions

/** The labels a chunk's brackets could name: the text of every innermost `[…]`. */
export const bracketLabels = (text: string): Set<string> => {
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

/** Adds the chunk `b`, which follows `a`, to `a`. */
export const mergeChunks = (a: Chunk, b: Chunk): Chunk => {
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
