/**
 * Trace export: when OTEL_EXPORTER_OTLP_ENDPOINT is set, every span the code already opens (each request's, each
 * service method's `traced` and `spanned`, each tool call's `mcp.<tool>`, each SQL statement's) is sent over
 * OTLP/HTTP (JSON, to `<endpoint>/v1/traces`) by @effect/opentelemetry's OtlpTracer, in batches every
 * OTEL_BSP_SCHEDULE_DELAY milliseconds and once more at shutdown. Without the variable there is no exporter and
 * the tracer is switched off altogether: a span nobody exports costs about a seventh of an MCP call's CPU
 * (docs/decisions.md, "The MCP hot path"), and with the tracer off the request's, the service methods' and the
 * tool calls' spans are not even built (Spans.ts in the domain; docs/decisions.md, "Spans only when traced").
 *
 * OtlpTracer needs only Effect's HttpClient (fetch), none of the OpenTelemetry SDK, so it runs the same on Node,
 * Deno and in the esbuild bundle.
 */
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { FetchHttpClient, HttpMiddleware } from "@effect/platform"
import { Layer, Option } from "effect"
import type { ServerConfig } from "./Config.ts"

/** The tracer layer of this configuration: OTLP export, or tracing off. */
export const tracingLayer = (config: ServerConfig): Layer.Layer<never> =>
  Option.match(config.tracing, {
    onNone: () => Layer.setTracerEnabled(false),
    onSome: (tracing) =>
      OtlpTracer.layer({
        url: tracing.tracesUrl,
        resource: { serviceName: tracing.serviceName, serviceVersion: "0.1.0" },
        exportInterval: tracing.exportInterval,
        shutdownTimeout: "3 seconds"
      }).pipe(Layer.provide([FetchHttpClient.layer, OtlpSerialization.layerJson]))
  })

/**
 * The HTTP server with its request spans (`http.server <method>`) only when spans are exported: the platform's
 * tracing middleware builds and provides a span whether or not the tracer records it (the domain's `traced` and
 * `spanned` do the same for theirs; docs/decisions.md, "Spans only when traced").
 */
export const withRequestSpans = (config: ServerConfig) => <A, E, R>(server: Layer.Layer<A, E, R>) =>
  Option.isSome(config.tracing) ? server : HttpMiddleware.withTracerDisabledWhen(server, () => true)
