/**
 * Sign-in by emailed code and browser sessions (issue 16; architecture §15 "Sessions"). The code machinery is the
 * claim's (architecture §8): six digits from the CSPRNG, HMAC at rest, single use, a new code voids the old, the
 * OTP life (DOCK_OTP_TTL), at most OTP_WRONG_TRIES_PER_CODE wrong tries per code and a daily cap of wrong tries
 * per email and per address, send caps per email and per address per hour; every counter is counted inside the
 * transaction that locks the code row, so parallel guesses get no extra tries.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Option, Redacted } from "effect"
import { Accounts } from "../Accounts/Accounts.ts"
import { normalizeEmail } from "../Accounts/User.ts"
import { transactional } from "../Database/Transactional.ts"
import { RateLimited, ValidationError } from "../Errors.ts"
import type { UserId } from "../Ids.ts"
import { describeDuration, Limits } from "../Limits.ts"
import { Mailer } from "../Mail/Mailer.ts"
import { RateLimits } from "../RateLimits/RateLimits.ts"
import { OTP_WRONG_TRIES_PER_CODE, OTP_WRONG_TRIES_PER_DAY } from "../Registrations/RegistrationsLive.ts"
import { newOtp, otpHash, randomBase62, sameHash, sha256 } from "../Secrets.ts"
import { Features, HmacKey } from "../Settings.ts"
import { spanned, traced } from "../Spans.ts"
import type { SignedIn } from "./Session.ts"
import { Sessions } from "./Sessions.ts"
import { makeSessionsRepo } from "./SessionsRepo.ts"

/** How long a browser session lasts from sign-in. */
export const SESSION_TTL = Duration.days(14)
/** Sign-in codes mailed per client address per hour (the per-email cap is DOCK_OTP_SENDS_PER_HOUR). */
export const SIGN_IN_SENDS_PER_IP_PER_HOUR = 30

const CODE = /^\d{6}$/

/** The one answer for a wrong, expired, used or never-sent code. */
const codeRefused = () =>
  new ValidationError({
    message: "The code is wrong, expired or already used. Ask for a new one.",
    details: { field: "code" }
  })

export const SessionsLive = Layer.effect(
  Sessions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limits = yield* Limits
    const features = yield* Features
    const hmacKey = yield* HmacKey
    const mailer = yield* Mailer
    const rateLimits = yield* RateLimits
    const accounts = yield* Accounts
    const repo = yield* makeSessionsRepo
    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
    const signupOpen = features.signupClosed !== true

    const codeHash = (email: string, code: string) =>
      otpHash(Redacted.value(hmacKey), { purpose: "sign-in", registrationId: "", email, otp: code })

    const requestCode = traced("Sessions.requestCode")(function*(rawEmail: string, requesterIp: string) {
      const email = yield* normalizeEmail(rawEmail)
      const mail = yield* transactional(
        sql,
        Effect.gen(function*() {
          yield* rateLimits.hit({
            key: `sign-in-sends-email:${email}`,
            limit: limits.otpSendsPerHour,
            window: Duration.hours(1),
            message: "Too many sign-in codes sent to this email address this hour"
          })
          yield* rateLimits.hit({
            key: `sign-in-sends-ip:${requesterIp}`,
            limit: SIGN_IN_SENDS_PER_IP_PER_HOUR,
            window: Duration.hours(1),
            message: "Too many sign-in codes requested from this address this hour"
          })
          const person = yield* repo.personByEmail(email)
          const mayEnter = Option.match(person, { onNone: () => signupOpen, onSome: (user) => user.kind === "person" })
          // Nobody to sign in: the same answer as a sent code (no account enumeration), no mail.
          if (!mayEnter) return Option.none()
          const at = yield* now
          yield* repo.voidOpenCodes(email, at)
          const code = newOtp()
          yield* repo.insertCode({
            email,
            codeHash: codeHash(email, code),
            createdAt: at,
            expiresAt: new Date(at.getTime() + Duration.toMillis(limits.otpTtl))
          })
          return Option.some({
            to: email,
            subject: "Your Dock sign-in code",
            text: [
              `Your Dock sign-in code is ${code}`,
              "",
              `Enter it within ${describeDuration(limits.otpTtl)} on the sign-in page.`,
              "If you did not ask for it, ignore this mail: nobody signs in without the code."
            ].join("\n")
          })
        })
      )
      // Mailed after the commit and off the request: the answer then takes as long, and reads the same, whether or
      // not the email may sign in (waiting for SMTP, or a 503 when it fails, would tell accounts apart when sign-up
      // is closed), and no row lock is held across SMTP. A failed send is logged; the person asks for a new code.
      if (Option.isSome(mail)) {
        yield* Effect.forkDaemon(
          mailer.send(mail.value).pipe(
            Effect.catchAll((error) => Effect.logWarning("A sign-in code could not be mailed", error))
          )
        )
      }
    })

    const wrongTryKeys = (email: string, ip: string) => [`sign-in-wrong-email:${email}`, `sign-in-wrong-ip:${ip}`]

    /** The person for the email: existing (confirmed now: the code proved the address) or, if allowed, new. */
    const accountFor = (email: string, at: Date) =>
      Effect.gen(function*() {
        const existing = yield* repo.personByEmail(email)
        if (Option.isSome(existing)) {
          if (existing.value.kind !== "person") return Option.none()
          yield* repo.confirmUser(existing.value.id, at)
          return Option.some({ id: existing.value.id, username: existing.value.username, created: false })
        }
        if (!signupOpen) return Option.none()
        const created = yield* accounts.create({
          email,
          kind: "person",
          confirmed: true,
          identityProvider: "email_otp"
        }).pipe(
          Effect.map((user) => ({ id: user.id as UserId, username: user.username, created: true })),
          // Another sign-in created this person a moment ago: take that one.
          Effect.catchTag("Conflict", () =>
            repo.personByEmail(email).pipe(
              Effect.map((found) => ({ ...Option.getOrThrow(found), created: false }))
            )),
          Effect.catchTag("ValidationError", Effect.die)
        )
        return Option.some(created)
      })

    /** A new session (256 random bits; the database keeps the SHA-256) for the person, from `at`. */
    const openSession = (
      account: { readonly id: UserId; readonly username: string; readonly created: boolean },
      at: Date
    ) =>
      Effect.gen(function*() {
        const secret = randomBase62(32)
        const expiresAt = new Date(at.getTime() + Duration.toMillis(SESSION_TTL))
        yield* repo.insertSession({ hash: sha256(secret), userId: account.id, createdAt: at, expiresAt })
        const signedIn: SignedIn = {
          secret,
          userId: account.id,
          username: account.username,
          expiresAt,
          created: account.created
        }
        return signedIn
      })

    const signIn = traced("Sessions.signIn")(function*(rawEmail: string, rawCode: string, requesterIp: string) {
      const email = yield* normalizeEmail(rawEmail)
      const code = rawCode.trim()
      const outcome = yield* transactional(
        sql,
        Effect.gen(function*() {
          const latest = yield* repo.latestOpenCode(email)
          for (const key of wrongTryKeys(email, requesterIp)) {
            if ((yield* rateLimits.count(key, Duration.days(1))) >= OTP_WRONG_TRIES_PER_DAY) {
              return { _tag: "Capped" } as const
            }
          }
          if (Option.isNone(latest)) return { _tag: "Refused" } as const
          const row = latest.value
          const at = yield* now
          const matches = CODE.test(code) && sameHash(codeHash(email, code), row.code_hash)
          if (!matches || row.expires_at.getTime() <= at.getTime() || row.wrong_tries >= OTP_WRONG_TRIES_PER_CODE) {
            if (!matches) {
              yield* repo.countWrongTry(row.id)
              for (const key of wrongTryKeys(email, requesterIp)) {
                yield* rateLimits.hit({ key, limit: Number.MAX_SAFE_INTEGER, window: Duration.days(1), message: "" })
                  .pipe(Effect.orDie)
              }
            }
            return { _tag: "Refused" } as const
          }
          yield* repo.markCodeUsed(row.id, at)
          const account = yield* accountFor(email, at)
          if (Option.isNone(account)) return { _tag: "Refused" } as const
          const signedIn = yield* openSession(account.value, at)
          return { _tag: "SignedIn", signedIn } as const
        })
      )
      switch (outcome._tag) {
        case "Refused":
          return yield* codeRefused()
        case "Capped": {
          const day = Duration.toMillis(Duration.days(1))
          const millis = yield* Clock.currentTimeMillis
          return yield* new RateLimited({
            message: `Too many wrong codes today: at most ${OTP_WRONG_TRIES_PER_DAY} per email and per address`,
            retry_after_seconds: Math.max(1, Math.ceil((Math.floor(millis / day) * day + day - millis) / 1000))
          })
        }
        default:
          return outcome.signedIn
      }
    })

    const authenticate = traced("Sessions.authenticate")(function*(secret: string) {
      if (!/^[0-9A-Za-z]{20,64}$/.test(secret)) return Option.none()
      const found = yield* repo.authenticate(sha256(secret), yield* now)
      return Option.map(found, (row) => ({
        sessionId: row.id,
        userId: row.user_id,
        username: row.username,
        email: row.email,
        expiresAt: row.expires_at
      }))
    })

    const revoke = traced("Sessions.revoke")(function*(secret: string) {
      yield* repo.revoke(sha256(secret), yield* now)
    })

    const sweep = Effect.gen(function*() {
      const at = yield* now
      return yield* repo.sweep(new Date(at.getTime() - Duration.toMillis(Duration.days(1))))
    }).pipe(spanned("Sessions.sweep"))

    return { requestCode, signIn, authenticate, revoke, sweep }
  })
)
