/** Entry point of `npm run dock -- …`. */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { cli, CliFailure } from "./Cli.ts"

cli(process.argv).pipe(
  Effect.catchIf(
    (error): error is CliFailure => error instanceof CliFailure,
    (error) => Console.error(`dock: ${error.message}`).pipe(Effect.zipRight(Effect.fail(error)))
  ),
  Effect.provide(NodeContext.layer),
  // Failures were printed above (or by @effect/cli for bad arguments); the exit code is 1 either way.
  (effect) => NodeRuntime.runMain(effect, { disableErrorReporting: true, disablePrettyLogger: true })
)
