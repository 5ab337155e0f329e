/**
 * The session behind a request's cookie, apart from the rest of the web kit: the web app's pages (WebKit.tsx) and
 * the artifact routes (a signed-in reader's private pages, ArtifactHttp.ts) find it the same way.
 */
import { type ActiveSession, Sessions } from "@dock/domain"
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import type { CookieNames } from "./WebSecurity.ts"

/** The cookie's value (the session secret) and the live session it names. */
export interface RequestSession {
  readonly secret: string
  readonly session: ActiveSession
}

/** The request's live session, if any: None without a cookie, or for one unknown, expired or revoked. */
export const sessionOfRequest = (request: HttpServerRequest.HttpServerRequest, names: CookieNames) =>
  Effect.gen(function*() {
    const secret = request.cookies[names.session]
    if (secret === undefined || secret === "") return Option.none<RequestSession>()
    const session = yield* Effect.flatMap(Sessions, (sessions) => sessions.authenticate(secret))
    return Option.map(session, (session): RequestSession => ({ secret, session }))
  })
