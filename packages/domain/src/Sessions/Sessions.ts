/**
 * The Sessions port: sign-in by an emailed six-digit code, and the browser sessions it opens (docs/web.md).
 * The answers never tell whether an email has an account: `requestCode` answers the same either way, and
 * `signIn` refuses a wrong, expired, used or never-sent code with one and the same error.
 */
import { Context, type Effect, type Option } from "effect"
import type { RateLimited, ValidationError } from "../Errors.ts"
import type { ActiveSession, SignedIn } from "./Session.ts"

export class Sessions extends Context.Tag("@dock/domain/Sessions")<Sessions, {
  /**
   * Mails a sign-in code to `email` when it may sign in (an existing person, or anyone while sign-up is open);
   * counts the send against the email's and the address's hourly caps either way. `requesterIp` is counted. The
   * mail goes out after the answer (a failed send is logged), so the answer never depends on the account.
   */
  readonly requestCode: (
    email: string,
    requesterIp: string
  ) => Effect.Effect<void, ValidationError | RateLimited>
  /** Spends the code: the account (created on first sign-in unless sign-up is closed) and a fresh session. */
  readonly signIn: (
    email: string,
    code: string,
    requesterIp: string
  ) => Effect.Effect<SignedIn, ValidationError | RateLimited>
  /** The live session behind a cookie value (unrevoked, unexpired), marking it seen; None otherwise. */
  readonly authenticate: (secret: string) => Effect.Effect<Option.Option<ActiveSession>>
  /** Ends the session behind a cookie value (sign-out); nothing happens for an unknown one. */
  readonly revoke: (secret: string) => Effect.Effect<void>
  /** Drops sessions and sign-in codes that ended (expired, revoked, used or voided) over a day ago; answers how many sessions. */
  readonly sweep: Effect.Effect<number>
}>() {}
