/**
 * A Markdown body (front matter already removed) parsed by markdown-it into mdast (MarkdownParse.ts) and rendered
 * through mdast → hast → HTML (GFM, wikilinks), with its plain text for search. The HTML is safe on its own where that is cheap; the one HTML sanitizer still runs on it
 * afterwards. Parsing stays within a budget (BoundedMarkdown.ts).
 */
import { toHtml } from "hast-util-to-html"
import type { List, Nodes, Parent, PhrasingContent, Root, RootContent, Text } from "mdast"
import { defaultHandlers, type Handlers, type State, toHast } from "mdast-util-to-hast"
import { parseWithinBudget } from "./BoundedMarkdown.ts"
import { htmlToText } from "./HtmlSanitizer.ts"
import { scanMarkdown } from "./MarkdownChunks.ts"
import { collapseWhitespace } from "./Text.ts"

export interface Wikilink {
  readonly target: string
  readonly label: string | undefined
}

export interface RenderOptions {
  /** Where `[[target]]` points, or undefined when no readable page matches (rendered as unresolved). */
  readonly resolveWikilink: (target: string) => { readonly href: string } | undefined
}

/** What a push keeps from a Markdown body (`readMarkdown`): everything a rendering gives but the HTML. */
export interface MarkdownText {
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

export interface RenderedMarkdown extends MarkdownText {
  readonly html: string
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
 * - Raw HTML in Markdown is written out as it is (`allowDangerousHtml`), and its text counts as the page's text:
 *   the output is for the one HTML sanitizer, which every caller runs on it before it goes anywhere (ContentJobs
 *   `renderMarkdown`), so a page that is raw HTML keeps what a pushed HTML page would keep.
 * - Links, autolinks, reference definitions and images with a scheme other than http(s)/mailto (images:
 *   http(s) and raster `data:image/…`) are neutralised before conversion: a link keeps its text without the
 *   link, an image becomes its alt text. Titles and every other attribute are escaped by hast-util-to-html.
 * - Wikilinks `[[Page]]`, `[[slug|label]]`, `[[owner/dock/page-slug]]` in text (never in code, inline code,
 *   or inside another link) become links when `resolveWikilink` finds them, and otherwise
 *   `<span class="wikilink-unresolved">label</span>`, so the text survives even if a sanitizer drops the class.
 *   Inside a GFM table cell write `[[slug\|label]]`: an unescaped `|` splits the cell first. A reference
 *   definition whose label matches (`[page]: https://…` next to `[[Page]]`) wins, as CommonMark says.
 */
export const renderMarkdown = (body: string, options: RenderOptions): RenderedMarkdown =>
  processMarkdown(body, options, true) as RenderedMarkdown

/**
 * What a push keeps from a Markdown body: its text, wikilinks, first heading, lead and warnings, as
 * `renderMarkdown` gives them, without making the HTML (a read renders it, with its wikilinks resolved).
 */
export const readMarkdown = (body: string): MarkdownText =>
  processMarkdown(body, { resolveWikilink: () => undefined }, false)

const processMarkdown = (body: string, options: RenderOptions, html: boolean): MarkdownText => {
  const scan = scanMarkdown(body)
  if (scan.deepestPrefix > MARKDOWN_MAX_CONTAINER_PREFIX) return asPlainText(body)
  try {
    const parsed = parseWithinBudget(body, scan.chunks)
    const rendered = renderTree(parsed.tree, options, html)
    return { ...rendered, warnings: [...rendered.warnings, ...parsed.warnings] }
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

const renderTree = (tree: Root, options: RenderOptions, withHtml: boolean): MarkdownText | RenderedMarkdown => {
  const state: TransformState = {
    options,
    wikilinks: [],
    seenWikilinks: new Set(),
    unsafeDefinitions: new Set(),
    unsafeUrls: 0
  }
  collectUnsafeDefinitions(tree, state)
  transformChildren(tree, state, false)
  const blocks = plainTextBlocks(tree)
  const warnings: Array<string> = []
  if (state.unsafeUrls > 0) {
    warnings.push(`links or images with unsupported URL schemes were rendered as text (${state.unsafeUrls})`)
  }
  const text: MarkdownText = {
    text: blocks.map((block) => block.text).join("\n\n"),
    wikilinks: state.wikilinks,
    firstHeading: blocks.find((block) => block.type === "heading")?.text,
    lead: blocks.find((block) => block.type === "paragraph")?.text,
    warnings
  }
  // Raw HTML is written out as it is; the one HTML sanitizer then reads the whole output (renderMarkdown's callers).
  return withHtml
    ? {
      ...text,
      html: toHtml(toHast(tree, { handlers: HAST_HANDLERS, allowDangerousHtml: true }), { allowDangerousHtml: true })
    }
    : text
}

interface TransformState {
  readonly options: RenderOptions
  readonly wikilinks: Array<Wikilink>
  readonly seenWikilinks: Set<string>
  /** Identifiers of reference definitions whose URL is unsafe; references to them are unwrapped. */
  readonly unsafeDefinitions: Set<string>
  unsafeUrls: number
}

const collectUnsafeDefinitions = (node: Nodes, state: TransformState): void => {
  if (node.type === "definition" && !isSafeUrl(node.url, "link")) {
    state.unsafeDefinitions.add(node.identifier)
    node.url = ""
    state.unsafeUrls += 1
  }
  if ("children" in node) { for (const child of node.children) collectUnsafeDefinitions(child, state) }
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
      return [node]
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

/** The document's text as blocks (paragraphs, headings, code, table rows, raw HTML's text), without markup. */
const plainTextBlocks = (tree: Root): Array<TextBlock> => {
  const blocks: Array<TextBlock> = []
  let current = ""
  let currentType = "paragraph"
  const flush = () => {
    const text = collapseWhitespace(current).trim()
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
      case "html": {
        // Raw HTML's text counts as the page's text (a lone tag has none: no need to read it); its paragraphs stay
        // paragraphs.
        if (/^<[^<>]*>$/.test(node.value)) return
        const text = htmlToText(node.value)
        if (!text.includes("\n")) {
          current += ` ${text} `
          return
        }
        flush()
        for (const paragraph of text.split(/\n{2,}/)) {
          current = paragraph
          flush()
        }
        return
      }
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
