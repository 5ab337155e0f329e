/**
 * Public Docks in the web app without sign-in (spec §4.1; docs/web.md, "Public Docks without sign-in"): the Dock
 * view, its table view and a page's view, diff and source answer the anonymous public for a public Dock, with no
 * form that needs a session; a private Dock and a missing one answer the anonymous public the same 303 to /login
 * (nothing tells them apart) and a signed-in outsider the 404 page. Private images are served to a signed-in
 * reader's session, never cached, and are 404 without a session or to a non-member.
 */
import { CurrentPrincipal, MicroDb, type UserId, userPrincipal } from "@dock/domain"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import { pathOf, pushImage, solid } from "./support/Images.ts"
import { actor, type AdminUser, createBucket, grant, newUser, seedPage } from "./support/McpTools.ts"
import { TestServer } from "./support/TestServer.ts"
import { browserFor, ServerWithSmtp, signIn } from "./support/WebApp.ts"
import { webClient, type WebReply } from "./support/WebClient.ts"

const signedIn = (user: AdminUser) =>
  Effect.gen(function*() {
    const client = browserFor(yield* TestServer)
    expect((yield* signIn(client, user.email)).status).toBe(303)
    return client
  })

const anonymous = Effect.map(TestServer, browserFor)

/** A page anyone may read: no form that posts (every POST form of the app carries a CSRF field). */
const expectPublicView = (reply: WebReply) => {
  expect(reply.status).toBe(200)
  expect(reply.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
  expect(reply.text).not.toContain(`method="post"`)
  expect(reply.text).not.toContain(`name="csrf"`)
}

/** An owner with a public and a private Dock, each with a Markdown page at two versions. */
const setup = Effect.gen(function*() {
  const server = yield* TestServer
  const owner = yield* actor("v2 modern")
  const open = yield* createBucket(owner.client, {
    title: "Open notes",
    slug: `open-${unique()}`,
    visibility: "public"
  })
  const closed = yield* createBucket(owner.client, { title: "Closed notes", slug: `closed-${unique()}` })
  const markdown = { contentType: "markdown" as const, pageKind: "markdown_file" as const, title: "Tide tables" }
  for (const dock of [open, closed]) {
    yield* seedPage(owner.user, dock.id, "tides", { ...markdown, content: "# Tides\n\nlow at six\n" })
    yield* seedPage(owner.user, dock.id, "tides", { ...markdown, content: "# Tides\n\nlow at seven\n" })
  }
  const path = (dock: { readonly slug: string }, sub = "") =>
    `/app/buckets/${dock.slug}${sub}?owner=${owner.user.username}`
  return { server, owner, open, closed, path }
})

layer(ServerWithSmtp(), { excludeTestServices: true, timeout: 120_000 })("public Docks without sign-in", (it) => {
  it.scoped("a public Dock's view, table view and page views answer the anonymous public, without session forms", () =>
    Effect.gen(function*() {
      const { open, owner, path, server } = yield* setup
      yield* server.domain(
        Effect.gen(function*() {
          const microDb = yield* MicroDb
          yield* microDb.createTable({ bucket_id: open.id }, {
            name: "Tides",
            columns: [{ name: "Place", type: "text" }]
          })
          yield* microDb.insertRows({ bucket_id: open.id }, "tides", [{ place: "Harbour mouth" }])
        }).pipe(
          Effect.provideService(
            CurrentPrincipal,
            userPrincipal({ id: owner.user.id as UserId, username: owner.user.username })
          ),
          Effect.orDie
        )
      )
      yield* server.sql`update docks set allow_forks = true where id = ${open.id}`.pipe(Effect.orDie)
      const visitor = yield* anonymous
      const dock = yield* visitor.get(path(open))
      expectPublicView(dock)
      expect(dock.text).toContain("Open notes")
      expect(dock.text).toContain("Tide tables")
      // Fork needs a session: the public is offered a sign-in that comes back here.
      expect(dock.text).toContain(
        `href="/login?next=${encodeURIComponent(path(open))}">Sign in to fork</a>`
      )

      const view = yield* visitor.get(path(open, "/tides"))
      expectPublicView(view)
      expect(view.text).toMatch(/<iframe[^>]+src="\/artifacts\/[0-9a-f-]{36}"/)
      expect(view.headers["content-security-policy"]).toContain("frame-src 'self'")
      expectPublicView(yield* visitor.get(path(open, "/tides/-/diff") + "&from=1&to=2"))
      const source = yield* visitor.get(path(open, "/tides/-/source"))
      expectPublicView(source)
      expect(source.text).toContain("low at seven")

      const tables = /href="([^"]*\/-\/tables\/[^"]+)"/.exec(dock.text)
      expect(tables).not.toBeNull()
      const table = yield* visitor.get(tables![1]!.replaceAll("&amp;", "&"))
      expectPublicView(table)
      expect(table.text).toContain("Tides")
      expect(table.text).toContain("Harbour mouth")

      // The frame's artifact is the public one.
      const frame = /<iframe[^>]+src="([^"]+)"/.exec(view.text)![1]!
      const artifact = yield* visitor.get(frame)
      expect(artifact.status).toBe(200)
      expect(artifact.text).toContain("low at seven")
    }))

  it.scoped("a private Dock and a missing one: the same 303 to /login for the public, the 404 page for an outsider", () =>
    Effect.gen(function*() {
      const { closed, open, path } = yield* setup
      const visitor = yield* anonymous
      const outsider = yield* signedIn(yield* newUser)
      const missing = { slug: `missing-${unique()}` }
      const asked = [
        path(closed),
        path(closed, "/-/tables/tides-table"),
        path(closed, "/tides"),
        path(closed, "/tides/-/diff") + "&from=1",
        path(closed, "/tides/-/source"),
        path(missing),
        path(missing, "/tides"),
        path(open, "/no-such-page")
      ]
      for (const where of asked) {
        const reply = yield* visitor.get(where)
        expect(reply.status, where).toBe(303)
        expect(reply.headers["location"], where).toBe(`/login?next=${encodeURIComponent(where)}`)
        const refused = yield* outsider.get(where)
        expect(refused.status, where).toBe(404)
        expect(refused.text).toContain("<h1>Not found</h1>")
      }
      // Settings and members stay session-only.
      for (const sub of ["/-/settings", "/-/members"]) {
        expect((yield* visitor.get(path(open, sub))).status).toBe(303)
      }
    }))

  it.scoped("/b/<public slug> followed anonymously lands on the Dock view", () =>
    Effect.gen(function*() {
      const { open, owner } = yield* setup
      const visitor = yield* anonymous
      const moved = yield* visitor.get(`/b/${open.slug}`)
      expect(moved.status).toBe(308)
      const landed = yield* visitor.get(moved.headers["location"]!)
      expectPublicView(landed)
      expect(landed.text).toContain("Open notes")
      const page = yield* visitor.get(`/b/${open.slug}/tides?owner=${owner.user.username}`)
      expectPublicView(yield* visitor.get(page.headers["location"]!))
    }))

  it.scoped("a private Dock's image: to a signed-in member's session, private, no-store; 404 without one", () =>
    Effect.gen(function*() {
      const { closed, owner, path } = yield* setup
      const image = yield* pushImage(owner.client, yield* solid("png", 12, 12), { bucket: closed.id })
      const member = yield* newUser
      yield* grant(closed.id, member, "viewer")
      const reader = yield* signedIn(member)
      const served = yield* reader.get(pathOf(image.public_url))
      expect(served.status).toBe(200)
      expect(served.headers["content-type"]).toBe("image/png")
      expect(served.headers["cache-control"]).toBe("private, no-store")
      // The Dock view shows its thumbnail to the member.
      expect((yield* reader.get(path(closed))).text).toContain(`src="${pathOf(image.public_url)}"`)
      for (const client of [yield* anonymous, yield* signedIn(yield* newUser)]) {
        const refused = yield* client.get(pathOf(image.public_url))
        expect(refused.status).toBe(404)
        expect(refused.headers["cache-control"]).not.toBe("private, no-store")
      }
    }))
})

const APP = "http://app.dock.test"
const ARTIFACTS = "http://artifacts.dock.test"

layer(ServerWithSmtp({ DOCK_BASE_URL: APP, DOCK_ARTIFACT_ORIGIN: ARTIFACTS }), {
  excludeTestServices: true,
  timeout: 120_000
})("public pages with a separate artifact origin", (it) => {
  it.scoped("the public's frame is the plain public artifact URL on the artifact origin, no signature", () =>
    Effect.gen(function*() {
      const { open, path, server } = yield* setup
      const visitor = webClient({ port: server.port, host: "app.dock.test", origin: APP })
      const view = yield* visitor.get(path(open, "/tides"))
      expectPublicView(view)
      expect(view.headers["content-security-policy"]).toContain(`frame-src ${ARTIFACTS}`)
      const src = /<iframe class="artifact" src="([^"]+)"/.exec(view.text)![1]!
      const url = new URL(src)
      expect(url.origin).toBe(ARTIFACTS)
      expect(url.search).toBe("")
      const artifacts = webClient({ port: server.port, host: "artifacts.dock.test", origin: ARTIFACTS })
      const shown = yield* artifacts.get(url.pathname)
      expect(shown.status).toBe(200)
      expect(shown.text).toContain("low at seven")
    }))
})
