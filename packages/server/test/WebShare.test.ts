/**
 * Share links in the app over real HTTP (issue 16, item 7; docs/web.md "Landing, the page API and share links in the
 * app"): the owner lists, makes (the URL shown once) and revokes a page's links through the forms at
 * `/app/buckets/<slug>/<page>/-/share?owner=`; `/s/<secret>` follows at once. Forms without the CSRF token or from
 * another Origin change nothing. Editors and viewers get the domain's refusal as a 403 page, outsiders the 404 page,
 * and an unclaimed sandbox's owner the domain's refusal too.
 */
import { CurrentPrincipal, Docks, sha256, type UserId, userPrincipal } from "@dock/domain"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { type AdminUser, grant, newUser, seedPage } from "./support/McpTools.ts"
import { type RunningServer, TestServer } from "./support/TestServer.ts"
import { browserFor, ServerWithSmtp, signIn } from "./support/WebApp.ts"
import { csrfIn, type WebClient, webClient } from "./support/WebClient.ts"

const dockOf = (user: AdminUser, slug: string) =>
  Effect.flatMap(TestServer, (server) =>
    server.domain(
      Effect.flatMap(Docks, (docks) => docks.create({ title: `Dock ${slug}`, slug, visibility: "private" })).pipe(
        Effect.provideService(CurrentPrincipal, userPrincipal({ id: user.id as UserId, username: user.username })),
        Effect.orDie
      )
    ))

const signedIn = (user: AdminUser) =>
  Effect.gen(function*() {
    const client = browserFor(yield* TestServer)
    expect((yield* signIn(client, user.email)).status).toBe(303)
    return client
  })

/** An owner's private Dock with one page, and the path of its share page. */
const setUp = Effect.gen(function*() {
  const owner = yield* newUser
  const slug = `plans-${unique()}`
  const dock = yield* dockOf(owner, slug)
  yield* seedPage(owner, dock.id, "voyage", { title: "Voyage plan", content: "<p>Sail at dawn</p>" })
  const share = `/app/buckets/${slug}/voyage/-/share?owner=${owner.username}`
  const revoke = `/app/buckets/${slug}/voyage/-/share/revoke?owner=${owner.username}`
  return { owner, dock, slug, share, revoke }
})

const linksOf = (server: RunningServer, dockId: string) =>
  server.sql<{ id: string; expires_at: Date | null; revoked_at: Date | null }>`select id, expires_at, revoked_at
    from share_links where dock_id = ${dockId} order by created_at`.pipe(Effect.orDie)

/** The share URL a page shows once, as a path (`/s/<secret>`). */
const newLinkIn = (html: string) => {
  const match = /value="(http[^"]*\/s\/([A-Za-z0-9_-]+))"/.exec(html)
  expect(match, html).not.toBeNull()
  return { url: match![1]!, path: new URL(match![1]!).pathname }
}

const anonymous = Effect.map(TestServer, browserFor)

layer(ServerWithSmtp(), { excludeTestServices: true, timeout: 60_000 })("share links in the app", (it) => {
  it.effect("the owner makes a link (shown once), sees it listed, and revokes it; /s/ follows at once", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { dock, owner, revoke, share } = yield* setUp
      const client = yield* signedIn(owner)

      const empty = yield* client.get(share)
      expect(empty.status).toBe(200)
      expect(empty.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
      expect(empty.text).toContain("<h1>Share “Voyage plan”</h1>")
      expect(empty.text).toContain("No share links yet.")

      const made = yield* client.post(share, { csrf: csrfIn(empty.text), expires: "7" })
      expect(made.status).toBe(200)
      expect(made.text).toContain("Your new link")
      const link = newLinkIn(made.text)
      expect(link.url.startsWith(`${server.config.baseUrl}/s/`)).toBe(true)
      const [row] = yield* linksOf(server, dock.id)
      const week = Date.now() + 7 * 24 * 3600 * 1000
      expect(Math.abs(new Date(row!.expires_at!).getTime() - week)).toBeLessThan(60_000)
      expect(row!.revoked_at).toBeNull()

      // Anyone with the link reads the private page, without signing in.
      const opened = yield* (yield* anonymous).get(link.path)
      expect(opened.status).toBe(200)
      expect(opened.text).toContain("Sail at dawn")

      // Listed afterwards, live, without its secret (only its fingerprint is stored).
      const listed = yield* client.get(share)
      expect(listed.text).not.toContain(link.path)
      expect(listed.text).not.toContain("Your new link")
      expect(listed.text).toContain(`<span class="tag share-active">live</span>`)
      expect(listed.text).toContain(`name="link" value="${row!.id}"`)

      // A second link that never expires.
      const forever = yield* client.post(share, { csrf: csrfIn(listed.text), expires: "never" })
      expect(forever.status).toBe(200)
      expect(forever.text).toContain("It lives until you revoke it.")
      const links = yield* linksOf(server, dock.id)
      expect(links).toHaveLength(2)
      expect(links[1]!.expires_at).toBeNull()

      const revoked = yield* client.post(revoke, { csrf: csrfIn(listed.text), link: row!.id })
      expect(revoked.status).toBe(303)
      expect(revoked.headers["location"]).toBe(share)
      expect((yield* linksOf(server, dock.id))[0]!.revoked_at).not.toBeNull()
      expect((yield* (yield* anonymous).get(link.path)).status).toBe(404)
      const after = yield* client.get(share)
      expect(after.text).toContain(`<span class="tag share-revoked">revoked</span>`)
      expect(after.text).not.toContain(`name="link" value="${row!.id}"`)

      // An expiry the form does not offer is refused, and makes nothing.
      const odd = yield* client.post(share, { csrf: csrfIn(after.text), expires: "3650" })
      expect(odd.status).toBe(400)
      expect(odd.text).toContain("Choose how long the link lives.")
      expect(yield* linksOf(server, dock.id)).toHaveLength(2)
    }))

  it.effect("forms without the CSRF token, with a wrong one, or from another Origin change nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { dock, owner, revoke, share } = yield* setUp
      const client = yield* signedIn(owner)
      const csrf = csrfIn((yield* client.get(share)).text)
      expect((yield* client.post(share, { csrf, expires: "never" })).status).toBe(200)
      const [live] = yield* linksOf(server, dock.id)

      const foreign = webClient({
        port: server.port,
        host: `127.0.0.1:${server.port}`,
        origin: "https://evil.example"
      })
      for (const [name, value] of client.jar) foreign.jar.set(name, value)
      const attempts: ReadonlyArray<[WebClient, string, Record<string, string>]> = [
        [client, share, { expires: "never" }],
        [client, share, { csrf: "wrong", expires: "never" }],
        [foreign, share, { csrf, expires: "never" }],
        [client, revoke, { link: live!.id }],
        [client, revoke, { csrf: "wrong", link: live!.id }],
        [foreign, revoke, { csrf, link: live!.id }]
      ]
      for (const [who, path, form] of attempts) {
        const reply = yield* who.post(path, form)
        expect(reply.status).toBe(403)
        expect(reply.text).toContain("This form was refused")
      }
      const links = yield* linksOf(server, dock.id)
      expect(links).toHaveLength(1)
      expect(links[0]!.revoked_at).toBeNull()
    }))

  it.effect("editors and viewers get a 403 page, outsiders and missing pages the 404 page; nothing changes", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { dock, owner, revoke, share, slug } = yield* setUp
      const ownerClient = yield* signedIn(owner)
      expect(
        (yield* ownerClient.post(share, { csrf: csrfIn((yield* ownerClient.get(share)).text), expires: "1" }))
          .status
      ).toBe(200)
      const [live] = yield* linksOf(server, dock.id)

      const editor = yield* newUser
      const viewer = yield* newUser
      const outsider = yield* newUser
      yield* grant(dock.id, editor, "editor")
      yield* grant(dock.id, viewer, "viewer")
      for (const [user, status] of [[editor, 403], [viewer, 403], [outsider, 404]] as const) {
        const client = yield* signedIn(user)
        const shown = yield* client.get(share)
        expect(shown.status).toBe(status)
        expect(shown.text).not.toContain("Voyage plan")
        if (status === 403) expect(shown.text).toContain("Only the owner can share this page")
        else expect(shown.text).toContain("<h1>Not found</h1>")
        // Their own CSRF token, from a page that has a form (their /app).
        const csrf = csrfIn((yield* client.get("/app")).text)
        expect((yield* client.post(share, { csrf, expires: "never" })).status).toBe(status)
        expect((yield* client.post(revoke, { csrf, link: live!.id })).status).toBe(status)
      }
      const links = yield* linksOf(server, dock.id)
      expect(links).toHaveLength(1)
      expect(links[0]!.revoked_at).toBeNull()

      // A page that does not exist, and a link id of another page, are the 404 page for the owner too.
      const missing = yield* ownerClient.get(`/app/buckets/${slug}/nowhere/-/share?owner=${owner.username}`)
      expect(missing.status).toBe(404)
      const other = yield* setUp
      const otherClient = yield* signedIn(other.owner)
      const csrf = csrfIn((yield* otherClient.get(other.share)).text)
      expect((yield* otherClient.post(other.revoke, { csrf, link: live!.id })).status).toBe(404)
      expect((yield* linksOf(server, dock.id))[0]!.revoked_at).toBeNull()

      // Without a session, to sign-in and back.
      const away = yield* (yield* anonymous).get(share)
      expect(away.status).toBe(303)
      expect(away.headers["location"]).toBe(`/login?next=${encodeURIComponent(share)}`)
    }))

  it.effect("an unclaimed sandbox's page cannot be shared: the domain refuses, the app shows its 403 page", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = yield* register(server.url)
      expect(registration.status).toBe(201)
      const sandboxId = registration.json.sandbox_bucket.id as string
      const [sandboxOwner] = yield* server.sql<AdminUser & { slug: string }>`select u.id, u.username, u.email,
        d.id as default_bucket_id, d.slug from docks d join users u on u.id = d.owner_id where d.id = ${sandboxId}`
        .pipe(Effect.orDie)
      yield* seedPage(sandboxOwner!, sandboxId, "draft")
      // An unclaimed sandbox's owner has no email, so no way to sign in; a session is planted here so that the
      // route itself is shown to leave the rule to the domain (ShareLinks refuses an unclaimed sandbox Dock).
      const secret = randomBytes(32).toString("hex")
      const now = new Date()
      yield* server.sql`insert into sessions (id_hash, user_id, created_at, expires_at, last_seen_at)
        values (${sha256(secret)}, ${sandboxOwner!.id}, ${now}, ${new Date(now.getTime() + 3600_000)}, ${now})`
        .pipe(Effect.orDie)
      const client = browserFor(server)
      client.jar.set("dock_session", secret)
      const share = `/app/buckets/${sandboxOwner!.slug}/draft/-/share?owner=${sandboxOwner!.username}`
      const shown = yield* client.get(share)
      expect(shown.status).toBe(403)
      expect(shown.text).toContain("claim it first")
      const csrf = csrfIn((yield* client.get("/app")).text)
      const made = yield* client.post(share, { csrf, expires: "never" })
      expect(made.status).toBe(403)
      expect(yield* server.sql`select id from share_links where dock_id = ${sandboxId}`).toEqual([])
    }))
})
