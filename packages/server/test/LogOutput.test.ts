// What the process logger writes: logfmt in development, one JSON object per line in production, never a Dock
// secret in either; each line as it is logged, or (the server) a turn's lines in one write at the turn's end or at
// exit.
import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { setImmediate } from "node:timers"
import { loggerLayer, type LogWrites } from "../src/Logging.ts"

/** Everything console.log was given, as the writes it was asked for, once the turn that logged has ended. */
const captureWrites = async (
  env: "development" | "production",
  effect: Effect.Effect<void>,
  mode: LogWrites = "each"
) => {
  const writes: Array<string> = []
  vi.spyOn(console, "log").mockImplementation((text: unknown) => void writes.push(String(text)))
  Effect.runSync(effect.pipe(Effect.provide(loggerLayer(env, mode))))
  const duringTurn = writes.length
  await new Promise((resolve) => setImmediate(resolve))
  return { duringTurn, writes }
}

const secretBearing = Effect.logInfo("GET /x?token=dock_mcp_AbCdEf0123456789xyz 200").pipe(
  Effect.annotateLogs({ request_id: "req-1", header: "Bearer dock_admin_Zz9-_secret" })
)

describe("the process logger", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it("writes JSON lines in production, with secrets redacted", async () => {
    const { writes } = await captureWrites("production", secretBearing)
    expect(writes).toHaveLength(1)
    const entry = JSON.parse(writes[0]!)
    expect(entry.message).toBe("GET /x?token=dock_mcp_[REDACTED] 200")
    expect(entry.annotations).toEqual({ request_id: "req-1", header: "Bearer dock_admin_[REDACTED]" })
    expect(entry.logLevel).toBe("INFO")
    expect(writes[0]).not.toContain("AbCdEf0123456789xyz")
    expect(writes[0]).not.toContain("Zz9-_secret")
  })

  it("writes logfmt in development, with secrets redacted", async () => {
    const { writes } = await captureWrites("development", secretBearing)
    expect(writes).toHaveLength(1)
    expect(writes[0]).toMatch(/^timestamp=\S+ level=INFO fiber=#\d+ message="GET \/x\?token=dock_mcp_\[REDACTED\] 200"/)
    expect(writes[0]).toContain("request_id=req-1")
    expect(writes[0]).not.toContain("AbCdEf0123456789xyz")
    expect(writes[0]).not.toContain("Zz9-_secret")
  })

  const threeLines = Effect.forEach(["first", "second", "third"], (message) => Effect.logInfo(message), {
    discard: true
  })

  it("writes each line as it is logged by default", async () => {
    const { duringTurn, writes } = await captureWrites("production", threeLines)
    expect(duringTurn).toBe(3)
    expect(writes.map((line) => JSON.parse(line).message)).toEqual(["first", "second", "third"])
  })

  it("per turn (the server), writes the lines of one turn together, in order, when the turn ends", async () => {
    const { duringTurn, writes } = await captureWrites("production", threeLines, "per-turn")
    expect(duringTurn).toBe(0)
    expect(writes).toHaveLength(1)
    expect(writes[0]!.split("\n").map((line) => JSON.parse(line).message)).toEqual(["first", "second", "third"])
  })

  it("per turn, writes a turn's lines before the process exits, even when it exits within that turn", () => {
    const script = [
      `const { Effect } = await import("effect")`,
      `const { loggerLayer } = await import(${JSON.stringify(new URL("../src/Logging.ts", import.meta.url).href)})`,
      `Effect.runSync(Effect.logInfo("before exit").pipe(Effect.provide(loggerLayer("production", "per-turn"))))`,
      `process.exit(3)`
    ].join("\n")
    let output = ""
    try {
      execFileSync(process.execPath, [
        "--conditions=dock-source",
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        script
      ])
    } catch (error) {
      const failed = error as { status: number; stdout: Buffer }
      expect(failed.status).toBe(3)
      output = failed.stdout.toString("utf8")
    }
    expect(JSON.parse(output.trim()).message).toBe("before exit")
  })
})
