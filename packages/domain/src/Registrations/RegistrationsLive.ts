/**
 * Anonymous sandboxes and their claim (spec §3, architecture §8), the verified-email preview flow, and the
 * sandbox lifecycle. Every state change is one transaction; caps are counted inside it so they hold exactly.
 * Claim tokens and OTPs exist in clear only in answers and mail: the database keeps SHA-256 and HMAC digests.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Option, Redacted } from "effect"
import { Accounts } from "../Accounts/Accounts.ts"
import { normalizeEmail } from "../Accounts/User.ts"
import { Activity } from "../Activity/Activity.ts"
import { transactional } from "../Database/Transactional.ts"
import { Docks } from "../Docks/Docks.ts"
import { Forbidden, NotFound, RateLimited, Unavailable, ValidationError } from "../Errors.ts"
import type { RegistrationId } from "../Ids.ts"
import { describeDuration, Limits } from "../Limits.ts"
import { Mailer } from "../Mail/Mailer.ts"
import { CurrentPrincipal, userPrincipal } from "../Principal.ts"
import { RateLimits } from "../RateLimits/RateLimits.ts"
import { newOtp, newRegistrationSecret, otpHash, randomBase62, sameHash, sha256 } from "../Secrets.ts"
import { Features, HmacKey, PublicBaseUrl } from "../Settings.ts"
import { spanned, traced } from "../Spans.ts"
import { Tokens } from "../Tokens/Tokens.ts"
import {
  AnonymousRegistration,
  ClaimAccount,
  ClaimCompleted,
  type ClaimRequest,
  ClaimStarted,
  CredentialIssued,
  type RegistrationRequest,
  SandboxBucket,
  type SandboxStatus,
  SandboxSummary,
  SweepResult,
  VerifiedEmailRegistration
} from "./Registration.ts"
import { Registrations } from "./Registrations.ts"
import { makeRegistrationsRepo, type RegistrationRow } from "./RegistrationsRepo.ts"

/** Wrong codes tolerated per code, and per registration and per email per day. */
export const OTP_WRONG_TRIES_PER_CODE = 5
export const OTP_WRONG_TRIES_PER_DAY = 20
/** How long a verified-email claim token stays valid. */
export const VERIFIED_EMAIL_WINDOW = Duration.hours(1)

const OTP = /^\d{6}$/

/** The one answer for a wrong, expired, used or voided code (a claimed registration says so instead). */
const codeRefused = () =>
  new ValidationError({
    message: "The code is wrong, expired or already used. Request a new one with claim-start.",
    details: { field: "otp" }
  })

export const RegistrationsLive = Layer.effect(
  Registrations,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limits = yield* Limits
    const features = yield* Features
    const baseUrl = yield* PublicBaseUrl
    const hmacKey = yield* HmacKey
    const mailer = yield* Mailer
    const rateLimits = yield* RateLimits
    const tokens = yield* Tokens
    const accounts = yield* Accounts
    const activity = yield* Activity
    const docks = yield* Docks
    const repo = yield* makeRegistrationsRepo

    const claimUrl = `${baseUrl}/agent/auth/claim`
    /** The web app's claim page for people (docs/web.md), the token filled in. */
    const claimPageUrl = (claimToken: string) => `${baseUrl}/claim?token=${encodeURIComponent(claimToken)}`
    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

    const instructions = (claimToken: string, expiresAt: Date, emailHint: string) =>
      [
        `To claim this registration, POST ${claimUrl} with Content-Type: application/json and the body`,
        `{"claim_token":"${claimToken}","email":"${emailHint}"} (claim-start). A six-digit code is mailed to that`,
        `address; it expires after ${describeDuration(limits.otpTtl)}. Then POST ${claimUrl} with the body`,
        `{"claim_token":"${claimToken}","otp":"<the six digits from the mail>"} (claim-complete).`,
        `The claim window ends at ${expiresAt.toISOString()}; after that the sandbox is hidden and later deleted.`,
        `Or give the person this page, where they enter their email and the code in a browser:`,
        `${claimPageUrl(claimToken)}`,
        `Keep the claim_token secret: whoever holds it can start a claim.`
      ].join(" ")

    const registrationCaps = (ip: string) =>
      Effect.zipRight(
        rateLimits.hit({
          key: `registrations-ip:${ip}`,
          limit: limits.registrationsPerIpPerDay,
          window: Duration.days(1),
          message: "Too many registrations from this address today"
        }),
        rateLimits.hit({
          key: "registrations-global",
          limit: limits.registrationsPerHour,
          window: Duration.hours(1),
          message: "Too many registrations on this server this hour"
        })
      )

    /** Voids earlier codes, stores the new one's HMAC, and mails it — all inside the caller's transaction. */
    const sendCode = (registrationId: RegistrationId, email: string) =>
      Effect.gen(function*() {
        yield* rateLimits.hit({
          key: `otp-sends-registration:${registrationId}`,
          limit: limits.otpSendsPerHour,
          window: Duration.hours(1),
          message: "Too many codes sent for this registration this hour"
        })
        yield* rateLimits.hit({
          key: `otp-sends-email:${email}`,
          limit: limits.otpSendsPerHour,
          window: Duration.hours(1),
          message: "Too many codes sent to this email address this hour"
        })
        const at = yield* now
        yield* repo.voidOpenCodes(registrationId, at)
        const otp = newOtp()
        yield* repo.insertCode({
          registrationId,
          email,
          codeHash: otpHash(Redacted.value(hmacKey), { purpose: "claim", registrationId, email, otp }),
          createdAt: at,
          expiresAt: new Date(at.getTime() + Duration.toMillis(limits.otpTtl))
        })
        yield* mailer.send({
          to: email,
          subject: "Your Dock claim code",
          text: [
            `Your Dock claim code is ${otp}`,
            "",
            `Enter it within ${describeDuration(limits.otpTtl)} to finish the claim your agent started.`,
            "If you did not ask for it, ignore this mail: nothing happens without the code."
          ].join("\n")
        }).pipe(
          // Nothing is kept when the mail cannot go out: the transaction rolls back code and counters.
          Effect.mapError(() => new Unavailable({ message: "The code could not be mailed right now; try again later" }))
        )
      })

    const registerAnonymous = (agentLabel: string | undefined, ip: string) =>
      transactional(
        sql,
        Effect.gen(function*() {
          yield* registrationCaps(ip)
          const at = yield* now
          const expiresAt = new Date(at.getTime() + Duration.toMillis(limits.sandboxClaimWindow))
          const username = `anon-${randomBase62(8).toLowerCase()}`
          const userId = yield* repo.insertAnonymousUser(username, at)
          const slug = `anonymous-sandbox-${randomBase62(10).toLowerCase()}`
          const givenLabel = agentLabel?.trim() || null
          const dockId = yield* docks.createOwned(userId, {
            slug,
            title: givenLabel === null ? "Anonymous sandbox" : `Sandbox of ${givenLabel}`,
            description: null,
            visibility: "private",
            discoverable: false,
            allowForks: false,
            tags: [],
            topics: [],
            sandbox: true
          }).pipe(Effect.orDie) // a fresh user has no Dock whose slug could be taken
          yield* repo.setDefaultDock(userId, dockId)
          yield* repo.startDockUsage(dockId)
          const label = givenLabel ?? "anonymous agent"
          const token = yield* tokens.create({
            userId,
            label,
            kind: "anonymous",
            scopes: ["mcp:read", "mcp:write"],
            allowedBucketIds: [dockId],
            expiresAt
          })
          const claimToken = newRegistrationSecret()
          yield* repo.insertAnonymous({
            secretHash: sha256(claimToken),
            userId,
            dockId,
            tokenId: token.id,
            agentLabel: label,
            requesterIp: ip,
            createdAt: at,
            expiresAt
          })
          yield* activity.record({
            dockId,
            action: "sandbox.registered",
            subjectType: "dock",
            subjectId: dockId
          }).pipe(
            Effect.provideService(
              CurrentPrincipal,
              userPrincipal({ id: userId, username }, { tokenId: token.id, agentLabel: label, sandbox: true })
            )
          )
          return new AnonymousRegistration({
            registration_id: claimToken,
            registration_type: "anonymous",
            credential_type: "mcp_write_token",
            credential: token.token,
            token_id: token.id,
            expires_at: expiresAt.toISOString(),
            scopes: token.scopes,
            sandbox_bucket: new SandboxBucket({ id: dockId, slug }),
            status: "unclaimed",
            claim_url: claimUrl,
            claim_instructions: instructions(claimToken, expiresAt, "<the person's email>")
          })
        })
      )

    const registerVerifiedEmail = (rawEmail: string, agentLabel: string | undefined, ip: string) =>
      Effect.gen(function*() {
        const email = yield* normalizeEmail(rawEmail)
        return yield* transactional(
          sql,
          Effect.gen(function*() {
            yield* registrationCaps(ip)
            const at = yield* now
            const expiresAt = new Date(at.getTime() + Duration.toMillis(VERIFIED_EMAIL_WINDOW))
            const claimToken = newRegistrationSecret()
            const registrationId = yield* repo.insertVerifiedEmail({
              secretHash: sha256(claimToken),
              agentLabel: agentLabel?.trim() || null,
              requesterIp: ip,
              email,
              createdAt: at,
              expiresAt
            })
            yield* sendCode(registrationId, email)
            return new VerifiedEmailRegistration({
              registration_id: claimToken,
              registration_type: "verified_email",
              credential_type: "mcp_write_token",
              status: "otp_sent",
              email,
              claim_token_expires: expiresAt.toISOString(),
              claim_url: claimUrl,
              claim_instructions: [
                `A six-digit code was mailed to ${email}; it expires after ${describeDuration(limits.otpTtl)}.`,
                `POST ${claimUrl} with Content-Type: application/json and the body`,
                `{"claim_token":"${claimToken}","otp":"<the six digits>"} to receive an MCP write token (shown once).`,
                `To mail a new code, POST {"claim_token":"${claimToken}","email":"${email}"}.`
              ].join(" ")
            })
          })
        )
      })

    const register = traced("Registrations.register")(function*(request: RegistrationRequest, requesterIp: string) {
      if (request.type === "anonymous") {
        if (!features.anonymousRegistration) {
          return yield* new Forbidden({ message: "Anonymous registration is disabled on this server" })
        }
        return yield* registerAnonymous(request.agent_label, requesterIp)
      }
      if (!features.verifiedEmailRegistration) {
        return yield* new Forbidden({ message: "Verified-email registration is not enabled on this server" })
      }
      return yield* registerVerifiedEmail(request.email, request.agent_label, requesterIp)
    })

    /** The registration behind a claim token, locked until the transaction ends. */
    const lockRegistration = (claimToken: string) =>
      repo.lockBySecretHash(sha256(claimToken)).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "No registration has this claim token" })),
          onSome: Effect.succeed
        }))
      )

    const checkWindow = (registration: RegistrationRow) =>
      Effect.gen(function*() {
        const at = yield* now
        if (registration.status === "expired" || registration.expires_at.getTime() <= at.getTime()) {
          return yield* new Forbidden({ message: "The claim window of this registration has ended" })
        }
      })

    /**
     * An anonymous registration claims its sandbox Dock; once that is gone (deleted before sandbox tokens were
     * refused deletes, or by an operator) there is nothing to claim: a clear not_found, never a code sent or
     * spent, rather than an error on every try (docs/decisions.md).
     */
    const sandboxOf = (registration: RegistrationRow) =>
      Effect.gen(function*() {
        if (registration.kind !== "anonymous") return Option.none()
        const dock = registration.dock_id === null ? Option.none() : yield* docks.storedById(registration.dock_id)
        if (Option.isNone(dock)) {
          return yield* new NotFound({
            message: "The sandbox of this registration no longer exists: there is nothing to claim",
            details: { field: "claim_token" }
          })
        }
        return dock
      })

    const claimStart = (claimToken: string, rawEmail: string) =>
      Effect.gen(function*() {
        const email = yield* normalizeEmail(rawEmail)
        return yield* transactional(
          sql,
          Effect.gen(function*() {
            const registration = yield* lockRegistration(claimToken)
            yield* checkWindow(registration)
            if (registration.status === "claimed") {
              return yield* new Forbidden({ message: "This registration has already been claimed" })
            }
            yield* sandboxOf(registration)
            if (registration.kind === "verified_email" && registration.email !== email) {
              return yield* new ValidationError({
                message: "This claim token was issued for another email address",
                details: { field: "email" }
              })
            }
            yield* sendCode(registration.id, email)
            return new ClaimStarted({
              status: "otp_sent",
              registration_id: claimToken,
              claim_token_expires: registration.expires_at.toISOString()
            })
          })
        )
      })

    /** The confirmed person for the email: existing (confirmed now, the code proved the address) or new. */
    const accountFor = (email: string) =>
      Effect.gen(function*() {
        const existing = yield* repo.lockUserByEmail(email)
        if (Option.isSome(existing)) {
          yield* repo.confirmUser(existing.value.id)
          return new ClaimAccount({ id: existing.value.id, username: existing.value.username, email })
        }
        return yield* accounts.create({ email, kind: "person", confirmed: true, identityProvider: "email_otp" }).pipe(
          Effect.map((user) => new ClaimAccount({ id: user.id, username: user.username, email })),
          // Another claim created this person a moment ago (its insert committed first): bind to that one.
          Effect.catchTag("Conflict", () =>
            repo.findUserByEmail(email).pipe(
              Effect.map((found) => Option.getOrThrow(found)),
              Effect.map((user) => new ClaimAccount({ id: user.id, username: user.username, email }))
            )),
          Effect.catchTag("ValidationError", Effect.die)
        )
      })

    const wrongTryKeys = (registrationId: RegistrationId, email: string) => [
      `otp-wrong-registration:${registrationId}`,
      `otp-wrong-email:${email}`
    ]

    const claimComplete = (claimToken: string, otp: string) =>
      Effect.gen(function*() {
        const outcome = yield* transactional(
          sql,
          Effect.gen(function*() {
            const registration = yield* lockRegistration(claimToken)
            yield* checkWindow(registration)
            // After a claim the code is spent and claim-start is refused: say so rather than suggest a new code.
            if (registration.status === "claimed") return { _tag: "Claimed already" } as const
            const sandbox = yield* sandboxOf(registration)
            const latest = yield* repo.lockLatestOpenCode(registration.id)
            if (Option.isNone(latest)) return { _tag: "Refused" } as const
            const code = latest.value
            for (const key of wrongTryKeys(registration.id, code.email)) {
              if ((yield* rateLimits.count(key, Duration.days(1))) >= OTP_WRONG_TRIES_PER_DAY) {
                return { _tag: "Capped" } as const
              }
            }
            const at = yield* now
            const expected = otpHash(Redacted.value(hmacKey), {
              purpose: "claim",
              registrationId: registration.id,
              email: code.email,
              otp
            })
            const matches = OTP.test(otp) && sameHash(expected, code.code_hash)
            if (!matches || code.expires_at.getTime() <= at.getTime() || code.wrong_tries >= OTP_WRONG_TRIES_PER_CODE) {
              if (!matches) {
                yield* repo.countWrongTry(code.id)
                for (const key of wrongTryKeys(registration.id, code.email)) {
                  yield* rateLimits.hit({ key, limit: Number.MAX_SAFE_INTEGER, window: Duration.days(1), message: "" })
                    .pipe(Effect.orDie)
                }
              }
              return { _tag: "Refused" } as const
            }
            yield* repo.markCodeUsed(code.id, at)
            const account = yield* accountFor(code.email)
            yield* repo.markClaimed(registration.id, account.id, at)
            const principal = userPrincipal({ id: account.id, username: account.username }, {
              tokenId: registration.token_id,
              agentLabel: registration.agent_label
            })

            if (registration.kind === "verified_email") {
              const token = yield* tokens.create({
                userId: account.id,
                label: registration.agent_label ?? "verified-email agent",
                kind: "personal",
                scopes: ["mcp:read", "mcp:write"],
                allowedBucketIds: null,
                expiresAt: new Date(at.getTime() + Duration.toMillis(limits.claimedTokenTtl))
              }).pipe(Effect.orDie)
              yield* repo.recordIssuedToken(registration.id, token.id)
              return {
                _tag: "Issued",
                answer: new CredentialIssued({
                  status: "claimed",
                  registration_id: claimToken,
                  credential_type: "mcp_write_token",
                  credential: token.token,
                  account,
                  token: {
                    id: token.id,
                    label: token.label,
                    scopes: token.scopes,
                    allowed_bucket_ids: token.allowed_bucket_ids,
                    expires_at: token.expires_at
                  }
                })
              } as const
            }

            // An anonymous sandbox: the Dock, and the very token the agent holds, move to the person.
            const tokenExpiry = new Date(at.getTime() + Duration.toMillis(limits.claimedTokenTtl))
            yield* repo.handDockToClaimant(registration.dock_id, account.id, at)
            yield* repo.handTokenToClaimant(registration.token_id, account.id, tokenExpiry)
            yield* repo.detachAnonymousUser(registration.user_id)
            yield* activity.record({
              dockId: registration.dock_id,
              action: "sandbox.claimed",
              subjectType: "dock",
              subjectId: registration.dock_id ?? undefined
            }).pipe(Effect.provideService(CurrentPrincipal, principal))
            // Read again: the claim just moved it to the person.
            const dock = yield* docks.storedById(Option.getOrThrow(sandbox).id).pipe(Effect.map(Option.getOrThrow))
            return {
              _tag: "Claimed",
              answer: new ClaimCompleted({
                status: "claimed",
                registration_id: claimToken,
                bucket: dock,
                account,
                token: { id: registration.token_id!, expires_at: tokenExpiry.toISOString() }
              })
            } as const
          })
        )
        switch (outcome._tag) {
          case "Refused":
            return yield* codeRefused()
          case "Claimed already":
            return yield* new ValidationError({
              message: "This registration has already been claimed: its code was used, and there is nothing left to " +
                "claim",
              details: { field: "otp" }
            })
          case "Capped": {
            // The counters are calendar-day windows (UTC): the wait ends at the next midnight.
            const day = Duration.toMillis(Duration.days(1))
            const millis = yield* Clock.currentTimeMillis
            return yield* new RateLimited({
              message: `Too many wrong codes today: at most ${OTP_WRONG_TRIES_PER_DAY} per registration and per email`,
              retry_after_seconds: Math.max(1, Math.ceil((Math.floor(millis / day) * day + day - millis) / 1000))
            })
          }
          default:
            return outcome.answer
        }
      })

    const claim = traced("Registrations.claim")(function*(request: ClaimRequest) {
      if ("otp" in request && request.otp !== undefined) {
        return yield* claimComplete(request.claim_token, request.otp.trim())
      }
      if ("email" in request && request.email !== undefined) {
        return yield* claimStart(request.claim_token, request.email)
      }
      return yield* new ValidationError({
        message:
          "Send the claim_token with an `email` to start the claim (a six-digit code is mailed to it), or with " +
          "`otp` (that code) to finish it",
        details: { fields: ["email", "otp"] }
      })
    })

    const list = traced("Registrations.list")(function*(status?: SandboxStatus) {
      const rows = yield* repo.listSandboxes(status)
      return rows.map((row) =>
        new SandboxSummary({
          ...row,
          created_at: row.created_at.toISOString(),
          expires_at: row.expires_at.toISOString()
        })
      )
    })

    const sweep = Effect.gen(function*() {
      const at = yield* now
      const purgeBefore = new Date(at.getTime() - Duration.toMillis(limits.sandboxRetention))
      return yield* transactional(
        sql,
        Effect.gen(function*() {
          yield* repo.lockSweep
          const expired = yield* repo.expireUnclaimed(at)
          yield* repo.revokeTokens(expired.flatMap((row) => (row.token_id === null ? [] : [row.token_id])), at)
          yield* repo.hideDocks(expired.flatMap((row) => (row.dock_id === null ? [] : [row.dock_id])), at)
          // Deleting the anonymous user cascades to its token and registration; the sandbox Dock goes first.
          const purged = yield* repo.listExpiredBefore(purgeBefore)
          yield* repo.deleteSandboxDocks(purged.flatMap((row) => (row.dock_id === null ? [] : [row.dock_id])))
          yield* repo.deleteRegistrations(purged.map((row) => row.id))
          yield* repo.deleteAnonymousUsers(purged.flatMap((row) => (row.user_id === null ? [] : [row.user_id])))
          yield* rateLimits.prune(new Date(at.getTime() - Duration.toMillis(Duration.days(2))))
          // The counts are of sandboxes (what `dock sandboxes sweep` reports); verified-email claim tokens that
          // lapsed are expired and purged alongside without being counted.
          const sandboxes = (rows: ReadonlyArray<{ kind: string }>) =>
            rows.filter((row) => row.kind === "anonymous").length
          return new SweepResult({ expired: sandboxes(expired), purged: sandboxes(purged) })
        })
      )
    }).pipe(spanned("Registrations.sweep"))

    return { register, claim, list, sweep }
  })
)
