// What the server loads at start: its module graph holds no content processing (Markdown parsers, the HTML
// sanitizer, YAML: only the content workers load them) and no mail library (loaded when SMTP is configured).
// Checked by recording every module a real process loads while importing the server (scripts/import-trace.mjs).
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { REPO_ROOT } from "./support/ServerProcess.ts"

const loadedByServer = Effect.async<ReadonlyArray<string>, Error>((resume) => {
  const trace = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-server-trace-")), "modules.txt")
  execFile(
    process.execPath,
    [
      "--conditions=dock-source",
      "--import",
      "tsx",
      "--import",
      Path.join(REPO_ROOT, "scripts/import-trace.mjs"),
      "--input-type=module",
      "-e",
      `await import(${JSON.stringify(Path.join(REPO_ROOT, "packages/server/src/Program.ts"))})`
    ],
    { cwd: REPO_ROOT, env: { ...process.env, DOCK_IMPORT_TRACE: trace }, timeout: 120_000 },
    (error, _stdout, stderr) =>
      resume(
        error
          ? Effect.fail(new Error(`importing the server failed: ${stderr}`))
          // Each line is the module's URL and its importer's.
          : Effect.succeed(Fs.readFileSync(trace, "utf8").trim().split("\n").map((line) => line.split(" ")[0]!))
      )
  )
})

it.effect("the server loads no content processing and no mail library at start", () =>
  Effect.gen(function*() {
    const modules = yield* loadedByServer
    expect(modules.some((m) => m.endsWith("/packages/server/src/Program.ts"))).toBe(true)
    expect(modules.some((m) => m.endsWith("/packages/domain/src/Content/ContentWorkers.ts"))).toBe(true)
    const unwanted = [
      "/packages/domain/src/Content/ContentJobs.ts",
      "/packages/domain/src/Content/MarkdownRender.ts",
      "/packages/domain/src/Content/HtmlSanitizer.ts",
      "/packages/domain/src/Content/FrontMatter.ts",
      "/packages/domain/src/Content/SourceText.ts",
      "/node_modules/micromark",
      "/node_modules/mdast-",
      "/node_modules/sanitize-html/",
      "/node_modules/yaml/",
      "/node_modules/nodemailer/",
      "/node_modules/sharp/"
    ]
    expect(modules.filter((m) => unwanted.some((part) => m.includes(part)))).toEqual([])
  }), 120_000)
