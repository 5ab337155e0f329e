/**
 * bench/arguments: oversized tool arguments (issue 13, finding 2) against the real server (a child process on a
 * fresh PostgreSQL database): 1.8 M unknown keys on /mcp/public with no token, a 2 M-element `rows` array and
 * 2 M `tags` with a token, a deep array of 3 M strings (the NUL / lone-surrogate pass), and two payloads just under
 * the bounds (9,999 unknown keys; 9,000 rows of 10 keys, ~99,000 values). Prints, per payload,
 * the request size, the time to the answer, the answer's status and size, the worst /healthz latency meanwhile
 * and the server's peak RSS so far; asserts nothing.
 */
import * as Fs from "node:fs"
import { withFreshServer } from "./support/Bench.ts"

const rpc = (name: string, args: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${args}}}`

const unknownKeys = (count: number) => {
  const parts: Array<string> = ["\"bucket\":\"nope\""]
  for (let i = 0; i < count; i++) parts.push(`"k${i}":1`)
  return `{${parts.join(",")}}`
}
const bigArray = (count: number, item: string) => `[${new Array(count).fill(item).join(",")}]`
/** 3 M strings spread over arrays nested 30 deep. */
const deepStrings = () => {
  let inner = bigArray(100_000, "\"a\"")
  for (let depth = 0; depth < 30; depth++) inner = `[${inner},${bigArray(1, "\"b\"")}]`
  return `{"bucket":"nope","x":${bigArray(30, inner)}}`
}

const peakRss = (pid: number | undefined) => {
  try {
    const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
    return `${Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024)} MB`
  } catch {
    return "n/a"
  }
}

await withFreshServer("arguments", {}, async ({ dock, admin }) => {
  const user = await admin("/admin/users", { email: "bench-args@example.com" })
  const token = (await admin("/admin/tokens", { user: user.email, scopes: ["mcp:write"] })).token as string
  const payloads: Array<[string, string, string, boolean]> = [
    ["1.8 M unknown keys, /mcp/public", "/mcp/public", rpc("get_bucket", unknownKeys(1_800_000)), false],
    [
      "2 M rows, /mcp",
      "/mcp",
      rpc("push_micro_db", `{"bucket":"nope","table":"t","rows":${bigArray(2_000_000, "{}")}}`),
      true
    ],
    ["2 M tags, /mcp", "/mcp", rpc("create_bucket", `{"title":"t","tags":${bigArray(2_000_000, "\"x\"")}}`), true],
    ["3 M strings deep, /mcp/public", "/mcp/public", rpc("get_bucket", deepStrings()), false],
    // Just under the bounds: what the per-call walk and the schema still do.
    ["9,999 unknown keys, /mcp/public", "/mcp/public", rpc("get_bucket", unknownKeys(9_999)), false],
    [
      "9,000 rows of 10 keys, /mcp",
      "/mcp",
      rpc("push_micro_db", `{"bucket":"nope","table":"t","rows":${bigArray(9_000, unknownKeys(9))}}`),
      true
    ]
  ]
  for (const [label, path, body, withToken] of payloads) {
    let worstHealth = 0
    let done = false
    const probe = (async () => {
      while (!done) {
        const started = performance.now()
        await fetch(`${dock.baseUrl}/healthz`).then((r) => r.arrayBuffer(), () => undefined)
        worstHealth = Math.max(worstHealth, performance.now() - started)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })()
    const started = performance.now()
    const response = await fetch(`${dock.baseUrl}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        ...(withToken ? { authorization: `Bearer ${token}` } : {})
      },
      body
    })
    const answer = await response.arrayBuffer()
    const elapsed = performance.now() - started
    done = true
    await probe
    console.log(
      `${label}: request ${(body.length / 1048576).toFixed(1)} MiB → ${response.status} in ${elapsed.toFixed(0)} ms, ` +
        `answer ${answer.byteLength} bytes, worst /healthz ${worstHealth.toFixed(0)} ms, server peak RSS ${
          peakRss(dock.child.pid)
        }`
    )
  }
})
