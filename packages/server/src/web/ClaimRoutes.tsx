/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * The claim page for people (`/claim`; docs/web.md "Connected agents and claiming"). The same domain calls as
 * `POST /agent/auth/claim` (claim-start mails the code, claim-complete moves the sandbox), so the same limits and
 * messages apply. Works signed in or not: signed in, the code goes to the account's own email (the sandbox lands
 * in this account). A claim never signs anyone in: the agent holding the claim token may get the code from the
 * person (/auth.md tells it to) and finish the claim itself, so a session here would hand it the whole account.
 * Signed out, the success page sends the person to /login for the Dock. CSRF: the session secret seeds the token
 * when signed in, else the pre-session nonce (as /login).
 */
import { type ClaimAnswer, HmacKey, Registrations } from "@dock/domain"
import { HttpLayerRouter, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { ClaimCodePage, ClaimedPage, ClaimStartPage, CredentialPage } from "./ClaimViews.tsx"
import type { Viewer } from "./Layout.tsx"
import { field, htmlPage, type WebKit } from "./WebKit.tsx"
import { csrfToken, setPreSessionCookie } from "./WebSecurity.ts"

export const claimRoutes = (kit: WebKit) => {
  const { checkedForm, config, forbiddenPage, names, preSession, signedIn } = kit

  const claimForm = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = (new URL(request.url, config.baseUrl).searchParams.get("token") ?? "").slice(0, 200)
    const signed = Option.getOrUndefined(yield* signedIn(request))
    const key = yield* HmacKey
    if (signed !== undefined) {
      return htmlPage(
        200,
        <ClaimStartPage
          viewer={signed.viewer}
          csrf={signed.viewer.csrf}
          token={token}
          fixedEmail={signed.session.email ?? undefined}
        />
      )
    }
    const pre = preSession(request)
    const page = htmlPage(200, <ClaimStartPage viewer={undefined} csrf={csrfToken(key, pre.nonce)} token={token} />)
    return pre.fresh ? setPreSessionCookie(page, names, pre.nonce) : page
  })

  const claimPost = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const signed = Option.getOrUndefined(yield* signedIn(request))
    const seed = signed?.secret ?? request.cookies[names.preSession]
    const viewer: Viewer | undefined = signed?.viewer
    const checked = yield* checkedForm(request, seed)
    if (Option.isNone(checked)) return forbiddenPage(viewer)
    const form = checked.value
    const key = yield* HmacKey
    const csrf = csrfToken(key, seed!)
    const token = (field(form, "claim_token") ?? "").trim()
    // Signed in, the claim goes to the account's own email whatever the form says.
    const fixedEmail = signed?.session.email ?? undefined
    const email = fixedEmail ?? (field(form, "email") ?? "").trim()
    const otp = field(form, "otp")
    const registrations = yield* Registrations

    if (otp === undefined) {
      return yield* registrations.claim({ claim_token: token, email }).pipe(
        Effect.map((answer) =>
          htmlPage(
            200,
            <ClaimCodePage
              viewer={viewer}
              csrf={csrf}
              token={token}
              email={email}
              expires={answer.status === "otp_sent" ? answer.claim_token_expires : undefined}
            />
          )
        ),
        Effect.catchAll((error) =>
          Effect.succeed(htmlPage(
            error.status,
            <ClaimStartPage
              viewer={viewer}
              csrf={csrf}
              token={token}
              email={email}
              fixedEmail={fixedEmail}
              error={error.message}
            />
          ))
        )
      )
    }

    return yield* registrations.claim({ claim_token: token, otp: otp.trim() }).pipe(
      Effect.flatMap((answer: ClaimAnswer) => {
        if (answer.status === "otp_sent") return Effect.dieMessage("claim-complete answered otp_sent")
        const account = answer.account
        if ("credential" in answer) {
          return Effect.succeed(
            htmlPage(200, <CredentialPage viewer={viewer} credential={answer.credential} email={account.email} />)
          )
        }
        const access = signed === undefined
          ? "signed-out"
          : signed.session.userId === account.id
          ? "owner"
          : "other-account"
        return Effect.succeed(
          htmlPage(200, <ClaimedPage viewer={viewer} dock={answer.bucket} email={account.email} access={access} />)
        )
      }),
      Effect.catchAll((error) =>
        Effect.succeed(htmlPage(
          error.status,
          <ClaimCodePage viewer={viewer} csrf={csrf} token={token} email={email} error={error.message} />
        ))
      )
    )
  })

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/claim", claimForm),
    HttpLayerRouter.route("POST", "/claim", claimPost)
  ])
}
