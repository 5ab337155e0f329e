/**
 * Development conveniences for the two secrets: when DOCK_SECRET or DOCK_ADMIN_TOKEN is unset outside
 * production, a random value is generated once into DOCK_DATA_DIR (file mode 0600) and reused after restarts.
 */
import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import type { ServerConfig } from "./Config.ts"

export const ADMIN_TOKEN_FILE = "admin-token"
export const SECRET_FILE = "secret"

/** The operator credential: `dock_admin_` + 32 random bytes, so log redaction and secret scanners spot it. */
export const generateAdminToken = () => `dock_admin_${randomBytes(32).toString("base64url")}`

const readOrCreate = (file: string, generate: () => string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (yield* fs.exists(file)) {
      const value = (yield* fs.readFileString(file)).trim()
      if (value.length > 0) return { value, created: false }
    }
    const value = generate()
    yield* fs.writeFileString(file, `${value}\n`, { mode: 0o600 })
    yield* fs.chmod(file, 0o600)
    return { value, created: true }
  })

/** Fills unset secrets in development from DOCK_DATA_DIR; production keeps what it was given. */
export const resolveSecrets = (config: ServerConfig) =>
  Effect.gen(function*() {
    if (config.env === "production") {
      if (Option.isNone(config.adminToken)) {
        yield* Effect.logWarning("DOCK_ADMIN_TOKEN is not set: the admin API (and the dock CLI) is disabled")
      }
      return config
    }
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* fs.makeDirectory(config.dataDir, { recursive: true, mode: 0o700 })
    let { adminToken, secret } = config
    if (Option.isNone(adminToken)) {
      const file = path.join(config.dataDir, ADMIN_TOKEN_FILE)
      const { created, value } = yield* readOrCreate(file, generateAdminToken)
      yield* Effect.logInfo(`${created ? "Generated the" : "Using the"} development admin token in ${file}`)
      adminToken = Option.some(Redacted.make(value))
    }
    if (Option.isNone(secret)) {
      const file = path.join(config.dataDir, SECRET_FILE)
      const { value } = yield* readOrCreate(file, () => randomBytes(32).toString("base64url"))
      secret = Option.some(Redacted.make(value))
    }
    return { ...config, adminToken, secret }
  })
