/**
 * The claim page for people over real HTTP (issue 16, item 10; docs/web.md "Connected agents and claiming"): an
 * anonymous registration's instructions point to /claim?token=…; the person claims with the code from a real SMTP
 * receiver, signed out (no session is started: the agent holding the claim token may finish the claim itself, so
 * the person signs in for the Dock) or signed in (the sandbox lands in that account); the sandbox's token shows in
 * /app/mcp as claimed; wrong codes, an already claimed sandbox and unknown tokens get the domain's
 * messages; CSRF and Origin refusals change nothing.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { rawToolCall as rawHttpToolCall, unique } from "./support/Http.ts"
import { otherCode, register } from "./support/Identity.ts"
import { SmtpReceiver } from "./support/SmtpReceiver.ts"
import { type RunningServer, TestServer } from "./support/TestServer.ts"
import { browserFor, codeFromSmtp, requestCode, ServerWithSmtp, signIn, submitCode } from "./support/WebApp.ts"
import { csrfIn, type WebClient } from "./support/WebClient.ts"

interface Registered {
  readonly registration_id: string
  readonly credential: string
  readonly claim_url: string
  readonly claim_instructions: string
  readonly sandbox_bucket: { readonly id: string; readonly slug: string }
}

const registerAnonymously = Effect.gen(function*() {
  const server = yield* TestServer
  const reply = yield* register(server.url, { agent_label: `claim-agent-${unique()}` })
  expect(reply.status).toBe(201)
  return reply.json as Registered
})

const ownerEmailOf = (server: RunningServer, dockId: string) =>
  Effect.map(
    server.sql<{ email: string | null }>`select u.email from docks d join users u on u.id = d.owner_id
      where d.id = ${dockId}`.pipe(Effect.orDie),
    (rows) => rows[0]!.email
  )

const mailsTo = (email: string) =>
  Effect.map(SmtpReceiver, (receiver) => receiver.received().filter((mail) => mail.to.includes(email)).length)

/** /claim?token= and its form's claim-start POST; answers the code page. */
const startClaim = (client: WebClient, token: string, email?: string) =>
  Effect.gen(function*() {
    const form = yield* client.get(`/claim?token=${encodeURIComponent(token)}`)
    expect(form.status).toBe(200)
    return yield* client.post("/claim", {
      csrf: csrfIn(form.text),
      claim_token: token,
      ...(email === undefined ? {} : { email })
    })
  })

const bearerStatus = (token: string) =>
  Effect.flatMap(TestServer, (server) =>
    Effect.map(
      rawHttpToolCall(server.url, token, "list_buckets", {}),
      (reply) => reply.status
    ))

layer(ServerWithSmtp(), { excludeTestServices: true, timeout: 60_000 })("the claim page", (it) => {
  it.effect("the registration's instructions and /auth.md point a person to /claim?token=…", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = yield* registerAnonymously
      const base = registration.claim_url.replace(/\/agent\/auth\/claim$/, "")
      expect(registration.claim_instructions).toContain(
        `${base}/claim?token=${encodeURIComponent(registration.registration_id)}`
      )
      const authMd = yield* Effect.promise(() => fetch(`${server.url}/auth.md`).then((r) => r.text()))
      expect(authMd).toContain(`${base}/claim?token=<registration_id>`)
    }))

  it.effect("signed out: the mailed code claims the sandbox but starts no session; the person signs in for it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = yield* registerAnonymously
      const client = browserFor(server)
      const email = `claimer-${unique()}@example.com`

      const form = yield* client.get(`/claim?token=${encodeURIComponent(registration.registration_id)}`)
      expect(form.status).toBe(200)
      expect(form.headers["cache-control"]).toBe("no-store")
      expect(form.text).toContain(`value="${registration.registration_id}"`)
      expect(form.setCookies.some((line) => line.startsWith("dock_pre="))).toBe(true)

      const codePage = yield* client.post("/claim", {
        csrf: csrfIn(form.text),
        claim_token: registration.registration_id,
        email
      })
      expect(codePage.status).toBe(200)
      expect(codePage.text).toContain("Check your email")
      const code = yield* codeFromSmtp(email)

      const done = yield* client.post("/claim", {
        csrf: csrfIn(codePage.text),
        claim_token: registration.registration_id,
        email,
        otp: code
      })
      expect(done.status).toBe(200)
      expect(done.text).toContain("Sandbox claimed")
      expect(yield* ownerEmailOf(server, registration.sandbox_bucket.id)).toBe(email)
      // Whoever finished the claim (maybe the agent, with the code the person gave it) holds no session.
      expect(done.setCookies.filter((line) => line.startsWith("dock_session="))).toEqual([])
      expect(client.jar.has("dock_session")).toBe(false)
      const sessions = yield* server.sql<{ n: string | number }>`select count(*) as n from sessions s
        join users u on u.id = s.user_id where u.email = ${email}`.pipe(Effect.orDie)
      expect(Number(sessions[0]!.n)).toBe(0)
      const app = yield* client.get("/app")
      expect(app.status).toBe(303)
      expect(app.headers["location"]).toBe("/login?next=%2Fapp")

      // The page offers sign-in, and sign-in leads back to the claimed Dock.
      const signInLink = /href="(\/login\?next=[^"]+)">Sign in to open it</.exec(done.text)![1]!.replaceAll(
        "&amp;",
        "&"
      )
      const next = new URL(signInLink, server.url).searchParams.get("next")!
      expect(next).toMatch(new RegExp(`^/app/buckets/${registration.sandbox_bucket.slug}\\?owner=`))
      // No link straight into the Dock: signed out it would only bounce to /login.
      expect(done.text).not.toContain(`href="${next.replaceAll("&", "&amp;")}"`)
      const dockBefore = yield* client.get(next)
      expect(dockBefore.status).toBe(303)
      // The claim's code was the first mail to this address; the sign-in code is the second.
      const loginCode = yield* requestCode(client, email, next)
      const signedIn = yield* submitCode(client, loginCode, email, yield* codeFromSmtp(email, 2))
      expect(signedIn.status).toBe(303)
      expect(signedIn.headers["location"]).toBe(next)
      const dockPage = yield* client.get(next)
      expect(dockPage.status).toBe(200)

      // The agent's token keeps working, and the person sees it as a claimed sandbox token.
      expect(yield* bearerStatus(registration.credential)).toBe(200)
      const agents = yield* client.get("/app/mcp")
      expect(agents.status).toBe(200)
      expect(agents.text).toContain("Claimed sandbox")
      expect(agents.text).not.toContain(registration.credential)
    }))

  it.effect("signed in: the code goes to the account's own email and the sandbox lands in this account", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      const email = `signed-${unique()}@example.com`
      yield* signIn(client, email)
      const session = client.jar.get("dock_session")
      const registration = yield* registerAnonymously

      const form = yield* client.get(`/claim?token=${encodeURIComponent(registration.registration_id)}`)
      expect(form.text).toContain("The sandbox goes to your account")
      expect(form.text).toContain(email)
      // An email typed into the form cannot send the sandbox elsewhere.
      const elsewhere = `elsewhere-${unique()}@example.com`
      const codePage = yield* client.post("/claim", {
        csrf: csrfIn(form.text),
        claim_token: registration.registration_id,
        email: elsewhere
      })
      expect(codePage.status).toBe(200)
      const code = yield* codeFromSmtp(email, 2)
      expect(yield* mailsTo(elsewhere)).toBe(0)

      const done = yield* client.post("/claim", {
        csrf: csrfIn(codePage.text),
        claim_token: registration.registration_id,
        otp: code
      })
      expect(done.status).toBe(200)
      expect(done.text).toContain("Sandbox claimed")
      // Signed in as the account it went to: a link straight into the Dock.
      const link = /href="(\/app\/buckets\/[^"]+)">Open /.exec(done.text)![1]!.replaceAll("&amp;", "&")
      expect(link).toMatch(new RegExp(`^/app/buckets/${registration.sandbox_bucket.slug}\\?owner=`))
      expect((yield* client.get(link)).status).toBe(200)
      expect(done.setCookies).toEqual([])
      expect(client.jar.get("dock_session")).toBe(session)
      expect(yield* ownerEmailOf(server, registration.sandbox_bucket.id)).toBe(email)
      const home = yield* client.get("/app")
      expect(home.text).toContain(registration.sandbox_bucket.slug)
      expect((yield* client.get("/app/mcp")).text).toContain("Claimed sandbox")
    }))

  it.effect("a wrong code, an already claimed sandbox and an unknown token get the domain's messages", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = yield* registerAnonymously
      const client = browserFor(server)
      const email = `wrong-${unique()}@example.com`
      const codePage = yield* startClaim(client, registration.registration_id, email)
      const code = yield* codeFromSmtp(email)
      const csrf = csrfIn(codePage.text)

      const wrong = yield* client.post("/claim", {
        csrf,
        claim_token: registration.registration_id,
        email,
        otp: otherCode(code)
      })
      expect(wrong.status).toBe(400)
      expect(wrong.text).toContain("The code is wrong, expired or already used")
      expect(wrong.setCookies.filter((line) => line.startsWith("dock_session="))).toEqual([])
      expect(yield* ownerEmailOf(server, registration.sandbox_bucket.id)).toBeNull()

      const right = yield* client.post("/claim", { csrf, claim_token: registration.registration_id, email, otp: code })
      expect(right.status).toBe(200)

      // No session began, so the pre-session token still stands.
      const again = yield* client.post("/claim", {
        csrf,
        claim_token: registration.registration_id,
        email,
        otp: code
      })
      expect(again.status).toBe(400)
      expect(again.text).toContain("already been claimed")
      const restart = yield* startClaim(client, registration.registration_id, email)
      expect(restart.status).toBe(403)
      expect(restart.text).toContain("This registration has already been claimed")

      const unknown = yield* startClaim(browserFor(server), "no-such-claim-token", `x-${unique()}@example.com`)
      expect(unknown.status).toBe(404)
      expect(unknown.text).toContain("No registration has this claim token")
    }))

  it.effect("CSRF and Origin refusals mail nothing and claim nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = yield* registerAnonymously
      const client = browserFor(server)
      const email = `csrf-${unique()}@example.com`
      const form = yield* client.get("/claim")
      const csrf = csrfIn(form.text)
      const attempts: Array<[Record<string, string>, Record<string, string>]> = [
        [{ claim_token: registration.registration_id, email }, {}],
        [{ csrf: "wrong", claim_token: registration.registration_id, email }, {}],
        [{ csrf, claim_token: registration.registration_id, email }, { origin: "https://evil.test" }]
      ]
      for (const [body, headers] of attempts) {
        const reply = yield* client.post("/claim", body, headers)
        expect(reply.status).toBe(403)
      }
      // A fresh browser without the pre-session cookie is refused too.
      expect(
        (yield* browserFor(server).post("/claim", { csrf, claim_token: registration.registration_id, email }))
          .status
      ).toBe(403)
      expect(yield* mailsTo(email)).toBe(0)
      expect(yield* ownerEmailOf(server, registration.sandbox_bucket.id)).toBeNull()
    }))
})
