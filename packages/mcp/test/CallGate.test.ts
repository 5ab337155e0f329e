/** The per-caller bound on tool calls in flight (issue 13, finding 4): a few run, the rest wait in order, then refusal. */
import { RateLimited } from "@dock/domain"
import { describe, expect, it } from "@effect/vitest"
import { makeCallGate, QUEUED_MAX } from "../src/CallGate.ts"

/** A call that runs until the test finishes it. */
const controlled = () => {
  let finish!: () => void
  const done = new Promise<void>((resolve) => (finish = resolve))
  return { done, finish }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe("CallGate", () => {
  it("runs at most the bound per caller at once, starts waiting calls in order, and leaves other callers alone", async () => {
    const gate = makeCallGate(2)
    const signal = new AbortController().signal
    const started: Array<number> = []
    const calls = Array.from({ length: 5 }, () => controlled())
    const results = calls.map((call, index) =>
      gate.run("token-a", signal, async () => {
        started.push(index)
        await call.done
        return index
      })
    )
    const other = gate.run("token-b", signal, async () => "b")
    await settle()
    expect(started).toEqual([0, 1])
    expect(await other).toBe("b")
    calls[1]!.finish()
    await settle()
    expect(started).toEqual([0, 1, 2])
    calls[0]!.finish()
    calls[2]!.finish()
    await settle()
    expect(started).toEqual([0, 1, 2, 3, 4])
    calls[3]!.finish()
    calls[4]!.finish()
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3, 4])
  })

  it("refuses with rate_limited once QUEUED_MAX calls of one caller are waiting", async () => {
    const gate = makeCallGate(1)
    const signal = new AbortController().signal
    const blocker = controlled()
    const running = gate.run("token-a", signal, () => blocker.done)
    const waiting = Array.from({ length: QUEUED_MAX }, () => gate.run("token-a", signal, async () => "ran"))
    const refused = await gate.run("token-a", signal, async () => "ran")
    expect(refused).toBeInstanceOf(RateLimited)
    expect((refused as RateLimited).retry_after_seconds).toBe(1)
    blocker.finish()
    await running
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(["ran"]))
  })

  it("a waiting call whose request is abandoned gives up its place", async () => {
    const gate = makeCallGate(1)
    const blocker = controlled()
    const running = gate.run("token-a", new AbortController().signal, () => blocker.done)
    const abandoned = new AbortController()
    const gone = gate.run("token-a", abandoned.signal, async () => "ran")
    const next = gate.run("token-a", new AbortController().signal, async () => "next")
    abandoned.abort()
    expect(await gone).toBeInstanceOf(RateLimited)
    blocker.finish()
    await running
    expect(await next).toBe("next")
  })
})
