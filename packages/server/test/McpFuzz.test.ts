/**
 * Property-based fuzzing of every MCP tool over the wire (issue 19, item 5; support/Fuzz.ts has the world, the
 * generators and the invariants). Per kind of argument (valid, near-valid, hostile) a fresh world of real ids,
 * then one fast-check property per tool: whatever the arguments and whoever calls how (the owner's v2 client in
 * the 2026 era, v1 client in the 2025 era, raw JSON-RPC; a viewer; a read-only token), never `internal`, never a
 * 5xx, every refusal a code of the error table with a message, nothing logged as an error, and no stored row
 * changed by a refused call. Rate and plan limits are out of the way here (McpFuzzLimits.test.ts has them tight).
 *
 * Reproduce: a failure names DOCK_FUZZ_SEED and DOCK_FUZZ_RUNS; set both to replay the same arguments in the same
 * order (tool i's property runs with seed + i). DOCK_FUZZ_RUNS=<runs per tool> alone for a longer run.
 */
import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { FUZZ_SERVER_ENV, FUZZ_TIMEOUT, fuzzEveryTool } from "./support/Fuzz.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

layer(Layer.scoped(TestServer, startTestServer(FUZZ_SERVER_ENV)), { excludeTestServices: true })(
  "MCP fuzzing",
  (it) => {
    for (const kind of ["valid", "near-valid", "hostile"] as const) {
      it.scoped(
        `${kind} arguments to each of the 49 tools: never internal, never 5xx, no write when refused`,
        () => fuzzEveryTool(kind),
        FUZZ_TIMEOUT
      )
    }
  }
)
