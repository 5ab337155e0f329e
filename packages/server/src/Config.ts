/**
 * Configuration: every environment variable of architecture §5, read through Effect `Config` and validated
 * before anything starts. A bad value fails with a ConfigError naming the variable; production refuses to
 * start without an https DOCK_BASE_URL and a DOCK_SECRET. The only module that reads the environment.
 */
import { Database, Limits, type LimitValues } from "@dock/domain"
import { Config, ConfigError, Duration, Effect, Either, Option, Redacted } from "effect"
import * as Path from "node:path"

export type DockEnv = "development" | "production"

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  readonly tracesUrl: string
  /** OTEL_SERVICE_NAME, "dock" by default. */
  readonly serviceName: string
  /** OTEL_BSP_SCHEDULE_DELAY (milliseconds, 5000 by default): how often a batch of spans is sent. */
  readonly exportInterval: Duration.Duration
}

export interface ServerConfig {
  readonly port: number
  readonly host: string
  /** Origin without a trailing slash, e.g. http://localhost:8787 */
  readonly baseUrl: string
  readonly env: DockEnv
  readonly dataDir: string
  readonly database: Database.DatabaseOptions
  /** DOCK_CACHE_DIR (default $XDG_CACHE_HOME/dock or ~/.cache/dock): the embedded database's template. */
  readonly cacheDir: string
  /** DOCK_STATEMENT_TIMEOUT: how long one SQL statement may run (0 = no limit). */
  readonly statementTimeout: Duration.Duration
  readonly secret: Option.Option<Redacted.Redacted>
  readonly adminToken: Option.Option<Redacted.Redacted>
  /** DOCK_METRICS_TOKEN: a bearer token that reads GET /metrics only (the admin token reads it too). */
  readonly metricsToken: Option.Option<Redacted.Redacted>
  /** OpenTelemetry trace export over OTLP/HTTP, when OTEL_EXPORTER_OTLP_ENDPOINT is set; none otherwise. */
  readonly tracing: Option.Option<TracingConfig>
  readonly smtpUrl: Option.Option<Redacted.Redacted>
  readonly mailFrom: string
  readonly trustProxy: boolean
  readonly allowedOrigins: ReadonlyArray<string>
  readonly artifactOrigin: Option.Option<string>
  readonly anonymousRegistrationEnabled: boolean
  readonly verifiedEmailRegistration: boolean
  /** DOCK_SIGNUP (open by default): `closed` lets only existing people sign in to the web app. */
  readonly signup: "open" | "closed"
  readonly shutdownGrace: Duration.Duration
  readonly jobInterval: Duration.Duration
  /**
   * DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA (false): lets Client ID Metadata Documents be fetched over http from
   * loopback addresses. For tests only; production refuses it (docs/oauth.md).
   */
  readonly oauthAllowLoopbackClientMetadata: boolean
  /** DOCK_OAUTH_CLIENT_METADATA_TIMEOUT (5 seconds): how long fetching a Client ID Metadata Document may take. */
  readonly oauthClientMetadataTimeout: Duration.Duration
  readonly limits: LimitValues
}

const invalid = (variable: string, message: string) => ConfigError.InvalidData([variable], message)

/** A non-negative integer (counts and caps; 0 means unlimited where the README says so). */
const count = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: "Expected a whole number >= 0", validation: (n) => n >= 0 }),
    Config.withDefault(fallback)
  )

/** An optional variable; set but empty counts as unset (so `VAR= cmd` clears it). */
export const optionalText = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((value) => value.trim() !== "")))

const optionalSecret = (name: string) => optionalText(name).pipe(Config.map(Option.map(Redacted.make)))

const duration = (name: string, fallback: Duration.Duration) => Config.duration(name).pipe(Config.withDefault(fallback))

/** "https://x.example/" → "https://x.example"; rejects anything but an http(s) origin. */
const parseOrigin = (name: string, raw: string): Either.Either<string, ConfigError.ConfigError> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left(invalid(name, `Expected an absolute http(s) URL but received ${raw}`))
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Either.left(invalid(name, `Expected an http or https URL but received ${raw}`))
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") {
    return Either.left(invalid(name, `Expected an origin without a path but received ${raw}`))
  }
  return Either.right(url.origin)
}

const limits: Config.Config<LimitValues> = Config.all({
  sandboxClaimWindow: duration("DOCK_SANDBOX_CLAIM_WINDOW", Limits.defaults.sandboxClaimWindow),
  sandboxRetention: duration("DOCK_SANDBOX_RETENTION", Limits.defaults.sandboxRetention),
  registrationsPerIpPerDay: count("DOCK_REGISTRATIONS_PER_IP_PER_DAY", Limits.defaults.registrationsPerIpPerDay),
  oauthRegistrationsPerIpPerHour: count(
    "DOCK_OAUTH_REGISTRATIONS_PER_IP_PER_HOUR",
    Limits.defaults.oauthRegistrationsPerIpPerHour
  ),
  oauthClientMetadataFetchesPerIpPerHour: count(
    "DOCK_OAUTH_CLIENT_METADATA_FETCHES_PER_IP_PER_HOUR",
    Limits.defaults.oauthClientMetadataFetchesPerIpPerHour
  ),
  registrationsPerHour: count("DOCK_REGISTRATIONS_PER_HOUR", Limits.defaults.registrationsPerHour),
  sandboxMaxArtifacts: count("DOCK_SANDBOX_MAX_ARTIFACTS", Limits.defaults.sandboxMaxArtifacts),
  sandboxMaxBytes: count("DOCK_SANDBOX_MAX_BYTES", Limits.defaults.sandboxMaxBytes),
  sandboxWritesPerMinute: count("DOCK_SANDBOX_WRITES_PER_MINUTE", Limits.defaults.sandboxWritesPerMinute),
  otpSendsPerHour: count("DOCK_OTP_SENDS_PER_HOUR", Limits.defaults.otpSendsPerHour),
  otpTtl: duration("DOCK_OTP_TTL", Limits.defaults.otpTtl),
  claimedTokenTtl: duration("DOCK_CLAIMED_TOKEN_TTL", Limits.defaults.claimedTokenTtl),
  tokenRequestsPerMinute: count("DOCK_TOKEN_REQUESTS_PER_MINUTE", Limits.defaults.tokenRequestsPerMinute),
  tokenWritesPerMinute: count("DOCK_TOKEN_WRITES_PER_MINUTE", Limits.defaults.tokenWritesPerMinute),
  publicMcpRequestsPerMinute: count("DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE", Limits.defaults.publicMcpRequestsPerMinute),
  toolCallsInFlightPerCaller: Config.integer("DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER").pipe(
    Config.validate({ message: "Expected a whole number from 1 to 100", validation: (n) => n >= 1 && n <= 100 }),
    Config.withDefault(Limits.defaults.toolCallsInFlightPerCaller)
  ),
  planMaxDocks: count("DOCK_PLAN_MAX_DOCKS", Limits.defaults.planMaxDocks),
  planMaxArtifactsPerDock: count("DOCK_PLAN_MAX_ARTIFACTS_PER_DOCK", Limits.defaults.planMaxArtifactsPerDock),
  planMaxDockBytes: count("DOCK_PLAN_MAX_DOCK_BYTES", Limits.defaults.planMaxDockBytes),
  planMaxRowsPerTable: count("DOCK_PLAN_MAX_ROWS_PER_TABLE", Limits.defaults.planMaxRowsPerTable),
  planMaxBulkRows: count("DOCK_PLAN_MAX_BULK_ROWS", Limits.defaults.planMaxBulkRows),
  planSnapshotRetention: count("DOCK_PLAN_SNAPSHOT_RETENTION", Limits.defaults.planSnapshotRetention),
  renderDeadline: duration("DOCK_RENDER_DEADLINE", Limits.defaults.renderDeadline).pipe(
    Config.validate({ message: "Expected a duration above 0", validation: (d) => Duration.toMillis(d) > 0 })
  ),
  renderWorkers: Config.integer("DOCK_RENDER_WORKERS").pipe(
    Config.validate({ message: "Expected a whole number from 1 to 64", validation: (n) => n >= 1 && n <= 64 }),
    Config.withDefault(Limits.defaults.renderWorkers)
  )
})

const raw = Config.all({
  // 0 asks the OS for a free port (tests); the bound address is logged.
  port: Config.integer("PORT").pipe(
    Config.validate({ message: "Expected a port number from 0 to 65535", validation: (n) => n >= 0 && n <= 65535 }),
    Config.withDefault(8787)
  ),
  host: Config.nonEmptyString("HOST").pipe(Config.withDefault("127.0.0.1")),
  env: Config.literal("development", "production")("DOCK_ENV").pipe(Config.withDefault("development" as const)),
  baseUrl: optionalText("DOCK_BASE_URL").pipe(Config.mapOrFail(Option.match({
    onNone: () => Either.right(Option.none<string>()),
    onSome: (value) => Either.map(parseOrigin("DOCK_BASE_URL", value), Option.some)
  }))),
  databaseUrl: optionalSecret("DATABASE_URL"),
  poolSize: Config.integer("DOCK_DB_POOL_SIZE").pipe(
    Config.validate({ message: "Expected a whole number from 1 to 100", validation: (n) => n >= 1 && n <= 100 }),
    Config.withDefault(10)
  ),
  statementTimeout: duration("DOCK_STATEMENT_TIMEOUT", Database.DEFAULT_STATEMENT_TIMEOUT),
  dataDir: Config.nonEmptyString("DOCK_DATA_DIR").pipe(Config.withDefault("./.dock")),
  cacheDir: Database.cacheDirConfig,
  secret: optionalSecret("DOCK_SECRET"),
  adminToken: optionalSecret("DOCK_ADMIN_TOKEN"),
  metricsToken: optionalSecret("DOCK_METRICS_TOKEN"),
  otlpEndpoint: optionalText("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.mapOrFail(Option.match({
    onNone: () => Either.right(Option.none<string>()),
    onSome: (value) => {
      try {
        const url = new URL(value.trim())
        if (url.protocol === "http:" || url.protocol === "https:") {
          return Either.right(Option.some(url.toString().replace(/\/+$/, "")))
        }
      } catch {
        // Reported below.
      }
      return Either.left(invalid("OTEL_EXPORTER_OTLP_ENDPOINT", "Expected an http:// or https:// URL"))
    }
  }))),
  otelServiceName: Config.nonEmptyString("OTEL_SERVICE_NAME").pipe(Config.withDefault("dock")),
  otelScheduleDelay: Config.integer("OTEL_BSP_SCHEDULE_DELAY").pipe(
    Config.validate({
      message: "Expected milliseconds from 1 to 3600000",
      validation: (n) => n >= 1 && n <= 3_600_000
    }),
    Config.withDefault(5000)
  ),
  smtpUrl: optionalSecret("DOCK_SMTP_URL"),
  mailFrom: Config.nonEmptyString("DOCK_MAIL_FROM").pipe(Config.withDefault("Dock <no-reply@localhost>")),
  trustProxy: Config.boolean("DOCK_TRUST_PROXY").pipe(Config.withDefault(false)),
  allowedOrigins: optionalText("DOCK_ALLOWED_ORIGINS").pipe(Config.mapOrFail(Option.match({
    onNone: () => Either.right(Option.none<ReadonlyArray<string>>()),
    onSome: (list) =>
      Either.map(
        Either.all(
          list.split(",").map((item) => item.trim()).filter((item) => item !== "").map((item) =>
            parseOrigin("DOCK_ALLOWED_ORIGINS", item)
          )
        ),
        (origins) => Option.some<ReadonlyArray<string>>(origins)
      )
  }))),
  artifactOrigin: optionalText("DOCK_ARTIFACT_ORIGIN").pipe(Config.mapOrFail(Option.match({
    onNone: () => Either.right(Option.none<string>()),
    onSome: (value) => Either.map(parseOrigin("DOCK_ARTIFACT_ORIGIN", value), Option.some)
  }))),
  anonymousRegistrationEnabled: Config.boolean("ANONYMOUS_REGISTRATION_ENABLED").pipe(Config.withDefault(true)),
  verifiedEmailRegistration: Config.boolean("DOCK_VERIFIED_EMAIL_REGISTRATION").pipe(Config.withDefault(false)),
  signup: Config.literal("open", "closed")("DOCK_SIGNUP").pipe(Config.withDefault("open" as const)),
  shutdownGrace: duration("DOCK_SHUTDOWN_GRACE", Duration.seconds(10)),
  jobInterval: duration("DOCK_JOB_INTERVAL", Duration.minutes(5)),
  oauthAllowLoopbackClientMetadata: Config.boolean("DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA").pipe(
    Config.withDefault(false)
  ),
  oauthClientMetadataTimeout: duration("DOCK_OAUTH_CLIENT_METADATA_TIMEOUT", Duration.seconds(5)).pipe(
    Config.validate({ message: "Expected a duration above 0", validation: (d) => Duration.toMillis(d) > 0 })
  ),
  limits
})

const checkSmtpUrl = (url: Option.Option<Redacted.Redacted>) =>
  Option.match(url, {
    onNone: () => Either.right(url),
    onSome: (value) => {
      try {
        const parsed = new URL(Redacted.value(value))
        return parsed.protocol === "smtp:" || parsed.protocol === "smtps:"
          ? Either.right(url)
          : Either.left(invalid("DOCK_SMTP_URL", "Expected an smtp:// or smtps:// URL"))
      } catch {
        return Either.left(invalid("DOCK_SMTP_URL", "Expected an smtp:// or smtps:// URL"))
      }
    }
  })

/** The whole configuration, with the cross-variable rules applied. */
export const ServerConfig: Config.Config<ServerConfig> = raw.pipe(Config.mapOrFail((c) => {
  const baseUrl = Option.getOrElse(c.baseUrl, () => `http://localhost:${c.port}`)
  if (c.env === "production") {
    if (!baseUrl.startsWith("https://")) {
      return Either.left(invalid("DOCK_BASE_URL", "DOCK_ENV=production requires an https:// DOCK_BASE_URL"))
    }
    if (Option.isNone(c.secret)) {
      return Either.left(invalid("DOCK_SECRET", "DOCK_ENV=production requires DOCK_SECRET"))
    }
    if (c.oauthAllowLoopbackClientMetadata) {
      return Either.left(
        invalid(
          "DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA",
          "DOCK_ENV=production refuses DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA (it is for tests only)"
        )
      )
    }
  }
  return Either.map(checkSmtpUrl(c.smtpUrl), (smtpUrl): ServerConfig => ({
    port: c.port,
    host: c.host,
    baseUrl,
    env: c.env,
    dataDir: Path.resolve(c.dataDir),
    database: Option.match(c.databaseUrl, {
      onNone: (): Database.DatabaseOptions => ({ _tag: "Embedded", dataDir: Path.resolve(c.dataDir) }),
      onSome: (url): Database.DatabaseOptions => ({ _tag: "Postgres", url, poolSize: c.poolSize })
    }),
    cacheDir: c.cacheDir,
    statementTimeout: c.statementTimeout,
    secret: c.secret,
    adminToken: c.adminToken,
    metricsToken: c.metricsToken,
    tracing: Option.map(c.otlpEndpoint, (endpoint): TracingConfig => ({
      tracesUrl: `${endpoint}/v1/traces`,
      serviceName: c.otelServiceName,
      exportInterval: Duration.millis(c.otelScheduleDelay)
    })),
    smtpUrl,
    mailFrom: c.mailFrom,
    trustProxy: c.trustProxy,
    allowedOrigins: Option.getOrElse(c.allowedOrigins, () => [baseUrl]),
    artifactOrigin: c.artifactOrigin,
    anonymousRegistrationEnabled: c.anonymousRegistrationEnabled,
    verifiedEmailRegistration: c.verifiedEmailRegistration,
    signup: c.signup,
    shutdownGrace: c.shutdownGrace,
    jobInterval: c.jobInterval,
    oauthAllowLoopbackClientMetadata: c.oauthAllowLoopbackClientMetadata,
    oauthClientMetadataTimeout: c.oauthClientMetadataTimeout,
    limits: c.limits
  }))
}))

/** Reads the configuration from the process environment. */
export const loadConfig: Effect.Effect<ServerConfig, ConfigError.ConfigError> = Effect.gen(function*() {
  return yield* ServerConfig
})
