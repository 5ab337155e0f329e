/**
 * The agent's local credentials file: what `dock register` received, per server, so the token and claim token
 * are not lost. JSON, file mode 0600. Default `$XDG_CONFIG_HOME/dock/credentials.json` (or ~/.config/…), or
 * DOCK_CREDENTIALS_FILE.
 */
import type { AnonymousRegistration, VerifiedEmailRegistration } from "@dock/domain/api"
import { FileSystem, Path } from "@effect/platform"
import { Effect, Option } from "effect"
import * as Os from "node:os"
import { optionalText } from "./Environment.ts"

export const credentialsFile = Effect.gen(function*() {
  const path = yield* Path.Path
  const explicit = yield* optionalText("DOCK_CREDENTIALS_FILE")
  if (Option.isSome(explicit)) return path.resolve(explicit.value)
  const configHome = yield* optionalText("XDG_CONFIG_HOME")
  return path.join(Option.getOrElse(configHome, () => path.join(Os.homedir(), ".config")), "dock", "credentials.json")
}).pipe(Effect.orDie)

/** Adds this registration under its server URL (earlier ones are kept) and returns the file's path. */
export const saveRegistration = (baseUrl: string, registration: AnonymousRegistration | VerifiedEmailRegistration) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = yield* credentialsFile
    yield* fs.makeDirectory(path.dirname(file), { recursive: true, mode: 0o700 })
    const existing = yield* fs.readFileString(file).pipe(
      Effect.map((text) => JSON.parse(text) as { servers?: Record<string, Array<unknown>> }),
      Effect.orElseSucceed(() => ({ servers: {} as Record<string, Array<unknown>> }))
    )
    const servers = existing.servers ?? {}
    servers[baseUrl] = [...(servers[baseUrl] ?? []), { ...registration, saved_at: new Date().toISOString() }]
    yield* fs.writeFileString(file, JSON.stringify({ servers }, null, 2) + "\n", { mode: 0o600 })
    yield* fs.chmod(file, 0o600)
    return file
  })
