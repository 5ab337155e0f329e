/**
 * bench/metrics: what recording costs on the hot path, in nanoseconds per observation, beside references
 * measured in the same run: the two `performance.now()` calls a tool call's timing takes, and a bare counter
 * in a Map (the least a per-tool counter can cost). Also the time to build the /metrics text with every tool of
 * the catalogue observed under several outcomes. CPU-bound and in-process: it needs no database. Asserts nothing.
 *
 * BENCH_ITERATIONS (per figure, default 2,000,000), BENCH_ROUNDS (default 5; the best round is printed, the
 * least disturbed by other load).
 */
import { catalogue } from "@dock/mcp"
import { Option } from "effect"
import { makeServerMetrics } from "../packages/server/src/Metrics.ts"
import { loadAverage, machine } from "./support/Bench.ts"

const iterations = Number(process.env["BENCH_ITERATIONS"] ?? 2_000_000)
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 5)

/** The best of `rounds` rounds of `iterations` calls, in ns per call. */
const measure = (run: (i: number) => void) => {
  let best = Infinity
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) run(i)
    best = Math.min(best, Number(process.hrtime.bigint() - started) / iterations)
  }
  return best
}

const metrics = makeServerMetrics()
const urls = ["/mcp", "/mcp/public", "/a/some-page", "/healthz", "/admin/users", "/images/x.png"]
const statuses = [200, 200, 200, 404, 429, 500]
const tools = catalogue.map((tool) => tool.name)
const outcomes = ["ok", "ok", "ok", "validation_error", "not_found", "rate_limited"]
const counters = new Map<string, number>()
let sink = 0

const figures: Array<[string, number]> = [
  [
    "reference: two performance.now() calls",
    measure(() => {
      sink += performance.now() - performance.now()
    })
  ],
  [
    "reference: a counter in a Map (get + set)",
    measure((i) => {
      const tool = tools[i % tools.length]!
      counters.set(tool, (counters.get(tool) ?? 0) + 1)
    })
  ],
  [
    "observeRequest (family, status class, histogram)",
    measure((i) => {
      metrics.observeRequest(urls[i % urls.length]!, statuses[i % statuses.length]!, (i % 1000) / 10_000)
    })
  ],
  [
    "observeToolCall (tool, outcome, histogram)",
    measure((i) => {
      metrics.observeToolCall(tools[i % tools.length]!, outcomes[i % outcomes.length]!, (i % 1000) / 10_000)
    })
  ]
]

const gauges = {
  pool: Option.some({ total: 10, idle: 7, waiting: 0, max: 10 }),
  render: Option.some({ started: { markdownPage: 12 }, stoppedByReason: { deadline: 1, memory: 0, crashed: 0 } })
}
const textRounds = 200
const started = process.hrtime.bigint()
let length = 0
for (let i = 0; i < textRounds; i++) length = metrics.text(gauges).length
const textMs = Number(process.hrtime.bigint() - started) / textRounds / 1e6

console.log(`bench/metrics — ${machine()}, load ${loadAverage({ all: true })}`)
console.log(`${iterations.toLocaleString("en")} calls per figure, best of ${rounds} rounds`)
for (const [name, ns] of figures) console.log(`  ${name.padEnd(52)} ${ns.toFixed(1).padStart(7)} ns/call`)
console.log(
  `  /metrics text, ${tools.length} tools × ${outcomes.length - 2} outcomes observed: ${textMs.toFixed(2)} ms, ${
    (length / 1024).toFixed(0)
  } KiB`
)
if (sink === 42) console.log("")
