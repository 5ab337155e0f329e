/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * The web app's routes (docs/web.md): `/`, `/app.css`, sign-in at `/login`, `POST /logout`, and the signed-in views
 * under `/app`. Pages are Preact components rendered to HTML on the server; every action is a plain form POST
 * that passes `checkedForm` (Origin + CSRF token) before anything changes. App pages carry their own strict CSP.
 * The domain runs as the session's principal (`sessionPrincipal`); its rules stay in the domain.
 */
import {
  type ActiveSession,
  anonymousPrincipal,
  CurrentPrincipal,
  type Dock,
  Docks,
  HmacKey,
  Pages,
  type Principal,
  Sessions,
  userPrincipal
} from "@dock/domain"
import { HttpLayerRouter, HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { Effect, Option } from "effect"
import type { VNode } from "preact"
import { render } from "preact-render-to-string"
import type { ServerConfig } from "../Config.ts"
import type { BodyLimit } from "../http/BodyLimit.ts"
import { clientAddress } from "../http/ClientAddress.ts"
import type { Viewer } from "./Layout.tsx"
import { APP_CSS } from "./Styles.ts"
import {
  AppHomePage,
  BucketPage,
  type CreateDockForm,
  ErrorView,
  HomePage,
  LoginCodePage,
  LoginEmailPage
} from "./Views.tsx"
import {
  clearCookie,
  cookieNames,
  csrfToken,
  fromOurOrigin,
  newNonce,
  safeNext,
  sameToken,
  setPreSessionCookie,
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
  matches: (url) => url === "/login" || url.startsWith("/login?") || url === "/logout" || url.startsWith("/app/"),
  bytes: 16 * 1024
}

/** A rendered page: `<!doctype html>` and the view, with the app's headers. */
export const htmlPage = (status: number, view: VNode) =>
  HttpServerResponse.text(`<!doctype html>\n${render(view)}`, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: APP_HEADERS
  })

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

const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  request.urlParamsBody.pipe(Effect.orElseSucceed((): UrlParams.UrlParams => []))

const field = (form: UrlParams.UrlParams, name: string) => Option.getOrUndefined(UrlParams.getFirst(form, name))

export const webRoutes = (config: ServerConfig) => {
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
      const secret = request.cookies[names.session]
      if (secret === undefined || secret === "") return Option.none<SignedInRequest>()
      const session = yield* Effect.flatMap(Sessions, (sessions) => sessions.authenticate(secret))
      const key = yield* HmacKey
      return Option.map(session, (session): SignedInRequest => ({
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

  const home = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const signed = yield* signedIn(request)
    const discoverable = yield* Effect.flatMap(Docks, (docks) => docks.list({ visibility: "public" })).pipe(
      Effect.provideService(CurrentPrincipal, anonymousPrincipal),
      Effect.orElseSucceed((): ReadonlyArray<Dock> => [])
    )
    return htmlPage(
      200,
      <HomePage
        viewer={Option.getOrUndefined(Option.map(signed, (s) => s.viewer))}
        baseUrl={config.baseUrl}
        discoverable={discoverable.slice(0, 50)}
      />
    )
  })

  /** The pre-session nonce that seeds the sign-in forms' CSRF token: the cookie's, or a fresh one to set. */
  const preSession = (request: HttpServerRequest.HttpServerRequest) => {
    const existing = request.cookies[names.preSession]
    return existing !== undefined && /^[A-Za-z0-9_-]{22}$/.test(existing)
      ? { nonce: existing, fresh: false }
      : { nonce: newNonce(), fresh: true }
  }

  const loginForm = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const next = safeNext(new URL(request.url, config.baseUrl).searchParams.get("next") ?? undefined)
    if (Option.isSome(yield* signedIn(request))) return seeOther(next)
    const pre = preSession(request)
    const key = yield* HmacKey
    const page = htmlPage(200, <LoginEmailPage csrf={csrfToken(key, pre.nonce)} next={next} />)
    return pre.fresh ? setPreSessionCookie(page, names, pre.nonce) : page
  })

  const loginPost = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const nonce = request.cookies[names.preSession]
    const checked = yield* checkedForm(request, nonce)
    if (Option.isNone(checked)) return forbiddenPage(undefined)
    const form = checked.value
    const key = yield* HmacKey
    const csrf = csrfToken(key, nonce!)
    const next = safeNext(field(form, "next"))
    const email = (field(form, "email") ?? "").trim()
    const code = field(form, "code")
    const ip = clientAddress(request, config.trustProxy)
    const sessions = yield* Sessions

    if (code === undefined) {
      return yield* sessions.requestCode(email, ip).pipe(
        Effect.as(htmlPage(200, <LoginCodePage csrf={csrf} next={next} email={email} />)),
        Effect.catchTags({
          ValidationError: () =>
            Effect.succeed(
              htmlPage(
                400,
                <LoginEmailPage csrf={csrf} next={next} email={email} error="Enter a valid email address." />
              )
            ),
          RateLimited: (error) =>
            Effect.succeed(
              htmlPage(429, <LoginEmailPage csrf={csrf} next={next} email={email} error={`${error.message}.`} />)
            ),
          Unavailable: () =>
            Effect.succeed(
              htmlPage(
                503,
                <LoginEmailPage
                  csrf={csrf}
                  next={next}
                  email={email}
                  error="The code could not be mailed right now. Try again in a moment."
                />
              )
            )
        })
      )
    }

    return yield* sessions.signIn(email, code, ip).pipe(
      Effect.flatMap((signedIn) =>
        Effect.gen(function*() {
          // A session this browser held before ends here: the new one has a fresh id (no fixation).
          const previous = request.cookies[names.session]
          if (previous !== undefined && previous !== "") yield* sessions.revoke(previous)
          const response = setSessionCookie(seeOther(next), names, signedIn.secret, signedIn.expiresAt)
          return clearCookie(response, names, names.preSession)
        })
      ),
      Effect.catchTags({
        ValidationError: (error) =>
          Effect.succeed(
            htmlPage(
              400,
              <LoginCodePage
                csrf={csrf}
                next={next}
                email={email}
                error={error.message}
              />
            )
          ),
        RateLimited: (error) =>
          Effect.succeed(
            htmlPage(429, <LoginCodePage csrf={csrf} next={next} email={email} error={`${error.message}.`} />)
          )
      })
    )
  })

  const logout = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const signed = yield* signedIn(request)
    if (Option.isNone(signed)) return clearCookie(seeOther("/"), names, names.session)
    const checked = yield* checkedForm(request, signed.value.secret)
    if (Option.isNone(checked)) return forbiddenPage(signed.value.viewer)
    yield* Effect.flatMap(Sessions, (sessions) => sessions.revoke(signed.value.secret))
    return clearCookie(seeOther("/"), names, names.session)
  })

  const appHome = (form?: CreateDockForm, error?: string, status = 200) =>
    withSession((_request, signed) =>
      Effect.gen(function*() {
        const docks = yield* Docks
        const me = signed.session.userId
        const owned = yield* docks.list({ visibility: "all", ownedByMe: true }).pipe(Effect.orDie)
        const writable = yield* docks.listWritable({ includeCollaborations: true }).pipe(Effect.orDie)
        const collaborations = writable.filter((dock) => dock.owner.id !== me)
        return htmlPage(
          status,
          <AppHomePage viewer={signed.viewer} owned={owned} collaborations={collaborations} error={error} form={form} />
        )
      })
    )

  const createDock = withSession((request, signed) =>
    Effect.gen(function*() {
      const checked = yield* checkedForm(request, signed.secret)
      if (Option.isNone(checked)) return forbiddenPage(signed.viewer)
      const form = checked.value
      const input: CreateDockForm = {
        title: (field(form, "title") ?? "").trim(),
        slug: (field(form, "slug") ?? "").trim(),
        visibility: field(form, "visibility") === "public" ? "public" : "private"
      }
      const docks = yield* Docks
      return yield* docks.create({
        title: input.title,
        ...(input.slug === "" ? {} : { slug: input.slug }),
        visibility: input.visibility === "public" ? "public" : "private"
      }).pipe(
        Effect.map((dock) => seeOther(`/app/buckets/${encodeURIComponent(dock.slug)}`)),
        Effect.catchAll((error) => appHome(input, error.message, error.status))
      )
    })
  )

  const bucket = withSession((request, signed) =>
    Effect.gen(function*() {
      const params = yield* HttpRouter.params
      const slug = params["slug"] ?? ""
      const owner = new URL(request.url, config.baseUrl).searchParams.get("owner")
      const target = owner === null ? { bucket: slug } : { bucket_slug: slug, owner_username: owner }
      const resolved = yield* Effect.flatMap(Docks, (docks) => docks.named(target))
      // The newest 100 pages; paging through the rest comes with the whole Dock view (issue 16, item 3).
      const { parts: pages } = yield* Effect.flatMap(Pages, (pages) =>
        pages.list({ bucket_id: resolved.dock.id }, {
          limit: 100,
          sort: "recent",
          kinds: ["web_page", "markdown_file", "micro_db"]
        }))
      return htmlPage(200, <BucketPage viewer={signed.viewer} dock={resolved.dock} pages={pages} />)
    }).pipe(Effect.catchTags({
      NotFound: () => Effect.succeed(notFound(signed.viewer)),
      BadRequest: () => Effect.succeed(notFound(signed.viewer))
    }))
  )

  const appNotFound = withSession((_request, signed) => Effect.succeed(notFound(signed.viewer)))

  const stylesheet = HttpServerResponse.text(APP_CSS, {
    contentType: "text/css; charset=utf-8",
    headers: { "cache-control": "public, max-age=300" }
  })

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/", home),
    HttpLayerRouter.route("GET", "/app.css", Effect.succeed(stylesheet)),
    HttpLayerRouter.route("GET", "/login", loginForm),
    HttpLayerRouter.route("POST", "/login", loginPost),
    HttpLayerRouter.route("POST", "/logout", logout),
    HttpLayerRouter.route("GET", "/app", appHome()),
    HttpLayerRouter.route("POST", "/app/buckets", createDock),
    HttpLayerRouter.route("GET", "/app/buckets/:slug", bucket),
    HttpLayerRouter.route("*", "/app/*", appNotFound)
  ])
}
