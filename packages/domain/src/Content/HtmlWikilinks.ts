/**
 * Wikilinks (`[[Page]]`, `[[Page|label]]`) in HTML pages, read as Markdown reads them (MarkdownRender.ts): in text,
 * never inside a link, code, preformatted text or a stylesheet. They work on the one sanitizer's output, whose
 * grammar is narrow: tags are `<…>` with every `<`, `>` and `"` in attribute values escaped, text has `&`, `<` and
 * `>` escaped, and a kept `<style>` holds no `<`. So a text run is what lies between a `>` and the next `<`, and a
 * scan finds them without a parser. What `linkWikilinks` writes is sanitized again by its caller (ContentJobs).
 */
import { escapeHtml } from "./Text.ts"

/** As in Markdown: `[[target]]` or `[[target|label]]`, no brackets or line breaks inside. */
const WIKILINK = /\[\[([^[\]|\n]+)(?:\|([^[\]\n]*))?\]\]/g

/** Elements whose text is not scanned: links (no link in a link), code, preformatted text, stylesheets. */
const OPAQUE = new Set(["a", "code", "pre", "style"])

const decode = (text: string) =>
  text.replace(/&(lt|gt|quot|amp|nbsp|#39);/g, (_, name: string) =>
    name === "lt"
      ? "<"
      : name === "gt"
      ? ">"
      : name === "quot"
      ? "\""
      : name === "nbsp"
      ? "\u00a0"
      : name === "#39"
      ? "'"
      : "&")

export interface HtmlWikilink {
  readonly target: string
  readonly label: string | undefined
}

/**
 * Calls `onText` for each text run of sanitized HTML outside opaque elements, and gives back the HTML with each run
 * replaced by what `onText` returns (unchanged when it returns undefined).
 */
const mapText = (html: string, onText: (raw: string) => string | undefined): string => {
  const out: Array<string> = []
  let opaque = 0
  let at = 0
  while (at < html.length) {
    const lt = html.indexOf("<", at)
    const end = lt === -1 ? html.length : lt
    if (end > at) {
      const raw = html.slice(at, end)
      out.push(opaque === 0 && raw.includes("[[") ? onText(raw) ?? raw : raw)
    }
    if (lt === -1) break
    const gt = html.indexOf(">", lt)
    const close = gt === -1 ? html.length : gt + 1
    const tag = html.slice(lt, close)
    const name = /^<(\/?)([a-zA-Z][a-zA-Z0-9]*)/.exec(tag)
    if (name !== null && OPAQUE.has(name[2]!.toLowerCase()) && !tag.endsWith("/>")) {
      opaque = Math.max(0, opaque + (name[1] === "/" ? -1 : 1))
    }
    out.push(tag)
    at = close
  }
  return out.join("")
}

/** The wikilinks of sanitized HTML, in document order, each target and label pair once. */
export const htmlWikilinks = (html: string): Array<HtmlWikilink> => {
  if (!html.includes("[[")) return []
  const found: Array<HtmlWikilink> = []
  const seen = new Set<string>()
  mapText(html, (raw) => {
    for (const match of raw.matchAll(WIKILINK)) {
      const target = decode(match[1]!).trim()
      if (target === "") continue
      const label = decode(match[2] ?? "").trim() || undefined
      const key = `${target}\u0000${label ?? ""}`
      if (seen.has(key)) continue
      seen.add(key)
      found.push({ target, label })
    }
    return undefined
  })
  return found
}

/**
 * Sanitized HTML with its wikilinks made links where `hrefs` (target → same-origin path) has them, as Markdown
 * renders them: `<a class="wikilink">`, else `<span class="wikilink-unresolved">` with the label. For the sanitizer.
 */
export const linkWikilinks = (html: string, hrefs: ReadonlyMap<string, string>): string =>
  html.includes("[[")
    ? mapText(html, (raw) =>
      raw.replace(WIKILINK, (whole, rawTarget: string, rawLabel: string | undefined) => {
        const target = decode(rawTarget).trim()
        if (target === "") return whole
        const shown = escapeHtml(decode(rawLabel ?? "").trim() || target)
        const href = hrefs.get(target)
        return href === undefined
          ? `<span class="wikilink-unresolved">${shown}</span>`
          : `<a href="${escapeHtml(href)}" class="wikilink">${shown}</a>`
      }))
    : html
