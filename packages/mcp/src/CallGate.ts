/**
 * At most a few tool calls per caller (a token, or a client address on /mcp/public) run at once in this
 * process; the rest wait their turn, in order. One caller's batch of expensive calls then holds at most that many
 * of the pool's connections, and other callers still get theirs. Waiting is bounded too: past QUEUED_MAX
 * waiting calls, a call is refused with rate_limited at once.
 */
import { RateLimited } from "@dock/domain"

/** Calls one caller may have waiting for a turn (a batch of this many still runs, a few at a time). */
export const QUEUED_MAX = 256

interface Caller {
  active: number
  readonly waiting: Array<() => void>
}

export interface CallGate {
  /** Runs `call` once the caller has a free slot; rate_limited when too many of its calls already wait. */
  readonly run: <A>(key: string, signal: AbortSignal, call: () => Promise<A>) => Promise<A | RateLimited>
}

export const makeCallGate = (inFlightMax: number): CallGate => {
  const callers = new Map<string, Caller>()

  const release = (key: string, caller: Caller) => {
    const next = caller.waiting.shift()
    if (next !== undefined) return next()
    caller.active--
    if (caller.active === 0) callers.delete(key)
  }

  const run = async <A>(key: string, signal: AbortSignal, call: () => Promise<A>): Promise<A | RateLimited> => {
    let caller = callers.get(key)
    if (caller === undefined) {
      caller = { active: 0, waiting: [] }
      callers.set(key, caller)
    }
    if (caller.active < inFlightMax) {
      caller.active++
    } else if (caller.waiting.length >= QUEUED_MAX) {
      return new RateLimited({
        message: `Too many tool calls at once: at most ${inFlightMax} run and ${QUEUED_MAX} wait per caller`,
        retry_after_seconds: 1,
        details: { in_flight: inFlightMax, queued: QUEUED_MAX }
      })
    } else {
      // The slot is handed over by release (active stays counted); a call abandoned while waiting gives up its place.
      const queue = caller.waiting
      const granted = await new Promise<boolean>((resolve) => {
        const turn = () => {
          signal.removeEventListener("abort", abandon)
          resolve(true)
        }
        const abandon = () => {
          const at = queue.indexOf(turn)
          if (at !== -1) queue.splice(at, 1)
          resolve(false)
        }
        queue.push(turn)
        signal.addEventListener("abort", abandon, { once: true })
      })
      if (!granted) {
        return new RateLimited({ message: "The call was abandoned while waiting for its turn", retry_after_seconds: 1 })
      }
    }
    try {
      return await call()
    } finally {
      release(key, caller)
    }
  }

  return { run }
}
