/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * OAuth's browser side (issue 17, docs/oauth.md): `/oauth/authorize` (sign-in if needed, then the consent page;
 * the answer is a POST through `checkedForm`), and revoking a connected app (`POST /app/mcp/oauth/{grantId}/revoke`;
 * `/app/mcp` lists them, web/AgentsRoutes.tsx). A request is validated in the order RFC 6749 §4.1.2.1 wants: until the
 * client and its redirect URI are known good, errors are a page here. After, an error found before the person has
 * answered is still a page, with a link back to the client that the person may follow: registration is open, so a
 * redirect on an invalid request would let anyone bounce people through this domain (RFC 9700 §4.11.2). Only the
 * person's own answer (deny) goes back by itself.
 */
import { CurrentPrincipal, type DockId, Docks, mcpAudience, OAuth, type OAuthClient, type Scope } from "@dock/domain"
import { HttpLayerRouter, HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { clientAddress } from "../http/ClientAddress.ts"
import type { Viewer } from "./Layout.tsx"
import {
  AuthorizeErrorPage,
  type AuthorizeParams,
  AuthorizeRefusedPage,
  ConnectAgentsPage,
  ConsentPage
} from "./OAuthViews.tsx"
import { APP_CSP, field, htmlPage, seeOther, sessionPrincipal, type WebKit } from "./WebKit.tsx"

/** A valid authorization request: the client, the exact redirect URI and the scopes asked. */
interface ValidRequest {
  readonly client: OAuthClient
  readonly params: AuthorizeParams
  readonly scopes: ReadonlyArray<Scope>
}

type Refusal =
  /** Shown as a page: nothing proves where to send the browser. */
  | { readonly _tag: "Page"; readonly message: string }
  /** Too many metadata documents fetched for this address (429). */
  | { readonly _tag: "Limited"; readonly message: string; readonly retryAfterSeconds: number }
  /** Shown as a page with a link to the client's redirect URI carrying the error (never followed automatically). */
  | {
    readonly _tag: "Back"
    readonly clientName: string
    readonly error: string
    readonly description: string
    readonly location: string
  }

/** `redirect_uri` with the answer's parameters added (its own query kept), `iss` always (RFC 9207). */
export const redirectWith = (redirectUri: string, params: Record<string, string | undefined>) => {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value)
  return url.toString()
}

const paramsOf = (get: (name: string) => string | undefined) => ({
  client_id: get("client_id") ?? "",
  redirect_uri: get("redirect_uri"),
  response_type: get("response_type") ?? "",
  code_challenge: get("code_challenge") ?? "",
  code_challenge_method: get("code_challenge_method") ?? "",
  scope: get("scope"),
  state: get("state"),
  resource: get("resource")
})

export const oauthRoutes = (kit: WebKit) => {
  const { checkedForm, config, forbiddenPage, notFound, signedIn, withSession } = kit
  const issuer = config.baseUrl
  const resourceUrl = mcpAudience(config.baseUrl)

  const errorPage = (viewer: Viewer | undefined, message: string) =>
    htmlPage(400, <AuthorizeErrorPage viewer={viewer} message={message} />)

  const validate = (raw: ReturnType<typeof paramsOf>, requesterIp: string) =>
    Effect.gen(function*() {
      const page = (message: string): Refusal => ({ _tag: "Page", message })
      if (raw.client_id === "") return Either.left(page("The request names no client (client_id is missing)."))
      const found = yield* Effect.flatMap(OAuth, (oauth) => oauth.client(raw.client_id, requesterIp)).pipe(
        Effect.map((client) => Either.right(client)),
        Effect.catchTags({
          OAuthError: (error) =>
            Effect.succeed(Either.left(page(`The app could not be identified: ${error.error_description}`))),
          RateLimited: (error) =>
            Effect.succeed(Either.left<Refusal>({
              _tag: "Limited",
              message: `${error.message}. Try again later.`,
              retryAfterSeconds: error.retry_after_seconds
            }))
        })
      )
      if (Either.isLeft(found)) return Either.left(found.left)
      if (Option.isNone(found.right)) return Either.left(page("The app is not registered here (unknown client_id)."))
      const client = found.right.value
      const redirectUri = raw.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined)
      if (redirectUri === undefined) return Either.left(page("The request names no redirect_uri."))
      if (!client.redirectUris.includes(redirectUri)) {
        return Either.left(page("The redirect_uri is not one the app registered (it must match exactly)."))
      }
      const back = (error: string, description: string): Refusal => ({
        _tag: "Back",
        clientName: client.clientName,
        error,
        description,
        location: redirectWith(redirectUri, { error, error_description: description, state: raw.state, iss: issuer })
      })
      if (raw.response_type !== "code") {
        return Either.left(back("unsupported_response_type", "response_type must be code"))
      }
      if (raw.code_challenge_method !== "S256" || !/^[A-Za-z0-9_-]{43}$/.test(raw.code_challenge)) {
        return Either.left(back("invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256"))
      }
      const resource = raw.resource ?? resourceUrl
      if (resource !== resourceUrl) return Either.left(back("invalid_target", `resource must be ${resourceUrl}`))
      const asked = (raw.scope ?? "mcp:read mcp:write").split(" ").filter((scope) => scope !== "")
      if (asked.some((scope) => scope !== "mcp:read" && scope !== "mcp:write")) {
        return Either.left(back("invalid_scope", "Scopes offered: mcp:read mcp:write"))
      }
      const scopes: ReadonlyArray<Scope> = asked.includes("mcp:write") || asked.length === 0
        ? ["mcp:read", "mcp:write"]
        : ["mcp:read"]
      const valid: ValidRequest = {
        client,
        scopes,
        params: {
          client_id: client.clientId,
          redirect_uri: redirectUri,
          response_type: "code",
          code_challenge: raw.code_challenge,
          code_challenge_method: "S256",
          scope: scopes.join(" "),
          state: raw.state,
          resource
        }
      }
      return Either.right(valid)
    })

  const refused = (refusal: Refusal, viewer: Viewer | undefined) => {
    switch (refusal._tag) {
      case "Page":
        return errorPage(viewer, refusal.message)
      case "Limited":
        return HttpServerResponse.setHeader(
          htmlPage(429, <AuthorizeErrorPage viewer={viewer} message={refusal.message} />),
          "retry-after",
          String(refusal.retryAfterSeconds)
        )
      case "Back":
        return htmlPage(
          400,
          <AuthorizeRefusedPage
            viewer={viewer}
            clientName={refusal.clientName}
            error={refusal.error}
            description={refusal.description}
            redirectHost={redirectHost(refusal.location)}
            location={refusal.location}
          />
        )
    }
  }

  const writableDocks = Effect.flatMap(Docks, (docks) => docks.listWritable({ includeCollaborations: true })).pipe(
    Effect.orElseSucceed(() => [])
  )

  const consent = (valid: ValidRequest, viewer: Viewer, error?: string) =>
    Effect.gen(function*() {
      const docks = yield* writableDocks
      return consentCsp(
        valid.params.redirect_uri,
        htmlPage(
          error === undefined ? 200 : 400,
          <ConsentPage
            viewer={viewer}
            clientName={valid.client.clientName}
            clientUri={valid.client.clientUri}
            redirectHost={redirectHost(valid.params.redirect_uri)}
            params={valid.params}
            wantsWrite={valid.scopes.includes("mcp:write")}
            docks={docks}
            error={error}
          />
        )
      )
    })

  /** GET /oauth/authorize: validate, then sign in (and come back here), then ask. */
  const authorizeGet = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const query = new URL(request.url, config.baseUrl).searchParams
    const signed = yield* signedIn(request)
    const viewer = Option.getOrUndefined(Option.map(signed, (s) => s.viewer))
    const checked = yield* validate(
      paramsOf((name) => query.get(name) ?? undefined),
      clientAddress(request, config.trustProxy)
    )
    if (Either.isLeft(checked)) return refused(checked.left, viewer)
    if (Option.isNone(signed)) return seeOther(`/login?next=${encodeURIComponent(request.url)}`)
    // As the signed-in person, so the consent page lists the Docks they may edit.
    return yield* consent(checked.right, signed.value.viewer).pipe(
      Effect.provideService(CurrentPrincipal, sessionPrincipal(signed.value.session))
    )
  })

  /** POST /oauth/authorize: the person's answer. Refused (nothing issued) without our Origin and CSRF token. */
  const authorizePost = withSession((request, signed) =>
    Effect.gen(function*() {
      const checkedFormFields = yield* checkedForm(request, signed.secret)
      if (Option.isNone(checkedFormFields)) return forbiddenPage(signed.viewer)
      const form = checkedFormFields.value
      const checked = yield* validate(paramsOf((name) => field(form, name)), clientAddress(request, config.trustProxy))
      if (Either.isLeft(checked)) return refused(checked.left, signed.viewer)
      const valid = checked.right
      const { redirect_uri, state } = valid.params
      if (field(form, "decision") !== "approve") {
        return seeOther(redirectWith(redirect_uri, {
          error: "access_denied",
          error_description: "The person denied access",
          state,
          iss: issuer
        }))
      }
      const write = field(form, "access") === "write" && valid.scopes.includes("mcp:write")
      const scopes: ReadonlyArray<Scope> = write ? ["mcp:read", "mcp:write"] : ["mcp:read"]
      let allowed: ReadonlyArray<string> | null = null
      if (field(form, "docks") === "some") {
        const chosen = UrlParams.getAll(form, "dock")
        const writable = new Set((yield* writableDocks).map((dock) => dock.id as string))
        if (chosen.length === 0 || chosen.some((id) => !writable.has(id))) {
          return yield* consent(valid, signed.viewer, "Tick at least one Dock you can edit, or choose every Dock.")
        }
        allowed = [...new Set(chosen)]
      }
      const code = yield* Effect.flatMap(OAuth, (oauth) =>
        oauth.authorize({
          userId: signed.session.userId,
          clientId: valid.client.clientId,
          redirectUri: redirect_uri,
          codeChallenge: valid.params.code_challenge,
          scopes,
          allowedBucketIds: allowed as ReadonlyArray<DockId> | null,
          resource: valid.params.resource
        }))
      return seeOther(redirectWith(redirect_uri, { code, state, iss: issuer }))
    })
  )

  const revokeGrant = withSession((request, signed) =>
    Effect.gen(function*() {
      const checked = yield* checkedForm(request, signed.secret)
      if (Option.isNone(checked)) return forbiddenPage(signed.viewer)
      const { grantId } = yield* HttpRouter.params
      return yield* Effect.flatMap(OAuth, (oauth) => oauth.revokeGrant(signed.session.userId, grantId ?? "")).pipe(
        Effect.as(seeOther("/app/mcp?done=app-revoked")),
        Effect.catchTag("NotFound", () => Effect.succeed(notFound(signed.viewer)))
      )
    })
  )

  const connectAgents = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const signed = yield* signedIn(request)
    return htmlPage(
      200,
      <ConnectAgentsPage
        baseUrl={config.baseUrl}
        viewer={Option.getOrUndefined(Option.map(signed, (s) => s.viewer))}
        anonymousRegistration={config.anonymousRegistrationEnabled}
      />
    )
  })

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/docs/connect/agents", connectAgents),
    HttpLayerRouter.route("GET", "/oauth/authorize", authorizeGet),
    HttpLayerRouter.route("POST", "/oauth/authorize", authorizePost),
    HttpLayerRouter.route("POST", "/app/mcp/oauth/:grantId/revoke", revokeGrant)
  ])
}

/**
 * The consent page's CSP: the app's, except that its form may also lead to the client's redirect URI — browsers
 * hold the redirect after a form POST to `form-action`, and approve and deny both end there.
 */
const consentCsp = (redirectUri: string, response: HttpServerResponse.HttpServerResponse) => {
  const url = new URL(redirectUri)
  const source = url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol
  return HttpServerResponse.setHeader(
    response,
    "content-security-policy",
    APP_CSP.replace("form-action 'self'", `form-action 'self' ${source}`)
  )
}

const redirectHost = (uri: string) => {
  const url = new URL(uri)
  return url.host === "" ? `${url.protocol}` : url.host
}
