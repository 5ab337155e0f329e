/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * The web app's routes (docs/web.md): `/`, `/app.css`, sign-in at `/login`, `POST /logout`, and the signed-in views
 * under `/app`. Pages are Preact components rendered to HTML on the server; every action is a plain form POST
 * that passes `checkedForm` (Origin + CSRF token) before anything changes. App pages carry their own strict CSP.
 * The domain runs as the session's principal (`sessionPrincipal`); its rules stay in the domain.
 */
import { anonymousPrincipal, CurrentPrincipal, type Dock, Docks, HmacKey, Pages, Sessions } from "@dock/domain"
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import type { ServerConfig } from "../Config.ts"
import { clientAddress } from "../http/ClientAddress.ts"
import { oauthRoutes } from "./OAuthRoutes.tsx"
import { APP_CSS } from "./Styles.ts"
import { AppHomePage, BucketPage, type CreateDockForm, HomePage, LoginCodePage, LoginEmailPage } from "./Views.tsx"
import { field, htmlPage, seeOther, webKit } from "./WebKit.tsx"
import { clearCookie, csrfToken, newNonce, safeNext, setPreSessionCookie, setSessionCookie } from "./WebSecurity.ts"

export const webRoutes = (config: ServerConfig) => {
  const kit = webKit(config)
  const { names, forbiddenPage, notFound, signedIn, checkedForm, withSession } = kit

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
      const resolved = yield* kit.dockOf(request)
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

  return Layer.mergeAll(
    HttpLayerRouter.addAll([
      HttpLayerRouter.route("GET", "/", home),
      HttpLayerRouter.route("GET", "/app.css", Effect.succeed(stylesheet)),
      HttpLayerRouter.route("GET", "/login", loginForm),
      HttpLayerRouter.route("POST", "/login", loginPost),
      HttpLayerRouter.route("POST", "/logout", logout),
      HttpLayerRouter.route("GET", "/app", appHome()),
      HttpLayerRouter.route("POST", "/app/buckets", createDock),
      HttpLayerRouter.route("GET", "/app/buckets/:slug", bucket),
      HttpLayerRouter.route("*", "/app/*", appNotFound)
    ]),
    oauthRoutes(kit)
    // Each feature's routes (a `(kit: WebKit) => Layer` in its own file) join here.
  )
}
