/**
 * OAuth test kit (issue 17): PKCE pairs, client registration, and the authorization code flow driven over HTTP
 * with a signed-in WebClient (consent page → approve → code at the redirect URI → tokens).
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { fetchReply, postJson, type Reply } from "./Http.ts"
import type { RunningServer } from "./TestServer.ts"
import type { WebClient, WebReply } from "./WebClient.ts"

export const pkce = () => {
  const verifier = randomBytes(32).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}

export const REDIRECT = "http://127.0.0.1:9/callback"

export const registerClient = (server: RunningServer, metadata: Record<string, unknown> = {}) =>
  Effect.map(
    postJson(`${server.url}/oauth/register`, {
      client_name: "Test Agent",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      ...metadata
    }),
    (reply) => {
      expect(reply.status, reply.text).toBe(201)
      return reply.json as { client_id: string; redirect_uris: Array<string>; client_name: string }
    }
  )

const entities = (text: string) =>
  text.replaceAll("&quot;", "\"").replaceAll("&#39;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&")

/** The hidden fields of the consent form (the authorization request and the CSRF token). */
export const hiddenFields = (html: string): Record<string, string> =>
  Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)].map((m) => [m[1]!, entities(m[2]!)])
  )

export interface AuthorizeRequest {
  readonly client_id: string
  readonly redirect_uri?: string | undefined
  readonly code_challenge?: string | undefined
  readonly code_challenge_method?: string | undefined
  readonly response_type?: string | undefined
  readonly scope?: string | undefined
  readonly state?: string | undefined
  readonly resource?: string | undefined
}

export const authorizeUrl = (server: RunningServer, request: AuthorizeRequest) => {
  const params = new URLSearchParams()
  const full = {
    response_type: "code",
    redirect_uri: REDIRECT,
    code_challenge_method: "S256",
    resource: `${server.config.baseUrl}/mcp`,
    scope: "mcp:read mcp:write",
    state: "st-123",
    ...request
  }
  for (const [name, value] of Object.entries(full)) if (value !== undefined) params.set(name, value)
  return `/oauth/authorize?${params.toString()}`
}

/**
 * The query of the "Return to <host>" link on the page that refuses an authorization request (never a redirect),
 * with the host the link names.
 */
export const returnLinkParams = (reply: WebReply) => {
  expect(reply.status, reply.text).toBe(400)
  expect(reply.headers["location"]).toBeUndefined()
  const link = /<a href="([^"]+)"[^>]*>Return to ([^<]+)<\/a>/.exec(reply.text)
  expect(link, reply.text).not.toBeNull()
  const url = new URL(entities(link![1]!))
  return { host: entities(link![2]!), url: `${url.origin}${url.pathname}`, params: url.searchParams }
}

/** The query of a redirect's Location. */
export const locationParams = (reply: WebReply) => {
  expect(reply.status, reply.text).toBe(303)
  return new URL(reply.headers["location"]!).searchParams
}

/** Consent page, then approve with `choices` (access, docks, dock…): the code at the redirect URI. */
export const approve = (
  browser: WebClient,
  path: string,
  choices: Record<string, string | Array<string>> = { access: "write", docks: "all" }
) =>
  Effect.gen(function*() {
    const page = yield* browser.get(path)
    expect(page.status, page.text).toBe(200)
    const form = new URLSearchParams({ ...hiddenFields(page.text), decision: "approve" })
    for (const [name, value] of Object.entries(choices)) {
      for (const one of [value].flat()) form.append(name, one)
    }
    const reply = yield* browser.postRaw("/oauth/authorize", form.toString())
    return { page, reply, params: locationParams(reply) }
  })

export const tokenRequest = (server: RunningServer, form: Record<string, string>) =>
  fetchReply(`${server.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString()
  })

export interface Tokens {
  readonly access_token: string
  readonly refresh_token: string
  readonly expires_in: number
  readonly scope: string
  readonly token_type: string
}

export const exchange = (server: RunningServer, clientId: string, code: string, verifier: string) =>
  Effect.map(
    tokenRequest(server, {
      grant_type: "authorization_code",
      code,
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      resource: `${server.config.baseUrl}/mcp`
    }),
    (reply: Reply) => reply
  )
