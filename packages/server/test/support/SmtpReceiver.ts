/**
 * A real SMTP receiver (the `smtp-server` package) on 127.0.0.1 for tests that read what the server mails: the
 * claim codes (Smtp.test.ts) and the web app's sign-in codes (WebSignIn, WebBrowser).
 */
import { Context, Effect, Layer } from "effect"
import type * as Net from "node:net"
import { SMTPServer } from "smtp-server"
import { pollUntil } from "./ServerProcess.ts"

export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

export interface Receiver {
  readonly port: number
  readonly received: () => ReadonlyArray<ReceivedMail>
  /** Listens again on the same port (after `stop`). */
  readonly start: Effect.Effect<void>
  readonly stop: Effect.Effect<void>
}

export class SmtpReceiver extends Context.Tag("test/SmtpReceiver")<SmtpReceiver, Receiver>() {}

const makeSmtpServer = (received: Array<ReceivedMail>) =>
  new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    closeTimeout: 1_000,
    onData(stream, session, callback) {
      let raw = ""
      stream.setEncoding("utf8")
      stream.on("data", (chunk: string) => (raw += chunk))
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((address) => address.address),
          raw
        })
        callback()
      })
    }
  })

const listen = (server: SMTPServer, port: number) =>
  Effect.async<number>((resume) => {
    const net: Net.Server = server.listen(port, "127.0.0.1", () =>
      resume(Effect.succeed((net.address() as Net.AddressInfo).port)))
  })

const close = (server: SMTPServer) => Effect.async<void>((resume) => server.close(() => resume(Effect.void)))

/** A receiver on 127.0.0.1:0 that can be stopped and started again on its port, closed with the scope. */
export const SmtpReceiverLive = Layer.scoped(
  SmtpReceiver,
  Effect.gen(function*() {
    const received: Array<ReceivedMail> = []
    let current: SMTPServer | undefined = makeSmtpServer(received)
    const port = yield* listen(current, 0)
    const stop = Effect.suspend(() => {
      const server = current
      current = undefined
      return server === undefined ? Effect.void : close(server)
    })
    const start = Effect.suspend(() => {
      if (current !== undefined) return Effect.void
      current = makeSmtpServer(received)
      return Effect.asVoid(listen(current, port))
    })
    yield* Effect.addFinalizer(() => stop)
    return { port, received: () => [...received], start, stop }
  })
)

/** The text of a single-part message, decoded from its transfer encoding. */
export const bodyText = (raw: string) => {
  const split = raw.indexOf("\r\n\r\n")
  const head = raw.slice(0, split)
  const body = raw.slice(split + 4)
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(head)?.[1]?.toLowerCase()
  if (encoding === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
  if (encoding === "quoted-printable") {
    return Buffer.from(
      body.replace(/=\r?\n/g, "").replace(
        /=([0-9A-F]{2})/gi,
        (_, hex: string) => String.fromCharCode(parseInt(hex, 16))
      ),
      "latin1"
    ).toString("utf8")
  }
  return body
}

export const header = (raw: string, name: string) =>
  new RegExp(`^${name}:\\s*(.*)$`, "im").exec(raw.slice(0, raw.indexOf("\r\n\r\n")))?.[1]?.trim()

/** Waits (bounded) for a message to `email` and returns the ones received for it. */
export const mailTo = (receiver: Receiver, email: string, count = 1) =>
  Effect.gen(function*() {
    const to = () => receiver.received().filter((mail) => mail.to.includes(email))
    yield* pollUntil(`mail to ${email}`, Effect.sync(() => to().length >= count), { within: "10 seconds" })
    return to()
  }).pipe(Effect.orDie)
