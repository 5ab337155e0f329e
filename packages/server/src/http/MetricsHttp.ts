/**
 * `GET /metrics`: this process's counters (Metrics.ts) in the Prometheus text format, for a bearer
 * DOCK_METRICS_TOKEN (a scraper's token that reads nothing else) or DOCK_ADMIN_TOKEN, compared in constant time as
 * the admin API compares; 401 in the error envelope otherwise, and when neither is configured.
 */
import { ContentWorkers, Database, Unauthorized } from "@dock/domain"
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import type { ServerConfig } from "../Config.ts"
import type { ServerMetrics } from "../Metrics.ts"
import { sameSecret } from "./AdminHttp.ts"
import { bearerToken } from "./BearerAuth.ts"
import { errorResponse } from "./ErrorResponse.ts"

/** The bearer token matches DOCK_METRICS_TOKEN or DOCK_ADMIN_TOKEN (compared in constant time). */
const authorized = (config: ServerConfig, header: string | undefined) => {
  const given = header === undefined ? undefined : bearerToken(header)
  if (given === undefined) return false
  return [config.metricsToken, config.adminToken].some((token) =>
    Option.isSome(token) && sameSecret(given, Redacted.value(token.value))
  )
}

const refused = (message: string) =>
  HttpServerResponse.setHeader(
    errorResponse(new Unauthorized({ message })),
    "www-authenticate",
    `Bearer realm="dock-metrics"`
  )

/** GET /metrics, for a bearer DOCK_METRICS_TOKEN or DOCK_ADMIN_TOKEN; 401 in the error envelope otherwise. */
export const metricsRoute = (config: ServerConfig, metrics: ServerMetrics) =>
  HttpLayerRouter.add(
    "GET",
    "/metrics",
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (Option.isNone(config.metricsToken) && Option.isNone(config.adminToken)) {
        return refused("Metrics are disabled: set DOCK_METRICS_TOKEN or DOCK_ADMIN_TOKEN")
      }
      if (!authorized(config, request.headers["authorization"])) {
        return refused(
          "Missing or wrong metrics token (Authorization: Bearer <DOCK_METRICS_TOKEN or DOCK_ADMIN_TOKEN>)"
        )
      }
      const pool = yield* Effect.serviceOption(Database.DatabasePool)
      const workers = yield* Effect.serviceOption(ContentWorkers)
      const render = Option.isSome(workers) ? Option.some(yield* workers.value.stats) : Option.none()
      const body = metrics.text({
        pool: Option.map(pool, (pool) => pool.stats()),
        render: Option.map(render, (stats) => ({ started: stats.started, stoppedByReason: stats.stoppedByReason }))
      })
      return HttpServerResponse.text(body, {
        contentType: "text/plain; version=0.0.4; charset=utf-8",
        headers: { "cache-control": "no-store" }
      })
    })
  )
