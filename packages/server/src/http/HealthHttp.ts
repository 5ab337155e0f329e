/** /healthz: the process is up. /readyz: the database answers and every migration is applied. */
import { appliedMigrationId, DockApi, Health, latestMigrationId, Readiness, Unavailable } from "@dock/domain"
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const HealthHttp = HttpApiBuilder.group(DockApi, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("healthz", () => Effect.succeed(new Health({ status: "ok" })))
      .handle("readyz", () =>
        appliedMigrationId.pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.timeoutFail({
            duration: "3 seconds",
            onTimeout: () => new Unavailable({ message: "The database did not answer within 3 seconds" })
          }),
          Effect.catchTag("SqlError", () => Effect.fail(new Unavailable({ message: "The database is unreachable" }))),
          Effect.filterOrFail(
            (migration) => migration >= latestMigrationId,
            (migration) =>
              new Unavailable({
                message: `The database is at migration ${migration}; this server needs ${latestMigrationId}`
              })
          ),
          Effect.map((migration) => new Readiness({ status: "ready", migration }))
        ))
  }))
