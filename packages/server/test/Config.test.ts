/** Configuration from the environment (read through a ConfigProvider), development secrets and log redaction. */
import { Limits } from "@dock/domain"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it, vi } from "@effect/vitest"
import { Duration, Effect, Option, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { loggerLayer, redactSecrets } from "../src/Logging.ts"
import { ADMIN_TOKEN_FILE, resolveSecrets, SECRET_FILE } from "../src/Secrets.ts"
import { configFrom, scopedTempDir } from "./support/TestServer.ts"

/** The configuration error for these variables, as the text an operator would read. */
const failure = (env: Record<string, string>) => Effect.map(Effect.flip(configFrom(env)), String)

describe("ServerConfig", () => {
  it.effect("defaults: 127.0.0.1:8787, a localhost base URL, the embedded database in ./.dock, spec limits", () =>
    Effect.gen(function*() {
      const config = yield* configFrom({})
      expect(config.port).toBe(8787)
      expect(config.host).toBe("127.0.0.1")
      expect(config.baseUrl).toBe("http://localhost:8787")
      expect(config.env).toBe("development")
      expect(config.dataDir).toBe(Path.resolve(".dock"))
      expect(Path.isAbsolute(config.dataDir)).toBe(true)
      expect(config.database).toEqual({ _tag: "Embedded", dataDir: Path.resolve(".dock") })
      expect(config.limits).toEqual(Limits.defaults)
      expect(config.secret).toEqual(Option.none())
      expect(config.adminToken).toEqual(Option.none())
      expect(config.smtpUrl).toEqual(Option.none())
      expect(config.trustProxy).toBe(false)
      expect(config.anonymousRegistrationEnabled).toBe(true)
      expect(config.verifiedEmailRegistration).toBe(false)
      expect(config.allowedOrigins).toEqual(["http://localhost:8787"])
      expect(Duration.toMillis(config.shutdownGrace)).toBe(10_000)
    }))

  it.effect("the default base URL follows PORT, and a given base URL loses its trailing slash", () =>
    Effect.gen(function*() {
      expect((yield* configFrom({ PORT: "9001" })).baseUrl).toBe("http://localhost:9001")
      expect((yield* configFrom({ DOCK_BASE_URL: "https://dock.example/" })).baseUrl).toBe("https://dock.example")
      expect((yield* configFrom({ DOCK_BASE_URL: "http://127.0.0.1:3000" })).baseUrl).toBe("http://127.0.0.1:3000")
    }))

  it.effect("DOCK_DATA_DIR is resolved to an absolute directory that also holds the embedded database", () =>
    Effect.gen(function*() {
      const config = yield* configFrom({ DOCK_DATA_DIR: "some/relative/dir" })
      expect(config.dataDir).toBe(Path.resolve("some/relative/dir"))
      expect(config.database).toEqual({ _tag: "Embedded", dataDir: Path.resolve("some/relative/dir") })
    }))

  it.effect("DOCK_CACHE_DIR holds the embedded database template; by default the user's cache directory", () =>
    Effect.gen(function*() {
      expect((yield* configFrom({ DOCK_CACHE_DIR: "some/cache" })).cacheDir).toBe(Path.resolve("some/cache"))
      expect((yield* configFrom({ XDG_CACHE_HOME: "/var/cache/someone" })).cacheDir).toBe("/var/cache/someone/dock")
      expect((yield* configFrom({})).cacheDir).toBe(Path.join(Os.homedir(), ".cache", "dock"))
    }))

  it.effect("a bad PORT fails naming PORT", () =>
    Effect.gen(function*() {
      for (const port of ["abc", "70000", "-1", "80.5"]) {
        expect(yield* failure({ PORT: port }), port).toContain("PORT")
      }
      expect(yield* failure({ PORT: "abc" })).toContain("abc")
    }))

  it.effect("PORT=0 asks the OS for any free port", () =>
    Effect.gen(function*() {
      expect((yield* configFrom({ PORT: "0" })).port).toBe(0)
    }))

  it.effect("an optional variable that is set but empty counts as unset", () =>
    Effect.gen(function*() {
      const config = yield* configFrom({
        DOCK_BASE_URL: "",
        DOCK_ADMIN_TOKEN: "",
        DOCK_SECRET: "  ",
        DATABASE_URL: "",
        DOCK_SMTP_URL: "",
        DOCK_ARTIFACT_ORIGIN: ""
      })
      expect(config.baseUrl).toBe("http://localhost:8787")
      expect(config.adminToken).toEqual(Option.none())
      expect(config.secret).toEqual(Option.none())
      expect(config.smtpUrl).toEqual(Option.none())
      expect(config.artifactOrigin).toEqual(Option.none())
      expect(config.database._tag).toBe("Embedded")
      const production = yield* failure({
        DOCK_ENV: "production",
        DOCK_BASE_URL: "https://dock.example",
        DOCK_SECRET: ""
      })
      expect(production).toContain("DOCK_SECRET")
    }))

  it.effect("a bad duration fails naming its variable", () =>
    Effect.gen(function*() {
      const error = yield* failure({ DOCK_SANDBOX_CLAIM_WINDOW: "soon" })
      expect(error).toContain("DOCK_SANDBOX_CLAIM_WINDOW")
      expect(error).toContain("soon")
      expect(yield* failure({ DOCK_OTP_TTL: "ten minutes" })).toContain("DOCK_OTP_TTL")
    }))

  it.effect("a negative or fractional count fails naming its variable", () =>
    Effect.gen(function*() {
      expect(yield* failure({ DOCK_TOKEN_WRITES_PER_MINUTE: "-1" })).toContain("DOCK_TOKEN_WRITES_PER_MINUTE")
      expect(yield* failure({ DOCK_SANDBOX_MAX_ARTIFACTS: "2.5" })).toContain("DOCK_SANDBOX_MAX_ARTIFACTS")
      expect(yield* failure({ DOCK_PLAN_MAX_BULK_ROWS: "lots" })).toContain("DOCK_PLAN_MAX_BULK_ROWS")
    }))

  it.effect("0 is a valid count (unlimited)", () =>
    Effect.gen(function*() {
      const config = yield* configFrom({ DOCK_TOKEN_WRITES_PER_MINUTE: "0", DOCK_TOKEN_REQUESTS_PER_MINUTE: "0" })
      expect(config.limits.tokenWritesPerMinute).toBe(0)
      expect(config.limits.tokenRequestsPerMinute).toBe(0)
      expect(config.limits).toEqual({ ...Limits.defaults, tokenWritesPerMinute: 0, tokenRequestsPerMinute: 0 })
    }))

  it.effect("a DOCK_BASE_URL that is not an http(s) origin fails naming DOCK_BASE_URL", () =>
    Effect.gen(function*() {
      for (const url of ["ftp://x", "not a url", "https://x/path", "https://x/?q=1", "localhost:8787"]) {
        const error = yield* failure({ DOCK_BASE_URL: url })
        expect(error, url).toContain("DOCK_BASE_URL")
        expect(error, url).toContain(url)
      }
    }))

  it.effect("durations are Effect Duration strings", () =>
    Effect.gen(function*() {
      const config = yield* configFrom({
        DOCK_SANDBOX_CLAIM_WINDOW: "2 seconds",
        DOCK_OTP_TTL: "90 minutes",
        DOCK_SANDBOX_RETENTION: "3 days",
        DOCK_SHUTDOWN_GRACE: "250 millis",
        DOCK_JOB_INTERVAL: "1 minute"
      })
      expect(Duration.toMillis(config.limits.sandboxClaimWindow)).toBe(2000)
      expect(Duration.toMillis(config.limits.otpTtl)).toBe(90 * 60_000)
      expect(Duration.toMillis(config.limits.sandboxRetention)).toBe(3 * 86_400_000)
      expect(Duration.toMillis(config.shutdownGrace)).toBe(250)
      expect(Duration.toMillis(config.jobInterval)).toBe(60_000)
      expect(Duration.toMillis(config.limits.claimedTokenTtl)).toBe(Duration.toMillis(Limits.defaults.claimedTokenTtl))
    }))

  it.effect("production requires DOCK_SECRET", () =>
    Effect.gen(function*() {
      const error = yield* failure({ DOCK_ENV: "production", DOCK_BASE_URL: "https://dock.example" })
      expect(error).toContain("DOCK_SECRET")
    }))

  it.effect("production requires an https DOCK_BASE_URL", () =>
    Effect.gen(function*() {
      const explicit = yield* failure({
        DOCK_ENV: "production",
        DOCK_SECRET: "s3cret",
        DOCK_BASE_URL: "http://dock.example"
      })
      expect(explicit).toContain("DOCK_BASE_URL")
      // Without one, the default http://localhost base URL is just as unacceptable.
      const defaulted = yield* failure({ DOCK_ENV: "production", DOCK_SECRET: "s3cret" })
      expect(defaulted).toContain("DOCK_BASE_URL")
    }))

  it.effect("production starts with an https base URL and a secret", () =>
    Effect.gen(function*() {
      const config = yield* configFrom({
        DOCK_ENV: "production",
        DOCK_SECRET: "s3cret",
        DOCK_BASE_URL: "https://dock.example"
      })
      expect(config.env).toBe("production")
      expect(config.baseUrl).toBe("https://dock.example")
      expect(Option.map(config.secret, Redacted.value)).toEqual(Option.some("s3cret"))
      expect(config.allowedOrigins).toEqual(["https://dock.example"])
    }))

  it.effect("DOCK_ENV accepts only development and production", () =>
    Effect.gen(function*() {
      expect(yield* failure({ DOCK_ENV: "staging" })).toContain("DOCK_ENV")
    }))

  it.effect("DATABASE_URL selects PostgreSQL with DOCK_DB_POOL_SIZE connections", () =>
    Effect.gen(function*() {
      const url = "postgres://dock:pw@db.example:5432/dock"
      const config = yield* configFrom({ DATABASE_URL: url, DOCK_DB_POOL_SIZE: "3" })
      expect(config.database._tag).toBe("Postgres")
      if (config.database._tag !== "Postgres") return
      expect(Redacted.value(config.database.url)).toBe(url)
      expect(config.database.poolSize).toBe(3)
      // The URL holds a password: it must not show up when the configuration is printed.
      expect(JSON.stringify(config)).not.toContain("pw@")
      const defaults = yield* configFrom({ DATABASE_URL: url })
      expect(defaults.database).toMatchObject({ _tag: "Postgres", poolSize: 10 })
      expect(yield* failure({ DATABASE_URL: url, DOCK_DB_POOL_SIZE: "0" })).toContain("DOCK_DB_POOL_SIZE")
    }))

  it.effect("DOCK_STATEMENT_TIMEOUT, DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE and DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER", () =>
    Effect.gen(function*() {
      const defaults = yield* configFrom({})
      expect(Duration.toMillis(defaults.statementTimeout)).toBe(10_000)
      expect(defaults.limits.publicMcpRequestsPerMinute).toBe(300)
      expect(defaults.limits.toolCallsInFlightPerCaller).toBe(4)
      const set = yield* configFrom({
        DOCK_STATEMENT_TIMEOUT: "2 seconds",
        DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE: "0",
        DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER: "8"
      })
      expect(Duration.toMillis(set.statementTimeout)).toBe(2_000)
      expect(set.limits.publicMcpRequestsPerMinute).toBe(0)
      expect(set.limits.toolCallsInFlightPerCaller).toBe(8)
      expect(Duration.toMillis((yield* configFrom({ DOCK_STATEMENT_TIMEOUT: "0 seconds" })).statementTimeout)).toBe(0)
      expect(yield* failure({ DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER: "0" })).toContain(
        "DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER"
      )
      expect(yield* failure({ DOCK_STATEMENT_TIMEOUT: "soon" })).toContain("DOCK_STATEMENT_TIMEOUT")
    }))

  it.effect("DOCK_ALLOWED_ORIGINS defaults to the base URL's origin and otherwise lists origins", () =>
    Effect.gen(function*() {
      expect((yield* configFrom({ DOCK_BASE_URL: "https://dock.example/" })).allowedOrigins).toEqual([
        "https://dock.example"
      ])
      expect((yield* configFrom({ PORT: "4000" })).allowedOrigins).toEqual(["http://localhost:4000"])
      const listed = yield* configFrom({ DOCK_ALLOWED_ORIGINS: "https://a.example,https://b.example/" })
      expect(listed.allowedOrigins).toEqual(["https://a.example", "https://b.example"])
      expect(yield* failure({ DOCK_ALLOWED_ORIGINS: "ftp://a.example" })).toContain("DOCK_ALLOWED_ORIGINS")
      // Empty counts as unset, and the error names the variable once.
      expect((yield* configFrom({ DOCK_ALLOWED_ORIGINS: "", PORT: "4000" })).allowedOrigins).toEqual([
        "http://localhost:4000"
      ])
      expect(yield* failure({ DOCK_ALLOWED_ORIGINS: "https://ok.example, nope" })).not.toContain(
        "DOCK_ALLOWED_ORIGINS.DOCK_ALLOWED_ORIGINS"
      )
    }))

  it.effect("DOCK_SMTP_URL must be smtp:// or smtps://", () =>
    Effect.gen(function*() {
      expect(yield* failure({ DOCK_SMTP_URL: "http://mail.example" })).toContain("DOCK_SMTP_URL")
      const config = yield* configFrom({ DOCK_SMTP_URL: "smtps://user:pw@mail.example:465" })
      expect(Option.map(config.smtpUrl, Redacted.value)).toEqual(Option.some("smtps://user:pw@mail.example:465"))
    }))

  it.effect("booleans and the remaining options are read", () =>
    Effect.gen(function*() {
      const config = yield* configFrom({
        DOCK_TRUST_PROXY: "true",
        ANONYMOUS_REGISTRATION_ENABLED: "false",
        DOCK_VERIFIED_EMAIL_REGISTRATION: "true",
        DOCK_MAIL_FROM: "Ops <ops@dock.example>",
        HOST: "0.0.0.0"
      })
      expect(config.trustProxy).toBe(true)
      expect(config.anonymousRegistrationEnabled).toBe(false)
      expect(config.verifiedEmailRegistration).toBe(true)
      expect(config.mailFrom).toBe("Ops <ops@dock.example>")
      expect(config.host).toBe("0.0.0.0")
      expect(yield* failure({ DOCK_TRUST_PROXY: "maybe" })).toContain("DOCK_TRUST_PROXY")
    }))
})

describe("redactSecrets", () => {
  it("hides MCP and admin tokens and keeps everything else", () => {
    const mcp = "dock_mcp_AbC123-_xyz"
    const admin = "dock_admin_Zz9_-Qq"
    const text = `token=${mcp} admin="${admin}" other=dock_other_keep url=/x?t=${mcp}&n=1`
    const redacted = redactSecrets(text)
    expect(redacted).not.toContain(mcp)
    expect(redacted).not.toContain(admin)
    expect(redacted).toBe(
      `token=dock_mcp_[REDACTED] admin="dock_admin_[REDACTED]" other=dock_other_keep url=/x?t=dock_mcp_[REDACTED]&n=1`
    )
    expect(redactSecrets("nothing secret here")).toBe("nothing secret here")
  })

  it.effect("the process logger writes redacted lines (JSON in production, logfmt in development)", () =>
    Effect.gen(function*() {
      const token = "dock_admin_supersecretvalue123"
      const written: Array<unknown> = []
      const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => void written.push(line))
      try {
        yield* Effect.logInfo(`got ${token}`).pipe(Effect.provide(loggerLayer("production")))
        yield* Effect.logInfo(`got ${token}`).pipe(Effect.provide(loggerLayer("development")))
      } finally {
        spy.mockRestore()
      }
      expect(written).toHaveLength(2)
      const [json, logfmt] = written.map(String)
      expect(JSON.parse(json!)).toMatchObject({ message: "got dock_admin_[REDACTED]", logLevel: "INFO" })
      expect(logfmt).toContain(`message="got dock_admin_[REDACTED]"`)
      expect(written.join("\n")).not.toContain(token)
    }))
})

describe("resolveSecrets", () => {
  const resolve = (env: Record<string, string>) =>
    configFrom(env).pipe(Effect.flatMap(resolveSecrets), Effect.provide(NodeContext.layer))

  it.scoped("development: generates the admin token into DOCK_DATA_DIR/admin-token (0600) and reuses it", () =>
    Effect.gen(function*() {
      const dir = Path.join(yield* scopedTempDir("dock-secrets-"), "not-yet-created")
      const first = yield* resolve({ DOCK_DATA_DIR: dir })
      const file = Path.join(dir, ADMIN_TOKEN_FILE)
      expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
      const token = Option.getOrThrow(Option.map(first.adminToken, Redacted.value))
      expect(token).toMatch(/^dock_admin_[A-Za-z0-9_-]{43}$/)
      expect(Fs.readFileSync(file, "utf8").trim()).toBe(token)

      const second = yield* resolve({ DOCK_DATA_DIR: dir })
      expect(Option.map(second.adminToken, Redacted.value)).toEqual(Option.some(token))
      expect(Fs.readFileSync(file, "utf8").trim()).toBe(token)

      // The HMAC secret is generated and kept the same way.
      const secretFile = Path.join(dir, SECRET_FILE)
      expect(Fs.statSync(secretFile).mode & 0o777).toBe(0o600)
      expect(Option.map(first.secret, Redacted.value)).toEqual(Option.some(Fs.readFileSync(secretFile, "utf8").trim()))
      expect(Option.map(second.secret, Redacted.value)).toEqual(Option.map(first.secret, Redacted.value))
    }))

  it.scoped("development: a given DOCK_ADMIN_TOKEN is used as is and nothing is written for it", () =>
    Effect.gen(function*() {
      const dir = yield* scopedTempDir("dock-secrets-")
      const resolved = yield* resolve({
        DOCK_DATA_DIR: dir,
        DOCK_ADMIN_TOKEN: "dock_admin_given",
        DOCK_SECRET: "given"
      })
      expect(Option.map(resolved.adminToken, Redacted.value)).toEqual(Option.some("dock_admin_given"))
      expect(Option.map(resolved.secret, Redacted.value)).toEqual(Option.some("given"))
      expect(Fs.existsSync(Path.join(dir, ADMIN_TOKEN_FILE))).toBe(false)
      expect(Fs.existsSync(Path.join(dir, SECRET_FILE))).toBe(false)
    }))

  it.scoped("production: an unset admin token stays unset and no file is written", () =>
    Effect.gen(function*() {
      const dir = yield* scopedTempDir("dock-secrets-")
      const resolved = yield* resolve({
        DOCK_ENV: "production",
        DOCK_SECRET: "s3cret",
        DOCK_BASE_URL: "https://dock.example",
        DOCK_DATA_DIR: dir
      })
      expect(Option.isNone(resolved.adminToken)).toBe(true)
      expect(Fs.readdirSync(dir)).toEqual([])
    }))
})
