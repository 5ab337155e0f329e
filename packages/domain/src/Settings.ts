/**
 * Deployment settings the domain reads that are not limits: where the service and its artifacts are reached,
 * which registration flows are on, and the HMAC key. The server fills them from configuration.
 */
import { Context, type Redacted } from "effect"

/** Where the service is reached from outside: used to build `url` fields. */
export class PublicBaseUrl extends Context.Tag("@dock/domain/PublicBaseUrl")<PublicBaseUrl, string>() {}

/** DOCK_ARTIFACT_ORIGIN: where artifacts (/a/…) are served when not from the base URL; pages' `url` uses it. */
export class ArtifactBaseUrl extends Context.Tag("@dock/domain/ArtifactBaseUrl")<ArtifactBaseUrl, string>() {}

/** Which registration flows this deployment offers (ANONYMOUS_REGISTRATION_ENABLED, DOCK_VERIFIED_EMAIL_REGISTRATION). */
export class Features extends Context.Tag("@dock/domain/Features")<Features, {
  readonly anonymousRegistration: boolean
  readonly verifiedEmailRegistration: boolean
  /** DOCK_SIGNUP=closed: the web app's sign-in admits existing people only (absent = open). */
  readonly signupClosed?: boolean | undefined
}>() {
  static readonly defaults = { anonymousRegistration: true, verifiedEmailRegistration: false }
}

/** The key for HMACs (OTP hashes): DOCK_SECRET. */
export class HmacKey extends Context.Tag("@dock/domain/HmacKey")<HmacKey, Redacted.Redacted>() {}
