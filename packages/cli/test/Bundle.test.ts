// The bundle `npm start` and `npm run dock` run (scripts/bundle.mjs): built from the sources, rebuilt when one of
// them changed and only then, and the CLI in it answers --help loading a handful of files and nothing of the
// database, the mail library or sharp.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { REPO_ROOT } from "./support/Dock.ts"

const meta = Path.join(REPO_ROOT, "bundle/meta.json")

const node = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.async<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resume) => {
    execFile(
      process.execPath,
      args,
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) => resume(Effect.succeed({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }))
    )
  })

const build = node([Path.join(REPO_ROOT, "scripts/bundle.mjs")]).pipe(
  Effect.tap((run) => expect(run.code, run.stderr).toBe(0))
)

const builtAt = () => Fs.statSync(meta).mtimeMs

describe("the bundle", () => {
  it.effect("is rebuilt when a source it was built from changed, and only then", () =>
    Effect.gen(function*() {
      yield* build
      const first = builtAt()
      yield* build
      expect(builtAt()).toBe(first)
      // A source newer than the bundle (its content unchanged).
      const source = Path.join(REPO_ROOT, "packages/cli/src/Cli.ts")
      const later = new Date(first + 2000)
      Fs.utimesSync(source, later, later)
      yield* build
      expect(builtAt()).toBeGreaterThan(first)
    }), 180_000)

  it.effect(
    "its CLI answers --help from a few files, loading nothing of the database, mail or images",
    () =>
      Effect.gen(function*() {
        yield* build
        const trace = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-bundle-trace-")), "modules.txt")
        const run = yield* node(
          [
            "--import",
            Path.join(REPO_ROOT, "scripts/import-trace.mjs"),
            Path.join(REPO_ROOT, "bundle/bin.js"),
            "--help"
          ],
          { DOCK_IMPORT_TRACE: trace }
        )
        expect(run.code, run.stderr).toBe(0)
        for (const command of ["serve", "migrate", "users", "tokens"]) expect(run.stdout).toContain(command)
        // Each line is a module's URL and its importer's; a module imported from several places has several lines.
        const lines = Fs.readFileSync(trace, "utf8").trim().split("\n")
        const files = [...new Set(lines.map((line) => line.split(" ")[0]!))].filter((url) => url.startsWith("file:"))
        expect(files.every((url) => url.includes("/bundle/")), files.join("\n")).toBe(true)
        expect(files.length, files.join("\n")).toBeLessThan(10)
      }),
    180_000
  )
})
