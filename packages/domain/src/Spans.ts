/**
 * Named spans, made only when a tracer records them (docs/decisions.md, "Spans only when traced").
 *
 * `Effect.fn` and `Effect.withSpan` build their span whether or not anything records it: with the tracer switched
 * off (`Layer.setTracerEnabled(false)`, the server without OTEL_EXPORTER_OTLP_ENDPOINT) they still capture a stack
 * trace, make a no-op span and provide it to the effect, which sets and restores the fiber's whole context (every
 * service compared on the way). A get_web_page's five such spans were about a tenth of the server's CPU a call
 * (measured in one process with them on and off).
 *
 * `traced(name)` is `Effect.fn(name)` while the running fiber's tracer is enabled and `Effect.fnUntraced` while it
 * is not, decided on each call; `spanned(name)` is `Effect.withSpan(name)` or the effect itself. With a tracer on,
 * the spans are the same names, parents and attributes as before; a span's call-site stack trace then names the
 * traced function rather than its caller. With it off, a defect still names the innermost traced method it came
 * through, as the no-op spans made it do (`namingDefects`).
 */
import { Cause, Effect, FiberRef, type Tracer } from "effect"

/** `whenOn()` while the fiber's tracer records spans, else `whenOff()`. */
const byTracer = <A, E, R>(whenOn: () => Effect.Effect<A, E, R>, whenOff: () => Effect.Effect<A, E, R>) =>
  Effect.withFiberRuntime<A, E, R>((fiber) => fiber.getFiberRef(FiberRef.currentTracerEnabled) ? whenOn() : whenOff())

/**
 * A defect of `self` raised again inside a span of `name` (a no-op one: the tracer is off), so that a logged defect
 * still says where it surfaced: Cause.pretty prints the span a defect was raised in ("at Docks.namedAlong"), and an
 * internal error's log line is the one place that says which service method failed. The span is made on the
 * failure path alone; a defect that already names one keeps it (Effect never replaces it), so the innermost wins.
 */
const namingDefects = (name: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchAllCause(
    self,
    (cause) => Cause.isDieType(cause) ? Effect.withSpan(Effect.die(cause.defect), name) : Effect.failCause(cause)
  )

/** `Effect.fn(name, options)`, its span made only while the tracer is on: every public service method's wrapper. */
export const traced = (name: string, options?: Tracer.SpanOptions): Effect.fn.Gen =>
  ((body: (...args: Array<unknown>) => Generator, ...pipeables: Array<(...args: Array<unknown>) => unknown>) => {
    const spanning = (Effect.fn(name, options) as (...args: Array<unknown>) => (...args: Array<unknown>) => never)(
      body,
      ...pipeables
    )
    const plain = (Effect.fnUntraced as (...args: Array<unknown>) => (...args: Array<unknown>) => never)(
      body,
      ...pipeables,
      namingDefects(name)
    )
    return function(this: unknown, ...args: Array<unknown>) {
      return byTracer(() => spanning.apply(this, args), () => plain.apply(this, args))
    }
  }) as Effect.fn.Gen

/** `Effect.withSpan(name, options)`, made only while the tracer is on. */
export const spanned = (name: string, options?: Tracer.SpanOptions) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  byTracer(() => Effect.withSpan(self, name, options), () => namingDefects(name)(self))
