/**
 * Issue 19, item 6: GET /metrics over the wire. The text parses as the Prometheus exposition format, it is refused
 * without the metrics or admin token (401 in the error envelope), and its counters move by exactly the requests
 * and tool calls made: successes, a tool error under its code, an HTTP rate-limit refusal, a render deadline hit.
 */
import { ordinary } from "@dock/domain/testing"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { bearer, fetchReply } from "./support/Http.ts"
import { awayFromWindowEnd, register } from "./support/Identity.ts"
import { actor, call, connect, ok, rawToolCall, refused } from "./support/McpTools.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const METRICS_TOKEN = "metrics-scraper-token-for-the-test"
const PUBLIC_PER_MINUTE = 2

const MetricsServer = Layer.scoped(
  TestServer,
  startTestServer({
    DOCK_METRICS_TOKEN: METRICS_TOKEN,
    DOCK_RENDER_DEADLINE: "40 millis",
    DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE: String(PUBLIC_PER_MINUTE)
  })
)

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/g

/**
 * The Prometheus text format (0.0.4), strictly: every line a HELP, a TYPE or a sample; every sample of a family
 * whose TYPE came first; histogram buckets cumulative up to +Inf, which equals the count.
 */
const parse = (text: string): ReadonlyArray<Sample> => {
  expect(text.endsWith("\n")).toBe(true)
  const types = new Map<string, string>()
  const samples: Array<Sample> = []
  for (const line of text.slice(0, -1).split("\n")) {
    if (line.startsWith("# HELP ")) continue
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type !== null) {
      expect(types.has(type[1]!), `TYPE twice for ${type[1]}`).toBe(false)
      types.set(type[1]!, type[2]!)
      continue
    }
    const sample = SAMPLE.exec(line)
    expect(sample, `not a sample line: ${line}`).not.toBeNull()
    const [, name, labelText, valueText] = sample!
    const labels: Record<string, string> = {}
    if (labelText !== undefined) {
      const matched = [...labelText.matchAll(LABEL)]
      expect(matched.map((match) => match[0]).join(""), line).toBe(labelText)
      for (const match of matched) labels[match[1]!] = match[2]!
    }
    const value = valueText === "+Inf" ? Infinity : Number(valueText)
    expect(Number.isNaN(value), line).toBe(false)
    const family = types.has(name!) ? name! : name!.replace(/_(bucket|sum|count)$/, "")
    expect(types.has(family), `no TYPE before ${line}`).toBe(true)
    if (family !== name) expect(types.get(family)).toBe("histogram")
    samples.push({ name: name!, labels, value })
  }
  // Histograms: per series, buckets never decrease and the +Inf bucket is the count.
  for (const [family, type] of types) {
    if (type !== "histogram") continue
    const series = new Map<string, Array<Sample>>()
    for (const sample of samples.filter((s) => s.name === `${family}_bucket`)) {
      const { le: _le, ...rest } = sample.labels
      const key = JSON.stringify(rest)
      series.set(key, [...(series.get(key) ?? []), sample])
    }
    for (const [key, buckets] of series) {
      for (let at = 1; at < buckets.length; at++) {
        expect(buckets[at]!.value).toBeGreaterThanOrEqual(buckets[at - 1]!.value)
      }
      expect(buckets.at(-1)!.labels["le"]).toBe("+Inf")
      const count = samples.find((s) => s.name === `${family}_count` && JSON.stringify(s.labels) === key)
      expect(count?.value).toBe(buckets.at(-1)!.value)
    }
  }
  return samples
}

const scrape = (token: string = METRICS_TOKEN) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const reply = yield* fetchReply(`${server.url}/metrics`, { headers: bearer(token) })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8")
    return parse(reply.text)
  })

/** The value of the one sample with this name and these labels (0 when it is not there yet). */
const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) => {
  const found = samples.filter((sample) =>
    sample.name === name && Object.keys(labels).length === Object.keys(sample.labels).length &&
    Object.entries(labels).every(([key, value]) => sample.labels[key] === value)
  )
  expect(found.length).toBeLessThanOrEqual(1)
  return found[0]?.value ?? 0
}

layer(MetricsServer, { excludeTestServices: true, timeout: 120_000 })("GET /metrics", (it) => {
  it.effect("is refused without the metrics or the admin token: 401 in the error envelope", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (const headers of [{}, bearer("wrong-token"), { authorization: `Basic ${btoa(`x:${METRICS_TOKEN}`)}` }]) {
        const reply = yield* fetchReply(`${server.url}/metrics`, { headers })
        expect(reply.status).toBe(401)
        expect(reply.json.error).toMatchObject({ code: "unauthorized", status: 401 })
        expect(reply.headers["www-authenticate"]).toBe(`Bearer realm="dock-metrics"`)
        expect(reply.text).not.toContain("dock_http_requests_total")
      }
      // The metrics token and the admin token both read it.
      yield* scrape(METRICS_TOKEN)
      yield* scrape(server.adminToken)
    }))

  it.effect("counts HTTP requests by route family and status class, with their latency", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const before = yield* scrape()
      for (let i = 0; i < 3; i++) expect((yield* fetchReply(`${server.url}/healthz`)).status).toBe(200)
      expect((yield* fetchReply(`${server.url}/no-such-route`)).status).toBe(404)
      const after = yield* scrape()
      const delta = (name: string, labels: Record<string, string>) =>
        valueOf(after, name, labels) - valueOf(before, name, labels)
      expect(delta("dock_http_requests_total", { route: "health", status: "2xx" })).toBe(3)
      expect(delta("dock_http_requests_total", { route: "other", status: "4xx" })).toBe(1)
      expect(delta("dock_http_request_duration_seconds_count", { route: "health" })).toBe(3)
      expect(delta("dock_http_request_duration_seconds_bucket", { route: "health", le: "+Inf" })).toBe(3)
      // The first scrape itself was answered (and counted) before the second one.
      expect(delta("dock_http_requests_total", { route: "metrics", status: "2xx" })).toBe(1)
    }))

  it.scoped("counts tool calls by tool and outcome: ok, and an error under its code", () =>
    Effect.gen(function*() {
      const { client, token } = yield* actor("v2 modern")
      const before = yield* scrape()
      for (let i = 0; i < 3; i++) ok(yield* call(client, "list_my_buckets", {}))
      expect(refused(yield* call(client, "list_my_buckets", { no_such_argument: 1 })).error.code).toBe(
        "validation_error"
      )
      // Two raw tools/call POSTs: two /mcp requests answered 2xx, two more calls.
      for (let i = 0; i < 2; i++) {
        expect((yield* rawToolCall("/mcp", "list_my_buckets", {}, bearer(token))).status).toBe(200)
      }
      const after = yield* scrape()
      const delta = (name: string, labels: Record<string, string>) =>
        valueOf(after, name, labels) - valueOf(before, name, labels)
      expect(delta("dock_mcp_tool_calls_total", { tool: "list_my_buckets", outcome: "ok" })).toBe(5)
      expect(delta("dock_mcp_tool_calls_total", { tool: "list_my_buckets", outcome: "validation_error" })).toBe(1)
      expect(delta("dock_mcp_tool_call_duration_seconds_count", { tool: "list_my_buckets" })).toBe(6)
      expect(delta("dock_http_requests_total", { route: "mcp", status: "2xx" })).toBeGreaterThanOrEqual(6)
      // A client's call that the server does not know (no such tool) is not counted under a made-up name.
      expect(after.some((sample) => sample.labels["tool"] === "no_such_tool")).toBe(false)
    }))

  it.effect("counts rate-limit refusals: a 429 on /mcp/public", () =>
    Effect.gen(function*() {
      yield* awayFromWindowEnd("1 minute")
      const before = yield* scrape()
      const statuses: Array<number> = []
      for (let i = 0; i < PUBLIC_PER_MINUTE + 2; i++) {
        statuses.push((yield* rawToolCall("/mcp/public", "search_buckets", { query: "x" })).status)
      }
      const after = yield* scrape()
      const refusals = statuses.filter((status) => status === 429).length
      expect(refusals).toBeGreaterThanOrEqual(2)
      expect(
        valueOf(after, "dock_rate_limit_refusals_total", { surface: "http" }) -
          valueOf(before, "dock_rate_limit_refusals_total", { surface: "http" })
      ).toBe(refusals)
      expect(
        valueOf(after, "dock_http_requests_total", { route: "mcp_public", status: "4xx" }) -
          valueOf(before, "dock_http_requests_total", { route: "mcp_public", status: "4xx" })
      ).toBe(refusals)
    }))

  it.scoped("counts a render deadline hit, and the tool call it failed under validation_error", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registered = yield* register(server.url, { agent_label: "metrics-probe" })
      expect(registered.status, registered.text).toBe(201)
      const client = yield* connect(registered.json.credential as string, "v2 modern")
      const before = yield* scrape()
      // A small push starts a worker; on a busy machine even it may outlast the 40 ms deadline, so every refusal
      // for a deadline between the two scrapes is counted, and the long page is always one.
      const small = yield* call(client, "push_markdown", { page_content: "# Warm\n\nStarted." })
      const long = refused(yield* call(client, "push_markdown", { page_content: ordinary(1_000_000) }))
      expect(long.error).toMatchObject({ code: "validation_error", details: { reason: "deadline" } })
      const deadlines = 1 +
        (small.isError === true && small.structuredContent.error.details?.reason === "deadline" ? 1 : 0)
      const after = yield* scrape()
      expect(
        valueOf(after, "dock_render_jobs_stopped_total", { reason: "deadline" }) -
          valueOf(before, "dock_render_jobs_stopped_total", { reason: "deadline" })
      ).toBe(deadlines)
      expect(
        valueOf(after, "dock_mcp_tool_calls_total", { tool: "push_markdown", outcome: "validation_error" }) -
          valueOf(before, "dock_mcp_tool_calls_total", { tool: "push_markdown", outcome: "validation_error" })
      ).toBe(deadlines)
      expect(valueOf(after, "dock_render_jobs_started_total", { job: "markdownPage" })).toBeGreaterThanOrEqual(2)
    }))

  it.effect("shows the database pool: connections in use and idle within its size", () =>
    Effect.gen(function*() {
      const samples = yield* scrape()
      const max = valueOf(samples, "dock_db_pool_max_connections")
      expect(max).toBeGreaterThanOrEqual(1)
      const inUse = valueOf(samples, "dock_db_pool_connections", { state: "in_use" })
      const idle = valueOf(samples, "dock_db_pool_connections", { state: "idle" })
      expect(samples.some((sample) => sample.name === "dock_db_pool_connections")).toBe(true)
      expect(inUse).toBeGreaterThanOrEqual(0)
      expect(idle).toBeGreaterThanOrEqual(0)
      expect(inUse + idle).toBeGreaterThanOrEqual(1)
      expect(inUse + idle).toBeLessThanOrEqual(max)
    }))
})
