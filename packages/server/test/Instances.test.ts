/**
 * Many instances on one PostgreSQL database (issue 19, item 2): two real server processes, started once for the
 * whole file, and calls split between them. What one process counts, reserves or remembers, the other sees at
 * its very next request: the per-token write rate, the /mcp/public rate per address, the OTP sends, the plan
 * caps (Docks per user, pages per Dock, rows per Micro DB table), the grounding Dock; and the background sandbox
 * sweep runs once per period across both, does each piece of work once, and goes on when one process stops.
 *
 * Proven elsewhere with two processes, not repeated here: migrations applied once (Process.test.ts), the
 * registration cap per hour (TwoProcessCap.test.ts), the per-token request rate and a revocation refused by the
 * other process at the next request (McpHotPath.test.ts). Runs only with DOCK_TEST_DATABASE_URL.
 */
import { OTP_WRONG_TRIES_PER_CODE } from "@dock/domain"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, type Redacted } from "effect"
import { SANDBOX_SWEEP_PERIOD_KEY } from "../src/Jobs.ts"
import { bearer, jsonRpcAnswer, postJson, rawToolCall, type Reply, unique } from "./support/Http.ts"
import {
  awayFromWindowEnd,
  claim,
  onlyCodeTo,
  otherCode,
  outboxTo,
  register,
  statusCounts
} from "./support/Identity.ts"
import { pollUntil, type ServerProcess, spawnTwoServersOnOneDatabase } from "./support/ServerProcess.ts"

const ADMIN = "dock_admin_instances"
const WRITES_PER_MINUTE = 10
const PUBLIC_PER_MINUTE = 10
const OTP_SENDS_PER_HOUR = 3
const MAX_DOCKS = 4
const MAX_PAGES = 12
const MAX_ROWS = 5
/** Room for three pages of PAGE_BYTES, not four. */
const MAX_DOCK_BYTES = 10_000
const PAGE_BYTES = 3_000

const ENV = {
  DOCK_ADMIN_TOKEN: ADMIN,
  DOCK_SECRET: "instances-secret",
  DOCK_TOKEN_REQUESTS_PER_MINUTE: "10000",
  DOCK_TOOL_CALLS_IN_FLIGHT_PER_CALLER: "100",
  DOCK_TOKEN_WRITES_PER_MINUTE: String(WRITES_PER_MINUTE),
  DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE: String(PUBLIC_PER_MINUTE),
  DOCK_OTP_SENDS_PER_HOUR: String(OTP_SENDS_PER_HOUR),
  DOCK_PLAN_MAX_DOCKS: String(MAX_DOCKS),
  DOCK_PLAN_MAX_ARTIFACTS_PER_DOCK: String(MAX_PAGES),
  DOCK_PLAN_MAX_ROWS_PER_TABLE: String(MAX_ROWS),
  DOCK_PLAN_MAX_DOCK_BYTES: String(MAX_DOCK_BYTES),
  DOCK_REGISTRATIONS_PER_HOUR: "10000",
  DOCK_REGISTRATIONS_PER_IP_PER_DAY: "10000",
  // Each process wakes every second to claim the sweep's period; a lapsed sandbox is purged a second after it
  // expired.
  DOCK_JOB_INTERVAL: "1 second",
  DOCK_SANDBOX_RETENTION: "1 second"
}

class Instances extends Context.Tag("test/Instances")<Instances, {
  readonly databaseUrl: Redacted.Redacted
  readonly a: ServerProcess & { readonly dataDir: string }
  readonly b: ServerProcess & { readonly dataDir: string }
}>() {}

const InstancesLive = Layer.scoped(
  Instances,
  Effect.map(spawnTwoServersOnOneDatabase(ENV), ({ databaseUrl, servers: [a, b] }) => ({ databaseUrl, a, b }))
)

/** A query straight on the shared database (one connection, closed after). */
const query = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.gen(function*() {
    const { databaseUrl } = yield* Instances
    return yield* Effect.flatMap(SqlClient.SqlClient, run).pipe(
      Effect.provide(PgClient.layer({ url: databaseUrl, maxConnections: 1 })),
      Effect.orDie
    )
  })

/** "ok", or the error code of a refused tool call (a tool result with isError, or an HTTP error). */
const outcome = (reply: Reply): string => {
  if (reply.status !== 200) return `http ${reply.status} ${reply.json?.error?.code ?? reply.text.slice(0, 200)}`
  const result = jsonRpcAnswer(reply).result
  if (result?.isError === true) return String(result.structuredContent?.error?.code ?? JSON.stringify(result))
  return "ok"
}

const outcomes = (replies: ReadonlyArray<Reply>) => {
  const counts: Record<string, number> = {}
  for (const reply of replies) counts[outcome(reply)] = (counts[outcome(reply)] ?? 0) + 1
  return counts
}

/** A tool call's structured content; fails the test when the call was refused. */
const succeeded = (reply: Reply) => {
  expect(outcome(reply), reply.text.slice(0, 300)).toBe("ok")
  return jsonRpcAnswer(reply).result.structuredContent
}

/** A fresh user (through the admin API of `url`) with `count` write tokens. */
const userWithTokens = (url: string, count: number) =>
  Effect.gen(function*() {
    const headers = bearer(ADMIN)
    const user = yield* postJson(`${url}/admin/users`, { email: `instances-${unique()}@example.com` }, headers)
    expect(user.status, user.text).toBe(201)
    const tokens: Array<{ token: string; id: string }> = []
    for (let n = 0; n < count; n++) {
      const made = yield* postJson(`${url}/admin/tokens`, { user: user.json.email, scopes: ["mcp:write"] }, headers)
      expect(made.status, made.text).toBe(201)
      tokens.push({ token: made.json.token, id: made.json.id })
    }
    return { id: user.json.id as string, username: user.json.username as string, tokens }
  })

/** A private Dock made over MCP; answers its owner/slug path and id. */
const newDock = (url: string, token: string) =>
  Effect.map(rawToolCall(url, token, "create_bucket", { title: `Instances ${unique()}` }), (reply) => {
    const dock = succeeded(reply).bucket
    return { path: `${dock.owner.username}/${dock.slug}`, id: dock.id as string }
  })

/** `count` calls, numbered, alternating between the two processes, all at once. */
const splitOverBoth = (count: number, call: (url: string, n: number) => Effect.Effect<Reply>) =>
  Effect.gen(function*() {
    const { a, b } = yield* Instances
    return yield* Effect.all(
      Array.from({ length: count }, (_, n) => call(n % 2 === 0 ? a.url : b.url, n)),
      { concurrency: "unbounded" }
    )
  })

/** The sandbox sweep's log lines of one process: sandboxes expired and purged, summed over its runs. */
const sweptBy = (server: ServerProcess) => {
  let expired = 0
  let purged = 0
  let runs = 0
  for (const match of server.stdout().matchAll(/Sandbox sweep: (\d+) expired, (\d+) purged/g)) {
    runs++
    expired += Number(match[1])
    purged += Number(match[2])
  }
  return { runs, expired, purged }
}

/** Registers `count` anonymous sandboxes split over `urls`, then backdates their claim windows so they lapse. */
const lapsedSandboxes = (urls: ReadonlyArray<string>, count: number) =>
  Effect.gen(function*() {
    const replies = yield* Effect.all(
      Array.from({ length: count }, (_, n) => register(urls[n % urls.length]!, { agent_label: `lapsing-${n}` })),
      { concurrency: "unbounded" }
    )
    expect(statusCounts(replies)).toEqual({ 201: count })
    // The registration's row is found by its sandbox token (registration_id is the secret claim token).
    const tokenIds = replies.map((reply) => reply.json.token_id as string)
    const rows = yield* query((sql) =>
      sql<{ id: string; dock_id: string }>`update registrations set expires_at = now() - interval '1 second'
        where ${sql.in("token_id", tokenIds)} returning id, dock_id`
    )
    expect(rows).toHaveLength(count)
    return { ids: rows.map((row) => row.id), dockIds: rows.map((row) => row.dock_id) }
  })

/** Waits until none of the registrations `ids` is left (expired, then purged by a sweep), nor their Docks. */
const purged = ({ dockIds, ids }: { readonly ids: ReadonlyArray<string>; readonly dockIds: ReadonlyArray<string> }) =>
  pollUntil(
    "the sweep purges the lapsed sandboxes",
    query((sql) =>
      sql<{ n: number }>`select (select count(*) from registrations where ${sql.in("id", ids)})
        + (select count(*) from docks where ${sql.in("id", dockIds)}) as n`
    ).pipe(Effect.map((rows) => Number(rows[0]!.n) === 0)),
    { within: "60 seconds", every: "200 millis" }
  )

describe.runIf(process.env["DOCK_TEST_DATABASE_URL"] !== undefined)("many instances on one PostgreSQL", () => {
  layer(InstancesLive, { excludeTestServices: true, timeout: 180_000 })("two server processes", (it) => {
    it.effect(
      `30 parallel writes of one token over both processes, ${WRITES_PER_MINUTE} a minute allowed: exactly ` +
        `${WRITES_PER_MINUTE} are written`,
      () =>
        Effect.gen(function*() {
          const { a } = yield* Instances
          const user = yield* userWithTokens(a.url, 2)
          // The Dock is made with the user's other token, so the writer's minute starts empty.
          const dock = yield* newDock(a.url, user.tokens[1]!.token)
          const writer = user.tokens[0]!
          yield* awayFromWindowEnd("1 minute", "20 seconds")
          const replies = yield* splitOverBoth(30, (url, n) =>
            rawToolCall(url, writer.token, "push_web_page", {
              bucket: dock.path,
              content_type: "html",
              page_slug: `page-${n}`,
              page_content: `<p>Page ${n}</p>`
            }))
          expect(outcomes(replies)).toEqual({ ok: WRITES_PER_MINUTE, rate_limited: 30 - WRITES_PER_MINUTE })
          const rows = yield* query((sql) =>
            Effect.all({
              pages: sql<{ n: number }>`select count(*)::int as n from parts where dock_id = ${dock.id}`,
              counter: sql<{ count: number }>`select count from request_counters
                where key = ${`token-writes:${writer.id}`}`
            })
          )
          expect(rows.pages[0]!.n).toBe(WRITES_PER_MINUTE)
          // Every write counted once, in one row both processes incremented: the refused ones too.
          expect(rows.counter.map((row) => row.count)).toEqual([30])
        })
    )

    it.effect(
      `30 parallel calls to /mcp/public from one address over both processes, ${PUBLIC_PER_MINUTE} a minute ` +
        `allowed: exactly ${PUBLIC_PER_MINUTE} answered`,
      () =>
        Effect.gen(function*() {
          yield* awayFromWindowEnd("1 minute", "20 seconds")
          const replies = yield* splitOverBoth(
            30,
            (url) => rawToolCall(url, undefined, "get_bucket", { bucket: "nobody/nothing" }, "/mcp/public")
          )
          expect(statusCounts(replies)).toEqual({ 200: PUBLIC_PER_MINUTE, 429: 30 - PUBLIC_PER_MINUTE })
          for (const reply of replies.filter((reply) => reply.status === 429)) {
            expect(reply.json.error).toMatchObject({ code: "rate_limited", status: 429 })
            expect(reply.headers["retry-after"]).toMatch(/^[1-9][0-9]*$/)
          }
          const counters = yield* query((sql) =>
            sql<{ count: number }>`select count from request_counters where key like 'public-mcp:%'`
          )
          expect(counters.map((row) => row.count)).toEqual([30])
        })
    )

    it.effect(
      `10 parallel claim-starts of one registration over both processes, ${OTP_SENDS_PER_HOUR} codes an hour ` +
        `allowed: exactly ${OTP_SENDS_PER_HOUR} mailed`,
      () =>
        Effect.gen(function*() {
          const { a, b } = yield* Instances
          yield* awayFromWindowEnd("1 hour", "30 seconds")
          const registration = yield* register(a.url, { agent_label: `otp-${unique()}` })
          expect(registration.status, registration.text).toBe(201)
          const email = `otp-${unique()}@example.com`
          const replies = yield* splitOverBoth(
            10,
            (url) => claim(url, { claim_token: registration.json.registration_id, email })
          )
          expect(statusCounts(replies)).toEqual({ 200: OTP_SENDS_PER_HOUR, 429: 10 - OTP_SENDS_PER_HOUR })
          for (const reply of replies.filter((reply) => reply.status === 429)) {
            expect(reply.json.error).toMatchObject({ code: "rate_limited", status: 429 })
          }
          // The mails are written by whichever process answered: three in all, in the two outboxes.
          const mails = (yield* outboxTo(a.dataDir, email)).length + (yield* outboxTo(b.dataDir, email)).length
          expect(mails).toBe(OTP_SENDS_PER_HOUR)
          const codes = yield* query((sql) =>
            sql<{ n: number }>`select count(*)::int as n from otp_codes o
              join registrations r on r.id = o.registration_id where r.token_id = ${registration.json.token_id}`
          )
          expect(codes[0]!.n).toBe(OTP_SENDS_PER_HOUR)
        })
    )

    it.effect(
      `wrong codes sent in parallel over both processes count exactly: after ${OTP_WRONG_TRIES_PER_CODE - 1} the ` +
        `right code claims, after ${OTP_WRONG_TRIES_PER_CODE} it is refused`,
      () =>
        Effect.gen(function*() {
          const { a, b } = yield* Instances
          const attempt = (wrongTries: number) =>
            Effect.gen(function*() {
              const registration = yield* register(a.url, { agent_label: `tries-${unique()}` })
              expect(registration.status, registration.text).toBe(201)
              const claimToken = registration.json.registration_id
              const email = `tries-${unique()}@example.com`
              expect((yield* claim(a.url, { claim_token: claimToken, email })).status).toBe(200)
              const code = yield* onlyCodeTo(a.dataDir, email)
              const wrong = yield* splitOverBoth(
                wrongTries,
                (url) => claim(url, { claim_token: claimToken, otp: otherCode(code) })
              )
              expect(statusCounts(wrong)).toEqual({ 400: wrongTries })
              const counted = yield* query((sql) =>
                sql<{ wrong_tries: number }>`select o.wrong_tries from otp_codes o
                  join registrations r on r.id = o.registration_id where r.token_id = ${registration.json.token_id}`
              )
              expect(counted.map((row) => row.wrong_tries)).toEqual([wrongTries])
              return yield* claim(b.url, { claim_token: claimToken, otp: code })
            })
          const within = yield* attempt(OTP_WRONG_TRIES_PER_CODE - 1)
          expect(within.status, within.text).toBe(200)
          expect(within.json.status).toBe("claimed")
          const past = yield* attempt(OTP_WRONG_TRIES_PER_CODE)
          expect(past.status, past.text).toBe(400)
          expect(past.json.error).toMatchObject({ code: "validation_error", details: { field: "otp" } })
        })
    )

    it.effect(
      `plan caps over both processes: Docks per user (${MAX_DOCKS}), pages per Dock (${MAX_PAGES}), bytes per ` +
        `Dock (${MAX_DOCK_BYTES}) and rows per Micro DB table (${MAX_ROWS}) — parallel creates, exactly the cap ` +
        "succeed",
      () =>
        Effect.gen(function*() {
          const { a } = yield* Instances
          // Three writer tokens of one user, so that no token reaches its write rate: the cap is what refuses.
          const docksUser = yield* userWithTokens(a.url, 3)
          const ownedBefore = (yield* query((sql) =>
            sql<{ n: number }>`select count(*)::int as n from docks where owner_id = ${docksUser.id}`
          ))[0]!.n
          expect(ownedBefore).toBeLessThan(MAX_DOCKS)
          const dockReplies = yield* splitOverBoth(12, (url, n) =>
            rawToolCall(url, docksUser.tokens[n % 3]!.token, "create_bucket", { title: `Capped ${n}` }))
          expect(outcomes(dockReplies)).toEqual({
            ok: MAX_DOCKS - ownedBefore,
            tier_limit_exceeded: 12 - (MAX_DOCKS - ownedBefore)
          })
          const ownedAfter = yield* query((sql) =>
            sql<{ n: number }>`select count(*)::int as n from docks where owner_id = ${docksUser.id}`
          )
          expect(ownedAfter[0]!.n).toBe(MAX_DOCKS)

          const pagesUser = yield* userWithTokens(a.url, 4)
          const dock = yield* newDock(a.url, pagesUser.tokens[3]!.token)
          const pageReplies = yield* splitOverBoth(18, (url, n) =>
            rawToolCall(url, pagesUser.tokens[n % 3]!.token, "push_web_page", {
              bucket: dock.path,
              content_type: "markdown",
              page_slug: `capped-${n}`,
              page_content: `# Capped ${n}`
            }))
          expect(outcomes(pageReplies)).toEqual({ ok: MAX_PAGES, tier_limit_exceeded: 18 - MAX_PAGES })
          const pages = yield* query((sql) =>
            Effect.all({
              rows: sql<{ n: number }>`select count(*)::int as n from parts where dock_id = ${dock.id}`,
              usage: sql<{ artifacts: number }>`select artifacts from dock_usage where dock_id = ${dock.id}`
            })
          )
          expect(pages.rows[0]!.n).toBe(MAX_PAGES)
          expect(pages.usage.map((row) =>
            row.artifacts
          )).toEqual([MAX_PAGES])

          const bytesUser = yield* userWithTokens(a.url, 4)
          const roomy = yield* newDock(a.url, bytesUser.tokens[3]!.token)
          const bigReplies = yield* splitOverBoth(9, (url, n) =>
            rawToolCall(url, bytesUser.tokens[n % 3]!.token, "push_web_page", {
              bucket: roomy.path,
              content_type: "markdown",
              page_slug: `big-${n}`,
              page_content: "x".repeat(PAGE_BYTES)
            }))
          const fit = Math.floor(MAX_DOCK_BYTES / PAGE_BYTES)
          expect(outcomes(bigReplies)).toEqual({ ok: fit, tier_limit_exceeded: 9 - fit })
          const bytes = yield* query((sql) =>
            sql<{ bytes: string }>`select bytes from dock_usage where dock_id = ${roomy.id}`
          )
          expect(bytes.map((row) => Number(row.bytes))).toEqual([fit * PAGE_BYTES])

          // A table is an artifact too: it goes in a Dock of its own.
          const tableDock = yield* newDock(a.url, pagesUser.tokens[3]!.token)
          const tableReply = yield* rawToolCall(a.url, pagesUser.tokens[3]!.token, "create_micro_db_table", {
            bucket: tableDock.path,
            name: "Capped",
            columns: [{ name: "Title", type: "text", required: true }]
          })
          const table = succeeded(tableReply).table
          const rowReplies = yield* splitOverBoth(12, (url, n) =>
            rawToolCall(url, pagesUser.tokens[n % 3]!.token, "insert_micro_db_row", {
              bucket: tableDock.path,
              table: table.slug,
              data: { title: `Row ${n}` }
            }))
          expect(outcomes(rowReplies)).toEqual({ ok: MAX_ROWS, tier_limit_exceeded: 12 - MAX_ROWS })
          const stored = yield* query((sql) =>
            sql<{ n: number }>`select count(*)::int as n from micro_db_rows where table_id = ${table.id}`
          )
          expect(stored[0]!.n).toBe(MAX_ROWS)
        })
    )

    it.effect("set_grounding_bucket through one process is what the other uses for the token's very next call", () =>
      Effect.gen(function*() {
        const { a, b } = yield* Instances
        const user = yield* userWithTokens(a.url, 1)
        const token = user.tokens[0]!.token
        const first = yield* newDock(a.url, token)
        const second = yield* newDock(b.url, token)
        for (const [dock, words] of [[first, "First Dock"], [second, "Second Dock"]] as const) {
          succeeded(
            yield* rawToolCall(a.url, token, "push_web_page", {
              bucket: dock.path,
              content_type: "html",
              page_slug: "home",
              page_content: `<p>${words}</p>`
            })
          )
        }
        const readHome = (url: string) =>
          Effect.map(
            rawToolCall(url, token, "get_web_page", { page_slug: "home" }),
            (reply) => JSON.stringify(succeeded(reply))
          )

        succeeded(yield* rawToolCall(a.url, token, "set_grounding_bucket", { bucket_path: first.path }))
        expect(yield* readHome(b.url)).toContain("First Dock")
        succeeded(yield* rawToolCall(b.url, token, "set_grounding_bucket", { bucket_path: second.path }))
        const next = yield* readHome(a.url)
        expect(next).toContain("Second Dock")
        expect(next).not.toContain("First Dock")
      }))

    // Last: it stops both processes.
    it.effect(
      "the sandbox sweep runs once per period across both processes: each lapsed sandbox expired and purged once, " +
        "no period swept twice; with one process stopped the other still sweeps",
      () =>
        Effect.gen(function*() {
          const { a, b } = yield* Instances
          yield* purged(yield* lapsedSandboxes([a.url, b.url], 8))
          yield* a.signal("SIGTERM")
          expect(yield* a.exit("30 seconds")).toEqual({ code: 0, signal: null })
          // Made after A exited: only B can sweep these.
          yield* purged(yield* lapsedSandboxes([b.url], 3))
          // B stops too, so that every claimed period's log line is written (a sweep finishes before shutdown).
          yield* b.signal("SIGTERM")
          expect(yield* b.exit("30 seconds")).toEqual({ code: 0, signal: null })

          const byA = sweptBy(a)
          const byB = sweptBy(b)
          // Across both processes' logs, each sandbox was expired once and purged once: no double work.
          expect(byA.expired + byB.expired).toBe(11)
          expect(byA.purged + byB.purged).toBe(11)
          expect(byA.purged).toBeLessThanOrEqual(8)
          // One counter row per period claimed; each run of either process is one of them, so no period ran
          // twice. Both processes tried (a count of 2) in periods where one of them ran.
          const periods = yield* query((sql) =>
            sql<{ count: number }>`select count from rate_limit_counters where key = ${SANDBOX_SWEEP_PERIOD_KEY}`
          )
          console.log(
            `Sandbox sweep over ${periods.length} periods of 1 s: A ran ${byA.runs}, B ran ${byB.runs}; both tried in ` +
              `${periods.filter((period) => period.count >= 2).length}; swept by A ${byA.purged}, by B ${byB.purged}`
          )
          expect(byA.runs + byB.runs).toBe(periods.length)
          expect(periods.some((period) => period.count >= 2)).toBe(true)
          expect(byB.runs).toBeGreaterThan(0)
        })
    )
  })
})
