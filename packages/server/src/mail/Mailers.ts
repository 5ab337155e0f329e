/**
 * The two Mailer implementations: SMTP through nodemailer when DOCK_SMTP_URL is set, otherwise an `.eml` file
 * per message in DOCK_DATA_DIR/outbox (mode 0600) and a log line naming the file — never the message body.
 */
import { Mailer, MailError, type OutgoingMail } from "@dock/domain"
import { Effect, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import type { ServerConfig } from "../Config.ts"

const smtpMailer = (url: Redacted.Redacted, from: string) =>
  Layer.scoped(
    Mailer,
    Effect.gen(function*() {
      // Loaded here rather than at start: a server without SMTP never needs nodemailer's few dozen modules.
      const nodemailer = yield* Effect.promise(() => import("nodemailer"))
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() => nodemailer.default.createTransport(Redacted.value(url))),
        (transport) => Effect.sync(() => transport.close())
      )
      return Mailer.of({
        send: (mail: OutgoingMail) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text }),
            catch: (cause) => new MailError({ message: `SMTP delivery to ${mail.to} failed`, cause })
          }).pipe(
            Effect.tap(() => Effect.logInfo(`Mail "${mail.subject}" sent to ${mail.to}`)),
            Effect.tapError((error) => Effect.logWarning(error.message, error.cause)),
            Effect.asVoid
          )
      })
    })
  )

/** RFC 5322 text of one message; header values are single-line. */
const emlOf = (from: string, mail: OutgoingMail, date: Date) => {
  const header = (value: string) => value.replace(/[\r\n]+/g, " ")
  return [
    `From: ${header(from)}`,
    `To: ${header(mail.to)}`,
    `Subject: ${header(mail.subject)}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: <${randomUUID()}@dock.local>`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: 8bit",
    "",
    mail.text.replace(/\r?\n/g, "\r\n"),
    ""
  ].join("\r\n")
}

const outboxMailer = (directory: string, from: string) =>
  Layer.succeed(
    Mailer,
    Mailer.of({
      send: (mail) =>
        Effect.tryPromise({
          try: async () => {
            await Fs.mkdir(directory, { recursive: true, mode: 0o700 })
            const date = new Date()
            const file = Path.join(directory, `${date.toISOString().replace(/[:.]/g, "-")}-${randomUUID()}.eml`)
            await Fs.writeFile(file, emlOf(from, mail, date), { mode: 0o600 })
            return file
          },
          catch: (cause) => new MailError({ message: `Could not write mail to ${directory}`, cause })
        }).pipe(
          Effect.tap((file) =>
            Effect.logInfo(`Mail "${mail.subject}" to ${mail.to} written to ${file} (no DOCK_SMTP_URL)`)
          ),
          Effect.asVoid
        )
    })
  )

export const mailerLayer = (config: ServerConfig): Layer.Layer<Mailer> =>
  Option.match(config.smtpUrl, {
    onSome: (url) => smtpMailer(url, config.mailFrom),
    onNone: () => outboxMailer(Path.join(config.dataDir, "outbox"), config.mailFrom)
  })
