/**
 * `dock sources add|list|archive` in real processes against an in-process server: a file's text added with the
 * media type from its extension (`--json` prints the source), the title and origin flags, archiving with
 * `--json`, the human lines, and failures (an unknown extension, a missing or non-UTF-8 file, an unsupported
 * media type, an unknown Dock or source) as exit code 1 with one line on stderr.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { adminOf, unique } from "./support/Admin.ts"
import { dock, failureLine, jsonOf } from "./support/Dock.ts"
import { cliTestServer, serverUrl } from "./support/Server.ts"

const ADMIN_TOKEN = "dock_admin_cli-sources-test-token"
const admin = adminOf(ADMIN_TOKEN, "src")
const adminFlags = admin.flags
const createUser = admin.createUser
const TIMEOUT = 120_000

const filesDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-cli-sources-files-"))

const { RunningServer } = (() => {
  const server = cliTestServer("sources", ADMIN_TOKEN)
  afterAll(() => {
    Fs.rmSync(server.dataDir, { recursive: true, force: true })
    Fs.rmSync(filesDir, { recursive: true, force: true })
  })
  return server
})()

/** A file with this name and content in a fresh directory; returns its path. */
const writeFile = (name: string, content: string | Uint8Array) => {
  const dir = Fs.mkdtempSync(Path.join(filesDir, "f-"))
  const file = Path.join(dir, name)
  Fs.writeFileSync(file, content)
  return file
}

/** GET /admin/sources?dock= straight over HTTP. */
const sourcesOf = (url: string, dockName: string) =>
  admin.get<Array<Record<string, unknown>>>(url, `/admin/sources?dock=${encodeURIComponent(dockName)}`)

const SOURCE_KEYS = ["archived", "bucket_id", "created_at", "media_type", "origin", "size_bytes", "source_id", "title"]

layer(RunningServer, { timeout: TIMEOUT, excludeTestServices: true })("dock sources", (it) => {
  it.effect(
    "add --json prints {source_id, …}; the Markdown's front matter is dropped; archive --json marks it archived",
    () =>
      Effect.gen(function*() {
        const url = yield* serverUrl
        const owner = yield* createUser(url)
        const path = `${owner.username}/${owner.username}`
        const file = writeFile(
          "harbour-guide.md",
          "---\ntitle: Harbour guide\n---\n# Harbour\n\nBoats leave at dawn.\n"
        )

        const added = jsonOf(yield* dock(["sources", "add", "--dock", path, file, ...adminFlags(url), "--json"]))
        expect(Object.keys(added).sort()).toEqual(SOURCE_KEYS)
        expect(added).toEqual({
          source_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          bucket_id: owner.default_bucket_id,
          title: "Harbour guide",
          origin: "harbour-guide.md",
          media_type: "text/markdown",
          size_bytes: Buffer.byteLength("# Harbour\n\nBoats leave at dawn.\n"),
          archived: false,
          created_at: expect.any(String)
        })
        expect(yield* sourcesOf(url, path)).toEqual([added])

        const archived = jsonOf(yield* dock(["sources", "archive", added.source_id, ...adminFlags(url), "--json"]))
        expect(archived).toEqual({ ...added, archived: true })
        expect(yield* sourcesOf(url, owner.default_bucket_id)).toEqual([archived])
      }),
    TIMEOUT
  )

  it.effect(
    "the media type comes from the extension; --title, --origin and --media-type override; list --json",
    () =>
      Effect.gen(function*() {
        const url = yield* serverUrl
        const owner = yield* createUser(url)
        const dockId = owner.default_bucket_id
        const text = jsonOf(
          yield* dock([
            "sources",
            "add",
            "--dock",
            dockId,
            writeFile("notes.TXT", "Plain <b>text</b>\n"),
            "--title",
            "My notes",
            ...adminFlags(url),
            "--json"
          ])
        )
        expect(text).toMatchObject({ title: "My notes", origin: "notes.TXT", media_type: "text/plain", size_bytes: 18 })

        const html = jsonOf(
          yield* dock([
            "sources",
            "add",
            "--dock",
            dockId,
            writeFile("page.htm", "<h1>Tides</h1><script>x()</script><p>High water</p>"),
            "--origin",
            "https://example.com/tides",
            ...adminFlags(url),
            "--json"
          ])
        )
        // the text of the HTML is what is kept: "Tides\n\nHigh water"
        expect(html).toMatchObject({
          title: "tides",
          origin: "https://example.com/tides",
          media_type: "text/html",
          size_bytes: 17
        })

        const forced = jsonOf(
          yield* dock([
            "sources",
            "add",
            "--dock",
            dockId,
            writeFile("README", "# Read me\n"),
            "--media-type",
            "text/markdown",
            ...adminFlags(url),
            "--json"
          ])
        )
        expect(forced).toMatchObject({ title: "README", media_type: "text/markdown" })

        const listed = jsonOf(yield* dock(["sources", "list", "--dock", dockId, ...adminFlags(url), "--json"]))
        expect(listed).toEqual([text, html, forced])
      }),
    TIMEOUT
  )

  it.effect("human output: Added, the list lines, Archived and No sources", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const owner = yield* createUser(url)
      const path = `${owner.username}/${owner.username}`
      const empty = yield* dock(["sources", "list", "--dock", path], {
        DOCK_ADMIN_TOKEN: ADMIN_TOKEN,
        DOCK_BASE_URL: url
      })
      expect(empty.code, empty.stderr).toBe(0)
      expect(empty.stdout.trim()).toBe("No sources")

      const added = yield* dock(["sources", "add", "--dock", path, writeFile("a.txt", "hello"), ...adminFlags(url)])
      expect(added.code, added.stderr).toBe(0)
      const [source] = yield* sourcesOf(url, path)
      const line = `${
        source!.source_id
      }  a.txt  text/plain  5 bytes  from a.txt  (Dock ${owner.default_bucket_id}, added ${source!.created_at})`
      expect(added.stdout.trim()).toBe(`Added ${line}`)
      expect((yield* dock(["sources", "list", "--dock", path, ...adminFlags(url)])).stdout.trim()).toBe(line)
      const archived = yield* dock(["sources", "archive", String(source!.source_id), ...adminFlags(url)])
      expect(archived.code).toBe(0)
      expect(archived.stdout.trim()).toBe(`Archived ${line}  ARCHIVED`)
    }), TIMEOUT)

  it.effect(
    "failures found before sending are exit code 1 with one line on stderr, and nothing is added",
    () =>
      Effect.gen(function*() {
        const url = yield* serverUrl
        const owner = yield* createUser(url)
        const path = `${owner.username}/${owner.username}`

        expect(
          failureLine(
            yield* dock([
              "sources",
              "add",
              "--dock",
              path,
              writeFile("paper.pdf", "%PDF-1.7"),
              ...adminFlags(url),
              "--json"
            ])
          )
        )
          .toBe(
            "dock: Cannot tell the media type of paper.pdf from its extension (.txt, .md, .markdown, .html, .htm); pass --media-type"
          )
        const missing = Path.join(filesDir, `missing-${unique()}.txt`)
        expect(failureLine(yield* dock(["sources", "add", "--dock", path, missing, ...adminFlags(url)])))
          .toBe(`dock: Cannot read ${missing}: no such file`)
        const latin1 = writeFile("latin1.txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9]))
        expect(failureLine(yield* dock(["sources", "add", "--dock", path, latin1, ...adminFlags(url)])))
          .toBe(`dock: ${latin1} is not UTF-8 text`)
        expect(yield* sourcesOf(url, path)).toEqual([])
      }),
    TIMEOUT
  )

  it.effect("failures the server finds are exit code 1 with the error code on one line", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const owner = yield* createUser(url)
      const path = `${owner.username}/${owner.username}`
      const pdf = writeFile("paper.pdf", "%PDF-1.7")
      expect(
        failureLine(
          yield* dock([
            "sources",
            "add",
            "--dock",
            path,
            pdf,
            "--media-type",
            "application/pdf",
            ...adminFlags(url),
            "--json"
          ])
        )
      )
        .toBe(
          `dock: validation_error: media_type "application/pdf" is not supported: a source is text/plain, text/markdown or text/html`
        )
      expect(
        failureLine(yield* dock(["sources", "add", "--dock", path, writeFile("empty.txt", ""), ...adminFlags(url)]))
      )
        .toBe("dock: validation_error: content has no text")
      const nowhere = `${owner.username}/no-such-${unique()}`
      expect(
        failureLine(
          yield* dock(["sources", "add", "--dock", nowhere, writeFile("a.md", "x"), ...adminFlags(url), "--json"])
        )
      )
        .toBe(`dock: not_found: No Dock "${nowhere}"`)
      const unknown = crypto.randomUUID()
      expect(failureLine(yield* dock(["sources", "archive", unknown, ...adminFlags(url), "--json"])))
        .toBe(`dock: not_found: No source "${unknown}"`)
      expect(
        failureLine(yield* dock(["sources", "list", "--dock", path, "--url", url, "--admin-token", "dock_admin_wrong"]))
      )
        .toBe(`dock: The server at ${url} rejected the admin token: Missing or wrong admin token`)
      expect(yield* sourcesOf(url, path)).toEqual([])
    }), TIMEOUT)
})
