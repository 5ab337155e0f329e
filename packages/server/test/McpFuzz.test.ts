/**
 * Property-based fuzzing of every MCP tool over the wire (issue 19, item 5; support/Fuzz.ts has the generators
 * and the invariants). Per kind of argument (valid, near-valid, hostile) a fresh world of real ids, then one
 * fast-check property per tool: whatever the arguments and whichever way the call is made (v2 client in the
 * 2026 era, v1 client in the 2025 era, raw JSON-RPC), never `internal`, never a 5xx, every refusal a code of
 * the error table with a message, nothing logged as an error, and no stored row changed by a refused call.
 *
 * Reproduce: a failure names DOCK_FUZZ_SEED and DOCK_FUZZ_RUNS; set both to replay the same arguments in the same
 * order (tool i's property runs with seed + i). DOCK_FUZZ_RUNS=<runs per tool> alone for a longer run.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import {
  type Args,
  checkedCall,
  FUZZ_RUNS,
  FUZZ_SEED,
  FUZZ_SERVER_ENV,
  fuzzOrder,
  fuzzParameters,
  hostileArgs,
  listedTools,
  makeWorld,
  nearValidArgs,
  newTally,
  TRANSPORTS,
  validArgs,
  type World
} from "./support/Fuzz.ts"
import type { ToolInfo } from "./support/McpClients.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

const KINDS: ReadonlyArray<readonly [string, (tool: ToolInfo, world: World) => fc.Arbitrary<Args>]> = [
  ["valid", validArgs],
  ["near-valid", nearValidArgs],
  ["hostile", hostileArgs]
]

layer(Layer.scoped(TestServer, startTestServer(FUZZ_SERVER_ENV)), { excludeTestServices: true, timeout: 600_000 })(
  "MCP fuzzing",
  (it) => {
    for (const [kind, generate] of KINDS) {
      it.scoped(
        `${kind} arguments to each of the 47 tools: never internal, never 5xx, no write when refused`,
        () =>
          Effect.gen(function*() {
            const server = yield* TestServer
            const world = yield* makeWorld
            const tools = fuzzOrder(yield* listedTools(world))
            expect(tools).toHaveLength(47)
            const tally = newTally()
            console.log(`fuzz ${kind}: seed ${FUZZ_SEED}, ${FUZZ_RUNS} runs per tool`)
            for (const [index, tool] of tools.entries()) {
              yield* Effect.promise(() =>
                fc.assert(
                  fc.asyncProperty(
                    fc.constantFrom(...TRANSPORTS),
                    generate(tool, world),
                    (transport, args) =>
                      Effect.runPromise(checkedCall(server, world, tally, transport, tool.name, args))
                  ),
                  fuzzParameters(index)
                ).catch((error: Error) => {
                  throw new Error(
                    `${kind} ${tool.name}: replay with DOCK_FUZZ_SEED=${FUZZ_SEED} DOCK_FUZZ_RUNS=${FUZZ_RUNS}\n${error.message}`
                  )
                })
              )
            }
            const refused = [...tally.refused].map(([name, codes]) =>
              `${name} ${JSON.stringify(Object.fromEntries(codes))}`
            )
            console.log(
              `fuzz ${kind}: ok ${JSON.stringify(Object.fromEntries(tally.ok))}\nrefused:\n${refused.join("\n")}`
            )
          }),
        Math.max(120_000, FUZZ_RUNS * 47 * 1_000)
      )
    }
  }
)
