/**
 * Helpers for tests of agent registration and claim over real HTTP: the request bodies, the outbox mailer's
 * `.eml` files (where a claim code is read from), and a guard that keeps a counted burst of requests inside one
 * fixed rate-limit window.
 */
import { Duration, Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { postJson } from "./Http.ts"
import { pollUntil } from "./ServerProcess.ts"

export const ANONYMOUS = { type: "anonymous", requested_credential_type: "mcp_write_token" } as const

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** `dock_mcp_` + 43 base62 characters of secret + a 6-character checksum. */
export const MCP_TOKEN = /^dock_mcp_[0-9A-Za-z]{49}$/

/** POST /agent/auth: an anonymous registration unless `body` says otherwise. */
export const register = (baseUrl: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  postJson(`${baseUrl}/agent/auth`, { ...ANONYMOUS, ...body }, headers)

/** POST /agent/auth/claim */
export const claim = (baseUrl: string, body: unknown) => postJson(`${baseUrl}/agent/auth/claim`, body)

/** Every six-digit number standing alone in `text`. */
export const sixDigitNumbers = (text: string): ReadonlyArray<string> => text.match(/(?<![0-9])[0-9]{6}(?![0-9])/g) ?? []

/** The one six-digit number of a claim mail's text; fails when there is not exactly one. */
export const codeIn = (text: string): string => {
  const numbers = sixDigitNumbers(text)
  if (numbers.length !== 1) {
    throw new Error(`Expected exactly one six-digit number in the mail, found ${numbers.length}:\n${text}`)
  }
  return numbers[0]!
}

/** Any other six-digit code: what a wrong guess looks like. */
export const otherCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0")

export interface OutboxMail {
  readonly file: string
  readonly to: string
  readonly subject: string
  /** The body, with LF line ends. */
  readonly text: string
}

/** The `.eml` files the outbox mailer wrote under DOCK_DATA_DIR/outbox, oldest first. */
export const outbox = (dataDir: string) =>
  Effect.sync((): ReadonlyArray<OutboxMail> => {
    const directory = Path.join(dataDir, "outbox")
    if (!Fs.existsSync(directory)) return []
    return Fs.readdirSync(directory).filter((name) => name.endsWith(".eml")).sort().map((name) => {
      const file = Path.join(directory, name)
      const raw = Fs.readFileSync(file, "utf8")
      const split = raw.indexOf("\r\n\r\n")
      const head = raw.slice(0, split)
      const header = (field: string) =>
        head.split("\r\n").find((line) => line.toLowerCase().startsWith(`${field.toLowerCase()}:`))?.slice(
          field.length + 1
        )
          .trim() ?? ""
      return { file, to: header("To"), subject: header("Subject"), text: raw.slice(split + 4).replace(/\r\n/g, "\n") }
    })
  })

/** The mails written to `email`, oldest first. */
export const outboxTo = (dataDir: string, email: string) =>
  Effect.map(outbox(dataDir), (mails) => mails.filter((mail) => mail.to.toLowerCase() === email.toLowerCase()))

/** The code of the one mail written to `email` (each test mails a fresh address once). */
export const onlyCodeTo = (dataDir: string, email: string) =>
  // A sign-in code is mailed after the answer (the claim's before it): wait for the mail to be written.
  pollUntil(
    `a mail to ${email} in the outbox`,
    Effect.map(outboxTo(dataDir, email), (mails) => mails.length > 0),
    { within: "10 seconds" }
  ).pipe(
    Effect.orElse(() => Effect.void),
    Effect.zipRight(outboxTo(dataDir, email))
  ).pipe(Effect.flatMap((mails) =>
    mails.length === 1
      ? Effect.sync(() => codeIn(mails[0]!.text))
      : Effect.dieMessage(`Expected one mail to ${email} in the outbox, found ${mails.length}`)
  ))

/**
 * Rate limits count in fixed windows (a minute, an hour, a UTC day). A test that expects an exact count waits
 * for the next window when the current one ends within `margin` — rare, and never longer than the margin —
 * so that its burst is counted in one window.
 */
export const awayFromWindowEnd = (window: Duration.DurationInput, margin: Duration.DurationInput = "20 seconds") =>
  Effect.suspend(() => {
    const size = Duration.toMillis(window)
    const now = Date.now()
    const left = Math.floor(now / size) * size + size - now
    return left < Duration.toMillis(margin) ? Effect.sleep(Duration.millis(left + 100)) : Effect.void
  })

/** Counts replies by status. */
export const statusCounts = (replies: ReadonlyArray<{ readonly status: number }>) => {
  const counts: Record<number, number> = {}
  for (const reply of replies) counts[reply.status] = (counts[reply.status] ?? 0) + 1
  return counts
}
