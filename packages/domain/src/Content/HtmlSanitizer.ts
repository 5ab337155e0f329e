/**
 * The one strict HTML sanitizer configuration of Dock (security.md "Untrusted content", architecture §10). Every
 * piece of HTML goes through it before storage, again on native reads and on restores, and Markdown goes through
 * it after rendering; nothing else in the project configures sanitize-html.
 */
import { createRequire } from "node:module"
import sanitize from "sanitize-html"
import { sanitizeStyleAttribute, sanitizeStylesheet, STYLE_ELEMENTS_MAX } from "./CssSanitizer.ts"
import { collapseWhitespace } from "./Text.ts"

/** Elements nested deeper than this are dropped together with their content. */
export const HTML_NESTING_LIMIT = 100

/** The result of sanitizing: safe HTML and what was removed, in words an agent can act on. */
export interface SanitizedHtml {
  readonly html: string
  readonly warnings: ReadonlyArray<string>
}

// sanitize-html parses with htmlparser2, whose open-element stack costs time proportional to its depth on every
// tag (1 MiB of `<div>` takes tens of seconds). htmlparser2's documented `Tokenizer` option lets us keep tags from
// the parser: those opened inside content that is already too deep, and disallowed elements whose content is kept
// (see `gate` below). The tokenizer comes from the very copy of htmlparser2 that sanitize-html loads.
const htmlparser2 = createRequire(createRequire(import.meta.url).resolve("sanitize-html"))(
  "htmlparser2"
) as typeof import("htmlparser2")

type TokenizerClass = typeof htmlparser2.Tokenizer
type TokenizerCallbacks = ConstructorParameters<TokenizerClass>[1]

// ---------------------------------------------------------------------------------------------------------------
// The configuration

const LINK_SCHEMES = ["http", "https", "mailto"]
const IMAGE_SCHEMES = ["http", "https", "data"]
const DATA_IMAGE = /^data:image\/(?:png|jpeg|gif|webp)[;,]/i

const ALLOWED_TAGS = [
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "p",
  "div",
  "span",
  "section",
  "article",
  "header",
  "footer",
  "nav",
  "aside",
  "main",
  "blockquote",
  "pre",
  "code",
  "hr",
  "br",
  "ul",
  "ol",
  "li",
  "dl",
  "dt",
  "dd",
  "figure",
  "figcaption",
  "details",
  "summary",
  "sup",
  "sub",
  "em",
  "strong",
  "b",
  "i",
  "u",
  "s",
  "del",
  "ins",
  "mark",
  "small",
  "abbr",
  "cite",
  "q",
  "kbd",
  "samp",
  "var",
  "time",
  "table",
  "thead",
  "tbody",
  "tfoot",
  "tr",
  "th",
  "td",
  "caption",
  "colgroup",
  "col",
  "a",
  "img",
  "style", // without attributes, its CSS through the CSS sanitizer (CssSanitizer.ts): see `sanitizeHtml`
  "input" // only a disabled checkbox (a GFM task list item): see `transform` below
]

// Dropped together with everything inside them: script-capable, raw-text and RCDATA elements (whose content a
// browser does not parse as the markup htmlparser2 sees), foreign content (SVG/MathML re-parse their content by
// other rules), templates (declarative shadow DOM), frames, plug-ins and form controls that hold only values.
const TOO_DEEP = "#too-deep" // no tag name the tokenizer produces starts with "#"
const DISCARDED_WITH_CONTENT = [
  "script",
  "template",
  "noscript",
  "xmp",
  "textarea",
  "title",
  "noembed",
  "noframes",
  "plaintext",
  "iframe",
  "frame",
  "frameset",
  "object",
  "applet",
  "embed",
  "svg",
  "math",
  "select",
  "option",
  "optgroup",
  "datalist",
  TOO_DEEP
]

const ALLOWED = new Set(ALLOWED_TAGS)
const DISCARDED = new Set(DISCARDED_WITH_CONTENT)

// The document wrappers: an artifact is a fragment and the server supplies the document, so these go silently.
const UNWRAPPED_SILENTLY = new Set(["html", "head", "body"])
const VOID = new Set([
  "area",
  "base",
  "basefont",
  "br",
  "col",
  "command",
  "embed",
  "frame",
  "hr",
  "img",
  "input",
  "isindex",
  "keygen",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr"
])

type AttributeRule = (value: string) => boolean
const any: AttributeRule = () => true
const oneOf = (...values: Array<string>): AttributeRule => (value) => values.includes(value.toLowerCase())
const digits: AttributeRule = (value) => /^\d{1,5}$/.test(value)
/** Boolean attributes written without a value (`data-footnote-ref`, `data-footnote-backref=""`). */
const empty: AttributeRule = (value) => value === ""
// Classes are kept for code languages, GFM task lists and footnotes; they are restricted to letters, digits, `-`
// and `_` so they stay plain names, never CSS escapes or markup-looking text.
const SAFE_NAME = /^[\p{L}\p{N}_-]{1,128}$/u
// Ids exist for in-page anchors: GFM footnotes (mdast-util-to-hast prefixes every id it writes with
// `user-content-`, `user-content-fn-1`, except the heading `footnote-label`) and HTML pages' own (`<h2 id="setup">`
// with `<a href="#setup">`). Every other id gets the same prefix, and every `href="#…"` with it (`#setup` becomes
// `#user-content-setup`), so in-page links keep working while an artifact cannot name an element `login`, `config`
// or `forms` and so shadow a global a script relies on (DOM clobbering). No script runs in an artifact (CSP
// `sandbox`), so today this is defence in depth. After the prefix comes the name, URL-encoded or not, so any
// character allowed verbatim in a URL fragment (RFC 3986: pchar, `/`, `?`) may follow, and the `href="#…"` that
// points at it is the same text.
const ANCHOR_ID = /^(?:user-content-[\p{L}\p{N}\-._~!$&'()*+,;=:@/?%]{1,128}|footnote-label)$/u
const ID_RULE = "ids are letters, digits and URL fragment characters, at most 128"
const ANCHOR_PREFIX = "user-content-"

/** An id as kept: prefixed with `user-content-` unless it is already an anchor id; undefined when it must go. */
const anchorId = (value: string): string | undefined => {
  if (ANCHOR_ID.test(value)) return value
  if (/^user-content-/i.test(value)) return undefined
  const prefixed = ANCHOR_PREFIX + value
  return ANCHOR_ID.test(prefixed) ? prefixed : undefined
}

/** An in-page link (`#name`) pointing at the id `anchorId` makes of `name`; other URLs as they are. */
const anchorHref = (value: string): string => {
  const url = trimControlsAndSpaces(value)
  if (!url.startsWith("#") || url.length === 1) return value
  const name = url.slice(1)
  return name === "footnote-label" || name.startsWith(ANCHOR_PREFIX) ? value : `#${ANCHOR_PREFIX}${name}`
}

const GLOBAL_ATTRIBUTES: Record<string, AttributeRule> = {
  id: (value) => ANCHOR_ID.test(value),
  class: any, // filtered token by token below
  title: any,
  style: any, // through the CSS sanitizer (keptAttributes)
  lang: (value) => /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/.test(value),
  dir: oneOf("ltr", "rtl", "auto")
}

const URL_ATTRIBUTES = new Set(["href", "src", "cite"])
const cellAlign = oneOf("left", "center", "right", "justify")

// The GFM footnote markup of mdast-util-to-hast: `<a href="#user-content-fn-1" id="user-content-fnref-1"
// data-footnote-ref aria-describedby="footnote-label">`, `<section data-footnotes class="footnotes">` and the
// back-reference `<a href="#user-content-fnref-1" data-footnote-backref="" aria-label="Back to reference 1">`.
const TAG_ATTRIBUTES: Record<string, Record<string, AttributeRule>> = {
  a: {
    href: any,
    rel: any,
    "data-footnote-ref": empty,
    "data-footnote-backref": empty,
    "aria-describedby": (value) => ANCHOR_ID.test(value),
    "aria-label": (value) => value.length <= 256
  },
  section: { "data-footnotes": empty },
  // A GFM task list item. Only a disabled checkbox is kept (see `transform`), and with these attributes only: no
  // `form`, `name`, `value` or `formaction`, and no <form>, <button> or other control survives, so it can neither
  // submit nor take input.
  input: { type: oneOf("checkbox"), checked: any, disabled: any },
  img: { src: any, alt: any, width: digits, height: digits },
  th: { colspan: digits, rowspan: digits, scope: oneOf("row", "col", "rowgroup", "colgroup"), align: cellAlign },
  td: { colspan: digits, rowspan: digits, align: cellAlign }, // GFM tables carry their alignment in `align`
  col: { span: digits },
  colgroup: { span: digits },
  ol: { start: (value) => /^-?\d{1,9}$/.test(value), reversed: any },
  li: { value: (value) => /^-?\d{1,9}$/.test(value) },
  blockquote: { cite: any },
  q: { cite: any },
  del: { cite: any, datetime: any },
  ins: { cite: any, datetime: any },
  time: { datetime: any },
  details: { open: any }
}

const LINK_REL = "noopener noreferrer nofollow ugc"

const OPTIONS: sanitize.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: Object.fromEntries([
    ["*", Object.keys(GLOBAL_ATTRIBUTES)],
    ...Object.entries(TAG_ATTRIBUTES).map(([tag, rules]) => [tag, Object.keys(rules)])
  ]),
  allowedSchemes: LINK_SCHEMES,
  allowedSchemesByTag: { img: IMAGE_SCHEMES },
  allowedSchemesAppliedToAttributes: [...URL_ATTRIBUTES],
  allowProtocolRelative: true,
  disallowedTagsMode: "discard",
  nonTextTags: DISCARDED_WITH_CONTENT,
  nestingLimit: HTML_NESTING_LIMIT + 1,
  parseStyleAttributes: false, // the CSS sanitizer reads them instead
  // <style> is allowed: sanitize-html writes its raw text as it is, and `sanitizeHtml` then replaces that text with
  // what the CSS sanitizer keeps of it.
  allowVulnerableTags: true,
  enforceHtmlBoundary: false
}

const MAX_WARNINGS = 50

// ---------------------------------------------------------------------------------------------------------------
// sanitizeHtml

/**
 * Sanitizes untrusted HTML with the project's one strict configuration. Pure and idempotent:
 * `sanitizeHtml(sanitizeHtml(x).html).html === sanitizeHtml(x).html`.
 */
export const sanitizeHtml = (html: string): SanitizedHtml => {
  const warnings = new Set<string>()
  const warn = (message: string) => {
    if (warnings.size < MAX_WARNINGS) warnings.add(message)
    else warnings.add("further warnings were omitted")
  }
  // Hostile input repeats the same withheld tag hundreds of thousands of times: word each name once.
  const withheldNames = new Set<string>()
  const firstTime = (key: string) => {
    if (withheldNames.has(key) || withheldNames.size > MAX_WARNINGS) return false
    withheldNames.add(key)
    return true
  }
  // htmlparser2's open-element stack, mirrored from its open and close events (which it keeps balanced): its
  // depth, and the depth of the element whose content is being discarded (0: none).
  let depth = 0
  let discardedAt = 0
  // The attribute objects `transform` returns for <input> elements that must go; `exclusiveFilter` then removes
  // them. (Renaming them to a disallowed tag would not do: sanitize-html forgets to clear its record of a renamed
  // element it skipped, and writes the next element at that depth with the wrong end tag.)
  const droppedInputs = new WeakSet<sanitize.Attributes>()

  const transform = (tagName: string, attribs: sanitize.Attributes): sanitize.Tag => {
    if (depth > HTML_NESTING_LIMIT) {
      warn(`content nested deeper than ${HTML_NESTING_LIMIT} levels was dropped`)
      return { tagName: TOO_DEEP, attribs: {} }
    }
    // Of the disallowed elements only those discarded with their content get here: the gate withholds the rest.
    if (!ALLOWED.has(tagName)) {
      warn(`removed <${display(tagName)}> element and its content`)
      for (const name of Object.keys(attribs)) {
        if (isEventHandler(name)) warn(`removed event handler attribute ${display(name)}`)
      }
      return { tagName, attribs: {} }
    }
    if (tagName === "input" && !isDisabledCheckbox(attribs)) {
      warn("removed <input> element (only disabled checkboxes, as in task lists, are kept)")
      for (const name of Object.keys(attribs)) {
        if (isEventHandler(name)) warn(`removed event handler attribute ${display(name)}`)
      }
      const dropped = {}
      droppedInputs.add(dropped)
      return { tagName, attribs: dropped }
    }
    // A <style> keeps no attribute (`media`, `nonce`, …): its CSS is all that counts.
    if (tagName === "style") return { tagName, attribs: {} }
    return { tagName, attribs: keptAttributes(tagName, attribs, warn) }
  }

  // Disallowed elements whose content is kept never reach the parser: were they on its stack, they would change
  // which elements it closes implicitly (`<p><font><div>` keeps the div inside the p; `<p><div>` does not), and the
  // output, which no longer has them, would parse differently the second time. <input> does reach it, because
  // whether it stays depends on its attributes: it is void, so never on the stack, and of the elements it closes
  // implicitly (other form controls) none reaches the output, so the output parses the same the second time.
  const gate: Gate = {
    withhold: (name) => {
      if (depth > HTML_NESTING_LIMIT) return true
      if (ALLOWED.has(name) || DISCARDED.has(name) || name === "image") return false // htmlparser2 reads image as img
      if (discardedAt === 0 && !UNWRAPPED_SILENTLY.has(name) && firstTime(`<${name}`)) {
        warn(`removed <${display(name)}> element${VOID.has(name) ? "" : " (its content was kept)"}`)
      }
      return true
    },
    withheldAttribute: (name) => {
      if (discardedAt === 0 && depth <= HTML_NESTING_LIMIT && isEventHandler(name) && firstTime(name)) {
        warn(`removed event handler attribute ${display(name)}`)
      }
    },
    markup: (kind) => warn(`removed ${kind}`),
    unfinishedTag: () => warn("removed an unfinished tag at the end of the input (possible dangling markup)")
  }

  // As the HTML parser does in attribute values; also keeps NUL out of stored text.
  const input = html.replace(/\0/g, "\uFFFD")
  const result = sanitize(input, {
    ...OPTIONS,
    transformTags: { "*": transform },
    exclusiveFilter: (frame) => droppedInputs.has(frame.attribs) ? "excludeTag" : false,
    onOpenTag: (name) => {
      depth++
      if (discardedAt === 0 && DISCARDED.has(name)) discardedAt = depth
    },
    onCloseTag: () => {
      if (depth === discardedAt) discardedAt = 0
      depth--
    },
    parser: { decodeEntities: true, Tokenizer: gatedTokenizer(input, gate) }
  })
  return { html: withSanitizedStyles(result, warn), warnings: [...warnings] }
}

/**
 * sanitize-html wrote each kept `<style>` element as `<style>` + its raw text + `</style>`. Nowhere else in its
 * output can `<style>` appear (text and attribute values are escaped, no other raw-text element is kept), and the
 * raw text ends at the first `</style` (htmlparser2 ends it there, as browsers do), so each match is one element.
 * Its text is replaced with what the CSS sanitizer keeps, which never holds a `<`; an element left empty goes.
 */
const withSanitizedStyles = (html: string, warn: (message: string) => void) => {
  if (!html.includes("<style>")) return html
  let count = 0
  return html.replace(/<style>([\s\S]*?)<\/style>/g, (_, css: string) => {
    if (++count > STYLE_ELEMENTS_MAX) {
      warn(`removed <style> elements past the first ${STYLE_ELEMENTS_MAX}`)
      return ""
    }
    const sanitized = sanitizeStylesheet(css)
    for (const warning of sanitized.warnings) warn(warning)
    return sanitized.css === "" ? "" : `<style>${sanitized.css}</style>`
  })
}

const isEventHandler = (name: string) => /^on/i.test(name)

// As a browser reads it: the first of duplicate attributes wins (htmlparser2 keeps the first too), `type` is
// matched exactly but for case (` checkbox` is a text field), and `disabled` counts whatever its value.
const isDisabledCheckbox = (attribs: sanitize.Attributes) =>
  Object.hasOwn(attribs, "type") && attribs.type!.toLowerCase() === "checkbox" && Object.hasOwn(attribs, "disabled")

// Attacker-chosen names appear in warnings; keep them short and printable.
const display = (name: string) => name.slice(0, 40).replace(/[^\w:.-]/g, "?") + (name.length > 40 ? "…" : "")

const keptAttributes = (
  tagName: string,
  attribs: sanitize.Attributes,
  warn: (message: string) => void
): sanitize.Attributes => {
  const rules = TAG_ATTRIBUTES[tagName] ?? {}
  // A checkbox keeps its own attributes only (not even id, class or title).
  const globals = tagName === "input" ? {} : GLOBAL_ATTRIBUTES
  const kept: sanitize.Attributes = {}
  for (const [name, value] of Object.entries(attribs)) {
    const rule = Object.hasOwn(rules, name) ? rules[name] : Object.hasOwn(globals, name)
      ? globals[name]
      : undefined
    if (rule === undefined) {
      if (isEventHandler(name)) warn(`removed event handler attribute ${display(name)}`)
      else warn(`removed attribute ${display(name)} from <${tagName}>`)
      continue
    }
    if (name === "rel") continue // replaced below
    if (name === "style") {
      const sanitized = sanitizeStyleAttribute(value)
      for (const warning of sanitized.warnings) warn(warning)
      if (sanitized.css !== "") kept.style = sanitized.css
      continue
    }
    if (name === "id") {
      const id = anchorId(value)
      if (id === undefined) warn(`removed id attribute from <${tagName}> (${ID_RULE})`)
      else kept.id = id
      continue
    }
    if (URL_ATTRIBUTES.has(name)) {
      const problem = urlProblem(value, tagName === "img" && name === "src")
      if (problem !== undefined) {
        warn(`removed ${problem} from ${name}`)
        continue
      }
      if (name === "href") {
        kept.href = anchorHref(value)
        continue
      }
    } else if (name === "class") {
      const classes = value.split(/\s+/).filter((token) => token !== "")
      const safe = classes.filter((token) => SAFE_NAME.test(token))
      if (safe.length < classes.length) warn("removed class names with characters other than letters, digits, - and _")
      if (safe.length > 0) kept.class = safe.join(" ")
      continue
    } else if (!rule(value)) {
      warn(
        name === "id"
          ? `removed id attribute from <${tagName}> (${ID_RULE})`
          : `removed invalid ${display(name)} attribute from <${tagName}>`
      )
      continue
    }
    kept[name] = value
  }
  if (tagName === "input") {
    // Boolean attributes as booleans, and the type as the one value it can have here.
    kept.type = "checkbox"
    kept.disabled = ""
    if (Object.hasOwn(kept, "checked")) kept.checked = ""
  }
  if (tagName === "a") kept.rel = LINK_REL
  return kept
}

/**
 * Why a URL attribute value must go, or undefined when it may stay. Checks the value as a browser will see it:
 * entities are already decoded by the parser, and the URL parser strips leading and trailing C0 controls and
 * spaces and removes tabs and newlines anywhere. Anything before the first `/`, `?` or `#` that ends in `:` is a
 * scheme, and it must be one we allow, so malformed schemes (`java\uFFFDscript:`) are refused too.
 */
const urlProblem = (value: string, isImage: boolean): string | undefined => {
  const url = trimControlsAndSpaces(value).replace(/[\t\n\r]/g, "")
  const colon = /^([^/?#]*?):/.exec(url)
  if (colon !== null) {
    const scheme = colon[1]!.toLowerCase()
    if (!/^[a-z][a-z0-9+.-]*$/.test(scheme)) return "URL with a malformed scheme"
    if (isImage && scheme === "data") {
      if (!DATA_IMAGE.test(url)) return "data: URL that is not a PNG, JPEG, GIF or WebP image"
    } else if (!(isImage ? IMAGE_SCHEMES : LINK_SCHEMES).includes(scheme)) {
      return `${display(scheme)}: URL`
    }
  }
  // Line breaks or angle brackets in a URL are the signature of dangling markup (`<img src='https://x/?…`
  // swallowing the rest of a page into the URL); browsers refuse such URLs for the same reason.
  if (/[\n\r<>]/.test(value)) return "URL containing line breaks or angle brackets (dangling markup)"
  return undefined
}

// What the URL parser strips from both ends (a loop: an anchored-at-end regex is quadratic on long runs).
const trimControlsAndSpaces = (value: string) => {
  let start = 0
  let end = value.length
  while (start < end && value.charCodeAt(start) <= 0x20) start++
  while (end > start && value.charCodeAt(end - 1) <= 0x20) end--
  return value.slice(start, end)
}

/** What the tokenizer asks about each open tag, and tells about markup that is dropped without an event. */
interface Gate {
  /** True to keep this open tag (lower-cased name) and its attributes from the parser. */
  readonly withhold: (name: string) => boolean
  readonly withheldAttribute?: (name: string) => void
  readonly markup?: (kind: "comment" | "CDATA section" | "processing instruction") => void
  /** The input ended inside a tag, which the tokenizer then drops. */
  readonly unfinishedTag?: () => void
}

/**
 * An htmlparser2 tokenizer that withholds the open tags the gate refuses, so that the parser never puts them on
 * its stack. Their text and close tags still go through: the parser ignores close tags it has no element for.
 */
const gatedTokenizer = (input: string, gate: Gate): TokenizerClass => {
  const nameAt = (start: number, endIndex: number) => input.slice(start, endIndex).toLowerCase()
  class GatedTokenizer extends htmlparser2.Tokenizer {
    constructor(options: ConstructorParameters<TokenizerClass>[0], parser: TokenizerCallbacks) {
      let withholding = false
      let inTag = false
      const gated: TokenizerCallbacks = {
        onopentagname(start, endIndex) {
          inTag = true
          withholding = gate.withhold(nameAt(start, endIndex))
          if (!withholding) parser.onopentagname(start, endIndex)
        },
        onattribname(start, endIndex) {
          if (withholding) gate.withheldAttribute?.(nameAt(start, endIndex))
          else parser.onattribname(start, endIndex)
        },
        onattribdata(start, endIndex) {
          if (!withholding) parser.onattribdata(start, endIndex)
        },
        onattribentity(codepoint) {
          if (!withholding) parser.onattribentity(codepoint)
        },
        onattribend(quote, endIndex) {
          if (!withholding) parser.onattribend(quote, endIndex)
        },
        onopentagend(endIndex) {
          inTag = false
          if (withholding) withholding = false
          else parser.onopentagend(endIndex)
        },
        onselfclosingtag(endIndex) {
          inTag = false
          if (withholding) withholding = false
          else parser.onselfclosingtag(endIndex)
        },
        onclosetag(start, endIndex) {
          parser.onclosetag(start, endIndex)
        },
        ontext(start, endIndex) {
          parser.ontext(start, endIndex)
        },
        ontextentity(codepoint, endIndex) {
          parser.ontextentity(codepoint, endIndex)
        },
        oncomment(start, endIndex, endOffset) {
          // In HTML `<?…>` is a bogus comment, and htmlparser2 reports it as one.
          gate.markup?.(input.startsWith("<?", start - 2) ? "processing instruction" : "comment")
          parser.oncomment(start, endIndex, endOffset)
        },
        oncdata(start, endIndex, endOffset) {
          gate.markup?.("CDATA section")
          parser.oncdata(start, endIndex, endOffset)
        },
        ondeclaration(start, endIndex) {
          // `<!DOCTYPE html>` heads every full document and means nothing in a fragment: dropped without a word.
          parser.ondeclaration(start, endIndex)
        },
        onprocessinginstruction(start, endIndex) {
          gate.markup?.("processing instruction")
          parser.onprocessinginstruction(start, endIndex)
        },
        onend() {
          if (inTag) gate.unfinishedTag?.()
          parser.onend()
        },
        isInForeignContext() {
          return parser.isInForeignContext?.() ?? false
        }
      }
      super(options, gated)
    }
  }
  return GatedTokenizer
}

// ---------------------------------------------------------------------------------------------------------------
// htmlToText

const PARAGRAPH_BLOCKS = new Set([
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "blockquote",
  "pre",
  "table",
  "ul",
  "ol",
  "dl",
  "figure",
  "hr",
  "section",
  "article",
  "header",
  "footer",
  "nav",
  "aside",
  "main",
  "details",
  "address",
  "hgroup"
])
const LINE_BLOCKS = new Set([
  "div",
  "li",
  "dt",
  "dd",
  "tr",
  "caption",
  "figcaption",
  "summary",
  "thead",
  "tbody",
  "tfoot",
  "colgroup"
])

/**
 * The text of (sanitized) HTML, for search and `format: "text"`: tags stripped, entities decoded, blocks, list
 * items, table rows and `<br>` on their own lines, table cells separated by a tab, other whitespace collapsed
 * (kept inside `<pre>`), never more than one blank line in a row.
 */
export const htmlToText = (html: string): string => {
  const input = html.replace(/\0/g, "\uFFFD")
  const parts: Array<string> = []
  let newlines = 0 // newlines at the end of the output so far
  let started = false
  let pendingSpace = false
  let discarding = 0 // inside elements whose content is not text
  let preformatted = 0
  let cellInRow = 0
  let depth = 0

  const write = (text: string) => {
    if (pendingSpace && started && newlines === 0) parts.push(" ")
    pendingSpace = false
    parts.push(text)
    started = true
    let trailing = 0
    while (trailing < text.length && text.charCodeAt(text.length - 1 - trailing) === 10) trailing++
    newlines = trailing === text.length ? newlines + trailing : trailing
  }
  const lineBreak = (count: number) => {
    pendingSpace = false
    if (!started) return
    while (newlines < count) {
      parts.push("\n")
      newlines++
    }
  }

  const parser = new htmlparser2.Parser({
    onopentag(name) {
      depth++
      if (discarding > 0 || DISCARDED.has(name) || name === "style") {
        discarding++
        return
      }
      if (name === "pre") preformatted++
      if (name === "tr") cellInRow = 0
      if (name === "td" || name === "th") {
        if (cellInRow++ > 0 && started && newlines === 0) {
          pendingSpace = false
          parts.push("\t")
        }
      } else if (name === "br") {
        pendingSpace = false
        if (started && newlines < 2) {
          parts.push("\n")
          newlines++
        }
      } else if (PARAGRAPH_BLOCKS.has(name)) lineBreak(2)
      else if (LINE_BLOCKS.has(name)) lineBreak(1)
    },
    onclosetag(name) {
      depth--
      if (discarding > 0) {
        discarding--
        return
      }
      if (name === "pre") preformatted--
      if (PARAGRAPH_BLOCKS.has(name)) lineBreak(2)
      else if (LINE_BLOCKS.has(name)) lineBreak(1)
    },
    ontext(text) {
      if (discarding > 0 || depth > HTML_NESTING_LIMIT) return
      if (preformatted > 0) {
        if (text !== "") write(text.replace(/\r\n?/g, "\n"))
        return
      }
      const collapsed = collapseWhitespace(text)
      if (collapsed === " ") {
        pendingSpace = started && newlines === 0
        return
      }
      if (collapsed === "") return
      if (collapsed.startsWith(" ")) pendingSpace = started && newlines === 0
      write(collapsed.trim())
      pendingSpace = collapsed.endsWith(" ")
    }
  }, { decodeEntities: true, Tokenizer: gatedTokenizer(input, { withhold: () => depth > HTML_NESTING_LIMIT }) })
  parser.end(input)

  // Line by line rather than with /[ \t]+\n/, which is quadratic on a long run of spaces.
  return parts.join("").split("\n").map((line) => line.trimEnd()).join("\n").replace(/\n{3,}/g, "\n\n").trim()
}

// ---------------------------------------------------------------------------------------------------------------
// htmlTitle

/** A title taken from a page is at most this many characters, as `page_title` is. */
export const DERIVED_TITLE_MAX = 300

// Where a document's <title> is looked for: its head comes first, and a linear scan of a bounded prefix keeps
// hostile input (a megabyte of `<title`) cheap.
const TITLE_SCAN_CHARS = 65_536

const boundedTitle = (text: string): string | undefined => {
  const collapsed = collapseWhitespace(text).trim()
  if (collapsed === "") return undefined
  return [...collapsed].slice(0, DERIVED_TITLE_MAX).join("").trim()
}

/**
 * The title an HTML page suggests: the text of its `<title>` (looked for in the raw input, since the sanitizer
 * drops that element), else the text of the first `<h1>` of the sanitized HTML; whitespace collapsed, trimmed, at
 * most DERIVED_TITLE_MAX characters. Undefined when there is neither, or both are empty.
 */
export const htmlTitle = (raw: string, sanitized: string): string | undefined => {
  const head = raw.slice(0, TITLE_SCAN_CHARS)
  const lower = head.toLowerCase()
  const open = /<title(?=[\s/>])/.exec(lower)
  if (open !== null) {
    const start = lower.indexOf(">", open.index)
    const end = start === -1 ? -1 : lower.indexOf("</title", start)
    if (end !== -1) {
      // <title> is RCDATA: entities are decoded, tags are text. Its text, as the sanitizer reads text.
      const title = boundedTitle(htmlToText(`<p>${head.slice(start + 1, end).replace(/</g, "&lt;")}</p>`))
      if (title !== undefined) return title
    }
  }
  let inH1 = false
  let done = false
  const parts: Array<string> = []
  const parser = new htmlparser2.Parser({
    onopentag(name) {
      if (name === "h1" && !done) inH1 = true
    },
    onclosetag(name) {
      if (name === "h1" && inH1) {
        inH1 = false
        done = true
      }
    },
    ontext(text) {
      if (inH1) parts.push(text)
    }
  }, { decodeEntities: true })
  parser.end(sanitized)
  return boundedTitle(parts.join(""))
}
