/**
 * The process's counters, printed for `GET /metrics` in the Prometheus text format (version 0.0.4):
 * HTTP requests by route family and status class, MCP tool calls by tool and outcome, latency histograms of both,
 * rate-limit refusals, the database pool, and the content workers (render deadlines hit). Everything is kept in
 * memory by this server: one instance's view, reset when it restarts (Prometheus sums instances and handles resets).
 * The route that serves them is http/MetricsHttp.ts.
 *
 * Recording is on the hot path of every request and tool call, so it is a few array or map updates: no label
 * strings are built per call (the route family is an index, the tool's entry is found by its name), and the text
 * is only assembled when /metrics is read.
 */
import { Option } from "effect"

/** Latency buckets in seconds (upper bounds; +Inf is implied). */
export const LATENCY_BUCKETS: ReadonlyArray<number> = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Route families: a small fixed set, so a scan of odd URLs cannot grow the label space. */
export const ROUTE_FAMILIES = [
  "mcp",
  "mcp_public",
  "admin",
  "agent_auth",
  "artifacts",
  "images",
  "discovery",
  "health",
  "metrics",
  "other"
] as const
export type RouteFamily = (typeof ROUTE_FAMILIES)[number]

const familyIndex = (url: string): number => {
  if (url.startsWith("/mcp")) return url.startsWith("/mcp/public") ? 1 : 0
  if (url.startsWith("/admin")) return 2
  if (url.startsWith("/agent/auth")) return 3
  if (url.startsWith("/a/") || url.startsWith("/b/") || url.startsWith("/artifacts/") || url.startsWith("/s/")) return 4
  if (url.startsWith("/images/")) return 5
  if (url.startsWith("/.well-known/") || url.startsWith("/auth.md") || url.startsWith("/docs/")) return 6
  if (url.startsWith("/healthz") || url.startsWith("/readyz")) return 7
  if (url === "/metrics" || url.startsWith("/metrics?")) return 8
  return 9
}

const STATUS_CLASSES = ["1xx", "2xx", "3xx", "4xx", "5xx"] as const
const statusClassIndex = (status: number) => Math.min(4, Math.max(0, Math.floor(status / 100) - 1))

/** Observation counts per bucket (not cumulative: the text adds them up), with their sum and count. */
class Histogram {
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1)
  sum = 0
  count = 0
  observe(seconds: number) {
    let at = 0
    while (at < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[at]!) at++
    this.buckets[at]! += 1
    this.sum += seconds
    this.count += 1
  }
}

interface ToolEntry {
  readonly latency: Histogram
  /** Calls by outcome: "ok" or the error code. */
  readonly outcomes: Map<string, number>
}

export interface ServerMetrics {
  /** One answered HTTP request (429s also count as rate-limit refusals). */
  readonly observeRequest: (url: string, status: number, seconds: number) => void
  /** One MCP tool call: "ok" or its error code (rate_limited also counts as a rate-limit refusal). */
  readonly observeToolCall: (tool: string, outcome: string, seconds: number) => void
  /** The counters in the Prometheus text format, with the gauges read now. */
  readonly text: (gauges: Gauges) => string
}

export interface Gauges {
  readonly pool: Option.Option<
    { readonly total: number; readonly idle: number; readonly waiting: number; readonly max: number }
  >
  readonly render: Option.Option<{
    readonly started: Readonly<Record<string, number>>
    readonly stoppedByReason: Readonly<Record<string, number>>
  }>
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

const number = (value: number) => (Number.isFinite(value) ? String(value) : value > 0 ? "+Inf" : "-Inf")

const header = (lines: Array<string>, name: string, type: string, help: string) => {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
}

const histogramLines = (lines: Array<string>, name: string, labels: string, histogram: Histogram) => {
  let cumulative = 0
  for (let at = 0; at <= LATENCY_BUCKETS.length; at++) {
    cumulative += histogram.buckets[at]!
    const le = at < LATENCY_BUCKETS.length ? String(LATENCY_BUCKETS[at]) : "+Inf"
    lines.push(`${name}_bucket{${labels},le="${le}"} ${cumulative}`)
  }
  lines.push(`${name}_sum{${labels}} ${number(histogram.sum)}`, `${name}_count{${labels}} ${histogram.count}`)
}

export const makeServerMetrics = (): ServerMetrics => {
  const requests = new Float64Array(ROUTE_FAMILIES.length * STATUS_CLASSES.length)
  const requestLatency = ROUTE_FAMILIES.map(() => new Histogram())
  const tools = new Map<string, ToolEntry>()
  let httpRateLimited = 0
  let toolRateLimited = 0

  const observeRequest = (url: string, status: number, seconds: number) => {
    const family = familyIndex(url)
    requests[family * STATUS_CLASSES.length + statusClassIndex(status)]! += 1
    requestLatency[family]!.observe(seconds)
    if (status === 429) httpRateLimited += 1
  }

  const observeToolCall = (tool: string, outcome: string, seconds: number) => {
    let entry = tools.get(tool)
    if (entry === undefined) {
      entry = { latency: new Histogram(), outcomes: new Map() }
      tools.set(tool, entry)
    }
    entry.latency.observe(seconds)
    entry.outcomes.set(outcome, (entry.outcomes.get(outcome) ?? 0) + 1)
    if (outcome === "rate_limited") toolRateLimited += 1
  }

  const text = (gauges: Gauges) => {
    const lines: Array<string> = []
    header(lines, "dock_http_requests_total", "counter", "HTTP requests answered, by route family and status class.")
    ROUTE_FAMILIES.forEach((route, family) =>
      STATUS_CLASSES.forEach((status, statusClass) => {
        const count = requests[family * STATUS_CLASSES.length + statusClass]!
        if (count > 0) lines.push(`dock_http_requests_total{route="${route}",status="${status}"} ${count}`)
      })
    )
    header(
      lines,
      "dock_http_request_duration_seconds",
      "histogram",
      "Time to answer an HTTP request (until its response starts), by route family."
    )
    ROUTE_FAMILIES.forEach((route, family) => {
      const histogram = requestLatency[family]!
      if (histogram.count > 0) {
        histogramLines(lines, "dock_http_request_duration_seconds", `route="${route}"`, histogram)
      }
    })
    header(lines, "dock_mcp_tool_calls_total", "counter", "MCP tool calls, by tool and outcome (ok or the error code).")
    for (const [tool, entry] of tools) {
      for (const [outcome, count] of entry.outcomes) {
        lines.push(`dock_mcp_tool_calls_total{tool="${escapeLabel(tool)}",outcome="${escapeLabel(outcome)}"} ${count}`)
      }
    }
    header(lines, "dock_mcp_tool_call_duration_seconds", "histogram", "Time to answer an MCP tool call, by tool.")
    for (const [tool, entry] of tools) {
      histogramLines(lines, "dock_mcp_tool_call_duration_seconds", `tool="${escapeLabel(tool)}"`, entry.latency)
    }
    header(
      lines,
      "dock_rate_limit_refusals_total",
      "counter",
      "Calls refused with rate_limited: HTTP 429 answers, and tool calls answered rate_limited."
    )
    lines.push(`dock_rate_limit_refusals_total{surface="http"} ${httpRateLimited}`)
    lines.push(`dock_rate_limit_refusals_total{surface="mcp_tool"} ${toolRateLimited}`)
    if (Option.isSome(gauges.pool)) {
      const pool = gauges.pool.value
      header(lines, "dock_db_pool_connections", "gauge", "Database connections of this process's pool, by state.")
      lines.push(`dock_db_pool_connections{state="in_use"} ${pool.total - pool.idle}`)
      lines.push(`dock_db_pool_connections{state="idle"} ${pool.idle}`)
      header(lines, "dock_db_pool_waiting", "gauge", "Queries waiting for a free database connection.")
      lines.push(`dock_db_pool_waiting ${pool.waiting}`)
      header(lines, "dock_db_pool_max_connections", "gauge", "The pool's size (DOCK_DB_POOL_SIZE; 1 embedded).")
      lines.push(`dock_db_pool_max_connections ${pool.max}`)
    }
    if (Option.isSome(gauges.render)) {
      const render = gauges.render.value
      header(lines, "dock_render_jobs_started_total", "counter", "Content jobs handed to a render worker, by job.")
      for (const [job, count] of Object.entries(render.started)) {
        lines.push(`dock_render_jobs_started_total{job="${escapeLabel(job)}"} ${count}`)
      }
      header(
        lines,
        "dock_render_jobs_stopped_total",
        "counter",
        "Content jobs whose worker was stopped, by reason (deadline: DOCK_RENDER_DEADLINE was hit)."
      )
      for (const [reason, count] of Object.entries(render.stoppedByReason)) {
        lines.push(`dock_render_jobs_stopped_total{reason="${escapeLabel(reason)}"} ${count}`)
      }
    }
    header(lines, "process_resident_memory_bytes", "gauge", "Resident memory of this process.")
    lines.push(`process_resident_memory_bytes ${process.memoryUsage.rss()}`)
    return `${lines.join("\n")}\n`
  }

  return { observeRequest, observeToolCall, text }
}
