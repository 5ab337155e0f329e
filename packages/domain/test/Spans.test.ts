// traced and spanned: Effect.fn's and Effect.withSpan's named spans while a tracer records them, none while the
// tracer is off (the server without OTEL_EXPORTER_OTLP_ENDPOINT), the same results and failures either way.
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Tracer } from "effect"
import { spanned, traced } from "../src/index.ts"

/** The default tracer, with the name of every span it is asked for kept in `names`. */
const recording = (names: Array<string>) =>
  Effect.map(Effect.tracer, (native) =>
    Tracer.make({
      span: (name, ...rest) => {
        names.push(name)
        return native.span(name, ...rest)
      },
      context: native.context
    }))

/** The name of the span the effect runs in, if any. */
const currentSpanName = Effect.map(Effect.option(Effect.currentSpan), Option.map((span) => span.name))

const find = traced("Things.find")(function*(id: number) {
  if (id < 0) return yield* Effect.fail(`no thing ${id}`)
  return { id, span: yield* currentSpanName }
})

describe("Spans", () => {
  it.effect("with the tracer on: traced and spanned make their named spans, results and failures unchanged", () =>
    Effect.gen(function*() {
      const names: Array<string> = []
      const tracer = yield* recording(names)
      const found = yield* find(7).pipe(spanned("Outer"), Effect.withTracer(tracer))
      expect(found).toEqual({ id: 7, span: Option.some("Things.find") })
      expect(names).toEqual(["Outer", "Things.find"])

      const parent = yield* traced("Things.parent")(function*() {
        const span = yield* Effect.currentSpan
        return span.parent.pipe(Option.map((parent) => parent._tag === "Span" ? parent.name : "external"))
      })().pipe(spanned("Caller"), Effect.withTracer(tracer))
      expect(parent).toEqual(Option.some("Caller"))

      const failed = yield* Effect.exit(find(-1).pipe(Effect.withTracer(tracer)))
      expect(failed).toEqual(Exit.fail("no thing -1"))
      expect(names.at(-1)).toBe("Things.find")

      // Pipeables apply as Effect.fn applies them, inside the span.
      const piped = traced("Things.count")(function*(n: number) {
        return n
      }, Effect.map((n) => n + 1))
      expect(yield* piped(1).pipe(Effect.withTracer(tracer))).toBe(2)
      expect(names.at(-1)).toBe("Things.count")
    }))

  it.effect("with the tracer off: no span at all, not even a no-op one (Effect.fn would make one)", () =>
    Effect.gen(function*() {
      const names: Array<string> = []
      const tracer = yield* recording(names)
      const off = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        effect.pipe(Effect.withTracer(tracer), Effect.withTracerEnabled(false))

      expect(yield* off(find(7).pipe(spanned("Outer")))).toEqual({ id: 7, span: Option.none() })
      expect(yield* Effect.exit(off(find(-1)))).toEqual(Exit.fail("no thing -1"))
      expect(yield* off(currentSpanName.pipe(spanned("Outer")))).toEqual(Option.none())
      expect(names).toEqual([])

      // A defect still names the innermost traced method it came through (Cause.pretty prints its span), as the
      // no-op spans made it do; a failure stays as it was.
      const broken = traced("Things.broken")(function*() {
        return yield* Effect.die(new Error("the table is gone"))
      })
      const caller = traced("Things.caller")(function*() {
        return yield* broken()
      })
      const died = yield* Effect.exit(off(caller().pipe(spanned("Outer"))))
      expect(Exit.isFailure(died) && Cause.pretty(died.cause)).toMatch(/the table is gone[\s\S]*at Things\.broken/)
      expect(Exit.isFailure(died) && Cause.pretty(died.cause)).not.toMatch(/Things\.caller|Outer/)
      const spannedDefect = yield* Effect.exit(off(Effect.die(new Error("lost")).pipe(spanned("Outer"))))
      expect(Exit.isFailure(spannedDefect) && Cause.pretty(spannedDefect.cause)).toMatch(/lost[\s\S]*at Outer/)
      expect(names).toEqual([])

      // What Effect.fn and Effect.withSpan do with the tracer off: a no-op span the body runs in.
      const builtin = Effect.fn("Things.builtin")(function*() {
        return yield* currentSpanName
      })
      expect(yield* off(builtin())).toEqual(Option.some("Things.builtin"))
      expect(yield* off(currentSpanName.pipe(Effect.withSpan("Outer")))).toEqual(Option.some("Outer"))
    }))
})
