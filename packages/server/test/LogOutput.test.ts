// What the process logger writes: logfmt in development, one JSON object per line in production, and never a
// Dock secret in either.
import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import { Effect } from "effect"
import { loggerLayer } from "../src/Logging.ts"

const captureLines = (env: "development" | "production", effect: Effect.Effect<void>) => {
  const lines: Array<string> = []
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)))
  Effect.runSync(effect.pipe(Effect.provide(loggerLayer(env))))
  return lines
}

const secretBearing = Effect.logInfo("GET /x?token=dock_mcp_AbCdEf0123456789xyz 200").pipe(
  Effect.annotateLogs({ request_id: "req-1", header: "Bearer dock_admin_Zz9-_secret" })
)

describe("the process logger", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it("writes JSON lines in production, with secrets redacted", () => {
    const lines = captureLines("production", secretBearing)
    expect(lines).toHaveLength(1)
    const entry = JSON.parse(lines[0]!)
    expect(entry.message).toBe("GET /x?token=dock_mcp_[REDACTED] 200")
    expect(entry.annotations).toEqual({ request_id: "req-1", header: "Bearer dock_admin_[REDACTED]" })
    expect(entry.logLevel).toBe("INFO")
    expect(lines[0]).not.toContain("AbCdEf0123456789xyz")
    expect(lines[0]).not.toContain("Zz9-_secret")
  })

  it("writes logfmt in development, with secrets redacted", () => {
    const lines = captureLines("development", secretBearing)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^timestamp=\S+ level=INFO fiber=#\d+ message="GET \/x\?token=dock_mcp_\[REDACTED\] 200"/)
    expect(lines[0]).toContain("request_id=req-1")
    expect(lines[0]).not.toContain("AbCdEf0123456789xyz")
    expect(lines[0]).not.toContain("Zz9-_secret")
  })
})
