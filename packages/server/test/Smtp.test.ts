/**
 * Claim codes by SMTP (architecture §13, §14): a real SMTP receiver (the `smtp-server` package) on 127.0.0.1,
 * the in-process server with DOCK_SMTP_URL pointing at it. The code is read out of the delivered message and
 * completes the claim; with the receiver down, claim-start is 503 `unavailable` and nothing is kept.
 */
import { sha256 } from "@dock/domain"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { unique } from "./support/Http.ts"
import { claim, codeIn, outbox, register } from "./support/Identity.ts"
import { bodyText, header, mailTo, SmtpReceiver, SmtpReceiverLive } from "./support/SmtpReceiver.ts"
import { type RunningServer, startTestServer, TestServer } from "./support/TestServer.ts"

const ServerWithSmtp = Layer.scoped(
  TestServer,
  Effect.flatMap(SmtpReceiver, (receiver) =>
    startTestServer({
      DOCK_SMTP_URL: `smtp://127.0.0.1:${receiver.port}`,
      DOCK_MAIL_FROM: "Dock <claims@dock.test>",
      DOCK_VERIFIED_EMAIL_REGISTRATION: "true"
    }))
).pipe(Layer.provideMerge(SmtpReceiverLive))

const registrationId = (server: RunningServer, claimToken: string) =>
  Effect.map(
    server.sql<{ id: string }>`select id from registrations where secret_hash = ${sha256(claimToken)}`,
    (rows) => rows[0]!.id
  ).pipe(Effect.orDie)

const storedCodes = (server: RunningServer, id: string) =>
  Effect.map(
    server.sql<{ n: string | number }>`select count(*) as n from otp_codes where registration_id = ${id}`,
    (rows) => Number(rows[0]!.n)
  ).pipe(Effect.orDie)

const sendCounters = (server: RunningServer, id: string, email: string) =>
  Effect.map(
    server.sql<{ key: string; count: number }>`select key, count from rate_limit_counters
      where key in (${`otp-sends-registration:${id}`}, ${`otp-sends-email:${email}`}) order by key`,
    (rows) => rows.map((row) => [row.key, Number(row.count)])
  ).pipe(Effect.orDie)

layer(ServerWithSmtp, { excludeTestServices: true })("claim codes by SMTP", (it) => {
  it.effect("the code arrives by SMTP as the only six-digit number of the mail and completes the claim", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* SmtpReceiver
      yield* receiver.start
      const registration = (yield* register(server.url, { agent_label: "smtp agent" })).json
      const email = `smtp-${unique()}@example.com`
      const started = yield* claim(server.url, { claim_token: registration.registration_id, email })
      expect(started.status).toBe(200)
      expect(started.json).toEqual({
        status: "otp_sent",
        registration_id: registration.registration_id,
        claim_token_expires: registration.expires_at
      })

      const mails = yield* mailTo(receiver, email)
      expect(mails).toHaveLength(1)
      const mail = mails[0]!
      expect(mail.to).toEqual([email])
      expect(mail.from).toBe("claims@dock.test")
      expect(header(mail.raw, "To")).toBe(email)
      expect(header(mail.raw, "Subject")).toBe("Your Dock claim code")
      const text = bodyText(mail.raw)
      const code = codeIn(text)
      expect(text).toContain(`Your Dock claim code is ${code}`)
      // Nothing is written to the outbox when SMTP is configured.
      expect(yield* outbox(server.config.dataDir)).toEqual([])

      const claimed = yield* claim(server.url, { claim_token: registration.registration_id, otp: code })
      // The code is in the mail only, never in what the server logged.
      for (const entry of server.logs()) expect(`${entry.message} ${entry.cause ?? ""}`).not.toContain(code)
      expect(claimed.status).toBe(200)
      expect(claimed.json).toMatchObject({
        status: "claimed",
        registration_id: registration.registration_id,
        bucket: { id: registration.sandbox_bucket.id },
        account: { email },
        token: { id: registration.token_id }
      })
    }))

  it.effect("with the SMTP server down, claim-start is 503 unavailable and keeps nothing; later it works", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* SmtpReceiver
      yield* receiver.stop
      const registration = (yield* register(server.url)).json
      const id = yield* registrationId(server, registration.registration_id)
      const email = `down-${unique()}@example.com`

      for (let attempt = 0; attempt < 2; attempt++) {
        const refused = yield* claim(server.url, { claim_token: registration.registration_id, email })
        expect(refused.status).toBe(503)
        expect(refused.json).toEqual({
          error: {
            code: "unavailable",
            status: 503,
            message: "The code could not be mailed right now; try again later"
          }
        })
      }
      expect(yield* storedCodes(server, id)).toBe(0)
      // The failed sends did not use up the send caps either.
      expect(yield* sendCounters(server, id, email)).toEqual([])

      yield* receiver.start
      const started = yield* claim(server.url, { claim_token: registration.registration_id, email })
      expect(started.status).toBe(200)
      expect(started.json.status).toBe("otp_sent")
      expect(yield* storedCodes(server, id)).toBe(1)
      expect(yield* sendCounters(server, id, email)).toEqual([
        [`otp-sends-email:${email}`, 1],
        [`otp-sends-registration:${id}`, 1]
      ])
      const code = codeIn(bodyText((yield* mailTo(receiver, email))[0]!.raw))
      const claimed = yield* claim(server.url, { claim_token: registration.registration_id, otp: code })
      expect(claimed.status).toBe(200)
      expect(claimed.json.account.email).toBe(email)
      // The failed deliveries were logged as such.
      expect(
        server.logs().some((entry) =>
          entry.level === "WARN" && entry.message.includes(`SMTP delivery to ${email} failed`)
        )
      )
        .toBe(true)
    }))

  it.effect("verified email with the SMTP server down: 503 unavailable and no registration is kept", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* SmtpReceiver
      yield* receiver.stop
      const email = `verified-down-${unique()}@example.com`
      const reply = yield* register(server.url, { type: "verified_email", email })
      expect(reply.status).toBe(503)
      expect(reply.json.error).toMatchObject({ code: "unavailable", status: 503 })
      const rows = yield* server.sql<
        { n: string | number }
      >`select count(*) as n from registrations where email = ${email}`
      expect(Number(rows[0]!.n)).toBe(0)

      yield* receiver.start
      const again = yield* register(server.url, { type: "verified_email", email })
      expect(again.status).toBe(202)
      const code = codeIn(bodyText((yield* mailTo(receiver, email))[0]!.raw))
      const issued = yield* claim(server.url, { claim_token: again.json.registration_id, otp: code })
      expect(issued.status).toBe(200)
      expect(issued.json.credential).toMatch(/^dock_mcp_/)
    }))
})
