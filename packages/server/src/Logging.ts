/**
 * The process logger: logfmt in development, JSON lines in production, and in both anything shaped like a
 * Dock secret (MCP tokens, admin tokens, claim tokens, share links) replaced before it is written.
 *
 * The server (`serve`) writes the lines logged during one turn of the event loop together at its end
 * (setImmediate), one console.log of them all. Every request logs a line, and a write to stdout is a system call
 * that wakes its reader (a container's log collector, a terminal): under load, many requests finish in one turn and
 * share one write. No line waits past the turn it was logged in, and the lines of a turn still unwritten when the
 * process exits are written by its `exit` handler. A command that prints its own answer on stdout as well (`dock
 * migrate --json`) writes each line as it is logged, so that its lines and its answer keep their order.
 */
import { Layer, Logger } from "effect"
import process from "node:process"
import { setImmediate } from "node:timers"
import type { DockEnv } from "./Config.ts"

const SECRET_PATTERN = /\b(dock_(?:mcp|admin|reg|share)_)[A-Za-z0-9_-]+/g

export const redactSecrets = (text: string): string => text.replace(SECRET_PATTERN, "$1[REDACTED]")

/** The lines logged in this turn of the event loop, not yet written (one process, one stdout: one list). */
let unwritten: Array<string> = []
let exitHooked = false

const writeUnwritten = () => {
  if (unwritten.length === 0) return
  const lines = unwritten
  unwritten = []
  console.log(lines.join("\n"))
}

/** Queues a line for the end of this turn. */
const writeAtTurnEnd = (line: string) => {
  if (!exitHooked) {
    exitHooked = true
    process.once("exit", writeUnwritten)
  }
  if (unwritten.push(line) === 1) setImmediate(writeUnwritten)
}

/** How the lines reach stdout: each as it is logged, or a turn's lines in one write at the turn's end. */
export type LogWrites = "each" | "per-turn"

export const loggerLayer = (env: DockEnv, writes: LogWrites = "each"): Layer.Layer<never> => {
  const redacted = (env === "production" ? Logger.jsonLogger : Logger.logfmtLogger).pipe(Logger.map(redactSecrets))
  return Logger.replace(
    Logger.defaultLogger,
    writes === "each" ? Logger.withConsoleLog(redacted) : Logger.map(redacted, writeAtTurnEnd)
  )
}
