/**
 * The CSS half of the one HTML sanitizer (HtmlSanitizer.ts calls it for `<style>` elements and `style`
 * attributes; nothing else does). CSS is parsed with postcss (the very copy sanitize-html loads) and written out
 * again from its tree by an allow-list: what is not understood is dropped, never passed through.
 *
 * Kept: rules with their selectors, declarations whose property is a plain name, `@media`, `@supports`,
 * `@container`, `@layer`, `@keyframes` and `@font-face` (local fonts only). Dropped with a warning: `@import` and
 * every other at-rule; any `url()` but a raster `data:image/…` (PNG, JPEG, GIF, WebP) or an in-page `#fragment`;
 * every function not on the list below (so `expression()`, `image-set()`, `element()`, `paint()`, `src()`);
 * `behavior`, `-moz-binding` and other properties that bind code; `position: fixed` (an overlay over the whole
 * window, Dock's footer included); anything with a backslash (CSS escapes: `\75rl(` is `url(`, so escaped text is
 * refused rather than decoded differently from a browser), a `<` (no `</style>` can end the element early) or a
 * `javascript:`/`vbscript:` scheme; comments. Sizes are bounded. The output is canonical, so sanitizing twice
 * gives the same text.
 */
import { createRequire } from "node:module"
import { collapseWhitespace } from "./Text.ts"

const postcss = createRequire(createRequire(import.meta.url).resolve("sanitize-html"))(
  "postcss"
) as typeof import("postcss")

type CssNode = import("postcss").ChildNode
type Container = import("postcss").Container

/** A page keeps at most this many `<style>` elements; later ones are dropped unread. */
export const STYLE_ELEMENTS_MAX = 64
/** A `<style>` element's CSS longer than this (in characters) is dropped as a whole. */
export const STYLE_ELEMENT_MAX_CHARS = 262_144
/** A `style` attribute longer than this is dropped. */
export const STYLE_ATTRIBUTE_MAX_CHARS = 16_384
/** One declaration's value longer than this (a large data: image) is dropped. */
const VALUE_MAX_CHARS = 65_536
/** Blocks nested deeper than this (`@media { @supports { a { b { … } } } }`) are dropped. */
const BLOCK_DEPTH_MAX = 8

const PROPERTY = /^(?:--[A-Za-z0-9_-]{1,128}|-?[A-Za-z][A-Za-z0-9-]{0,63})$/
/** Properties that bind code or behaviour (old IE and Gecko); never kept. */
const BINDING_PROPERTIES = new Set(["behavior", "-moz-binding", "binding", "-ms-behavior"])

const ALLOWED_FUNCTIONS = new Set([
  "", // a bare parenthesis: `(min-width: 40em)`, `calc((1 + 2) * 1px)`
  "url", // checked on its own below
  "rgb",
  "rgba",
  "hsl",
  "hsla",
  "hwb",
  "lab",
  "lch",
  "oklab",
  "oklch",
  "color",
  "color-mix",
  "light-dark",
  "calc",
  "min",
  "max",
  "clamp",
  "var",
  "attr",
  "counter",
  "counters",
  "linear-gradient",
  "radial-gradient",
  "conic-gradient",
  "repeating-linear-gradient",
  "repeating-radial-gradient",
  "repeating-conic-gradient",
  "translate",
  "translatex",
  "translatey",
  "translatez",
  "translate3d",
  "rotate",
  "rotatex",
  "rotatey",
  "rotatez",
  "rotate3d",
  "scale",
  "scalex",
  "scaley",
  "scalez",
  "scale3d",
  "skew",
  "skewx",
  "skewy",
  "matrix",
  "matrix3d",
  "perspective",
  "cubic-bezier",
  "steps",
  "minmax",
  "repeat",
  "fit-content",
  "blur",
  "brightness",
  "contrast",
  "drop-shadow",
  "grayscale",
  "hue-rotate",
  "invert",
  "opacity",
  "saturate",
  "sepia",
  "inset",
  "circle",
  "ellipse",
  "polygon",
  "rect",
  "local",
  "format",
  "not",
  "and",
  "or",
  "selector"
])

const POSITIONS = new Set(["static", "relative", "absolute", "sticky", "inherit", "initial", "unset", "revert"])

/** At-rules kept, with a block of rules (or, for font-face, of declarations). */
const BLOCK_AT_RULES = new Set(["media", "supports", "container", "layer", "keyframes", "-webkit-keyframes"])

/** What sanitizing CSS gives: the kept CSS (possibly empty) and what was dropped, in words. */
export interface SanitizedCss {
  readonly css: string
  readonly warnings: ReadonlyArray<string>
}

const DATA_IMAGE_URL = /^data:image\/(?:png|jpeg|gif|webp)(?:;[a-z0-9=._-]+)*(?:;base64)?,[A-Za-z0-9+/=%._~-]*$/i

/** Why a text (selector, at-rule parameters, value) must go, or undefined. */
const textProblem = (text: string): string | undefined => {
  if (text.includes("\\")) return "CSS escapes"
  if (text.includes("<")) return "a \"<\""
  if (text.includes("/*")) return "a comment"
  if (/(?:java|vb)script\s*:/i.test(text)) return "a script URL"
  if (/@import/i.test(text)) return "@import"
  return undefined
}

/** Why a declaration's value must go, or undefined: its functions, its `url()`s. */
const valueProblem = (value: string): string | undefined => {
  if (value.length > VALUE_MAX_CHARS) return `a value longer than ${VALUE_MAX_CHARS} characters`
  const problem = textProblem(value)
  if (problem !== undefined) return problem
  for (const match of value.matchAll(/([-\w]*)\(/g)) {
    const name = match[1]!.toLowerCase()
    if (!ALLOWED_FUNCTIONS.has(name)) return `${name}()`
    if (name === "url") {
      const argument = /^\s*(["']?)([^"'()\s]*)\1\s*\)/.exec(value.slice(match.index + match[0].length))
      const target = argument?.[2]
      if (target === undefined || !(DATA_IMAGE_URL.test(target) || /^#[\w-]*$/.test(target))) {
        return "a url() that is not a data: PNG, JPEG, GIF or WebP image or a #fragment"
      }
    }
  }
  return undefined
}

/** One declaration as kept (`color:red!important`), or a reason to drop it. */
const declaration = (
  prop: string,
  value: string,
  important: boolean,
  fontFace: boolean
): { readonly css: string } | { readonly problem: string } => {
  if (!PROPERTY.test(prop)) return { problem: `property ${display(prop)}` }
  const name = prop.toLowerCase()
  if (BINDING_PROPERTIES.has(name)) return { problem: `property ${name}` }
  const trimmed = value.trim()
  const problem = valueProblem(trimmed)
  if (problem !== undefined) return { problem: `${display(prop)} with ${problem}` }
  // No overlay over the whole window: `position` takes its keywords only (not `fixed`, nor a var() that is).
  if (name === "position" && !POSITIONS.has(trimmed.toLowerCase())) {
    return { problem: `position: ${display(trimmed)}` }
  }
  if (fontFace && name === "src" && /url\(/i.test(trimmed)) return { problem: "a @font-face src that loads a file" }
  if (trimmed === "" && !prop.startsWith("--")) return { problem: `empty ${display(prop)}` }
  return { css: `${prop}:${trimmed}${important ? "!important" : ""}` }
}

const display = (text: string) => text.slice(0, 40).replace(/[^\w:.@()# -]/g, "?") + (text.length > 40 ? "…" : "")

/** Sanitizes the CSS of a `<style>` element. */
export const sanitizeStylesheet = (css: string): SanitizedCss => {
  const warnings: Array<string> = []
  if (css.length > STYLE_ELEMENT_MAX_CHARS) {
    return { css: "", warnings: [`removed a <style> element longer than ${STYLE_ELEMENT_MAX_CHARS} characters`] }
  }
  // Deep nesting costs the parser time for nothing it would keep: measured first, in one pass.
  if (braceDepth(css) > BLOCK_DEPTH_MAX) {
    return { css: "", warnings: [`removed a <style> element nested deeper than ${BLOCK_DEPTH_MAX} blocks`] }
  }
  let root: import("postcss").Root
  try {
    root = postcss.parse(css)
  } catch {
    return { css: "", warnings: ["removed a <style> element whose CSS could not be parsed"] }
  }
  const drop = (what: string) => warnings.push(`removed CSS ${what}`)
  const out = block(root, 0, false, drop)
  return { css: out, warnings: dedupe(warnings) }
}

/** The deepest `{` nesting of CSS (braces in strings and comments count too: an overestimate is safe). */
const braceDepth = (css: string) => {
  let depth = 0
  let deepest = 0
  for (let i = 0; i < css.length; i++) {
    const code = css.charCodeAt(i)
    if (code === 123) deepest = Math.max(deepest, ++depth)
    else if (code === 125 && depth > 0) depth--
  }
  return deepest
}

/** The kept content of a block (the root, a rule, an at-rule), written canonically. */
const block = (container: Container, depth: number, fontFace: boolean, drop: (what: string) => void): string => {
  const parts: Array<string> = []
  for (const node of container.nodes ?? []) {
    if (node.type === "decl" && container.type === "root") {
      drop("declaration outside a rule")
      continue
    }
    const kept = child(node, depth, fontFace, drop)
    // Declarations end with `;`; rules and at-rules end with their block.
    if (kept !== undefined) parts.push(node.type === "decl" ? `${kept};` : kept)
  }
  return parts.join(container.type === "root" ? "\n" : "")
}

const child = (node: CssNode, depth: number, fontFace: boolean, drop: (what: string) => void): string | undefined => {
  switch (node.type) {
    case "comment":
      return undefined
    case "decl": {
      const kept = declaration(node.prop, node.value, node.important === true, fontFace)
      if ("problem" in kept) {
        drop(`declaration (${kept.problem})`)
        return undefined
      }
      return kept.css
    }
    case "rule": {
      if (depth >= BLOCK_DEPTH_MAX) return void drop(`blocks nested deeper than ${BLOCK_DEPTH_MAX}`)
      const selector = collapseWhitespace(node.selector).trim()
      const problem = textProblem(selector) ?? (/[{};]/.test(selector) ? "a brace" : undefined)
      if (selector === "" || problem !== undefined) return void drop(`rule (a selector with ${problem ?? "nothing"})`)
      const body = block(node, depth + 1, false, drop)
      return body === "" ? undefined : `${selector}{${body}}`
    }
    case "atrule": {
      const name = node.name.toLowerCase()
      const params = collapseWhitespace(node.params).trim()
      if (depth >= BLOCK_DEPTH_MAX) return void drop(`blocks nested deeper than ${BLOCK_DEPTH_MAX}`)
      if (name === "font-face") {
        if (node.nodes === undefined || params !== "") return void drop("@font-face")
        const body = block(node, depth + 1, true, drop)
        // A face whose source was dropped names no font: the whole rule goes.
        return /(?:^|;)src:/i.test(body) ? `@font-face{${body}}` : void drop("@font-face without a local src")
      }
      if (!BLOCK_AT_RULES.has(name)) return void drop(`@${display(name)} rule`)
      const problem = textProblem(params) ?? (/[{};]/.test(params) ? "a brace" : undefined) ??
        (name === "layer" ? undefined : valueProblem(params))
      if (problem !== undefined) return void drop(`@${name} rule (${problem})`)
      if (node.nodes === undefined) return name === "layer" && params !== "" ? `@layer ${params};` : undefined
      const body = block(node, depth + 1, false, drop)
      // Rules inside are joined by newlines, declarations (CSS nesting) by semicolons, as at the top.
      return `@${name}${params === "" ? "" : ` ${params}`}{${body}}`
    }
  }
}

/** Sanitizes a `style` attribute (a list of declarations); undefined when nothing is kept. */
export const sanitizeStyleAttribute = (value: string): SanitizedCss & { readonly css: string } => {
  if (value.length > STYLE_ATTRIBUTE_MAX_CHARS) {
    return { css: "", warnings: [`removed a style attribute longer than ${STYLE_ATTRIBUTE_MAX_CHARS} characters`] }
  }
  let root: import("postcss").Root
  try {
    root = postcss.parse(value)
  } catch {
    return { css: "", warnings: ["removed a style attribute whose CSS could not be parsed"] }
  }
  const warnings: Array<string> = []
  const parts: Array<string> = []
  for (const node of root.nodes) {
    if (node.type === "comment") continue
    if (node.type !== "decl") {
      warnings.push("removed CSS rules from a style attribute (it holds declarations only)")
      continue
    }
    const kept = declaration(node.prop, node.value, node.important === true, false)
    if ("problem" in kept) warnings.push(`removed CSS declaration (${kept.problem})`)
    else parts.push(kept.css)
  }
  return { css: parts.join(";"), warnings: dedupe(warnings) }
}

const dedupe = (warnings: ReadonlyArray<string>) => [...new Set(warnings)].slice(0, 20)
