/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * The web app's routes (docs/web.md): `/`, `/app.css`, sign-in at `/login`, `POST /logout`, and the signed-in views
 * under `/app`. Pages are Preact components rendered to HTML on the server; every action is a plain form POST
 * that passes `checkedForm` (Origin + CSRF token) before anything changes. App pages carry their own strict CSP.
 * The domain runs as the session's principal (`sessionPrincipal`); its rules stay in the domain.
 */
import { anonymousPrincipal, CurrentPrincipal, type Dock, Docks, HmacKey, Members, Sessions } from "@dock/domain"
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import type { ServerConfig } from "../Config.ts"
import { clientAddress } from "../http/ClientAddress.ts"
import { agentsRoutes } from "./AgentsRoutes.tsx"
import { claimRoutes } from "./ClaimRoutes.tsx"
import { dockRoutes } from "./DockRoutes.tsx"
import { landingRoutes } from "./LandingRoutes.tsx"
import { oauthRoutes } from "./OAuthRoutes.tsx"
import { pageRoutes } from "./PageRoutes.tsx"
import { shareLinkRoutes } from "./ShareRoutes.tsx"
import { APP_CSS } from "./Styles.ts"
import { AppHomePage, type CreateDockForm, HomePage, LoginCodePage, LoginEmailPage } from "./Views.tsx"
import { field, htmlPage, seeOther, webKit } from "./WebKit.tsx"
import { clearCookie, csrfToken, safeNext, setPreSessionCookie } from "./WebSecurity.ts"

export const webRoutes = (config: ServerConfig) => {
  const kit = webKit(config)
  const { names, forbiddenPage, notFound, signedIn, checkedForm, withSession, preSession } = kit

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
            )
        })
      )
    }

    return yield* sessions.signIn(email, code, ip).pipe(
      Effect.flatMap((signedIn) => kit.beginSession(request, signedIn, seeOther(next))),
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
    withSession((request, signed) =>
      Effect.gen(function*() {
        const docks = yield* Docks
        const owned = yield* docks.list({ visibility: "all", ownedByMe: true }).pipe(Effect.orDie)
        // Every grant, editor or viewer (Docks shared with me), with its role.
        const collaborations = yield* Effect.flatMap(Members, (members) => members.sharedWithMe(200))
        const deleted = new URL(request.url, config.baseUrl).searchParams.get("deleted") ?? undefined
        return htmlPage(
          status,
          <AppHomePage
            viewer={signed.viewer}
            owned={owned}
            collaborations={collaborations}
            error={error}
            form={form}
            notice={deleted === undefined ? undefined : `The Dock ${deleted} was deleted.`}
          />
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
      HttpLayerRouter.route("*", "/app/*", appNotFound)
    ]),
    // Each feature's routes (a `(kit: WebKit) => Layer` in its own file) join here.
    dockRoutes(kit),
    pageRoutes(kit),
    agentsRoutes(kit),
    claimRoutes(kit),
    landingRoutes(kit),
    shareLinkRoutes(kit),
    oauthRoutes(kit)
  )
}
