/**
 * Starting the server from the environment: read and validate the configuration, fill development secrets,
 * install the logger, then run until SIGTERM/SIGINT. Used by `main.ts` (npm start, Deno) and `dock serve`.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Console, Data, Effect, Layer } from "effect"
import { loadConfig, type ServerConfig } from "./Config.ts"
import { loggerLayer } from "./Logging.ts"
import { resolveSecrets } from "./Secrets.ts"
import { ServerLive } from "./Server.ts"

export class ConfigurationInvalid extends Data.TaggedError("ConfigurationInvalid")<{ readonly message: string }> {}

/** Fails with a one-line message naming the variable when the configuration is invalid. */
export const configuration: Effect.Effect<ServerConfig, ConfigurationInvalid> = loadConfig.pipe(
  Effect.mapError((error) => new ConfigurationInvalid({ message: `Invalid configuration: ${String(error)}` }))
)

/** Serves until interrupted. */
export const serve = (config: ServerConfig) =>
  Effect.gen(function*() {
    const resolved = yield* resolveSecrets(config)
    return yield* Layer.launch(ServerLive(resolved))
  }).pipe(Effect.provide(Layer.merge(NodeContext.layer, loggerLayer(config.env, "per-turn"))))

/** The whole program: configuration errors end the process with exit code 1 and one line on stderr. */
export const program = configuration.pipe(
  Effect.flatMap(serve),
  Effect.catchTag(
    "ConfigurationInvalid",
    (error) => Console.error(error.message).pipe(Effect.zipRight(Effect.sync(() => process.exit(1))))
  )
)
