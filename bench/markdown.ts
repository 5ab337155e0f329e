/**
 * bench/markdown: how long renderMarkdown takes on 1 MiB of hostile Markdown (inputs a parser is slow on: nested
 * or unmatched emphasis, bracket and backtick floods, many small quotes and list items, …) and on 1 MiB and 64 KiB
 * of ordinary Markdown. Rendering is synchronous, so each figure is also how long it holds its thread (a content
 * worker's: it runs on every push and every first read of a Markdown page). Each input is rendered once to warm
 * up, then RUNS times; prints the median and the worst run, what was shown as plain text, and marks inputs over
 * the target. Then the two parsers alone on the same ordinary and marker-dense documents, side by side: the one
 * Dock used before issue 15 (micromark through mdast-util-from-markdown with GFM) and markdown-it
 * (MarkdownParse.ts), each parsing the whole document into the same mdast tree; and what a push does
 * (readMarkdown: no HTML). Asserts nothing.
 */
import { fromMarkdown } from "mdast-util-from-markdown"
import { gfmFromMarkdown } from "mdast-util-gfm"
import { gfm } from "micromark-extension-gfm"
import { parseMarkdown } from "../packages/domain/src/Content/MarkdownParse.ts"
import { readMarkdown, renderMarkdown } from "../packages/domain/src/Content/MarkdownRender.ts"
import { ordinary } from "../packages/domain/src/Content/MarkdownSamples.ts"
import { againstTarget, fill, KiB, loadAverage, median, MiB, time } from "./support/Bench.ts"

const RUNS = 3
const TARGET_MS = 2000

const half = (a: string, b: string) => fill(a, MiB / 2) + fill(b, MiB / 2)
const numbered = (line: (i: number) => string) => {
  const lines: Array<string> = []
  let length = 0
  for (let i = 0; length < MiB; i++) {
    const next = line(i)
    lines.push(next)
    length += next.length
  }
  return lines.join("").slice(0, MiB)
}

const hostile: Record<string, string> = {
  "nested emphasis *a **a … a** a*": half("*a **a ", " a** a*"),
  "emphasis *a **a ***a": numbered((i) => `${"*".repeat((i % 3) + 1)}a `),
  "unmatched closers a*": fill("a* "),
  "unmatched closers a_": fill("a_ "),
  "mismatched *a_": fill("*a_ "),
  "*_ runs": fill("*_"),
  "a**b c* (rule of 3)": "a**b" + fill("c* ").slice(4),
  "strikethrough ~~a ~a … a~ a~~": half("~~a ~a ", " a~ a~~"),
  "[ flood": fill("["),
  "![ flood": fill("!["),
  "a] closers": fill("a]"),
  "nested brackets [[[a]]]": half("[", "]"),
  "[ (]( pattern": fill("[ (]("),
  "[a][ flood": fill("[a]["),
  "[[x]] wikilinks, one paragraph": fill("[[x]] "),
  "[[x]] wikilinks, one per line": fill("[[x]]\n"),
  "[[x]] wikilinks, one per paragraph": fill("[[x]]\n\n"),
  "distinct link definitions and references": numbered((i) => `[d${i}]: /u${i}\n`).slice(0, MiB / 2) + "\n" +
    numbered((i) => `[d${i % 20_000}] `).slice(0, MiB / 2 - 1),
  "footnote definitions and references": numbered((i) => `x[^f${i % 10_000}] `).slice(0, MiB / 2) + "\n\n" +
    numbered((i) => `[^f${i}]: note\n\n`).slice(0, MiB / 2 - 2),
  "backtick runs of growing length": numbered((i) => "e" + "`".repeat((i % 64) + 1)),
  "<!-- unclosed comments": "</" + fill("<!--").slice(2),
  "< flood": fill("<a "),
  "table, 100k rows": "| a | b |\n|---|---|\n" + fill("| x | y |\n").slice(20),
  "table, one wide row": ["a", "-", "b"].map((cell) => `|${cell}`.repeat(MiB / 6) + "|\n").join(""),
  "- a (list items)": fill("- a\n"),
  "> a (quotes between blank lines)": fill("> a\n\n"),
  "- > a (quotes in a list)": fill("- > a\n\n"),
  "a (paragraphs)": fill("a\n\n"),
  "\\ and & runs": fill("\\&amp;&"),
  "www. autolinks": fill("www.a.b "),
  "mixed markers": fill("*a [b _c `d ~e <f ![g [[h &i; \\j |k [^l **m __n ~~o "),
  "deep nesting > > > (container prefix guard)": fill(">")
}

const options = { resolveWikilink: (target: string) => (target === "data page" ? { href: "/a/data" } : undefined) }

const kib = (length: number) => (length / KiB).toFixed(0).padStart(5)

/** What was shown as plain text, from the warnings. */
const summary = (warnings: ReadonlyArray<string>) =>
  warnings
    .map((warning) =>
      warning.includes("too many emphasis, link or code markers")
        ? `crowded paragraph as text (${/lines? [\d-]+/.exec(warning)?.[0]})`
        : warning.includes("from line")
        ? `as text ${warning.slice(warning.indexOf("from line"), warning.indexOf(" of the body"))} on`
        : warning.includes("nested too deeply")
        ? "all as text (nesting)"
        : warning.includes("raw HTML")
        ? "raw HTML dropped"
        : warning.slice(0, 40)
    )
    .join("; ")

const measure = (label: string, input: string, target?: number) => {
  let rendered = renderMarkdown(input, options)
  const ms: Array<number> = []
  for (let i = 0; i < RUNS; i++) ms.push(time(() => (rendered = renderMarkdown(input, options))))
  const worst = Math.max(...ms)
  console.log(
    `${label.padEnd(52)} median ${median(ms).toFixed(0).padStart(5)} ms  worst ${worst.toFixed(0).padStart(5)} ms   ` +
      `in ${kib(input.length)} KiB  out ${kib(rendered.html.length)} KiB${againstTarget(worst, target)}  ` +
      `${summary(rendered.warnings)}`
  )
}

console.log(`load average (1/5/15 min) at start: ${loadAverage({ all: true })}`)
console.log(`${RUNS} runs each after one warm-up; hostile inputs are 1 MiB, target ${TARGET_MS} ms`)
for (const [label, input] of Object.entries(hostile)) measure(`hostile: ${label}`, input, TARGET_MS)
measure("ordinary Markdown, 64 KiB", ordinary(64 * KiB))
measure("ordinary Markdown, 1 MiB", ordinary(MiB))

/** Paragraphs in which every word is marked up (emphasis, strong, code, links, strikethrough, wikilinks). */
const markerDense = (size: number) => {
  const marks = [
    (w: string) => `*${w}*`,
    (w: string) => `**${w}**`,
    (w: string) => `_${w}_`,
    (w: string) => `\`${w}\``,
    (w: string) => `[${w}](/${w})`,
    (w: string) => `~~${w}~~`,
    (w: string) => `[[${w}]]`,
    (w: string) => `***${w}***`
  ]
  const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split(" ")
  const paragraphs: Array<string> = []
  for (let length = 0, i = 0; length < size; i++) {
    const paragraph = Array.from(
      { length: 30 },
      (_, j) => marks[(i + j) % marks.length]!(words[(i * 7 + j) % words.length]!)
    )
      .join(" ")
    paragraphs.push(paragraph)
    length += paragraph.length + 2
  }
  return paragraphs.join("\n\n").slice(0, size)
}

const micromark = (body: string) => fromMarkdown(body, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] })

const side = (label: string, input: string) => {
  const figures = [
    ["micromark (before)", () => micromark(input)],
    ["markdown-it", () => parseMarkdown(input)],
    ["readMarkdown (push)", () => readMarkdown(input)],
    ["renderMarkdown (read)", () => renderMarkdown(input, options)]
  ] as const
  const cells = figures.map(([name, run]) => {
    run()
    const ms: Array<number> = []
    for (let i = 0; i < RUNS; i++) ms.push(time(run))
    return `${name} ${median(ms).toFixed(0).padStart(5)} ms`
  })
  console.log(`${label.padEnd(36)} ${cells.join("   ")}`)
}

console.log(
  `\nthe parsers alone, whole document into mdast (median of ${RUNS} after one warm-up), and a push and a read:`
)
side(`ordinary Markdown, 64 KiB`, ordinary(64 * KiB))
side(`ordinary Markdown, 1 MiB`, ordinary(MiB))
side(`marker-dense Markdown, 50 KB`, markerDense(50_000))
side(`marker-dense Markdown, 1 MiB`, markerDense(MiB))
console.log(`\nload average (1/5/15 min) at end: ${loadAverage({ all: true })}`)
