/** What the web app's sign-in answers and what a session cookie stands for. */
import type { UserId } from "../Ids.ts"

/** A sign-in that succeeded: the new session's secret (for the cookie only) and who signed in. */
export interface SignedIn {
  /** The cookie value: 256 random bits; the database keeps its SHA-256 only. */
  readonly secret: string
  readonly userId: UserId
  readonly username: string
  readonly expiresAt: Date
  /** True when this sign-in created the account. */
  readonly created: boolean
}

/** A live session, as `authenticate` finds it. */
export interface ActiveSession {
  readonly sessionId: string
  readonly userId: UserId
  readonly username: string
  readonly email: string | null
  readonly expiresAt: Date
}
