// What the command line loads: `dock --help` and an admin command load the CLI and the API contract only, never
// the server, the database, the MCP SDK or content processing (which took `--help` to ~6 s). Checked by recording
// every module the real process loads (scripts/import-trace.mjs).
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { dock, REPO_ROOT } from "./support/Dock.ts"

const traceHook = Path.join(REPO_ROOT, "scripts/import-trace.mjs")

/** `dock args` with every module it loads recorded: its run and the modules' URLs. */
const traced = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const trace = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-cli-trace-")), "modules.txt")
    const run = yield* dock(args, { DOCK_IMPORT_TRACE: trace }, ["--import", traceHook])
    // Each line is the module's URL and its importer's.
    return { run, modules: Fs.readFileSync(trace, "utf8").trim().split("\n").map((line) => line.split(" ")[0]!) }
  })

/** What neither --help nor a client command may load. */
const heavy = [
  "/packages/server/",
  "/packages/mcp/",
  "/packages/domain/src/index.ts",
  "/packages/domain/src/Database/",
  "/packages/domain/src/Content/ContentJobs.ts",
  "/packages/domain/src/Content/MarkdownRender.ts",
  "/packages/domain/src/Content/HtmlSanitizer.ts",
  "/packages/domain/src/Content/FrontMatter.ts",
  "/node_modules/@electric-sql/",
  "/node_modules/@modelcontextprotocol/",
  "/node_modules/@effect/sql",
  "/node_modules/pg/",
  "/node_modules/nodemailer/",
  "/node_modules/sharp/",
  "/node_modules/micromark",
  "/node_modules/sanitize-html/"
]

const loadedHeavy = (modules: ReadonlyArray<string>) => modules.filter((m) => heavy.some((part) => m.includes(part)))

describe("what the dock command loads", () => {
  it.effect("--help loads the CLI and the API contract, nothing of the server", () =>
    Effect.gen(function*() {
      const { modules, run } = yield* traced(["--help"])
      expect(run.code).toBe(0)
      for (const command of ["serve", "migrate", "users", "tokens", "members", "sources", "share", "sandboxes"]) {
        expect(run.stdout).toContain(command)
      }
      expect(modules.some((m) => m.endsWith("/packages/domain/src/api.ts"))).toBe(true)
      expect(loadedHeavy(modules)).toEqual([])
    }), 120_000)

  it.effect("an admin command loads only the HTTP client", () =>
    Effect.gen(function*() {
      const { modules, run } = yield* traced(["users", "list", "--url", "http://127.0.0.1:9", "--admin-token", "x"])
      expect(run.code).toBe(1)
      expect(run.stderr).toContain("Cannot reach the Dock server at http://127.0.0.1:9")
      expect(modules.some((m) => m.includes("/@effect/platform/dist/esm/HttpApiClient.js"))).toBe(true)
      expect(loadedHeavy(modules)).toEqual([])
    }), 120_000)
})
