/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * What every web-app route is built from (docs/web.md, "Building on it"): the page answer (`htmlPage`, with the
 * app's CSP), `seeOther`, the session (`withSession`, `signedIn`), the form check (`checkedForm`: Origin + CSRF),
 * the 403 and 404 pages, and `dockPath` for links into a Dock. Feature routes take a `WebKit` and answer routes.
 */
import {
  type ActiveSession,
  anonymousPrincipal,
  CurrentPrincipal,
  Docks,
  HmacKey,
  type Principal,
  Sessions,
  type SignedIn,
  userPrincipal
} from "@dock/domain"
import { HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { Effect, Option } from "effect"
import type { VNode } from "preact"
import { render } from "preact-render-to-string"
import type { ServerConfig } from "../Config.ts"
import type { BodyLimit } from "../http/BodyLimit.ts"
import type { Viewer } from "./Layout.tsx"
import { sessionOfRequest } from "./SessionLookup.ts"
import { ErrorView } from "./Views.tsx"
import {
  clearCookie,
  cookieNames,
  csrfToken,
  fromOurOrigin,
  newNonce,
  sameToken,
  setSessionCookie
} from "./WebSecurity.ts"

/** The CSP of every web-app page: nothing but our stylesheet, our images and forms to ourselves. */
export const APP_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

const APP_HEADERS = {
  "content-security-policy": APP_CSP,
  "referrer-policy": "same-origin",
  "cache-control": "no-store"
}

/** Form bodies of the web app are small: 16 KiB. */
export const webBodyLimit: BodyLimit = {
  matches: (url) =>
    url === "/login" || url.startsWith("/login?") || url === "/logout" || url.startsWith("/app/") ||
    url === "/claim" || url.startsWith("/claim?"),
  bytes: 16 * 1024
}

/**
 * A rendered page: `<!doctype html>` and the view, with the app's headers. Its CSP may open two doors, on that page
 * only: `script` lets it run the one script the server serves (`/app.js`, progressive enhancement such as copy
 * buttons: `script-src 'self'`); `frameSrc` lets it frame artifacts from that one origin (the page view).
 */
export const htmlPage = (
  status: number,
  view: VNode,
  options: { readonly script?: boolean; readonly frameSrc?: string } = {}
) =>
  HttpServerResponse.text(
    `<!doctype html>
${render(view)}`,
    {
      status,
      contentType: "text/html; charset=utf-8",
      headers: {
        ...APP_HEADERS,
        "content-security-policy": APP_CSP + (options.script === true ? "; script-src 'self'" : "") +
          (options.frameSrc === undefined ? "" : `; frame-src ${options.frameSrc}`)
      }
    }
  )

export const seeOther = (location: string) => HttpServerResponse.empty({ status: 303, headers: { location } })

/** A signed-in person acts with their own full rights, without a token (no token id, no agent label). */
export const sessionPrincipal = (session: ActiveSession): Principal =>
  userPrincipal({ id: session.userId, username: session.username })

/** A request's live session (its cookie value, and what the database knows of it), if any. */
export interface SignedInRequest {
  readonly secret: string
  readonly session: ActiveSession
  readonly viewer: Viewer
}

export const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  request.urlParamsBody.pipe(Effect.orElseSucceed((): UrlParams.UrlParams => []))

/** One form field's first value. */
export const field = (form: UrlParams.UrlParams, name: string) => Option.getOrUndefined(UrlParams.getFirst(form, name))

/** The session, form and page helpers of one server's web app. */
export const webKit = (config: ServerConfig) => {
  const names = cookieNames(config)

  const forbiddenPage = (viewer: Viewer | undefined) =>
    htmlPage(
      403,
      <ErrorView
        viewer={viewer}
        title="This form was refused"
        message="It did not come from a Dock page or its security token was missing or stale. Go back, reload the page and try again."
      />
    )

  const notFound = (viewer: Viewer | undefined) =>
    htmlPage(
      404,
      <ErrorView viewer={viewer} title="Not found" message="There is nothing here, or you may not see it." />
    )

  /** The signed-in request, or None (no cookie, or a session that is unknown, expired or revoked). */
  const signedIn = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const found = yield* sessionOfRequest(request, names)
      const key = yield* HmacKey
      return Option.map(found, ({ secret, session }): SignedInRequest => ({
        secret,
        session,
        viewer: { username: session.username, csrf: csrfToken(key, secret) }
      }))
    })

  /**
   * A form POST as it may change something: from our Origin, with the CSRF token of `seed`. Answers the form's
   * fields, or None (the caller answers 403 and changes nothing).
   */
  const checkedForm = (request: HttpServerRequest.HttpServerRequest, seed: string | undefined) =>
    Effect.gen(function*() {
      if (!fromOurOrigin(request, config) || seed === undefined || seed === "") {
        return Option.none<UrlParams.UrlParams>()
      }
      const form = yield* formOf(request)
      const sent = field(form, "csrf")
      const key = yield* HmacKey
      return sent !== undefined && sameToken(sent, csrfToken(key, seed)) ? Option.some(form) : Option.none()
    })

  /** The pre-session nonce that seeds the sign-in (and claim) forms' CSRF token: the cookie's, or a fresh one to set. */
  const preSession = (request: HttpServerRequest.HttpServerRequest) => {
    const existing = request.cookies[names.preSession]
    return existing !== undefined && /^[A-Za-z0-9_-]{22}$/.test(existing)
      ? { nonce: existing, fresh: false }
      : { nonce: newNonce(), fresh: true }
  }

  /**
   * The browser is signed in as `signedIn` from this response on: a session it held before ends (the new one has a
   * fresh id: no fixation), the session cookie is set and the pre-session cookie cleared.
   */
  const beginSession = (
    request: HttpServerRequest.HttpServerRequest,
    signedIn: SignedIn,
    response: HttpServerResponse.HttpServerResponse
  ) =>
    Effect.gen(function*() {
      const previous = request.cookies[names.session]
      if (previous !== undefined && previous !== "") yield* Effect.flatMap(Sessions, (s) => s.revoke(previous))
      return clearCookie(
        setSessionCookie(response, names, signedIn.secret, signedIn.expiresAt),
        names,
        names.preSession
      )
    })

  /** `/app/...` needs a session: without one, to /login and back here after sign-in. */
  const withSession = <E, R>(
    handler: (request: HttpServerRequest.HttpServerRequest, signed: SignedInRequest) => Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      E,
      R
    >
  ) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const signed = yield* signedIn(request)
      if (Option.isNone(signed)) {
        const back = request.method === "GET" ? request.url : "/app"
        return seeOther(`/login?next=${encodeURIComponent(back)}`)
      }
      return yield* handler(request, signed.value).pipe(
        Effect.provideService(CurrentPrincipal, sessionPrincipal(signed.value.session))
      )
    })

  /**
   * A view a public Dock shows to anyone (docs/web.md, "Public Docks without sign-in"): the handler runs as the
   * session's person, or as the anonymous public when there is none (`signed` undefined). What it may not show
   * it answers with `hiddenFrom`.
   */
  const withOptionalSession = <E, R>(
    handler: (request: HttpServerRequest.HttpServerRequest, signed: SignedInRequest | undefined) => Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      E,
      R
    >
  ) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const signed = Option.getOrUndefined(yield* signedIn(request))
      return yield* handler(request, signed).pipe(
        Effect.provideService(
          CurrentPrincipal,
          signed === undefined ? anonymousPrincipal : sessionPrincipal(signed.session)
        )
      )
    })

  /**
   * "Not found" in an optional-session view: the 404 page for a signed-in person; for the anonymous public, to
   * /login and back here, since it may be a private Dock they read once signed in. Missing and private answer the
   * same, so nothing tells whether it exists.
   */
  const hiddenFrom = (request: HttpServerRequest.HttpServerRequest, signed: SignedInRequest | undefined) =>
    signed === undefined ? seeOther(`/login?next=${encodeURIComponent(request.url)}`) : notFound(signed.viewer)

  /**
   * The Dock a `/app/buckets/:slug…` route names, for the current principal, by the one resolver: `?owner=` makes
   * it unambiguous; a bare slug is resolved as `bucket` is everywhere. NotFound when it is missing or unreadable.
   */
  const dockOf = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const params = yield* HttpRouter.params
      const slug = params["slug"] ?? ""
      const owner = new URL(request.url, config.baseUrl).searchParams.get("owner")
      const target = owner === null ? { bucket: slug } : { bucket_slug: slug, owner_username: owner }
      return yield* Effect.flatMap(Docks, (docks) => docks.named(target))
    })

  return {
    config,
    names,
    forbiddenPage,
    notFound,
    signedIn,
    checkedForm,
    withSession,
    withOptionalSession,
    hiddenFrom,
    dockOf,
    preSession,
    beginSession
  }
}

export type WebKit = ReturnType<typeof webKit>
