/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * Connected agents at `/app/mcp` (spec §5.7; docs/web.md "Connected agents and claiming"): list the person's
 * tokens, create one (its secret shown once), rotate and revoke. Every POST passes `checkedForm` first; the
 * domain (Tokens/OwnTokens.ts) keeps the ownership rule: another person's token id is a 404 here.
 */
import {
  type CreatedToken,
  CurrentPrincipal,
  type Dock,
  Docks,
  issueOwnToken,
  listOwnTokens,
  OAuth,
  revokeOwnToken,
  rotateOwnToken
} from "@dock/domain"
import { HttpLayerRouter, HttpRouter, type HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { Clock, Effect } from "effect"
import { AgentsPage, type TokenForm, TokenSecretPage } from "./AgentsViews.tsx"
import { APP_JS } from "./AppScript.ts"
import type { Viewer } from "./Layout.tsx"
import { OAuthGrantsSection } from "./OAuthViews.tsx"
import { field, htmlPage, seeOther, type WebKit } from "./WebKit.tsx"

const NOTICES: Record<string, string> = {
  revoked: "Token revoked: it stopped working at once.",
  "app-revoked": "App disconnected: its access and refresh tokens stopped working at once."
}

export const agentsRoutes = (kit: WebKit) => {
  const { checkedForm, config, forbiddenPage, notFound, withSession } = kit

  /** The page with the person's tokens; `form` and `error` when a create was refused. */
  const page = (viewer: Viewer, options: { status?: number; form?: TokenForm; error?: string; notice?: string }) =>
    Effect.gen(function*() {
      const tokens = yield* listOwnTokens().pipe(Effect.orDie)
      const writable = yield* Effect.flatMap(Docks, (docks) => docks.listWritable({ includeCollaborations: true }))
        .pipe(Effect.orDie)
      const byId = new Map<string, Dock>(writable.map((dock) => [dock.id, dock]))
      const now = yield* Clock.currentTimeMillis
      // The apps connected through OAuth are listed (and revoked, web/OAuthRoutes.tsx) beside the tokens.
      const { userId } = yield* CurrentPrincipal
      const grants = userId === null ? [] : yield* Effect.flatMap(OAuth, (oauth) => oauth.grants(userId))
      const dockNames = new Map(writable.map((dock) => [dock.id as string, dock.title]))
      return htmlPage(
        options.status ?? 200,
        <AgentsPage
          viewer={viewer}
          baseUrl={config.baseUrl}
          tokens={[...tokens].reverse()}
          writable={writable}
          docks={byId}
          now={now}
          notice={options.notice}
          error={options.error}
          form={options.form}
          extra={<OAuthGrantsSection viewer={viewer} grants={grants} dockNames={dockNames} />}
        />
      )
    })

  const agents = withSession((request, signed) => {
    const done = new URL(request.url, config.baseUrl).searchParams.get("done") ?? ""
    return page(signed.viewer, { notice: NOTICES[done] })
  })

  const secretPage = (viewer: Viewer, token: CreatedToken, rotated: boolean) =>
    htmlPage(200, <TokenSecretPage viewer={viewer} baseUrl={config.baseUrl} token={token} rotated={rotated} />, {
      script: true
    })

  const create = withSession((request, signed) =>
    Effect.gen(function*() {
      const checked = yield* checkedForm(request, signed.secret)
      if (checked._tag === "None") return forbiddenPage(signed.viewer)
      const form = checked.value
      const input: TokenForm = {
        label: (field(form, "label") ?? "").trim(),
        access: field(form, "access") === "read" ? "read" : "write",
        docks: field(form, "docks") === "chosen" ? "chosen" : "all",
        dockIds: UrlParams.getAll(form, "dock"),
        expires: field(form, "expires") ?? "90"
      }
      if (input.docks === "chosen" && input.dockIds!.length === 0) {
        return yield* page(signed.viewer, {
          status: 400,
          form: input,
          error: "Choose at least one Dock, or let the token change all your Docks."
        })
      }
      const days = input.expires === "never" ? null : Number(input.expires)
      return yield* issueOwnToken({
        label: input.label!,
        write: input.access === "write",
        dockIds: input.docks === "chosen" ? input.dockIds : undefined,
        expiresInDays: days !== null && Number.isFinite(days) ? days : days === null ? null : -1
      }).pipe(
        Effect.map((token) => secretPage(signed.viewer, token, false)),
        Effect.catchAll((error) => page(signed.viewer, { status: error.status, form: input, error: error.message }))
      )
    })
  )

  /** A POST on one of the person's tokens: `act` runs only after the form check; a token not theirs is 404. */
  const onToken = <A, E extends { readonly _tag: string; readonly message: string }, R>(
    act: (id: string, request: HttpServerRequest.HttpServerRequest, viewer: Viewer) => Effect.Effect<A, E, R>,
    answer: (result: A, viewer: Viewer) => ReturnType<typeof seeOther>
  ) =>
    withSession((request, signed) =>
      Effect.gen(function*() {
        const checked = yield* checkedForm(request, signed.secret)
        if (checked._tag === "None") return forbiddenPage(signed.viewer)
        const id = (yield* HttpRouter.params)["id"] ?? ""
        return yield* act(id, request, signed.viewer).pipe(
          Effect.map((result) => answer(result, signed.viewer)),
          Effect.catchAll((error) =>
            error._tag === "NotFound"
              ? Effect.succeed(notFound(signed.viewer))
              : page(signed.viewer, { status: 400, error: error.message })
          )
        )
      })
    )

  const rotate = onToken((id) => rotateOwnToken(id), (token, viewer) => secretPage(viewer, token, true))
  const revoke = onToken((id) => revokeOwnToken(id), () => seeOther("/app/mcp?done=revoked"))

  const script = HttpServerResponse.text(APP_JS, {
    contentType: "text/javascript; charset=utf-8",
    headers: { "cache-control": "public, max-age=300" }
  })

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/app.js", Effect.succeed(script)),
    HttpLayerRouter.route("GET", "/app/mcp", agents),
    HttpLayerRouter.route("POST", "/app/mcp/tokens", create),
    HttpLayerRouter.route("POST", "/app/mcp/tokens/:id/rotate", rotate),
    HttpLayerRouter.route("POST", "/app/mcp/tokens/:id/revoke", revoke)
  ])
}
