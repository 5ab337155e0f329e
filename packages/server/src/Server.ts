/**
 * The whole server as one layer: database (+ migrations under a lock), domain services, the HTTP routes with
 * the request middleware, and a Node HTTP server that shuts down gracefully. `main.ts`, `dock serve` and the
 * tests all build this same layer.
 */
import {
  ArtifactBaseUrl,
  ClientMetadataFetcher,
  Database,
  DockApi,
  DomainLive,
  Features,
  HmacKey,
  Limits,
  MigrationsLive,
  PublicBaseUrl
} from "@dock/domain"
import { HttpLayerRouter, HttpServer } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type { SqlClient, SqlError } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import * as Http from "node:http"
import type { ServerConfig } from "./Config.ts"
import {
  adminAuthorizationLayer,
  AdminMembersHttp,
  AdminRevertHttp,
  AdminSandboxesHttp,
  AdminShareLinksHttp,
  AdminSourcesHttp,
  AdminTokensHttp,
  AdminUsersHttp,
  sourcesBodyLimit
} from "./http/AdminHttp.ts"
import { agentAuthHttp } from "./http/AgentAuthHttp.ts"
import { apiPagesBodyLimit, apiPagesRoutes } from "./http/ApiPagesHttp.ts"
import { artifactRoutes } from "./http/ArtifactHttp.ts"
import { clientMetadataFetcher } from "./http/ClientMetadataFetch.ts"
import { authManifestRoute, wellKnownHttp } from "./http/DiscoveryHttp.ts"
import { HealthHttp } from "./http/HealthHttp.ts"
import { imageRoutes } from "./http/ImageHttp.ts"
import { mcpBodyLimit, mcpRoutes } from "./http/McpHttp.ts"
import { metricsRoute } from "./http/MetricsHttp.ts"
import { oauthHttp } from "./http/OAuthHttp.ts"
import { requestMiddleware } from "./http/RequestMiddleware.ts"
import { shareRoutes } from "./http/ShareHttp.ts"
import { workingTogetherRoute } from "./http/WorkingTogetherHttp.ts"
import { idempotencySweepJob, oauthSweepJob, sandboxSweepJob, sessionSweepJob, trashSweepJob } from "./Jobs.ts"
import { mailerLayer } from "./mail/Mailers.ts"
import { makeServerMetrics } from "./Metrics.ts"
import { tracingLayer, withRequestSpans } from "./Tracing.ts"
import { webBodyLimit, webKit } from "./web/WebKit.tsx"
import { webRoutes } from "./web/WebRoutes.tsx"

/**
 * On shutdown: stop accepting connections, answer what is in flight with `Connection: close`, let those
 * requests finish within the grace period, then cut whatever is left. Built on top of the serving layer so it
 * runs before the request handler is removed and long before the database closes.
 */
const gracefulShutdown = (server: Http.Server, grace: Duration.Duration) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    yield* HttpServer.HttpServer
    const inFlight = new Set<Http.ServerResponse>()
    let draining = false
    const track = (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
      if (draining && !response.headersSent) response.setHeader("connection", "close")
      inFlight.add(response)
      response.once("close", () => inFlight.delete(response))
    }
    server.prependListener("request", track)
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Effect.logInfo("Shutting down: finishing in-flight requests")
        draining = true
        for (const response of inFlight) {
          if (!response.headersSent) response.setHeader("connection", "close")
        }
        const closed = Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
        })
        // Keep-alive connections become idle as their last response ends: close them as they do.
        const closeIdle = Effect.sync(() => server.closeIdleConnections()).pipe(
          Effect.repeat(Schedule.spaced("50 millis"))
        )
        // Finalizers are uninterruptible; the wait must not be, or the grace period could never cut it short.
        const finished = yield* Effect.raceFirst(closed, closeIdle).pipe(
          Effect.interruptible,
          Effect.timeoutOption(grace)
        )
        if (finished._tag === "None") {
          yield* Effect.logWarning(`Requests still running after ${Duration.format(grace)}: closing them`)
          server.closeAllConnections()
        }
        server.off("request", track)
      })
    )
  }))

export interface ServerOptions {
  /** The database layer to use instead of the one the configuration names (tests pass a fresh one). */
  readonly database?: Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, SqlError.SqlError>
}

export const ServerLive = (config: ServerConfig, options: ServerOptions = {}) => {
  const database = options.database ?? Database.layer(config.database, {
    statementTimeout: config.statementTimeout,
    templateDir: config.cacheDir
  })
  const infrastructure = Layer.mergeAll(
    Layer.provideMerge(MigrationsLive, database),
    Layer.succeed(Limits, config.limits),
    Layer.succeed(PublicBaseUrl, config.baseUrl),
    Layer.succeed(
      ClientMetadataFetcher,
      clientMetadataFetcher({
        allowLoopback: config.oauthAllowLoopbackClientMetadata,
        timeout: config.oauthClientMetadataTimeout
      })
    ),
    Option.match(config.artifactOrigin, {
      onNone: () => Layer.empty,
      onSome: (origin) => Layer.succeed(ArtifactBaseUrl, origin)
    }),
    Layer.succeed(Features, {
      anonymousRegistration: config.anonymousRegistrationEnabled,
      verifiedEmailRegistration: config.verifiedEmailRegistration,
      signupClosed: config.signup === "closed"
    }),
    // Production refuses to start without DOCK_SECRET; `resolveSecrets` keeps a development one in
    // DOCK_DATA_DIR. A server built without either (an embedding test) gets a fresh key for its lifetime.
    Layer.succeed(HmacKey, Option.getOrElse(config.secret, () => Redacted.make(randomBytes(32).toString("base64url")))),
    mailerLayer(config)
  )
  const admin = adminAuthorizationLayer(config.adminToken)
  // This server's counters (GET /metrics): one instance's view, kept in memory.
  const metrics = makeServerMetrics()
  // The routes that take more than small JSON, as their modules declare them.
  const bodyLimits = [mcpBodyLimit, sourcesBodyLimit, webBodyLimit, apiPagesBodyLimit]
  const routes = Layer.mergeAll(
    HttpLayerRouter.addHttpApi(DockApi).pipe(
      Layer.provide([
        HealthHttp,
        wellKnownHttp(config),
        agentAuthHttp(config.trustProxy),
        AdminUsersHttp.pipe(Layer.provide(admin)),
        AdminTokensHttp.pipe(Layer.provide(admin)),
        AdminSandboxesHttp.pipe(Layer.provide(admin)),
        AdminMembersHttp.pipe(Layer.provide(admin)),
        AdminSourcesHttp.pipe(Layer.provide(admin)),
        AdminRevertHttp.pipe(Layer.provide(admin)),
        AdminShareLinksHttp.pipe(Layer.provide(admin))
      ])
    ),
    authManifestRoute(config),
    oauthHttp(config),
    workingTogetherRoute(config),
    mcpRoutes(config, metrics),
    metricsRoute(config, metrics),
    artifactRoutes(config),
    shareRoutes,
    imageRoutes(config),
    webRoutes(config),
    apiPagesRoutes(webKit(config))
  ).pipe(Layer.provide(requestMiddleware(config, bodyLimits, metrics)))
  const nodeServer = Http.createServer()
  const serving = HttpLayerRouter.serve(routes, { disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => nodeServer, { port: config.port, host: config.host })),
    withRequestSpans(config)
  )
  // HttpServer stays in the output so callers (tests, benchmarks) can read the bound address.
  return gracefulShutdown(nodeServer, config.shutdownGrace).pipe(
    Layer.provideMerge(serving),
    Layer.merge(sandboxSweepJob(config.jobInterval)),
    Layer.merge(idempotencySweepJob(config.jobInterval)),
    Layer.merge(trashSweepJob(config.jobInterval)),
    Layer.merge(sessionSweepJob(config.jobInterval)),
    Layer.merge(oauthSweepJob(config.jobInterval)),
    Layer.provide(DomainLive),
    Layer.provide(infrastructure),
    // Spans go to OTEL_EXPORTER_OTLP_ENDPOINT when it is set; without it the tracer is off, since every span
    // (each request's, each Effect.fn call's, each statement's) would be built only to be dropped: about a seventh
    // of an MCP call's CPU (docs/decisions.md, "The MCP hot path"). Tracing.ts.
    Layer.provide(tracingLayer(config))
  )
}
