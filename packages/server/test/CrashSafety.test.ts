/**
 * Nothing acknowledged is lost when the server is killed (issue 19, "Crash safety"): the real server process on
 * this run's database (the embedded data directory, or PostgreSQL with DOCK_TEST_DATABASE_URL) takes pushes from 8
 * MCP writers and Micro DB inserts from 2 more, is killed with SIGKILL mid-stream, and started again on the same
 * data; every write it answered is then read back over MCP with its version, content and rows. On the embedded
 * database the killed process's socket folder is gone after the restart.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { unique } from "./support/Http.ts"
import { type AnyClient, connectMcp } from "./support/McpClients.ts"
import { ok } from "./support/McpTools.ts"
import { ADMIN_TOKEN, attempt, processDatabase, userWithTokens } from "./support/ProcessMcp.ts"
import { pollUntil, spawnServer } from "./support/ServerProcess.ts"

const PAGE_WRITERS = 8
const ROW_WRITERS = 2
const ROWS_PER_INSERT = 5
/** Each page writer cycles through this many pages of its own, so most pushes make a new version. */
const PAGES_PER_WRITER = 2
/**
 * The kill comes once this many page pushes are acknowledged (the row writers, cheaper, make several times as many
 * calls meanwhile), or after KILL_AFTER_MS, whichever is first.
 */
const KILL_AT_PAGES = 64
const KILL_AFTER_MS = 20_000

interface PageAck {
  readonly tool: "push_web_page" | "push_markdown"
  readonly slug: string
  readonly version: number
  readonly content: string
}
interface RowAck {
  readonly id: string
  readonly data: Record<string, unknown>
}

const SERVER_ENV = {
  DOCK_ADMIN_TOKEN: ADMIN_TOKEN,
  // The writers write as fast as the server answers: per-token rate limits would refuse most of it.
  DOCK_TOKEN_WRITES_PER_MINUTE: "0",
  DOCK_TOKEN_REQUESTS_PER_MINUTE: "0"
}

/** The `dock-pg-*` socket folders in the temp directory whose owner file names `pid`. */
const socketDirsOf = (pid: number) =>
  Fs.readdirSync(Os.tmpdir())
    .filter((name) => name.startsWith("dock-pg-"))
    .map((name) => Path.join(Os.tmpdir(), name))
    .filter((dir) => {
      try {
        return Fs.readFileSync(Path.join(dir, "owner.pid"), "utf8").trim() === String(pid)
      } catch {
        return false
      }
    })

describe("crash safety", () => {
  it.live(
    "SIGKILL while 8 writers push pages and 2 insert Micro DB rows: after a restart every acknowledged write is there",
    () =>
      Effect.gen(function*() {
        const database = yield* processDatabase
        const env = { ...database.env, ...SERVER_ENV }
        const first = yield* spawnServer(env, { within: "60 seconds" })
        const user = yield* userWithTokens(first.url, PAGE_WRITERS + ROW_WRITERS)
        const run = unique()
        const clients = yield* Effect.all(
          user.tokens.map((token) => connectMcp(first.url, token, "v2 modern")),
          { concurrency: "unbounded" }
        )
        const table = ok(
          yield* Effect.flatMap(
            attempt(clients[0]!, "create_micro_db_table", {
              bucket: user.bucket,
              name: "Crash rows",
              columns: [{ name: "Label", type: "text", required: true }, { name: "Seq", type: "integer" }]
            }),
            (outcome) => outcome._tag === "Answered" ? Effect.succeed(outcome.result) : Effect.die(outcome.error)
          )
        ).table.id as string

        const pages: Array<PageAck> = []
        const rows: Array<RowAck> = []
        /** Answers that were refusals rather than acknowledgements: none are expected. */
        const refusals: Array<string> = []
        /** Acknowledged calls: page pushes and row inserts. */
        const acks = () => pages.length + inserts
        let inserts = 0

        // A writer writes until a call fails (the server is gone); only an answer that succeeded is recorded.
        const pageWriter = (client: AnyClient, writer: number) =>
          Effect.gen(function*() {
            const tool = writer % 2 === 0 ? "push_web_page" as const : "push_markdown" as const
            for (let n = 0;; n++) {
              const slug = `crash-${run}-w${writer}-p${n % PAGES_PER_WRITER}`
              const marker = `writer ${writer} write ${n} of run ${run}`
              const content = tool === "push_web_page" ? `<p>${marker}</p>` : `# Write ${n}\n\n${marker}\n`
              const outcome = yield* attempt(client, tool, {
                bucket: user.bucket,
                page_slug: slug,
                page_title: `Crash ${writer} ${n % PAGES_PER_WRITER}`,
                page_content: content
              })
              if (outcome._tag === "Failed") return
              if (outcome.result.isError === true) {
                refusals.push(outcome.result.content[0]!.text)
                continue
              }
              const part = outcome.result.structuredContent.part as { slug: string; version: number }
              pages.push({ tool, slug: part.slug, version: part.version, content })
            }
          })
        const rowWriter = (client: AnyClient, writer: number) =>
          Effect.gen(function*() {
            for (let n = 0;; n++) {
              const batch = Array.from(
                { length: ROWS_PER_INSERT },
                (_, k) => ({ label: `rows ${writer} insert ${n} row ${k}`, seq: n * ROWS_PER_INSERT + k })
              )
              const outcome = yield* attempt(client, "insert_micro_db_rows", {
                bucket: user.bucket,
                table,
                rows: batch
              })
              if (outcome._tag === "Failed") return
              if (outcome.result.isError === true) {
                refusals.push(outcome.result.content[0]!.text)
                continue
              }
              inserts++
              for (const row of outcome.result.structuredContent.rows as Array<RowAck>) {
                rows.push({ id: row.id, data: row.data })
              }
            }
          })

        const writers = yield* Effect.forkAll([
          ...clients.slice(0, PAGE_WRITERS).map(pageWriter),
          ...clients.slice(PAGE_WRITERS).map((client, n) => rowWriter(client, n))
        ])
        const started = Date.now()
        yield* pollUntil(
          "acknowledged writes before the kill",
          Effect.sync(() => pages.length >= KILL_AT_PAGES || Date.now() - started > KILL_AFTER_MS),
          { within: "60 seconds", every: "20 millis" }
        )
        yield* first.signal("SIGKILL")
        expect(yield* first.exit("20 seconds")).toEqual({ code: null, signal: "SIGKILL" })
        // Every writer stops at its first failed call: the server is gone.
        yield* Fiber.join(writers).pipe(Effect.timeout("30 seconds"))
        const writingMillis = Date.now() - started
        expect(refusals).toEqual([])
        // Enough writes to mean something, new pages and new versions among them.
        expect(pages.length).toBeGreaterThanOrEqual(PAGE_WRITERS * 2)
        expect(pages.some((ack) => ack.version > 1)).toBe(true)
        expect(inserts).toBeGreaterThanOrEqual(ROW_WRITERS * 2)
        const leftBehind = socketDirsOf(first.pid)
        if (database.label === "embedded PGlite") expect(leftBehind).toHaveLength(1)

        const second = yield* spawnServer(env, { within: "60 seconds" })
        // The restart removed the killed process's socket folder.
        expect(leftBehind.filter((dir) => Fs.existsSync(dir))).toEqual([])
        const reader = yield* connectMcp(second.url, user.tokens[0]!, "v2 modern")
        const read = (name: string, args: Record<string, unknown>) =>
          Effect.flatMap(attempt(reader, name, args), (outcome) =>
            outcome._tag === "Answered"
              ? Effect.succeed(outcome.result)
              : Effect.die(new Error(`${name}: ${outcome.error}`)))

        // Each acknowledged page version reads back with the content that was pushed.
        const foundPages = yield* Effect.all(
          pages.map((ack) =>
            Effect.map(
              read("get_web_page_version", { bucket: user.bucket, web_page: ack.slug, version: ack.version }),
              (result) => result.isError !== true && result.structuredContent.content === ack.content
            )
          ),
          { concurrency: 8 }
        )
        // Each page is at least at its last acknowledged version (one more if a push was in flight at the kill).
        const lastAcked = new Map<string, number>()
        for (const ack of pages) lastAcked.set(ack.slug, Math.max(ack.version, lastAcked.get(ack.slug) ?? 0))
        let unacknowledgedVersions = 0
        for (const [slug, version] of lastAcked) {
          const current = ok(yield* read("get_web_page", { bucket: user.bucket, page_slug: slug }))
          expect(current.part.version).toBeGreaterThanOrEqual(version)
          expect(current.part.version).toBeLessThanOrEqual(version + 1)
          unacknowledgedVersions += current.part.version - version
        }

        // Every acknowledged row is there with its data.
        const stored = new Map<string, unknown>()
        for (let offset = 0;; offset += 500) {
          const page = ok(
            yield* read("query_micro_db_rows", { bucket: user.bucket, table, limit: 500, offset })
          ) as { rows: Array<RowAck> }
          for (const row of page.rows) stored.set(row.id, row.data)
          if (page.rows.length < 500) break
        }
        const foundRows = rows.filter((ack) => JSON.stringify(stored.get(ack.id)) === JSON.stringify(ack.data))
        // Unacknowledged rows can only come from the one insert each row writer had in flight at the kill.
        expect(stored.size - rows.length).toBeLessThanOrEqual(ROW_WRITERS * ROWS_PER_INSERT)

        const pagesFound = foundPages.filter(Boolean).length
        const versions = pages.filter((ack) => ack.version > 1).length
        console.log(
          `Crash safety on ${database.label}: SIGKILL after ${writingMillis} ms of writing. Acknowledged ` +
            `${acks()} writes: ${pages.length} page pushes (${versions} of them new versions of a page) and ` +
            `${inserts} Micro DB inserts of ${rows.length} rows. Found after the restart: ${pagesFound} page ` +
            `versions with their content and ${foundRows.length} rows with their data. Committed but never ` +
            `acknowledged (in flight at the kill): ${unacknowledgedVersions} page versions, ` +
            `${stored.size - rows.length} rows.`
        )
        expect({ pages: pagesFound, rows: foundRows.length }).toEqual({ pages: pages.length, rows: rows.length })
      }).pipe(Effect.scoped),
    110_000
  )
})
