/** Entry point of `npm run dock -- …`. */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import { cli } from "./Cli.ts"

cli(process.argv).pipe(
  Effect.tapErrorTag("CliFailure", (error) => Console.error(`dock: ${error.message}`)),
  Effect.provide(NodeContext.layer),
  // Failures were printed above (or by @effect/cli for bad arguments); the exit code is 1 either way.
  (effect) => NodeRuntime.runMain(effect, { disableErrorReporting: true, disablePrettyLogger: true })
)
