/**
 * Share links over real HTTP (issue 16, item 7): the operator makes them for a Dock's owner (POST
 * /admin/share-links, 201 with the url shown once), lists them (never with the secret) and revokes them;
 * `GET /s/<secret>` shows the private page read-only without sign-in, under the artifact headers plus no-store and
 * noindex; revoked, expired, unknown and malformed links are one and the same 404 at once; an unclaimed sandbox gets
 * none; the secret never reaches a log line.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { redactSecrets } from "../src/Logging.ts"
import { fetchReply, postJson, type Reply, unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { admin, type AdminUser, newUser, seedPage } from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const CSP =
  "sandbox; default-src 'none'; img-src 'self' https: data:; style-src 'unsafe-inline'; form-action 'none'; " +
  "base-uri 'none'; frame-ancestors 'self'"

const get = (path: string) =>
  Effect.flatMap(TestServer, (server) => fetchReply(`${server.url}${path}`, { redirect: "manual" }))

const createLink = (body: unknown) =>
  Effect.flatMap(admin, (a) => postJson(`${a.url}/admin/share-links`, body, a.headers))

const listLinks = (query: string) =>
  Effect.flatMap(admin, (a) => fetchReply(`${a.url}/admin/share-links?${query}`, { headers: a.headers }))

const revokeLink = (id: string) =>
  Effect.flatMap(admin, (a) => postJson(`${a.url}/admin/share-links/${id}/revoke`, {}, a.headers))

/** Every answer of /s/, whatever its status. */
const expectShareHeaders = (reply: Reply) => {
  expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
  expect(reply.headers["content-security-policy"]).toBe(CSP)
  expect(reply.headers["x-content-type-options"]).toBe("nosniff")
  expect(reply.headers["referrer-policy"]).toBe("no-referrer")
  expect(reply.headers["cache-control"]).toBe("no-store")
  expect(reply.headers["x-robots-tag"]).toBe("noindex, nofollow")
  expect(reply.headers["set-cookie"]).toBeUndefined()
}

const pathOfUrl = (url: string) => new URL(url).pathname

/** A private page in the owner's default Dock (private), and a link to it. */
const setup = Effect.gen(function*() {
  const owner: AdminUser = yield* newUser
  const slug = `plan-${unique()}`
  const saved = yield* seedPage(owner, owner.default_bucket_id, slug, {
    title: "The private plan",
    contentType: "markdown",
    content: "# The private plan\n\nShared with the link only."
  })
  const created = yield* createLink({ dock: `${owner.username}/${owner.username}`, page: slug })
  expect(created.status, created.text).toBe(201)
  return { owner, slug, part: saved.part, link: created.json as { id: string; url: string; expires_at: null } }
})

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("share links", (it) => {
  it.effect("GET /s/<secret> shows the private page without sign-in, under the artifact headers", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { link, owner, part, slug } = yield* setup
      expect(link.url.startsWith(`${server.config.baseUrl}/s/`)).toBe(true)
      expect(pathOfUrl(link.url)).toMatch(/^\/s\/dock_share_[0-9A-Za-z]{43}$/)
      expect(link.expires_at).toBeNull()
      const shown = yield* get(pathOfUrl(link.url))
      expect(shown.status).toBe(200)
      expectShareHeaders(shown)
      expect(shown.text).toContain("<h1>The private plan</h1>")
      expect(shown.text).toContain("Shared with the link only.")
      // the page itself stays private everywhere else
      expect((yield* get(`/a/${part.public_slug}`)).status).toBe(404)
      expect((yield* get(`/artifacts/${part.id}`)).status).toBe(404)

      const listed = yield* listLinks(`dock=${owner.default_bucket_id}&page=${slug}`)
      expect(listed.status).toBe(200)
      expect(listed.json).toHaveLength(1)
      expect(listed.json[0]).toMatchObject({
        id: link.id,
        bucket_id: owner.default_bucket_id,
        page_id: part.id,
        page_slug: slug,
        created_by: owner.username,
        expires_at: null,
        revoked_at: null,
        status: "active"
      })
      expect(listed.text).not.toContain(pathOfUrl(link.url).slice(3))
      const rows = yield* server.sql<{ secret_hash: string }>`select secret_hash from share_links where id = ${link.id}`
      expect(rows[0]!.secret_hash).toMatch(/^[0-9a-f]{64}$/)
    }))

  it.effect("revoked, expired, unknown and malformed links are the same 404, at once", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { link, owner, slug } = yield* setup
      const unknown = yield* get(`/s/dock_share_${"x".repeat(43)}`)
      expect(unknown.status).toBe(404)
      expectShareHeaders(unknown)
      for (const path of ["/s/nonsense", "/s/", `/s/${encodeURIComponent("dock_share_<script>")}`]) {
        const reply = yield* get(path)
        expect(reply.status).toBe(404)
        expectShareHeaders(reply)
        expect(reply.text).toBe(unknown.text)
      }

      expect((yield* get(pathOfUrl(link.url))).status).toBe(200)
      const revoked = yield* revokeLink(link.id)
      expect(revoked.status).toBe(200)
      expect(revoked.json.status).toBe("revoked")
      const afterRevoke = yield* get(pathOfUrl(link.url))
      expect(afterRevoke.status).toBe(404)
      expect(afterRevoke.text).toBe(unknown.text)
      expectShareHeaders(afterRevoke)

      const expiring = yield* createLink({ dock: owner.default_bucket_id, page: slug, expires_in: "1 hour" })
      expect(expiring.status).toBe(201)
      expect(Date.parse(expiring.json.expires_at) - Date.now()).toBeGreaterThan(59 * 60 * 1000)
      expect((yield* get(pathOfUrl(expiring.json.url))).status).toBe(200)
      // its hour is over
      yield* server.sql`update share_links set expires_at = now() - interval '1 second' where id = ${expiring.json.id}`
      const expired = yield* get(pathOfUrl(expiring.json.url))
      expect(expired.status).toBe(404)
      expect(expired.text).toBe(unknown.text)
      const listed = yield* listLinks(`dock=${owner.default_bucket_id}`)
      expect(listed.json.map((entry: { status: string }) => entry.status).sort()).toEqual(["expired", "revoked"])

      expect((yield* revokeLink(crypto.randomUUID())).status).toBe(404)
      expect((yield* revokeLink("not-an-id")).status).toBe(404)
    }))

  it.effect("bad input: unknown page or Dock 404, a bad expiry 400; an unclaimed sandbox gets no link (403)", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { owner } = yield* setup
      const noPage = yield* createLink({ dock: owner.default_bucket_id, page: `nope-${unique()}` })
      expect(noPage.status).toBe(404)
      expect(noPage.json.error).toMatchObject({ code: "not_found", details: { field: "page" } })
      expect((yield* createLink({ dock: crypto.randomUUID(), page: "x" })).status).toBe(404)
      const badExpiry = yield* createLink({ dock: owner.default_bucket_id, page: "x", expires_in: "soon" })
      expect(badExpiry.status).toBe(400)

      const registration = yield* register(server.url)
      expect(registration.status).toBe(201)
      const sandboxId = registration.json.sandbox_bucket.id as string
      const sandboxOwner = (yield* server.sql<AdminUser>`select u.id, u.username, u.email, d.id as default_bucket_id
        from docks d join users u on u.id = d.owner_id where d.id = ${sandboxId}`)[0]!
      yield* seedPage(sandboxOwner, sandboxId, "draft")
      const refused = yield* createLink({ dock: sandboxId, page: "draft" })
      expect(refused.status).toBe(403)
      expect(refused.json.error).toMatchObject({ code: "permission_denied", details: { sandbox: true } })
      expect(yield* server.sql`select id from share_links where dock_id = ${sandboxId}`).toEqual([])
    }))

  it("a share secret is redacted from log lines", () => {
    const line = redactSecrets("GET /s/dock_share_abcDEF0123456789abcDEF0123456789abcDEF01234 404")
    expect(line).toBe("GET /s/dock_share_[REDACTED] 404")
  })
})
