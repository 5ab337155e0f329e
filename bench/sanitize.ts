/**
 * bench/sanitize: how long the one HTML sanitizer takes on 1 MiB of hostile, deeply nested HTML (security.md:
 * "rejected or sanitized within 500 ms") and on 1 MiB of ordinary HTML, and how long htmlToText takes on the
 * result. Sanitizing is synchronous, so each figure is also how long it holds the event loop. Each input is
 * sanitized once to warm up, then RUNS times; prints the median and the worst run, and marks hostile inputs over
 * the target. Asserts nothing.
 */
import { htmlToText, sanitizeHtml } from "../packages/domain/src/Content/HtmlSanitizer.ts"
import { againstTarget, fill, median, MiB, time } from "./support/Bench.ts"
import { ordinaryHtml } from "./support/HtmlSamples.ts"

const RUNS = 7
const TARGET_MS = 500

const hostile: Record<string, string> = {
  "nested <div>": fill("<div>"),
  "nested <div> then stray end tags": fill("<div>").slice(0, MiB / 2) + fill("</x>").slice(0, MiB / 2),
  "nested unknown elements": fill("<x>"),
  "nested inline <a><b>": fill("<a><b>"),
  "nested handlers, svg, tables, bad URLs": fill(
    `<div onclick=alert(1)><a href="jav&#x09;ascript:alert(1)"><svg><style><img src=x onerror=alert(1)></style></svg>` +
      `<span style="background:url(javascript:1)"><table><tr><td><noscript><p title="</noscript><img src=x>"><b>`
  ),
  "one tag with 500k attributes": `<div ${fill("a ")}>`,
  "comments": fill("<!--x-->"),
  "entities": fill("&amp;&lt;&#106;")
}

const ordinary = ordinaryHtml(MiB)

const measure = (label: string, input: string, target?: number) => {
  let sanitized = sanitizeHtml(input)
  const sanitizeMs: Array<number> = []
  const textMs: Array<number> = []
  for (let i = 0; i < RUNS; i++) {
    sanitizeMs.push(time(() => (sanitized = sanitizeHtml(input))))
    textMs.push(time(() => htmlToText(sanitized.html)))
  }
  const worst = Math.max(...sanitizeMs)
  console.log(
    `${label.padEnd(48)} sanitize median ${median(sanitizeMs).toFixed(0).padStart(5)} ms  worst ` +
      `${worst.toFixed(0).padStart(5)} ms   htmlToText median ${median(textMs).toFixed(0).padStart(5)} ms   ` +
      `out ${(sanitized.html.length / 1024).toFixed(0).padStart(5)} KiB${againstTarget(worst, target)}`
  )
}

console.log(`1 MiB inputs, ${RUNS} runs each after one warm-up; hostile target ${TARGET_MS} ms`)
for (const [label, input] of Object.entries(hostile)) measure(`hostile: ${label}`, input, TARGET_MS)
measure("ordinary HTML", ordinary)
