/**
 * Issue 19, item 6: with OTEL_EXPORTER_OTLP_ENDPOINT set, the spans the code opens are exported over OTLP/HTTP to
 * a real receiver on an ephemeral port: a tool call's `mcp.<tool>` span arrives, under the service name, as the
 * child of its HTTP request's span in the same trace, with the statements and service methods it ran beneath it.
 * Without the variable the tracer is off, and neither the HTTP server nor the domain builds spans.
 */
import { HttpMiddleware, type HttpServerRequest } from "@effect/platform"
import { expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Either, FiberRef, Layer, Option, type Predicate } from "effect"
import type { ServerConfig } from "../src/Config.ts"
import { tracingLayer, withRequestSpans } from "../src/Tracing.ts"
import { bearer } from "./support/Http.ts"
import { UUID } from "./support/Identity.ts"
import { actor, call, ok, rawToolCall } from "./support/McpTools.ts"
import { OtlpReceiver, OtlpReceiverLive } from "./support/OtlpReceiver.ts"
import { configFrom, startTestServer, TestServer } from "./support/TestServer.ts"

/** Whether the HTTP server built under `withRequestSpans(config)` skips a request's span (the platform's switch). */
const requestSpansDisabledWhen = (config: ServerConfig) =>
  Effect.scoped(Effect.gen(function*() {
    let disabledWhen: Predicate.Predicate<HttpServerRequest.HttpServerRequest> | undefined
    yield* Layer.build(
      withRequestSpans(config)(Layer.effectDiscard(
        Effect.map(FiberRef.get(HttpMiddleware.currentTracerDisabledWhen), (predicate) => {
          disabledWhen = predicate
        })
      ))
    )
    return disabledWhen!
  }))

const TracedServer = Layer.scoped(
  TestServer,
  Effect.flatMap(OtlpReceiver, (receiver) =>
    startTestServer({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: "dock-under-test",
      // Batches every 100 ms, so the test waits a moment rather than the default 5 s.
      OTEL_BSP_SCHEDULE_DELAY: "100"
    }))
).pipe(Layer.provideMerge(OtlpReceiverLive))

layer(TracedServer, { excludeTestServices: true, timeout: 60_000 })("OpenTelemetry traces", (it) => {
  it.scoped("a tool call's span reaches the OTLP receiver, under its request's span, with its statements", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver
      const { client, token } = yield* actor("v2 modern")
      const server = yield* TestServer
      const logged = server.logs().length
      ok(yield* call(client, "list_my_buckets", {}))
      const toolSpan = yield* receiver.waitFor((span) => span.name === "mcp.list_my_buckets")
      expect(toolSpan.serviceName).toBe("dock-under-test")
      expect(toolSpan.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(toolSpan.spanId).toMatch(/^[0-9a-f]{16}$/)
      // Its parent is the HTTP request's span (the tool runs on the application's runtime, not the request fiber).
      expect(toolSpan.parentSpanId).toMatch(/^[0-9a-f]{16}$/)
      const parent = yield* receiver.waitFor((span) => span.spanId === toolSpan.parentSpanId)
      expect(parent.traceId).toBe(toolSpan.traceId)
      expect(parent.name).toMatch(/^http\.server POST/)
      // The request span carries the request id its log line carries.
      expect(parent.attributes["request_id"]).toMatch(UUID)
      expect(
        server.logs().slice(logged).filter((entry) =>
          entry.message === "POST /mcp 200" && entry.annotations["request_id"] === parent.attributes["request_id"]
        )
      ).toHaveLength(1)
      // The statements the call ran are spans beneath it, in the same trace.
      const statement = yield* receiver.waitFor((span) =>
        span.traceId === toolSpan.traceId && span.name === "sql.execute"
      )
      expect(statement.traceId).toBe(toolSpan.traceId)
      // So are the domain's service methods (`traced`), made while the tracer records them.
      const method = yield* receiver.waitFor((span) =>
        span.traceId === toolSpan.traceId && span.name.startsWith("Docks.")
      )
      expect(method.parentSpanId).toMatch(/^[0-9a-f]{16}$/)

      // Another call is another trace.
      const raw = yield* rawToolCall("/mcp", "get_bucket", { bucket: "no-such-dock" }, bearer(token))
      expect(raw.status).toBe(200)
      const failed = yield* receiver.waitFor((span) => span.name === "mcp.get_bucket")
      expect(failed.traceId).not.toBe(toolSpan.traceId)
      expect(receiver.rejected()).toEqual([])
    }))
})

it.effect("without OTEL_EXPORTER_OTLP_ENDPOINT there is no exporter and the tracer is off; a bad endpoint is refused", () =>
  Effect.gen(function*() {
    const plain = yield* configFrom({})
    expect(Option.isNone(plain.tracing)).toBe(true)
    expect(yield* FiberRef.get(FiberRef.currentTracerEnabled).pipe(Effect.provide(tracingLayer(plain)))).toBe(false)
    // Nor does the HTTP server build request spans then; with an endpoint it does.
    const exporting = yield* configFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })
    const request = {} as HttpServerRequest.HttpServerRequest
    expect((yield* requestSpansDisabledWhen(plain))(request)).toBe(true)
    expect((yield* requestSpansDisabledWhen(exporting))(request)).toBe(false)

    const traced = yield* configFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })
    expect(Option.map(traced.tracing, (tracing) => [tracing.tracesUrl, tracing.serviceName])).toEqual(
      Option.some(["http://collector:4318/v1/traces", "dock"])
    )
    expect(Option.map(traced.tracing, (tracing) => Duration.toMillis(tracing.exportInterval))).toEqual(
      Option.some(5000)
    )

    const bad = yield* Effect.either(configFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://collector" }))
    expect(Either.isLeft(bad) && String(bad.left)).toContain("OTEL_EXPORTER_OTLP_ENDPOINT")
  }))
