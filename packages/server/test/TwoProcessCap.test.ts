/**
 * The global registration cap across two server processes sharing one PostgreSQL database (security
 * "Reliability": caps are exact under parallel requests across two processes). Runs only with
 * DOCK_TEST_DATABASE_URL.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { awayFromWindowEnd, register, statusCounts } from "./support/Identity.ts"
import { spawnTwoServersOnOneDatabase } from "./support/ServerProcess.ts"

const CAP = 15

describe.runIf(process.env["DOCK_TEST_DATABASE_URL"] !== undefined)(
  "registration caps across two server processes",
  () => {
    it.live(
      `40 parallel registrations over two processes with DOCK_REGISTRATIONS_PER_HOUR=${CAP}: exactly ${CAP} succeed`,
      () =>
        Effect.gen(function*() {
          const { databaseUrl, servers } = yield* spawnTwoServersOnOneDatabase({
            DOCK_ADMIN_TOKEN: "dock_admin_two-process-cap",
            DOCK_SECRET: "two-process-cap-secret",
            DOCK_REGISTRATIONS_PER_HOUR: String(CAP),
            DOCK_REGISTRATIONS_PER_IP_PER_DAY: "10000"
          })

          yield* awayFromWindowEnd("1 hour", "30 seconds")
          const replies = yield* Effect.all(
            Array.from({ length: 40 }, (_, n) => register(servers[n % 2]!.url, { agent_label: `two-process-${n}` })),
            { concurrency: "unbounded" }
          )
          expect(statusCounts(replies)).toEqual({ 201: CAP, 429: 40 - CAP })
          for (const reply of replies.filter((reply) => reply.status === 429)) {
            expect(reply.headers["retry-after"]).toMatch(/^[1-9][0-9]*$/)
            expect(reply.json.error).toMatchObject({ code: "rate_limited", status: 429 })
          }
          // Each process answered its 20 requests with one of the two.
          for (const parity of [0, 1]) {
            const answered = replies.filter((_, n) => n % 2 === parity)
            expect(answered.every((reply) => reply.status === 201 || reply.status === 429)).toBe(true)
            expect(answered).toHaveLength(20)
          }

          const rows = yield* Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const registrations = yield* sql<{ n: string }>`select count(*) as n from registrations`
            const tokens = yield* sql<{ n: string }>`select count(*) as n from tokens where kind = 'anonymous'`
            const sandboxes = yield* sql<{ n: string }>`select count(*) as n from docks where sandbox`
            const counter = yield* sql<
              { count: number }
            >`select count from rate_limit_counters where key = 'registrations-global'`
            return {
              registrations: Number(registrations[0]!.n),
              tokens: Number(tokens[0]!.n),
              sandboxes: Number(sandboxes[0]!.n),
              counter: counter.map((row) => Number(row.count))
            }
          }).pipe(Effect.provide(PgClient.layer({ url: databaseUrl, maxConnections: 1 })))
          expect(rows).toEqual({ registrations: CAP, tokens: CAP, sandboxes: CAP, counter: [CAP] })
        }).pipe(Effect.scoped),
      180_000
    )
  }
)
