/**
 * `/b/` always lands (issue 16, item 4; spec §4.1; docs/web.md "Landing, the page API and share links in the app"):
 * every Dock `url` names its owner, and `/b/<slug>[/<page>]?owner=` answers 308 to the app's view of exactly that
 * Dock; a bare slug resolves for the viewer as the one resolver does (one readable Dock: 308 with the owner; several:
 * a chooser page; none readable: the 404 page to a signed-in viewer, and to the anonymous public a 303 to
 * /login?next= and back, as the app's views answer). A private Dock and a missing one always get the same answer,
 * never 403: 404 to an outsider, the same sign-in redirect to the anonymous public.
 */
import { CurrentPrincipal, Docks, type UserId, userPrincipal } from "@dock/domain"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import { actor, type AdminUser, call, createBucket, grant, newUser, ok } from "./support/McpTools.ts"
import { TestServer } from "./support/TestServer.ts"
import { browserFor, ServerWithSmtp, signIn } from "./support/WebApp.ts"
import type { WebReply } from "./support/WebClient.ts"

/** A Dock made for `user` through the domain, as `create_bucket` makes it. */
const dockOf = (user: AdminUser, slug: string, visibility: "public" | "private", title = `Dock ${slug}`) =>
  Effect.flatMap(TestServer, (server) =>
    server.domain(
      Effect.flatMap(Docks, (docks) => docks.create({ title, slug, visibility })).pipe(
        Effect.provideService(CurrentPrincipal, userPrincipal({ id: user.id as UserId, username: user.username })),
        Effect.orDie
      )
    ))

/** A web client signed in as the user (by the mailed code). */
const signedIn = (user: AdminUser) =>
  Effect.gen(function*() {
    const client = browserFor(yield* TestServer)
    expect((yield* signIn(client, user.email)).status).toBe(303)
    return client
  })

const anonymous = Effect.map(TestServer, browserFor)

const expectNotFoundPage = (reply: WebReply) => {
  expect(reply.status).toBe(404)
  expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
  expect(reply.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
  expect(reply.headers["location"]).toBeUndefined()
  expect(reply.text).toContain("<h1>Not found</h1>")
}

/** The anonymous public's answer for what it may not read: to sign-in and back to the `/b/` path asked. */
const expectSignInFirst = (reply: WebReply, path: string) => {
  expect(reply.status).toBe(303)
  expect(reply.headers["location"]).toBe(`/login?next=${encodeURIComponent(path)}`)
  expect(reply.setCookies).toEqual([])
  expect(reply.text).toBe("")
}

const app = (slug: string, owner: string, page?: string) =>
  `/app/buckets/${slug}${page === undefined ? "" : `/${page}`}?owner=${owner}`

layer(ServerWithSmtp(), { excludeTestServices: true, timeout: 60_000 })("/b/ lands in the web app", (it) => {
  it.scoped("the url get_bucket answers names the owner, and /b/ carries it to the app with 308", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* actor("v2 modern")
      const slug = `harbour-${unique()}`
      yield* createBucket(owner.client, { title: "Harbour notes", slug })
      const details = ok(yield* call(owner.client, "get_bucket", { bucket: slug })).bucket
      expect(details.url).toBe(`${server.config.baseUrl}/b/${slug}?owner=${owner.user.username}`)

      const client = yield* signedIn(owner.user)
      const url = new URL(details.url)
      const landed = yield* client.get(`${url.pathname}${url.search}`)
      expect(landed.status).toBe(308)
      expect(landed.headers["location"]).toBe(app(slug, owner.user.username))
      const view = yield* client.get(landed.headers["location"]!)
      expect(view.status).toBe(200)
      expect(view.text).toContain("Harbour notes")

      const page = yield* client.get(`/b/${slug}/tides?owner=${owner.user.username}`)
      expect(page.status).toBe(308)
      expect(page.headers["location"]).toBe(app(slug, owner.user.username, "tides"))
      // The owner's name is matched as the resolver matches it (case-insensitively); the answer names it as stored.
      const shouted = yield* client.get(`/b/${slug}?owner=${owner.user.username.toUpperCase()}`)
      expect(shouted.status).toBe(308)
      expect(shouted.headers["location"]).toBe(app(slug, owner.user.username))
    }))

  it.effect("a bare slug resolves for the viewer: own first, a shared Dock, a public one", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const member = yield* newUser
      const slug = `ledger-${unique()}`
      const dock = yield* dockOf(owner, slug, "private")
      yield* grant(dock.id, member, "viewer")

      for (const user of [owner, member]) {
        const client = yield* signedIn(user)
        const reply = yield* client.get(`/b/${slug}`)
        expect(reply.status).toBe(308)
        expect(reply.headers["location"]).toBe(app(slug, owner.username))
        const page = yield* client.get(`/b/${slug}/entries`)
        expect(page.headers["location"]).toBe(app(slug, owner.username, "entries"))
      }

      const open = `open-${unique()}`
      yield* dockOf(owner, open, "public")
      const reply = yield* (yield* anonymous).get(`/b/${open}`)
      expect(reply.status).toBe(308)
      expect(reply.headers["location"]).toBe(app(open, owner.username))
    }))

  it.effect("a private Dock answers as a missing one: sign-in first for the anonymous public, 404 for outsiders", () =>
    Effect.gen(function*() {
      const owner = yield* newUser
      const outsider = yield* newUser
      const slug = `secret-${unique()}`
      yield* dockOf(owner, slug, "private")
      const missing = `missing-${unique()}`
      const asked = (dockSlug: string) => [
        `/b/${dockSlug}`,
        `/b/${dockSlug}?owner=${owner.username}`,
        `/b/${dockSlug}/page?owner=${owner.username}`,
        `/b/${dockSlug}/page`
      ]

      // The anonymous public: a redirect to sign-in naming only the path they asked, for the private Dock and a
      // missing one alike (status, headers but for that path, empty body).
      const visitor = yield* anonymous
      const shape = (reply: WebReply, dockSlug: string) => ({
        status: reply.status,
        location: reply.headers["location"]!.replaceAll(dockSlug, "SLUG"),
        text: reply.text,
        cookies: reply.setCookies
      })
      for (const [privatePath, missingPath] of asked(slug).map((path, i) => [path, asked(missing)[i]!] as const)) {
        const hidden = yield* visitor.get(privatePath)
        expectSignInFirst(hidden, privatePath)
        const none = yield* visitor.get(missingPath)
        expectSignInFirst(none, missingPath)
        expect(shape(none, missing)).toEqual(shape(hidden, slug))
      }

      // An outsider signed in: the 404 page, the same bytes as for a Dock that does not exist at all.
      const client = yield* signedIn(outsider)
      const answers = []
      for (const path of [...asked(slug), ...asked(missing)]) {
        const reply = yield* client.get(path)
        expectNotFoundPage(reply)
        answers.push(reply.text)
      }
      expect(new Set(answers).size).toBe(1)
    }))

  it.effect("the owner, signed out, follows their private Dock's url: sign in, and back to the Dock", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const owner = yield* newUser
      const slug = `diary-${unique()}`
      const dock = yield* dockOf(owner, slug, "private", "Private diary")
      const url = new URL(dock.url)
      const path = `${url.pathname}${url.search}`
      expect(path).toBe(`/b/${slug}?owner=${owner.username}`)

      const client = browserFor(server)
      const first = yield* client.get(path)
      expectSignInFirst(first, path)
      const done = yield* signIn(client, owner.email, path)
      expect(done.status).toBe(303)
      expect(done.headers["location"]).toBe(path)
      const landed = yield* client.get(path)
      expect(landed.status).toBe(308)
      expect(landed.headers["location"]).toBe(app(slug, owner.username))
      const view = yield* client.get(landed.headers["location"]!)
      expect(view.status).toBe(200)
      expect(view.text).toContain("Private diary")
    }))

  it.effect("the layout's Sign in link comes back to the page: a public Dock's view, the chooser", () =>
    Effect.gen(function*() {
      const ada = yield* newUser
      const bo = yield* newUser
      const slug = `almanac-${unique()}`
      yield* dockOf(ada, slug, "public", "Ada's almanac")
      yield* dockOf(bo, slug, "public", "Bo's almanac")
      const visitor = yield* anonymous
      const signInHref = (html: string) => /<nav aria-label="Main"><a href="([^"]+)">Sign in<\/a>/.exec(html)![1]!
      const view = yield* visitor.get(app(slug, ada.username))
      expect(view.status).toBe(200)
      expect(signInHref(view.text)).toBe(`/login?next=${encodeURIComponent(app(slug, ada.username))}`)
      const chooser = yield* visitor.get(`/b/${slug}`)
      expect(chooser.status).toBe(200)
      expect(signInHref(chooser.text)).toBe(`/login?next=${encodeURIComponent(`/b/${slug}`)}`)
      // The sign-in page keeps that next for its form.
      const login = yield* visitor.get(signInHref(chooser.text))
      expect(login.text).toContain(`name="next" value="/b/${slug}"`)
    }))

  it.effect("a bare slug several readable Docks share shows a chooser; the owner of one lands on theirs", () =>
    Effect.gen(function*() {
      const ada = yield* newUser
      const bo = yield* newUser
      const cy = yield* newUser
      const slug = `recipes-${unique()}`
      yield* dockOf(ada, slug, "public", "Ada's recipes")
      yield* dockOf(bo, slug, "public", "Bo's <b>recipes</b>")
      // A private one with the same slug is not offered to anyone who cannot read it.
      yield* dockOf(cy, slug, "private", "Cy's private recipes")

      const chooser = yield* (yield* anonymous).get(`/b/${slug}`)
      expect(chooser.status).toBe(200)
      expect(chooser.headers["content-type"]).toBe("text/html; charset=utf-8")
      expect(chooser.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
      expect(chooser.text).toContain(`Which “${slug}” did you mean?`)
      const links = [...chooser.text.matchAll(/<a class="title" href="([^"]+)">/g)].map((match) => match[1])
      expect(links.sort()).toEqual([app(slug, ada.username), app(slug, bo.username)].sort())
      expect(chooser.text).toContain(`${ada.username}/${slug}`)
      expect(chooser.text).toContain("<div>Ada's recipes</div>")
      // Titles are text, never markup.
      expect(chooser.text).toContain("<div>Bo's &lt;b>recipes&lt;/b></div>")
      expect(chooser.text).not.toContain(cy.username)
      expect(chooser.text).not.toContain("Cy's private recipes")

      const pageChooser = yield* (yield* anonymous).get(`/b/${slug}/soup`)
      expect(pageChooser.status).toBe(200)
      const pageLinks = [...pageChooser.text.matchAll(/<a class="title" href="([^"]+)">/g)].map((match) => match[1])
      expect(pageLinks.sort()).toEqual([app(slug, ada.username, "soup"), app(slug, bo.username, "soup")].sort())

      // The one resolver prefers the caller's own Dock: no ambiguity for Cy or Ada.
      for (const user of [ada, cy]) {
        const own = yield* (yield* signedIn(user)).get(`/b/${slug}`)
        expect(own.status).toBe(308)
        expect(own.headers["location"]).toBe(app(slug, user.username))
      }
      // With the owner named there is never a choice to make.
      const named = yield* (yield* anonymous).get(`/b/${slug}?owner=${bo.username}`)
      expect(named.status).toBe(308)
      expect(named.headers["location"]).toBe(app(slug, bo.username))
    }))

  it.effect("a missing Dock, and a slug that could never be one: sign-in first (same-site only), or the 404 page", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const visitor = yield* anonymous
      const member = yield* signedIn(yield* newUser)
      const paths = [
        `/b/nothing-${unique()}`,
        `/b/nothing-${unique()}/page`,
        "/b/x%2F%2Fevil.com/p",
        "/b/x?owner=%2F%2Fevil.com"
      ]
      for (const path of paths) {
        const reply = yield* visitor.get(path)
        expectSignInFirst(reply, path)
        // Never an open redirect: the way back is a path of this site, which /login keeps as it is.
        const login = yield* visitor.get(reply.headers["location"]!)
        expect(login.status).toBe(200)
        const next = /name="next" value="([^"]*)"/.exec(login.text)![1]!.replaceAll("&amp;", "&")
        expect(next).toBe(path)
        expect(new URL(next, server.url).origin).toBe(server.url)
        expectNotFoundPage(yield* member.get(path))
      }
    }))
})
