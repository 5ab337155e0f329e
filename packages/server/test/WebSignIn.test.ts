/**
 * The web app's sign-in and sessions over real HTTP (issue 16, items 1 and 2; docs/web.md): codes mailed to a
 * real SMTP receiver, enumeration-safe answers, code limits (expiry at the OTP life, single use, a new code voids the
 * old), cookie flags in development and production, no session fixation (a live earlier session is revoked at
 * sign-in), session expiry, `/app` → `/login?next=` and back, no open redirect, CSRF and Origin refusals that change
 * nothing, sign-out, and DOCK_SIGNUP=closed.
 */
import { Accounts, OTP_WRONG_TRIES_PER_CODE, Sessions, sha256, SIGN_IN_SENDS_PER_IP_PER_HOUR } from "@dock/domain"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, TestClock, TestContext } from "effect"
import { unique } from "./support/Http.ts"
import { awayFromWindowEnd, onlyCodeTo, otherCode } from "./support/Identity.ts"
import { SmtpReceiver } from "./support/SmtpReceiver.ts"
import { type RunningServer, startTestServer, TestServer } from "./support/TestServer.ts"
import { browserFor, codeFromSmtp, requestCode, ServerWithSmtp, signIn, submitCode } from "./support/WebApp.ts"
import { cookieValue, csrfIn, webClient, type WebReply } from "./support/WebClient.ts"

const dockCount = (server: RunningServer, slug: string) =>
  Effect.map(
    server.sql<{ n: string | number }>`select count(*) as n from docks where slug = ${slug}`,
    (rows) => Number(rows[0]!.n)
  ).pipe(Effect.orDie)

/** Runs a domain effect as if the time were `at` (epoch milliseconds): the TestClock stands in for the clock. */
const domainAt = <A, E>(server: RunningServer, at: number, effect: Effect.Effect<A, E, Sessions>) =>
  server.domain(
    Effect.gen(function*() {
      yield* TestClock.setTime(at)
      return yield* effect
    }).pipe(Effect.provide(TestContext.TestContext))
  )

/** A code typed into a fresh browser's sign-in form (its own pre-session), without asking for a new code. */
const codeInFreshBrowser = (server: RunningServer, email: string, code: string) =>
  Effect.gen(function*() {
    const client = browserFor(server)
    const form = yield* client.get("/login")
    return yield* client.post("/login", { csrf: csrfIn(form.text), email, code, next: "/app" })
  })

const hasSessionCookie = (reply: WebReply) => reply.setCookies.some((line) => line.startsWith("dock_session="))

layer(ServerWithSmtp(), { excludeTestServices: true })("web sign-in (development)", (it) => {
  it.effect("the code page answers the same for an email with and without an account", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const known = `known-${unique()}@example.com`
      yield* server.domain(Effect.flatMap(Accounts, (accounts) => accounts.createByOperator({ email: known })))
      const unknownClosedEye = `unknown-${unique()}@example.com`
      const a = yield* requestCode(browserFor(server), known)
      const b = yield* requestCode(browserFor(server), unknownClosedEye)
      expect(a.status).toBe(200)
      expect(b.status).toBe(a.status)
      const shape = (reply: WebReply, email: string) =>
        reply.text.replaceAll(email, "EMAIL").replace(/name="csrf" value="[^"]+"/, "")
      expect(shape(b, unknownClosedEye)).toBe(shape(a, known))
      // Sign-up is open: both get a code.
      yield* codeFromSmtp(known)
      yield* codeFromSmtp(unknownClosedEye)
    }))

  it.effect("GET /login sets an HttpOnly, SameSite=Lax pre-session cookie; app pages carry the strict CSP", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* browserFor(server).get("/login")
      expect(reply.status).toBe(200)
      expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
      expect(reply.headers["content-security-policy"]).toBe(
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
      )
      expect(reply.headers["x-content-type-options"]).toBe("nosniff")
      expect(reply.headers["referrer-policy"]).toBe("same-origin")
      const pre = reply.setCookies.find((line) => line.startsWith("dock_pre="))!
      expect(pre).toMatch(/; HttpOnly/)
      expect(pre).toMatch(/; SameSite=Lax/)
      expect(pre).toMatch(/; Path=\//)
      expect(pre).not.toMatch(/Secure/)
      expect(reply.text).toMatch(/^<!doctype html>/)
      expect(reply.text).toContain(`<label>Email address<input type="email" name="email"`)
    }))

  it.effect("signing in sets a fresh HttpOnly session cookie (stored hashed), not one the browser brought", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      const email = `person-${unique()}@example.com`
      // A session id an attacker planted must not become the session.
      client.jar.set("dock_session", "AttackerChosenSessionId0123456789abcdef")
      const done = yield* signIn(client, email)
      expect(done.status).toBe(303)
      expect(done.headers["location"]).toBe("/app")
      const line = done.setCookies.find((cookie) => cookie.startsWith("dock_session="))!
      expect(line).toMatch(/; HttpOnly/)
      expect(line).toMatch(/; SameSite=Lax/)
      expect(line).toMatch(/; Path=\//)
      expect(line).not.toMatch(/Secure/)
      const secret = cookieValue(line, "dock_session")!
      expect(secret).not.toBe("AttackerChosenSessionId0123456789abcdef")
      expect(secret.length).toBeGreaterThanOrEqual(40)
      expect(client.jar.has("dock_pre")).toBe(false)
      const rows = yield* server.sql<{ id_hash: string; username: string }>`select s.id_hash, u.username
        from sessions s join users u on u.id = s.user_id where u.email = ${email}`.pipe(Effect.orDie)
      expect(rows.map((row) => row.id_hash)).toEqual([sha256(secret)])
      const app = yield* client.get("/app")
      expect(app.status).toBe(200)
      expect(app.text).toContain(rows[0]!.username)
    }))

  it.effect("/app/... without a session goes to /login with next, and back there after sign-in", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      const first = yield* client.get("/app/buckets/somewhere?owner=someone")
      expect(first.status).toBe(303)
      expect(first.headers["location"]).toBe(
        `/login?next=${encodeURIComponent("/app/buckets/somewhere?owner=someone")}`
      )
      const done = yield* signIn(client, `next-${unique()}@example.com`, "/app/buckets/somewhere?owner=someone")
      expect(done.status).toBe(303)
      expect(done.headers["location"]).toBe("/app/buckets/somewhere?owner=someone")
      // It is nobody's Dock: a 404 page, as HTML.
      const missing = yield* client.get("/app/buckets/somewhere?owner=someone")
      expect(missing.status).toBe(404)
      expect(missing.headers["content-type"]).toBe("text/html; charset=utf-8")
    }))

  it.effect("a next that leaves the site is replaced by /app (no open redirect)", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (const next of ["//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"]) {
        const client = browserFor(server)
        const done = yield* signIn(client, `redirect-${unique()}@example.com`, next)
        expect(done.status).toBe(303)
        expect(done.headers["location"]).toBe("/app")
      }
    }))

  it.effect("CSRF: a form without the token, with a wrong one or from a foreign Origin is 403 and changes nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      yield* signIn(client, `csrf-${unique()}@example.com`)
      const app = yield* client.get("/app")
      const csrf = csrfIn(app.text)
      const slug = `csrf-${unique()}`
      const attempts: ReadonlyArray<[Record<string, string>, Record<string, string>]> = [
        [{ title: "No token", slug, visibility: "private" }, {}],
        [{ csrf: "wrong", title: "Wrong token", slug, visibility: "private" }, {}],
        [{ csrf, title: "Foreign origin", slug, visibility: "private" }, { origin: "https://evil.example" }],
        [{ csrf, title: "No origin", slug, visibility: "private" }, { origin: "" }]
      ]
      for (const [form, headers] of attempts) {
        const reply = yield* client.post("/app/buckets", form, headers)
        expect(reply.status).toBe(403)
        expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
      }
      expect(yield* dockCount(server, slug)).toBe(0)
      const made = yield* client.post("/app/buckets", { csrf, title: "Made here", slug, visibility: "private" })
      expect(made.status).toBe(303)
      expect(made.headers["location"]).toBe(`/app/buckets/${slug}`)
      expect(yield* dockCount(server, slug)).toBe(1)
      const page = yield* client.get(`/app/buckets/${slug}`)
      expect(page.status).toBe(200)
      expect(page.text).toContain("Made here")

      // Form bodies are small: past 16 KiB the answer is 413, before anything is read or made.
      const big = yield* client.post("/app/buckets", { csrf, title: "x".repeat(20_000), slug, visibility: "private" })
      expect(big.status).toBe(413)
      // Signing out needs the token too: without it the session lives on.
      expect((yield* client.post("/logout", {})).status).toBe(403)
      expect((yield* client.get("/app")).status).toBe(200)

      // The sign-in form is protected too: no token, no code mailed.
      const email = `csrf-login-${unique()}@example.com`
      const refused = yield* browserFor(server).post("/login", { email })
      expect(refused.status).toBe(403)
      const stored = yield* server.sql<{ n: string | number }>`select count(*) as n from sign_in_codes
        where email = ${email}`.pipe(Effect.orDie)
      expect(Number(stored[0]!.n)).toBe(0)
    }))

  it.effect("wrong codes: each is refused alike, and after the per-code limit even the right one is", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      const email = `tries-${unique()}@example.com`
      const codePage = yield* requestCode(client, email)
      const code = yield* codeFromSmtp(email)
      const refusals = new Set<string>()
      for (let i = 0; i < OTP_WRONG_TRIES_PER_CODE; i++) {
        const wrong = yield* submitCode(client, codePage, email, otherCode(code))
        expect(wrong.status).toBe(400)
        refusals.add(wrong.text.replace(/name="csrf" value="[^"]+"/, ""))
      }
      expect(refusals.size).toBe(1)
      const late = yield* submitCode(client, codePage, email, code)
      expect(late.status).toBe(400)
      expect(hasSessionCookie(late)).toBe(false)
      // A new code works.
      const again = yield* requestCode(client, email)
      const fresh = yield* codeFromSmtp(email, 2)
      const done = yield* submitCode(client, again, email, fresh)
      expect(done.status).toBe(303)
    }))

  it.effect("a code is refused from the moment its life (DOCK_OTP_TTL) ends, and works until then", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const email = `expiry-${unique()}@example.com`
      const codePage = yield* requestCode(browserFor(server), email)
      expect(codePage.status).toBe(200)
      const code = yield* codeFromSmtp(email)
      const [row] = yield* server.sql<{ created_at: Date; expires_at: Date }>`select created_at, expires_at
        from sign_in_codes where email = ${email}`.pipe(Effect.orDie)
      const expiresAt = new Date(row!.expires_at).getTime()
      expect(expiresAt - new Date(row!.created_at).getTime()).toBe(10 * 60 * 1000)
      const signInAt = (at: number) =>
        domainAt(server, at, Effect.flatMap(Sessions, (sessions) => sessions.signIn(email, code, "192.0.2.7")))

      const late = yield* Effect.flip(signInAt(expiresAt))
      expect(late._tag).toBe("ValidationError")
      expect(late.message).toBe("The code is wrong, expired or already used. Ask for a new one.")
      // Refused for its age alone: the same code a second earlier is right.
      const inTime = yield* signInAt(expiresAt - 1_000)
      expect(inTime.username.length).toBeGreaterThan(0)
    }))

  it.effect("a used code cannot be used again, in this browser or another", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      const email = `once-${unique()}@example.com`
      const codePage = yield* requestCode(client, email)
      const code = yield* codeFromSmtp(email)
      const done = yield* submitCode(client, codePage, email, code)
      expect(done.status).toBe(303)
      expect(hasSessionCookie(done)).toBe(true)

      const replay = yield* codeInFreshBrowser(server, email, code)
      expect(replay.status).toBe(400)
      expect(replay.text).toContain("The code is wrong, expired or already used")
      expect(hasSessionCookie(replay)).toBe(false)
      const sessions = yield* server.sql<{ n: string | number }>`select count(*) as n from sessions s
        join users u on u.id = s.user_id where u.email = ${email}`.pipe(Effect.orDie)
      expect(Number(sessions[0]!.n)).toBe(1)
    }))

  it.effect("a new code voids the one mailed before it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      const email = `voided-${unique()}@example.com`
      yield* requestCode(client, email)
      const first = yield* codeFromSmtp(email)
      const again = yield* requestCode(client, email)
      const second = yield* codeFromSmtp(email, 2)
      // Two random six-digit codes coincide once in a million runs; then there is nothing to tell apart.
      if (first === second) return

      const old = yield* submitCode(client, again, email, first)
      expect(old.status).toBe(400)
      expect(old.text).toContain("The code is wrong, expired or already used")
      expect(hasSessionCookie(old)).toBe(false)
      const done = yield* submitCode(client, again, email, second)
      expect(done.status).toBe(303)
      expect(hasSessionCookie(done)).toBe(true)
    }))

  it.effect("signing in again in a browser that holds a live session revokes that session", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      const email = `twice-${unique()}@example.com`
      yield* signIn(client, email)
      const firstSecret = client.jar.get("dock_session")!
      expect((yield* client.get("/app")).status).toBe(200)

      // A signed-in browser is sent past /login, so the form comes as from a tab opened without the cookie; the
      // live session cookie goes along with the sign-in (as one planted by someone else would).
      client.jar.delete("dock_session")
      const form = yield* client.get("/login")
      client.jar.set("dock_session", firstSecret)
      const codePage = yield* client.post("/login", { csrf: csrfIn(form.text), email, next: "/app" })
      expect(codePage.status).toBe(200)
      const done = yield* submitCode(client, codePage, email, yield* codeFromSmtp(email, 2))
      expect(done.status).toBe(303)
      const secondSecret = client.jar.get("dock_session")!
      expect(secondSecret).not.toBe(firstSecret)

      const rows = yield* server.sql<{ id_hash: string; revoked: boolean }>`select id_hash,
        revoked_at is not null as revoked from sessions where id_hash in (${sha256(firstSecret)}, ${
        sha256(secondSecret)
      })`.pipe(Effect.orDie)
      expect(Object.fromEntries(rows.map((row) => [row.id_hash, row.revoked]))).toEqual({
        [sha256(firstSecret)]: true,
        [sha256(secondSecret)]: false
      })
      const replay = browserFor(server)
      replay.jar.set("dock_session", firstSecret)
      const refused = yield* replay.get("/app")
      expect(refused.status).toBe(303)
      expect(refused.headers["location"]).toBe("/login?next=%2Fapp")
      expect((yield* client.get("/app")).status).toBe(200)
    }))

  it.effect("a session past its expiry leads to /login", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      yield* signIn(client, `expired-session-${unique()}@example.com`)
      const secret = client.jar.get("dock_session")!
      const [row] = yield* server.sql<{ expires_at: Date }>`select expires_at from sessions
        where id_hash = ${sha256(secret)}`.pipe(Effect.orDie)
      const expiresAt = new Date(row!.expires_at).getTime()
      // The domain's boundary, by the clock: alive a second before its expiry, ended at it.
      const authenticateAt = (at: number) =>
        domainAt(server, at, Effect.flatMap(Sessions, (sessions) => sessions.authenticate(secret)))
      expect(Option.isSome(yield* authenticateAt(expiresAt - 1_000))).toBe(true)
      expect(Option.isNone(yield* authenticateAt(expiresAt))).toBe(true)

      // Over HTTP: the same session with its expiry moved into the past.
      expect((yield* client.get("/app")).status).toBe(200)
      yield* server.sql`update sessions set expires_at = now() - interval '1 second'
        where id_hash = ${sha256(secret)}`.pipe(Effect.orDie)
      const after = yield* client.get("/app/mcp")
      expect(after.status).toBe(303)
      expect(after.headers["location"]).toBe("/login?next=%2Fapp%2Fmcp")
    }))

  it.effect("codes mailed per email are capped per hour (429), with the same answer as for other emails", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* awayFromWindowEnd("1 hour")
      const email = `sends-${unique()}@example.com`
      const client = browserFor(server)
      const statuses: Array<number> = []
      for (let i = 0; i < server.config.limits.otpSendsPerHour + 1; i++) {
        statuses.push((yield* requestCode(client, email)).status)
      }
      expect(statuses).toEqual([...Array(server.config.limits.otpSendsPerHour).fill(200), 429])
    }))

  it.effect("signing out revokes the session: the old cookie leads to /login", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      yield* signIn(client, `logout-${unique()}@example.com`)
      const secret = client.jar.get("dock_session")!
      const app = yield* client.get("/app")
      const out = yield* client.post("/logout", { csrf: csrfIn(app.text) })
      expect(out.status).toBe(303)
      expect(out.headers["location"]).toBe("/")
      expect(client.jar.has("dock_session")).toBe(false)
      const revoked = yield* server.sql<{ revoked: boolean }>`select revoked_at is not null as revoked
        from sessions where id_hash = ${sha256(secret)}`.pipe(Effect.orDie)
      expect(revoked).toEqual([{ revoked: true }])
      const replay = webClient({ port: server.port, host: `127.0.0.1:${server.port}`, origin: server.url })
      replay.jar.set("dock_session", secret)
      const after = yield* replay.get("/app")
      expect(after.status).toBe(303)
      expect(after.headers["location"]).toBe("/login?next=%2Fapp")
    }))
  it.effect("the session sweep drops sessions that ended over a day ago, and keeps live ones", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = browserFor(server)
      yield* signIn(client, `sweep-${unique()}@example.com`)
      const live = sha256(client.jar.get("dock_session")!)
      const [row] = yield* server.sql<{ user_id: string }>`select user_id from sessions where id_hash = ${live}`
        .pipe(Effect.orDie)
      const old = sha256(`old-${unique()}`)
      yield* server.sql`insert into sessions (id_hash, user_id, created_at, expires_at, last_seen_at, revoked_at)
        values (${old}, ${
        row!.user_id
      }, now() - interval '3 days', now() + interval '3 days', now() - interval '3 days',
          now() - interval '2 days')`.pipe(Effect.orDie)
      const swept = yield* server.domain(Effect.flatMap(Sessions, (sessions) => sessions.sweep))
      expect(swept).toBeGreaterThanOrEqual(1)
      const left = yield* server.sql<{ id_hash: string }>`select id_hash from sessions
        where id_hash in (${live}, ${old})`.pipe(Effect.orDie)
      expect(left.map((r) => r.id_hash)).toEqual([live])
      expect((yield* client.get("/app")).status).toBe(200)
    }))
})

layer(ServerWithSmtp({ DOCK_SIGNUP: "closed" }), { excludeTestServices: true })("DOCK_SIGNUP=closed", (it) => {
  it.effect("a new email gets the same answer but no code and no account; an existing person signs in", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* SmtpReceiver
      const known = `member-${unique()}@example.com`
      yield* server.domain(Effect.flatMap(Accounts, (accounts) => accounts.createByOperator({ email: known })))
      const stranger = `stranger-${unique()}@example.com`
      const a = yield* requestCode(browserFor(server), known)
      const strangerClient = browserFor(server)
      const b = yield* requestCode(strangerClient, stranger)
      expect(b.status).toBe(a.status)
      const shape = (reply: WebReply, email: string) =>
        reply.text.replaceAll(email, "EMAIL").replace(/name="csrf" value="[^"]+"/, "")
      expect(shape(b, stranger)).toBe(shape(a, known))
      yield* codeFromSmtp(known)
      expect(receiver.received().filter((mail) => mail.to.includes(stranger))).toEqual([])
      const guess = yield* submitCode(strangerClient, b, stranger, "123456")
      expect(guess.status).toBe(400)
      const users = yield* server.sql`select 1 from users where email = ${stranger}`.pipe(Effect.orDie)
      expect(users).toEqual([])
    }))

  it.effect("with the SMTP server down a member and a stranger still get the same answer (no 503 that tells)", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* SmtpReceiver
      const known = `member-${unique()}@example.com`
      yield* server.domain(Effect.flatMap(Accounts, (accounts) => accounts.createByOperator({ email: known })))
      const stranger = `stranger-${unique()}@example.com`
      yield* receiver.stop
      const a = yield* requestCode(browserFor(server), known)
      const b = yield* requestCode(browserFor(server), stranger)
      yield* receiver.start
      expect(a.status).toBe(200)
      expect(b.status).toBe(200)
      const shape = (reply: WebReply, email: string) =>
        reply.text.replaceAll(email, "EMAIL").replace(/name="csrf" value="[^"]+"/, "")
      expect(shape(b, stranger)).toBe(shape(a, known))
      // The member's lost mail: a new code, once SMTP is back, arrives and signs them in.
      const client = browserFor(server)
      const signedIn = yield* signIn(client, known)
      expect(signedIn.status).toBe(303)
      expect(hasSessionCookie(signedIn)).toBe(true)
    }))
})

layer(ServerWithSmtp({ DOCK_TRUST_PROXY: "true" }), { excludeTestServices: true })("sends per address", (it) => {
  it.effect("codes requested from one address are capped per hour whatever the emails (429)", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* awayFromWindowEnd("1 hour")
      const address = `192.0.2.${Math.floor(Math.random() * 250) + 1}`
      const statuses: Array<number> = []
      for (let i = 0; i < SIGN_IN_SENDS_PER_IP_PER_HOUR + 1; i++) {
        const client = browserFor(server)
        const form = yield* client.get("/login")
        const reply = yield* client.post("/login", {
          csrf: csrfIn(form.text),
          email: `ip-${i}-${unique()}@example.com`
        }, {
          "x-forwarded-for": address
        })
        statuses.push(reply.status)
      }
      expect(statuses).toEqual([...Array(SIGN_IN_SENDS_PER_IP_PER_HOUR).fill(200), 429])
    }))
})

describe("production mode", () => {
  layer(
    Layer.scoped(
      TestServer,
      startTestServer({ DOCK_ENV: "production", DOCK_BASE_URL: "https://dock.test" })
    ),
    { excludeTestServices: true }
  )("cookies", (it) => {
    it.effect("are __Host- prefixed and Secure; sign-in works from the https origin only", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const client = webClient({ port: server.port, host: "dock.test", origin: "https://dock.test" })
        const form = yield* client.get("/login")
        const pre = form.setCookies.find((line) => line.startsWith("__Host-dock_pre="))!
        expect(pre).toMatch(/; Secure/)
        expect(pre).toMatch(/; HttpOnly/)
        expect(pre).toMatch(/; Path=\//)
        expect(pre).not.toMatch(/Domain=/)
        const email = `prod-${unique()}@example.com`
        // A loopback Origin is development's only.
        const loopback = yield* client.post("/login", { csrf: csrfIn(form.text), email }, {
          origin: `http://127.0.0.1:${server.port}`
        })
        expect(loopback.status).toBe(403)
        const codePage = yield* client.post("/login", { csrf: csrfIn(form.text), email })
        expect(codePage.status).toBe(200)
        const code = yield* onlyCodeTo(server.config.dataDir, email)
        const done = yield* submitCode(client, codePage, email, code)
        expect(done.status).toBe(303)
        const session = done.setCookies.find((line) => line.startsWith("__Host-dock_session="))!
        expect(session).toMatch(/; Secure/)
        expect(session).toMatch(/; HttpOnly/)
        expect(session).toMatch(/; SameSite=Lax/)
        expect(session).toMatch(/; Path=\//)
        const app = yield* client.get("/app")
        expect(app.status).toBe(200)
      }))
  })
})
