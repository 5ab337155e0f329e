/** Runs the real `dock` command line in its own process, with the operator and agent variables cleared. */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as Path from "node:path"

export const REPO_ROOT = Path.resolve(import.meta.dirname, "../../../..")

export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `nodeArgs`: Node options after the ones that run the sources (e.g. another `--import`). */
export const dock = (
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  nodeArgs: ReadonlyArray<string> = []
) =>
  Effect.async<Run>((resume) => {
    execFile(
      process.execPath,
      [
        "--conditions=dock-source",
        "--import",
        "tsx",
        ...nodeArgs,
        Path.join(REPO_ROOT, "packages/cli/src/bin.ts"),
        ...args
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, DOCK_ADMIN_TOKEN: "", DOCK_BASE_URL: "", DOCK_CREDENTIALS_FILE: "", ...env },
        timeout: 60_000
      },
      (error, stdout, stderr) => resume(Effect.succeed({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }))
    )
  })

/** stdout of a --json run: exactly one JSON document. */
export const jsonOf = (run: Run) => {
  expect(run.code, run.stderr).toBe(0)
  expect(run.stderr).toBe("")
  return JSON.parse(run.stdout)
}

/** A failed run: exit code 1, nothing on stdout, one line on stderr. */
export const failureLine = (run: Run) => {
  expect(run.code).toBe(1)
  expect(run.stdout).toBe("")
  const lines = run.stderr.trim().split("\n")
  expect(lines).toHaveLength(1)
  return lines[0]!
}
