/**
 * The web app's session cookie, CSRF tokens, Origin check and `next` paths (docs/web.md).
 *
 * - Session cookie: `__Host-dock_session` in production (Secure, so only over https), `dock_session` on plain-http
 *   development; HttpOnly, SameSite=Lax, Path=/. Its value is the session secret; the database keeps its SHA-256.
 * - Before sign-in a browser holds a pre-session cookie (`__Host-dock_pre` / `dock_pre`): a random nonce that only
 *   seeds the sign-in forms' CSRF token. It never becomes the session: sign-in mints a fresh secret (no fixation).
 * - CSRF token: HMAC(DOCK_SECRET, "csrf"‖seed), the seed being the session secret (or the pre-session nonce). Every
 *   form carries it in the `csrf` field; every state-changing request must carry it and come from our Origin.
 */
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Redacted } from "effect"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import type { ServerConfig } from "../Config.ts"

export interface CookieNames {
  readonly session: string
  readonly preSession: string
  readonly secure: boolean
}

export const cookieNames = (config: ServerConfig): CookieNames =>
  config.env === "production"
    ? { session: "__Host-dock_session", preSession: "__Host-dock_pre", secure: true }
    : { session: "dock_session", preSession: "dock_pre", secure: false }

const cookieOptions = (names: CookieNames, maxAge: Duration.DurationInput) => ({
  httpOnly: true,
  sameSite: "lax" as const,
  path: "/",
  secure: names.secure,
  maxAge
})

export const setSessionCookie = (
  response: HttpServerResponse.HttpServerResponse,
  names: CookieNames,
  secret: string,
  expiresAt: Date
) =>
  HttpServerResponse.unsafeSetCookie(
    response,
    names.session,
    secret,
    cookieOptions(names, Duration.millis(Math.max(0, expiresAt.getTime() - Date.now())))
  )

export const clearCookie = (response: HttpServerResponse.HttpServerResponse, names: CookieNames, name: string) =>
  HttpServerResponse.unsafeSetCookie(response, name, "", cookieOptions(names, Duration.zero))

/** A fresh pre-session nonce (128 bits). */
export const newNonce = () => randomBytes(16).toString("base64url")

export const setPreSessionCookie = (
  response: HttpServerResponse.HttpServerResponse,
  names: CookieNames,
  nonce: string
) => HttpServerResponse.unsafeSetCookie(response, names.preSession, nonce, cookieOptions(names, Duration.hours(2)))

/** The CSRF token for a seed (a session secret or a pre-session nonce). */
export const csrfToken = (key: Redacted.Redacted, seed: string) =>
  createHmac("sha256", Redacted.value(key)).update(`csrf\u0000${seed}`).digest("base64url")

export const sameToken = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

const LOOPBACK_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/

/**
 * Whether a state-changing request comes from this site: its Origin (or, without one, its Referer's origin) is the
 * base URL's (or, in development, a loopback origin). A request with neither is refused too.
 */
export const fromOurOrigin = (request: HttpServerRequest.HttpServerRequest, config: ServerConfig): boolean => {
  let origin = request.headers["origin"]
  if (origin === undefined) {
    const referer = request.headers["referer"]
    if (referer === undefined) return false
    try {
      origin = new URL(referer).origin
    } catch {
      return false
    }
  }
  return origin === config.baseUrl || (config.env === "development" && LOOPBACK_ORIGIN.test(origin))
}

/**
 * A `next` path to return to after sign-in: only a same-site relative path (`/…`, never `//host` or `/\host`,
 * no control characters or backslashes); anything else is `/app`.
 */
export const safeNext = (next: string | undefined): string => {
  if (next === undefined || next.length > 1000) return "/app"
  const unsafe = !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\") ||
    [...next].some((char) => char <= " " || char === "\\" || char === "\u007f")
  return unsafe ? "/app" : next
}
