/**
 * Markdown parsed by markdown-it into the mdast tree that mdast-util-from-markdown (micromark) built before
 * issue 15, so that everything after the parse (BoundedMarkdown.ts, MarkdownRender.ts: wikilinks, URL rules,
 * mdast → hast → HTML, the plain text) stays as it was. micromark took 8-20× longer on the same text (113 ms
 * against 13 ms for 50 KB of prose here, 313 ms against 14 ms on marker-dense text): see docs/decisions.md.
 *
 * markdown-it parses CommonMark; GitHub's extensions are configured or added here so that they come out as
 * micromark-extension-gfm makes them:
 *
 * - tables: markdown-it's own.
 * - strikethrough: `~a~` and `~~a~~` (micromark's default), a run pairing only with a run of its own length;
 *   markdown-it's own takes only `~~`, so it is replaced.
 * - task list items: `[ ]`, `[x]`, `[X]` opening a list item's first paragraph (followed by a space or a line end).
 * - footnotes: `[^label]: …` definitions (containers, continued by lines indented four spaces) and `[^label]`
 *   calls to defined labels, labels matched as micromark matches them (case and whitespace folded).
 * - autolink literals (`www.…`, `http(s)://…`, e-mail addresses): found in the text of the tree afterwards
 *   (MarkdownAutolinks.ts), as mdast-util-from-markdown's transform found them.
 * - reference definitions are kept as `definition` nodes and references as `linkReference`/`imageReference`
 *   (markdown-it resolves them while parsing): chunks of one document (BoundedMarkdown.ts) name definitions of
 *   other chunks, and the renderer decides which definitions are safe.
 *
 * Links are parsed whatever their scheme (markdown-it's own check would leave `javascript:` links as text with
 * different boundaries); MarkdownRender.ts neutralises unsafe ones, as before.
 */
import MarkdownIt from "markdown-it"
import type StateBlock from "markdown-it/lib/rules_block/state_block.mjs"
import type StateCore from "markdown-it/lib/rules_core/state_core.mjs"
import type StateInline from "markdown-it/lib/rules_inline/state_inline.mjs"
import type Token from "markdown-it/lib/token.mjs"
import type {
  Code,
  Definition,
  FootnoteDefinition,
  List,
  ListItem,
  Nodes,
  Paragraph,
  Parent,
  PhrasingContent,
  Root,
  RootContent,
  Table
} from "mdast"
import { autolinkLiterals } from "./MarkdownAutolinks.ts"
import { normalizeLabel } from "./MarkdownChunks.ts"

/** Definitions of other parts of the document that a parse should take as defined (from `bracketLabels`). */
export interface StandIns {
  /** Labels of reference definitions, as written. */
  readonly references: ReadonlyArray<string>
  /** `normalizeLabel` of footnote labels (without the `^`). */
  readonly footnotes: ReadonlyArray<string>
}

type ParseEnv = {
  /**
   * markdown-it's reference table: every label defined here or elsewhere, each pointing to a late-bound href. Left
   * out while there is none: markdown-it then takes no `[label]` for a reference without normalizing the label
   * first (a document of wikilinks and no definitions normalized every one of them).
   */
  references?: Record<string, { readonly href: string; readonly title: string }> | undefined
  /** Footnote labels defined (normalizeLabel). */
  readonly footnotes: Set<string>
}

/**
 * The href markdown-it gives a reference link: the label after a private-use character. The tree gets a
 * `linkReference`, resolved against the definitions of the whole document when it is rendered.
 */
const LATE_BOUND = "\uE001"
const lateBound = (label: string) => ({ href: LATE_BOUND + label, title: "" })

const md = new MarkdownIt("default", { html: true, linkify: false, typographer: false })
// Containers nest up to MARKDOWN_MAX_CONTAINER_PREFIX (128) levels, a list two tokens a level; markdown-it drops
// whatever lies deeper than this (100 by default), so it stays above anything the prefix check lets through.
Object.assign(md.options, { maxNesting: 400 })
md.validateLink = () => true
md.normalizeLink = (url) => url
md.normalizeLinkText = (text) => text
md.core.ruler.disable(["replacements", "smartquotes", "linkify"])

// Reference definitions: markdown-it's rule parses them; this one records each with its URL and title, and lets
// references to it resolve late (see LATE_BOUND).
type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean
const referenceRule = (md.block.ruler as unknown as { __rules__: Array<{ name: string; fn: BlockRule }> }).__rules__
  .find((rule) => rule.name === "reference")!.fn
md.block.ruler.at("reference", (state: StateBlock, startLine: number, endLine: number, silent: boolean) => {
  if (silent) return referenceRule(state, startLine, endLine, silent)
  const env = state.env as unknown as ParseEnv
  const known = env.references
  env.references = {}
  let found: ParseEnv["references"]
  let parsed: boolean
  try {
    parsed = referenceRule(state, startLine, endLine, false)
  } finally {
    found = env.references
    env.references = known
  }
  if (!parsed) return false
  const [label, definition] = Object.entries(found!)[0]!
  const token = state.push("reference_definition", "", 0)
  token.meta = { label, url: definition.href, title: definition.title === "" ? null : definition.title }
  ;(env.references ??= {})[label] ??= lateBound(label)
  return true
})

// ---------------------------------------------------------------------------------------------------------------
// Strikethrough: a run of one or two `~` opens or closes as emphasis does (flanking); a run pairs with the nearest
// open run of the same length; longer runs are text. The two lengths are two delimiter markers, so that
// markdown-it's pairing (balance_pairs) never pairs `~` with `~~`; their length is 0, so its rule of three
// (for `*` and `_`) leaves them alone.
// ---------------------------------------------------------------------------------------------------------------

const TILDE = 126
const TILDES = 2 * TILDE

md.inline.ruler.at("strikethrough", (state: StateInline, silent: boolean) => {
  const start = state.pos
  if (silent || state.src.charCodeAt(start) !== TILDE) return false
  const scanned = state.scanDelims(start, true)
  const token = state.push("text", "", 0)
  token.content = state.src.slice(start, start + scanned.length)
  if (scanned.length <= 2) {
    state.delimiters.push({
      marker: scanned.length === 1 ? TILDE : TILDES,
      length: 0,
      token: state.tokens.length - 1,
      end: -1,
      open: scanned.can_open,
      close: scanned.can_close
    })
  }
  state.pos += scanned.length
  return true
})

md.inline.ruler2.at("strikethrough", (state: StateInline) => {
  const lists = [state.delimiters, ...state.tokens_meta.map((meta) => meta?.delimiters)]
  for (const delimiters of lists) {
    if (delimiters === undefined) continue
    for (const opener of delimiters) {
      if ((opener.marker !== TILDE && opener.marker !== TILDES) || opener.end === -1) continue
      for (const [index, nesting] of [[opener.token, 1], [delimiters[opener.end]!.token, -1]] as const) {
        const token = state.tokens[index]!
        token.type = nesting === 1 ? "s_open" : "s_close"
        token.tag = "del"
        token.nesting = nesting
        token.content = ""
      }
    }
  }
  return false
})

// ---------------------------------------------------------------------------------------------------------------
// Task list items: the check is taken off the paragraph before it is parsed, and kept on the list item.
// ---------------------------------------------------------------------------------------------------------------

const TASK = /^\[([\t\n xX])\](?=\n|[ \t]+[^ \t])/

md.core.ruler.after("block", "task_list_items", (state: StateCore) => {
  const tokens = state.tokens
  for (let i = 2; i < tokens.length; i++) {
    const inline = tokens[i]!
    if (inline.type !== "inline" || tokens[i - 1]!.type !== "paragraph_open") continue
    if (tokens[i - 2]!.type !== "list_item_open") continue
    const check = TASK.exec(inline.content)
    if (check === null) continue
    tokens[i - 2]!.meta = { checked: check[1] === "x" || check[1] === "X" }
    // The check and the one space after it; or, when only spaces follow it on its line, the line break and the
    // next line's indentation (micromark drops spaces at the end of a line).
    const rest = inline.content.slice(3)
    const lineEnd = /^[ \t]*\n[ \t]*/.exec(rest)
    inline.content = rest.slice(lineEnd === null ? 1 : lineEnd[0].length)
  }
})

// ---------------------------------------------------------------------------------------------------------------
// Footnotes, as micromark-extension-gfm-footnote reads them. The container logic follows markdown-it-footnote.
// ---------------------------------------------------------------------------------------------------------------

/** Where the label that starts at `from` (after `[^`) ends (its `]`), or -1: no whitespace, no `[`, ≤ 999. */
const footnoteLabelEnd = (src: string, from: number, max: number): number => {
  let size = 0
  for (let pos = from; pos < max; pos++) {
    const code = src.charCodeAt(pos)
    if (size > 999 || code === 91 || code === 32 || code === 9 || code === 10 || code === 13) return -1
    if (code === 93) return pos === from ? -1 : pos
    size++
    if (code === 92) {
      const next = src.charCodeAt(pos + 1)
      if (next === 91 || next === 92 || next === 93) {
        pos++
        size++
      }
    }
  }
  return -1
}

md.block.ruler.before(
  "reference",
  "footnote_definition",
  (state: StateBlock, startLine: number, endLine: number, silent: boolean) => {
    if (state.sCount[startLine]! - state.blkIndent >= 4) return false
    const start = state.bMarks[startLine]! + state.tShift[startLine]!
    const max = state.eMarks[startLine]!
    const src = state.src
    if (src.charCodeAt(start) !== 91 || src.charCodeAt(start + 1) !== 94) return false
    const end = footnoteLabelEnd(src, start + 2, max)
    if (end < 0 || src.charCodeAt(end + 1) !== 58) return false
    if (silent) return true
    const raw = src.slice(start + 2, end)
    const key = normalizeLabel(raw)
    ;(state.env as unknown as ParseEnv).footnotes.add(key)
    const open = state.push("footnote_definition_open", "", 1)
    open.meta = { identifier: key.toLowerCase(), label: md.utils.unescapeAll(raw) }
    open.map = [startLine, startLine]

    // The rest of the line and the lines indented four columns more are the definition's content.
    const oldBMark = state.bMarks[startLine]!
    const oldTShift = state.tShift[startLine]!
    const oldSCount = state.sCount[startLine]!
    const oldParentType = state.parentType
    let pos = end + 2
    const afterColon = pos
    const initial = oldSCount + pos - start
    let offset = initial
    while (pos < max) {
      const code = src.charCodeAt(pos)
      if (code === 9) offset += 4 - (offset % 4)
      else if (code === 32) offset++
      else break
      pos++
    }
    state.tShift[startLine] = pos - afterColon
    state.sCount[startLine] = offset - initial
    state.bMarks[startLine] = afterColon
    state.blkIndent += 4
    state.parentType = "footnote" as typeof state.parentType
    if (state.sCount[startLine]! < state.blkIndent) state.sCount[startLine]! += state.blkIndent
    state.md.block.tokenize(state, startLine, endLine)
    state.parentType = oldParentType
    state.blkIndent -= 4
    state.tShift[startLine] = oldTShift
    state.sCount[startLine] = oldSCount
    state.bMarks[startLine] = oldBMark
    state.push("footnote_definition_close", "", -1)
    return true
  },
  { alt: ["paragraph", "reference", "blockquote", "list"] }
)

// Before links, as in micromark: `[^a](b)` is a call followed by text.
md.inline.ruler.before("link", "footnote_call", (state: StateInline, silent: boolean) => {
  const start = state.pos
  if (state.src.charCodeAt(start) !== 91 || state.src.charCodeAt(start + 1) !== 94) return false
  const end = footnoteLabelEnd(state.src, start + 2, state.posMax)
  if (end < 0) return false
  const raw = state.src.slice(start + 2, end)
  const key = normalizeLabel(raw)
  if (!(state.env as unknown as ParseEnv).footnotes.has(key)) return false
  if (!silent) {
    state.push("footnote_call", "", 0).meta = { identifier: key.toLowerCase(), label: md.utils.unescapeAll(raw) }
  }
  state.pos = end + 1
  return true
})

// ---------------------------------------------------------------------------------------------------------------
// Tokens → mdast.
// ---------------------------------------------------------------------------------------------------------------

/**
 * The top-level nodes of `text` parsed as one Markdown document, taking the labels in `standIns` as defined
 * elsewhere in the same document.
 */
export const parseMarkdown = (text: string, standIns?: StandIns): Array<RootContent> => {
  const env: ParseEnv = { footnotes: new Set(standIns?.footnotes) }
  for (const label of standIns?.references ?? []) {
    const key = md.utils.normalizeReference(label)
    if (key !== "") (env.references ??= {})[key] = lateBound(key)
  }
  const root: Root = { type: "root", children: blocks(md.parse(text, env)) }
  autolinkLiterals(root)
  return root.children
}

/** A heading of a document's top level (not inside a quote or a list), where the parser found it. */
export interface HeadingLine {
  /** 1-6. */
  readonly depth: number
  /** Its text as written (markup kept, an ATX heading's closing `#`s dropped). */
  readonly source: string
  /** Its text without inline markup (the text of emphasis, code, links). */
  readonly text: string
  /** The lines it takes, from `startLine` up to (not including) `endLine`, 0-based; a setext heading takes two. */
  readonly startLine: number
  readonly endLine: number
}

/**
 * The top-level headings of `text`, ATX and setext, in order: what the parser takes for headings, so a `#` line
 * inside fenced code or an HTML block is none. Lines are counted as markdown-it counts them (`\r\n`, `\r` and
 * `\n` each end one).
 */
export const headingLines = (text: string): Array<HeadingLine> => {
  const env: ParseEnv = { footnotes: new Set() }
  const tokens = md.parse(text, env)
  const headings: Array<HeadingLine> = []
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!
    if (token.type !== "heading_open" || token.level !== 0 || token.map === null) continue
    const inline = tokens[index + 1]
    headings.push({
      depth: Number(token.tag.slice(1)),
      source: inline?.content ?? "",
      text: (inline?.children ?? []).map((child) =>
        child.type === "text" || child.type === "code_inline"
          ? child.content
          : child.type === "softbreak" || child.type === "hardbreak"
          ? " "
          : ""
      )
        .join(""),
      startLine: token.map[0],
      endLine: token.map[1]
    })
  }
  return headings
}

const attribute = (token: Token, name: string): string | null => {
  const value = token.attrGet(name)
  return value === null ? null : String(value)
}

/** What a label looks like in the tree: identifiers are lowercase (mdast-util-from-markdown). */
const identifier = (key: string) => key.toLowerCase()

const blocks = (tokens: ReadonlyArray<Token>): Array<RootContent> => {
  const root: Root = { type: "root", children: [] }
  const stack: Array<Parent> = [root]
  /** Lists with a paragraph that is not tight (markdown-it hides the paragraphs of tight lists). */
  const loose = new Set<Parent>()
  let table: Table | undefined
  /**
   * Fenced code left open when its container ended, with a last line that is empty: what micromark made of it
   * without that line (it took the line to end the container), which it did when a quote ended, or a list
   * before more of the document.
   */
  const openFences = new Map<Code, string>()
  const trimOpenFence = (container: Parent) => {
    const last = container.children[container.children.length - 1]
    const value = last?.type === "code" ? openFences.get(last) : undefined
    if (value !== undefined) (last as Code).value = value
  }
  const add = (node: RootContent) => (stack[stack.length - 1]!.children as Array<RootContent>).push(node)
  const open = (node: RootContent & Parent) => {
    add(node)
    stack.push(node)
  }
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!
    switch (token.type) {
      case "paragraph_open":
        if (stack[stack.length - 1]!.type === "listItem" && !token.hidden) loose.add(stack[stack.length - 2]!)
        open({ type: "paragraph", children: [] })
        break
      case "heading_open":
        open({ type: "heading", depth: Number(token.tag.slice(1)) as 1, children: [] })
        break
      case "blockquote_open":
        open({ type: "blockquote", children: [] })
        break
      case "bullet_list_open":
        open({ type: "list", ordered: false, start: null, spread: false, children: [] })
        break
      case "ordered_list_open":
        open({ type: "list", ordered: true, start: Number(token.attrGet("start") ?? 1), spread: false, children: [] })
        break
      case "list_item_open":
        open({
          type: "listItem",
          spread: false,
          checked: (token.meta as { checked?: boolean } | null)?.checked ?? null,
          children: []
        })
        break
      case "table_open":
        table = { type: "table", align: [], children: [] }
        open(table)
        break
      case "tr_open":
        open({ type: "tableRow", children: [] })
        break
      case "th_open":
      case "td_open": {
        if (token.type === "th_open") {
          const align = /text-align:(left|right|center)/.exec(attribute(token, "style") ?? "")?.[1]
          table!.align!.push((align ?? null) as "left" | null)
        }
        open({ type: "tableCell", children: [] })
        break
      }
      case "footnote_definition_open": {
        const { identifier, label } = token.meta as { identifier: string; label: string }
        open({ type: "footnoteDefinition", identifier, label, children: [] } satisfies FootnoteDefinition)
        break
      }
      case "thead_open":
      case "thead_close":
      case "tbody_open":
      case "tbody_close":
        break
      case "bullet_list_close":
      case "ordered_list_close": {
        const list = stack.pop() as List
        list.spread = loose.has(list)
        for (const item of list.children as Array<ListItem>) item.spread = list.spread
        const last = list.children[list.children.length - 1]
        if (last !== undefined && tokens.slice(index + 1).some((next) => next.nesting !== -1)) trimOpenFence(last)
        break
      }
      case "blockquote_close":
        trimOpenFence(stack.pop()!)
        break
      case "inline":
        phrasing(token.children ?? [], stack[stack.length - 1]!)
        break
      case "fence": {
        const info = md.utils.unescapeAll(token.info).trim()
        const space = info.search(/\s/)
        const value = token.content.replace(/\n$/, "")
        const code: Code = {
          type: "code",
          lang: info === "" ? null : space === -1 ? info : info.slice(0, space),
          meta: space === -1 ? null : info.slice(space).trim() || null,
          value
        }
        add(code)
        // Without its closing fence, its lines are all the lines the token spans after the opening one.
        const lines = token.content.split("\n").length - 1
        const closed = token.map![1] - token.map![0] === lines + 2
        if (!closed && (token.content.endsWith("\n\n") || token.content === "\n")) {
          openFences.set(code, value.slice(0, Math.max(0, value.lastIndexOf("\n"))))
        }
        break
      }
      case "code_block":
        add({ type: "code", lang: null, meta: null, value: token.content.replace(/\n$/, "") })
        break
      case "hr":
        add({ type: "thematicBreak" })
        break
      case "html_block":
        add({ type: "html", value: token.content.replace(/\n$/, "") })
        break
      case "reference_definition": {
        const { label, title, url } = token.meta as { label: string; url: string; title: string | null }
        add({ type: "definition", identifier: identifier(label), label, url, title } satisfies Definition)
        break
      }
      default:
        if (token.nesting === -1) stack.pop()
    }
  }
  return root.children
}

/** An inline token's children as phrasing content of `parent`, adjacent text joined as micromark joins it. */
const phrasing = (tokens: ReadonlyArray<Token>, parent: Parent): void => {
  const stack: Array<Parent> = [parent]
  const add = (node: PhrasingContent) => (stack[stack.length - 1]!.children as Array<PhrasingContent>).push(node)
  const open = (node: PhrasingContent & Parent) => {
    add(node)
    stack.push(node)
  }
  const text = (value: string) => {
    const siblings = stack[stack.length - 1]!.children
    const last = siblings[siblings.length - 1]
    if (last?.type === "text") last.value += value
    else add({ type: "text", value })
  }
  for (const token of tokens) {
    switch (token.type) {
      // An escaped character or an entity (text_special) is text: markdown-it's text_join makes it text, but only at
      // the top of an inline token, never inside an image's label (the alt).
      case "text":
      case "text_special":
        if (token.content !== "") text(token.content)
        break
      case "softbreak":
        text("\n")
        break
      case "hardbreak":
        add({ type: "break" })
        break
      case "code_inline":
        add({ type: "inlineCode", value: token.content })
        break
      case "em_open":
        open({ type: "emphasis", children: [] })
        break
      case "strong_open":
        open({ type: "strong", children: [] })
        break
      case "s_open":
        open({ type: "delete", children: [] })
        break
      case "link_open": {
        const href = String(token.attrGet("href") ?? "")
        open(
          href.startsWith(LATE_BOUND)
            ? {
              type: "linkReference",
              identifier: identifier(href.slice(1)),
              label: href.slice(1),
              referenceType: "shortcut",
              children: []
            }
            : { type: "link", url: href, title: attribute(token, "title"), children: [] }
        )
        break
      }
      case "image": {
        const src = String(token.attrGet("src") ?? "")
        const label: Paragraph = { type: "paragraph", children: [] }
        phrasing(token.children ?? [], label)
        const alt = plainText(label)
        add(
          src.startsWith(LATE_BOUND)
            ? {
              type: "imageReference",
              identifier: identifier(src.slice(1)),
              label: src.slice(1),
              referenceType: "shortcut",
              alt
            }
            : { type: "image", url: src, title: attribute(token, "title"), alt }
        )
        break
      }
      case "html_inline":
        add({ type: "html", value: token.content })
        break
      case "footnote_call": {
        const { identifier, label } = token.meta as { identifier: string; label: string }
        add({ type: "footnoteReference", identifier, label })
        break
      }
      default:
        if (token.nesting === -1) stack.pop()
    }
  }
}

/** mdast-util-to-string: the values and image alts under a node (how an image's alt is made from its label). */
const plainText = (node: Nodes): string =>
  "value" in node
    ? node.value
    : "alt" in node && node.alt
    ? node.alt
    : "children" in node
    ? node.children.map(plainText).join("")
    : ""
