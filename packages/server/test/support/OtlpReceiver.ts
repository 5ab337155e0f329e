/**
 * A real OTLP/HTTP trace receiver for tests: a node:http server on an ephemeral port that accepts
 * `POST /v1/traces` with an OTLP JSON body (what @effect/opentelemetry's OtlpTracer sends) and keeps every span.
 * A test waits for the span it expects (`waitFor`), bounded by the test's own timeout: no sleeps.
 */
import { Context, Effect, Layer } from "effect"
import * as Http from "node:http"

export interface ReceivedSpan {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly serviceName: string | undefined
  readonly attributes: Readonly<Record<string, unknown>>
}

export interface OtlpReceiverShape {
  /** http://127.0.0.1:<port>, the value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** Requests that were not a JSON POST /v1/traces (each a "METHOD path content-type" line). */
  readonly rejected: () => ReadonlyArray<string>
  /** The first span (already received or still to come) that matches. */
  readonly waitFor: (matches: (span: ReceivedSpan) => boolean) => Effect.Effect<ReceivedSpan>
}

export class OtlpReceiver extends Context.Tag("@dock/server/test/OtlpReceiver")<OtlpReceiver, OtlpReceiverShape>() {}

interface OtlpValue {
  readonly stringValue?: string
  readonly intValue?: string | number
  readonly boolValue?: boolean
  readonly doubleValue?: number
}
interface OtlpAttribute {
  readonly key: string
  readonly value: OtlpValue
}
interface OtlpBody {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<OtlpAttribute> }
    readonly scopeSpans?: ReadonlyArray<{
      readonly spans?: ReadonlyArray<{
        readonly name: string
        readonly traceId: string
        readonly spanId: string
        readonly parentSpanId?: string
        readonly attributes?: ReadonlyArray<OtlpAttribute>
      }>
    }>
  }>
}

const valueOf = (value: OtlpValue) => value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue

const attributes = (list: ReadonlyArray<OtlpAttribute> | undefined) =>
  Object.fromEntries((list ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]))

export const OtlpReceiverLive = Layer.scoped(
  OtlpReceiver,
  Effect.gen(function*() {
    const spans: Array<ReceivedSpan> = []
    const rejected: Array<string> = []
    const waiting = new Set<(span: ReceivedSpan) => void>()
    const server = Http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const type = request.headers["content-type"] ?? ""
        if (request.method !== "POST" || request.url !== "/v1/traces" || !type.startsWith("application/json")) {
          rejected.push(`${request.method} ${request.url} ${type}`)
          response.writeHead(404).end()
          return
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpBody
        for (const resourceSpan of body.resourceSpans ?? []) {
          const resource = attributes(resourceSpan.resource?.attributes)
          for (const scopeSpan of resourceSpan.scopeSpans ?? []) {
            for (const span of scopeSpan.spans ?? []) {
              const received: ReceivedSpan = {
                name: span.name,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId === undefined || span.parentSpanId === ""
                  ? undefined
                  : span.parentSpanId,
                serviceName: resource["service.name"] as string | undefined,
                attributes: attributes(span.attributes)
              }
              spans.push(received)
              for (const notify of waiting) notify(received)
            }
          }
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const address = server.address()
    if (address === null || typeof address === "string") return yield* Effect.dieMessage("No TCP address")
    const waitFor = (matches: (span: ReceivedSpan) => boolean) =>
      Effect.async<ReceivedSpan>((resume) => {
        const found = spans.find(matches)
        if (found !== undefined) return resume(Effect.succeed(found))
        const notify = (span: ReceivedSpan) => {
          if (!matches(span)) return
          waiting.delete(notify)
          resume(Effect.succeed(span))
        }
        waiting.add(notify)
        return Effect.sync(() => waiting.delete(notify))
      })
    return {
      endpoint: `http://127.0.0.1:${address.port}`,
      spans: () => [...spans],
      rejected: () => [...rejected],
      waitFor
    }
  })
)
