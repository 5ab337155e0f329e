/**
 * The fuzzer of McpFuzz.test.ts on a server whose plan limits are tight (issue 19, item 5): few Docks, few
 * artifacts and bytes per Dock, few rows per table and per bulk insert, two snapshots kept. Valid and near-valid
 * arguments then run into `tier_limit_exceeded` and retention pruning, where a write refused half-way would show:
 * a refused call must still leave every table as it was, and nothing may answer `internal` or a 5xx.
 *
 * Reproduce as for McpFuzz.test.ts (DOCK_FUZZ_SEED and DOCK_FUZZ_RUNS).
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FUZZ_SERVER_ENV, FUZZ_TIMEOUT, fuzzEveryTool } from "./support/Fuzz.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

/** Just above what the world needs (two Docks a user, 3 rows in one bulk insert, 5 artifacts in the Dock). */
const TIGHT = {
  ...FUZZ_SERVER_ENV,
  DOCK_PLAN_MAX_DOCKS: "3",
  DOCK_PLAN_MAX_ARTIFACTS_PER_DOCK: "8",
  DOCK_PLAN_MAX_DOCK_BYTES: "200000",
  DOCK_PLAN_MAX_ROWS_PER_TABLE: "5",
  DOCK_PLAN_MAX_BULK_ROWS: "3",
  DOCK_PLAN_SNAPSHOT_RETENTION: "2"
}

layer(Layer.scoped(TestServer, startTestServer(TIGHT)), { excludeTestServices: true })(
  "MCP fuzzing under tight plan limits",
  (it) => {
    for (const kind of ["valid", "near-valid"] as const) {
      it.scoped(
        `${kind} arguments to each of the 49 tools: limits refuse without a trace, never internal or 5xx`,
        () =>
          Effect.map(fuzzEveryTool(kind), (tally) => {
            // The limits were reached (not only validation): at least one call was refused for the plan.
            if (kind === "valid") {
              expect([...tally.refused.values()].some((codes) => codes.has("tier_limit_exceeded"))).toBe(true)
            }
          }),
        FUZZ_TIMEOUT
      )
    }
  }
)
