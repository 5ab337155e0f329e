/**
 * The process logger: logfmt in development, JSON lines in production, and in both anything shaped like a
 * Dock secret (MCP tokens, admin tokens, claim tokens, share links) replaced before it is written.
 */
import { Layer, Logger } from "effect"
import type { DockEnv } from "./Config.ts"

const SECRET_PATTERN = /\b(dock_(?:mcp|admin|reg|share)_)[A-Za-z0-9_-]+/g

export const redactSecrets = (text: string): string => text.replace(SECRET_PATTERN, "$1[REDACTED]")

export const loggerLayer = (env: DockEnv): Layer.Layer<never> =>
  Logger.replace(
    Logger.defaultLogger,
    (env === "production" ? Logger.jsonLogger : Logger.logfmtLogger).pipe(
      Logger.map(redactSecrets),
      Logger.withConsoleLog
    )
  )
