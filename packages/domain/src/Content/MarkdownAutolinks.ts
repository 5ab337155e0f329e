/**
 * GFM autolink literals (`www.example.com`, `https://example.com/x`, `me@example.com`, `mailto:`/`xmpp:`
 * addresses) found in the text of a parsed tree: mdast-util-gfm-autolink-literal's transform (MIT), which
 * mdast-util-from-markdown ran after micromark, with one change. micromark's tokenizer found most literals before
 * emphasis was parsed and left trailing `*`, `_` and `~` out of them; here the parser (markdown-it) has already
 * made emphasis of the pairs, so only text remains, and trailing `*`, `_` and `~` are left out here as well.
 */
import type { Link, Nodes, Parent, PhrasingContent, Root, Text } from "mdast"

type Replace = (match: RegExpExecArray) => ReadonlyArray<PhrasingContent> | undefined

const PUNCTUATION = /\p{P}|\p{S}/u
const WHITESPACE = /\s/

/** The character before the match is a start, whitespace or punctuation. */
const previous = (match: RegExpExecArray) =>
  match.index === 0 || WHITESPACE.test(match.input.charAt(match.index - 1)) ||
  PUNCTUATION.test(match.input.charAt(match.index - 1))

const link = (url: string, value: string): Link => ({
  type: "link",
  title: null,
  url,
  children: [{ type: "text", value }]
})

/** The last two labels of a domain have no `_` and a letter or digit each. */
const isCorrectDomain = (domain: string) => {
  const parts = domain.split(".")
  if (parts.length < 2) return false
  for (const part of parts.slice(-2)) if (part !== "" && (part.includes("_") || !/[\dA-Za-z]/.test(part))) return false
  return true
}

/** Trailing punctuation is not part of a URL; a trailing `)` is when it closes a `(` in the URL. */
const TRAILING = new Set("!\"&')*,.:;<>?]_}~")
const splitUrl = (whole: string): readonly [string, string] => {
  let index = whole.length
  while (index > 0 && TRAILING.has(whole.charAt(index - 1))) index--
  let url = whole.slice(0, index)
  let trail = whole.slice(index)
  let closing = trail.indexOf(")")
  const opened = url.split("(").length - 1
  let closed = url.split(")").length - 1
  while (closing !== -1 && opened > closed) {
    url += trail.slice(0, closing + 1)
    trail = trail.slice(closing + 1)
    closing = trail.indexOf(")")
    closed++
  }
  return [url, trail]
}

const findUrl: Replace = (match) => {
  if (!previous(match)) return undefined
  const path = match[3]!
  let protocol = match[1]!
  let domain = match[2]!
  let prefix = ""
  if (/^w/i.test(protocol)) {
    domain = protocol + domain
    protocol = ""
    prefix = "http://"
  }
  if (PUNCTUATION.test(domain.charAt(0)) || !isCorrectDomain(domain)) return undefined
  const [url, trail] = splitUrl(domain + path)
  if (url === "") return undefined
  const result = link(prefix + protocol + url, protocol + url)
  return trail === "" ? [result] : [result, { type: "text", value: trail }]
}

const findXmpp: Replace = (match) => {
  const [whole, atext, label, resource] = match
  if (
    /[\d\-_]$/.test(label!) ||
    (resource && (!/[A-Za-z]$/.test(resource) || match.input.charAt(match.index + whole.length) === "@"))
  ) return undefined
  const value = `xmpp:${atext}@${label}${resource ?? ""}`
  return [link(value, value)]
}

const findMailto: Replace = ([, atext, label]) => {
  if (/[\d\-_]$/.test(label!)) return undefined
  const value = `mailto:${atext}@${label}`
  return [link(value, value)]
}

const findEmail: Replace = ([, atext, label]) =>
  /[\d\-_]$/.test(label!) ? undefined : [link(`mailto:${atext}@${label}`, `${atext}@${label}`)]

/**
 * The patterns in mdast-util-find-and-replace's order, each with what any text it matches must contain. Prose has
 * a `.` in nearly every text node: running every pattern over all of it was a tenth of a Markdown push's parsing.
 */
const PATTERNS: ReadonlyArray<readonly [RegExp, Replace, (text: string) => boolean]> = [
  [
    /(?<![\da-z])(https?:\/\/|www(?=\.))([\w-]*\.[\w\-.]*)([^\t\n\r ]*)/gi,
    findUrl,
    (text) => text.includes("://") || WWW.test(text)
  ],
  [
    /(?<![\w+\-.@])xmpp:([\w+\-.]+)@([\w-]+(?:\.[\w-]+)+)(\/(?:[\w\-/]|\.(?=[\dA-Za-z]))*)?/g,
    findXmpp,
    (text) => text.includes("xmpp:")
  ],
  [/(?<![\w+\-.@])mailto:([\w+\-.]+)@([\w-]+(?:\.[\w-]+)+)/g, findMailto, (text) => text.includes("mailto:")],
  [
    /(?<![\w+\-.]|(?:^|[^\d@A-Za-z])(?:mailto|xmpp):)([\w+\-.]+)@([\w-]+(?:\.[\w-]+)+)/g,
    findEmail,
    (text) => text.includes("@")
  ]
]
const WWW = /www\./i

/** What text holding any literal contains (every pattern's needs at once: an address has its `@`). */
const CANDIDATE = /@|:\/\/|www\./i

const replaceIn = (value: string, pattern: RegExp, replace: Replace): Array<PhrasingContent> | undefined => {
  pattern.lastIndex = 0
  let result: Array<PhrasingContent> | undefined
  let start = 0
  for (let match = pattern.exec(value); match !== null; match = pattern.exec(value)) {
    const replacement = replace(match)
    if (replacement === undefined) {
      // As find-and-replace does: try again one character on.
      pattern.lastIndex = match.index + 1
      continue
    }
    result ??= []
    if (match.index > start) result.push({ type: "text", value: value.slice(start, match.index) })
    result.push(...replacement)
    start = match.index + match[0].length
    pattern.lastIndex = start
  }
  if (result === undefined) return undefined
  if (start < value.length) result.push({ type: "text", value: value.slice(start) })
  return result
}

/**
 * A text node's literals: each pattern in turn over the text the ones before it left (what find-and-replace gives
 * running each pattern over the whole tree before the next, as no pattern looks past its text node).
 */
const literalsIn = (node: Text): ReadonlyArray<PhrasingContent> | undefined => {
  let pieces: Array<PhrasingContent> = [node]
  let found = false
  for (const [pattern, replace, candidate] of PATTERNS) {
    pieces = pieces.flatMap((piece) => {
      const replacement = piece.type === "text" && candidate(piece.value)
        ? replaceIn(piece.value, pattern, replace)
        : undefined
      if (replacement === undefined) return [piece]
      found = true
      return replacement
    })
  }
  return found ? pieces : undefined
}

const visit = (parent: Parent): void => {
  const children = parent.children as Array<Nodes>
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!
    if (child.type === "text") {
      if (!CANDIDATE.test(child.value)) continue
      const replacement = literalsIn(child)
      if (replacement === undefined) continue
      children.splice(i, 1, ...replacement)
      i += replacement.length - 1
    } else if (child.type !== "link" && child.type !== "linkReference" && "children" in child) {
      visit(child)
    }
  }
}

/** Turns autolink literals in the tree's text into links, in place. */
export const autolinkLiterals = (tree: Root): void => visit(tree)
