/**
 * Named spans, made only when a tracer records them (docs/decisions.md, "Spans only when traced").
 *
 * `Effect.fn` and `Effect.withSpan` build their span whether or not anything records it: with the tracer switched
 * off (`Layer.setTracerEnabled(false)`, the server without OTEL_EXPORTER_OTLP_ENDPOINT) they still capture a stack
 * trace, make a no-op span and provide it to the effect, which sets and restores the fiber's whole context (every
 * service compared on the way). Four such spans on a get_web_page call were 10–14% of the server's CPU a call.
 *
 * `traced(name)` is `Effect.fn(name)` while the running fiber's tracer is enabled and `Effect.fnUntraced` while it
 * is not, decided on each call; `spanned(name)` is `Effect.withSpan(name)` or the effect itself. With a tracer on,
 * the spans are the same names, parents and attributes as before; a span's call-site stack trace then names the
 * traced function rather than its caller.
 */
import { Effect, FiberRef, type Tracer } from "effect"

/** `whenOn()` while the fiber's tracer records spans, else `whenOff()`. */
const byTracer = <A, E, R>(whenOn: () => Effect.Effect<A, E, R>, whenOff: () => Effect.Effect<A, E, R>) =>
  Effect.withFiberRuntime<A, E, R>((fiber) => fiber.getFiberRef(FiberRef.currentTracerEnabled) ? whenOn() : whenOff())

/** `Effect.fn(name, options)`, its span made only while the tracer is on: every public service method's wrapper. */
export const traced = (name: string, options?: Tracer.SpanOptions): Effect.fn.Gen =>
  ((body: (...args: Array<unknown>) => Generator, ...pipeables: Array<(...args: Array<unknown>) => unknown>) => {
    const withSpan = (Effect.fn(name, options) as (...args: Array<unknown>) => (...args: Array<unknown>) => never)(
      body,
      ...pipeables
    )
    const withoutSpan = (Effect.fnUntraced as (...args: Array<unknown>) => (...args: Array<unknown>) => never)(
      body,
      ...pipeables
    )
    return function(this: unknown, ...args: Array<unknown>) {
      return byTracer(() => withSpan.apply(this, args), () => withoutSpan.apply(this, args))
    }
  }) as Effect.fn.Gen

/** `Effect.withSpan(name, options)`, made only while the tracer is on. */
export const spanned = (name: string, options?: Tracer.SpanOptions) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  byTracer(() => Effect.withSpan(self, name, options), () => self)
