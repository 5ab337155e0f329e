/**
 * Pages in the web app over real HTTP (issue 16, items 3 and 8; docs/web.md, "Pages in the app"): the page view for
 * members and the 404 page for everyone else, a diff between two versions, restore (CSRF and Origin refusals
 * change nothing, a stale form is a conflict), the stored source escaped, and private artifacts at /a/ and
 * /artifacts/ for a signed-in reader only; with DOCK_ARTIFACT_ORIGIN on another origin, the frame's short-lived
 * signed URL (valid, expired, forged, another person's, a revoked grant). Every artifact answer keeps the sandbox.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHmac } from "node:crypto"
import { unique } from "./support/Http.ts"
import { type AdminUser, grant, newUser, seedPage } from "./support/McpTools.ts"
import { type RunningServer, TEST_SECRET, TestServer } from "./support/TestServer.ts"
import { browserFor, ServerWithSmtp, signIn } from "./support/WebApp.ts"
import { csrfIn, type WebClient, webClient, type WebReply } from "./support/WebClient.ts"

const ARTIFACT_CSP_START = "sandbox; default-src 'none';"

/** Every artifact answer, whatever its status: the sandbox, as HTML. */
const expectSandboxed = (reply: WebReply) => {
  expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
  expect(reply.headers["content-security-policy"]!.startsWith(ARTIFACT_CSP_START)).toBe(true)
  expect(reply.headers["x-content-type-options"]).toBe("nosniff")
  expect(reply.headers["referrer-policy"]).toBe("no-referrer")
}

const dockSlugOf = (server: RunningServer, dockId: string) =>
  Effect.map(
    server.sql<{ slug: string }>`select slug from docks where id = ${dockId}`,
    (rows) => rows[0]!.slug
  ).pipe(Effect.orDie)

const versionRows = (server: RunningServer, partId: string) =>
  server.sql<{ version: number; reason: string; restored_from: number | null; content: string }>`
    select version, reason, restored_from, content from part_versions where part_id = ${partId} order by version`.pipe(
    Effect.orDie
  )

/** A person signed in through the pages, with their own cookie jar. */
const signedIn = (client: WebClient, user: AdminUser) =>
  Effect.gen(function*() {
    const reply = yield* signIn(client, user.email)
    expect(reply.status).toBe(303)
    return client
  })

const PLAN_V1 = "---\ntitle: Trip plan\n---\n# Trip plan\n\nFirst we walk <the> coast.\nalpha line\n"
const PLAN_V2 = "---\ntitle: Trip plan\n---\n# Trip plan\n\nFirst we walk <the> coast.\nbeta line\n"

/**
 * An owner (signed in) with a Markdown file in their private default Dock at two versions, a page linking to it,
 * and the paths of its view.
 */
const setup = (client: (server: RunningServer) => WebClient) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const owner = yield* newUser
    const dockSlug = yield* dockSlugOf(server, owner.default_bucket_id)
    const slug = `trip-plan-${unique()}`
    const markdown = { contentType: "markdown" as const, pageKind: "markdown_file" as const, title: "Trip plan" }
    yield* seedPage(owner, owner.default_bucket_id, slug, { ...markdown, content: PLAN_V1, summary: "Where we go" })
    const { part } = yield* seedPage(owner, owner.default_bucket_id, slug, {
      ...markdown,
      content: PLAN_V2,
      summary: "Where we go"
    })
    yield* seedPage(owner, owner.default_bucket_id, `index-${unique()}`, {
      contentType: "markdown",
      pageKind: "markdown_file",
      title: "Index of plans",
      content: `# Index\n\nSee [[${slug}]].\n`,
      links: [slug]
    })
    const web = yield* signedIn(client(server), owner)
    const path = (sub = "") => `/app/buckets/${dockSlug}/${slug}${sub}?owner=${owner.username}`
    return { server, owner, dockSlug, slug, part, web, path }
  })

describe("pages in the web app", () => {
  layer(ServerWithSmtp(), { excludeTestServices: true, timeout: 120_000 })("same origin", (it) => {
    it.effect("the page view: the framed artifact, metadata, backlinks and versions for the owner and a member", () =>
      Effect.gen(function*() {
        const { dockSlug, owner, part, path, server, slug, web } = yield* setup(browserFor)
        const reply = yield* web.get(path())
        expect(reply.status, reply.text).toBe(200)
        expect(reply.headers["content-security-policy"]).toBe(
          "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; " +
            "base-uri 'none'; frame-src 'self'"
        )
        expect(reply.text).toContain(`<iframe class="artifact" src="/artifacts/${part.id}" sandbox title=`)
        expect(reply.text).toContain("<h1>Trip plan</h1>")
        expect(reply.text).toContain("Where we go")
        expect(reply.text).toContain("Markdown file")
        expect(reply.text).toContain(`<dd class="mono">${slug}</dd>`)
        expect(reply.text).toContain("<dd>private</dd>")
        expect(reply.text).toContain(owner.username)
        // The backlink from the index page, to its own page view.
        expect(reply.text).toMatch(/<a href="\/app\/buckets\/[^"]+\/index-[^"]+">Index of plans<\/a>/)
        // Two versions; the older one can be restored by the owner.
        expect(reply.text).toContain("Restore version 1")
        expect(reply.text).not.toContain("Restore version 2")
        expect(reply.text).toContain(`name="from"`)
        // The owner may share it.
        expect(reply.text).toContain(`/${slug}/-/share?owner=${owner.username}">Share links</a>`)
        // The Dock's page list links here.
        const dockPage = yield* web.get(`/app/buckets/${dockSlug}?owner=${owner.username}`)
        expect(dockPage.text).toContain(`href="/app/buckets/${dockSlug}/${slug}?owner=${owner.username}"`)

        // A viewer sees it too, without the restore buttons.
        const viewer = yield* newUser
        yield* grant(owner.default_bucket_id, viewer, "viewer")
        const asViewer = yield* signedIn(browserFor(server), viewer)
        const seen = yield* asViewer.get(path())
        expect(seen.status).toBe(200)
        expect(seen.text).toContain("<h1>Trip plan</h1>")
        expect(seen.text).not.toContain("Restore version")
        expect(seen.text).not.toContain("Share links")
      }))

    it.effect("a page the viewer may not read, and a missing one, are the 404 page", () =>
      Effect.gen(function*() {
        const { dockSlug, owner, path, server, web } = yield* setup(browserFor)
        const outsider = yield* signedIn(browserFor(server), yield* newUser)
        for (const sub of ["", "/-/diff", "/-/source"]) {
          const refused = yield* outsider.get(path(sub))
          expect(refused.status).toBe(404)
          expect(refused.text).toContain("<h1>Not found</h1>")
        }
        const missing = yield* web.get(`/app/buckets/${dockSlug}/no-such-page?owner=${owner.username}`)
        expect(missing.status).toBe(404)
        expect(missing.text).toContain("<h1>Not found</h1>")
        // Without a session: to sign-in, and back here afterwards.
        const anonymous = yield* browserFor(server).get(path())
        expect(anonymous.status).toBe(303)
        expect(anonymous.headers["location"]).toBe(`/login?next=${encodeURIComponent(path())}`)
      }))

    it.effect("a Micro DB is not shown here: 303 to its tables view", () =>
      Effect.gen(function*() {
        const { dockSlug, owner, web } = yield* setup(browserFor)
        const slug = `tables-${unique()}`
        yield* seedPage(owner, owner.default_bucket_id, slug, {
          pageKind: "micro_db",
          contentType: "json",
          content: "{}"
        })
        const reply = yield* web.get(`/app/buckets/${dockSlug}/${slug}?owner=${owner.username}`)
        expect(reply.status).toBe(303)
        expect(reply.headers["location"]).toBe(`/app/buckets/${dockSlug}/-/tables/${slug}?owner=${owner.username}`)
      }))

    it.effect("a diff between two versions shows the removed and added lines, marked", () =>
      Effect.gen(function*() {
        const { path, web } = yield* setup(browserFor)
        const reply = yield* web.get(`${path("/-/diff")}&from=1&to=2`)
        expect(reply.status, reply.text).toBe(200)
        expect(reply.text).toContain("<del>-alpha line\n</del>")
        expect(reply.text).toContain("<ins>+beta line\n</ins>")
        expect(reply.text).toContain(" First we walk &lt;the> coast.\n")
        expect(reply.text).toMatch(/<strong>1<\/strong> line added/)
        // Either way round, and the same version twice.
        expect((yield* web.get(`${path("/-/diff")}&from=2&to=1`)).text).toContain("<ins>+alpha line\n</ins>")
        expect((yield* web.get(`${path("/-/diff")}&from=2&to=2`)).text).toContain("the same content")
        expect((yield* web.get(`${path("/-/diff")}&from=9&to=1`)).status).toBe(404)
        expect((yield* web.get(`${path("/-/diff")}&from=x`)).status).toBe(400)
      }))

    it.effect("the Markdown source is shown as stored, escaped", () =>
      Effect.gen(function*() {
        const { path, web } = yield* setup(browserFor)
        const reply = yield* web.get(path("/-/source"))
        expect(reply.status).toBe(200)
        expect(reply.text).toContain(`<pre class="source">---\ntitle: Trip plan\n---\n# Trip plan`)
        expect(reply.text).toContain("First we walk &lt;the> coast.")
      }))

    it.effect("restore: with the form's CSRF token a new version equal to the old one; refusals change nothing", () =>
      Effect.gen(function*() {
        const { part, path, server, web } = yield* setup(browserFor)
        const page = yield* web.get(path())
        const csrf = csrfIn(page.text)

        const noToken = yield* web.post(path("/-/restore"), { version: "1", base_version: "2" })
        expect(noToken.status).toBe(403)
        const wrongToken = yield* web.post(path("/-/restore"), { csrf: `${csrf}x`, version: "1", base_version: "2" })
        expect(wrongToken.status).toBe(403)
        const foreign = yield* web.post(path("/-/restore"), { csrf, version: "1", base_version: "2" }, {
          origin: "http://evil.example"
        })
        expect(foreign.status).toBe(403)
        expect(foreign.text).toContain("This form was refused")
        expect((yield* versionRows(server, part.id)).map((row) => row.version)).toEqual([1, 2])

        // A stale form (the page moved on since it was shown): a conflict, nothing restored.
        const stale = yield* web.post(path("/-/restore"), { csrf, version: "1", base_version: "1" })
        expect(stale.status).toBe(409)
        expect(stale.text).toContain("This page changed since you opened it (it is now at version 2)")
        expect((yield* versionRows(server, part.id)).map((row) => row.version)).toEqual([1, 2])

        const restored = yield* web.post(path("/-/restore"), { csrf, version: "1", base_version: "2" })
        expect(restored.status, restored.text).toBe(303)
        expect(restored.headers["location"]).toBe(`${path()}&restored=1`)
        const rows = yield* versionRows(server, part.id)
        expect(rows.map(({ reason, restored_from, version }) => ({ version, reason, restored_from }))).toEqual([
          { version: 1, reason: "created", restored_from: null },
          { version: 2, reason: "updated", restored_from: null },
          { version: 3, reason: "restored", restored_from: 1 }
        ])
        expect(rows[2]!.content).toBe(rows[0]!.content)
        const after = yield* web.get(restored.headers["location"]!)
        expect(after.text).toContain("Version 1 was restored: it is now version 3.")
        // The notice tells only what the versions say: a made-up one shows nothing.
        expect((yield* web.get(`${path()}&restored=2`)).text).not.toContain("was restored")
      }))

    it.effect("a viewer may not restore: refused by the domain, nothing changed", () =>
      Effect.gen(function*() {
        const { owner, part, path, server } = yield* setup(browserFor)
        const viewer = yield* newUser
        yield* grant(owner.default_bucket_id, viewer, "viewer")
        const asViewer = yield* signedIn(browserFor(server), viewer)
        const csrf = csrfIn((yield* asViewer.get(path())).text)
        const refused = yield* asViewer.post(path("/-/restore"), { csrf, version: "1", base_version: "2" })
        expect(refused.status).toBe(403)
        expect(refused.text).toContain(`role="alert"`)
        expect((yield* versionRows(server, part.id)).map((row) => row.version)).toEqual([1, 2])
      }))

    it.effect("private /a/ and /artifacts/: served to a signed-in reader only, never cached", () =>
      Effect.gen(function*() {
        const { owner, part, server, web } = yield* setup(browserFor)
        const viewer = yield* newUser
        yield* grant(owner.default_bucket_id, viewer, "viewer")
        const asViewer = yield* signedIn(browserFor(server), viewer)
        const outsider = yield* signedIn(browserFor(server), yield* newUser)
        for (const path of [`/a/${part.public_slug}`, `/artifacts/${part.id}`]) {
          for (const reader of [web, asViewer]) {
            const shown = yield* reader.get(path)
            expect(shown.status).toBe(200)
            expectSandboxed(shown)
            expect(shown.headers["content-security-policy"]).toContain("frame-ancestors 'self'")
            expect(shown.headers["cache-control"]).toBe("no-store")
            expect(shown.text).toContain("<h1>Trip plan</h1>")
            expect(shown.text).toContain("beta line")
          }
          for (const stranger of [browserFor(server), outsider]) {
            const refused = yield* stranger.get(path)
            expect(refused.status).toBe(404)
            expectSandboxed(refused)
            expect(refused.text).not.toContain("Trip plan")
          }
        }
        // A signature on this origin names nobody the server signed: 404, not the public page.
        const forged = yield* web.get(`/artifacts/${part.id}?v=${owner.id}&exp=9999999999&sig=x`)
        expect(forged.status).toBe(404)
        expectSandboxed(forged)

        // Once the Dock is public, anyone reads it; what a signed-in reader is shown is still never stored.
        yield* server.sql`update docks set visibility = 'public' where id = ${owner.default_bucket_id}`.pipe(
          Effect.orDie
        )
        const anyone = yield* browserFor(server).get(`/a/${part.public_slug}`)
        expect(anyone.status).toBe(200)
        expect(anyone.headers["cache-control"]).toBe("no-cache")
        expect((yield* web.get(`/a/${part.public_slug}`)).headers["cache-control"]).toBe("no-store")
      }))
  })

  const APP = "http://app.dock.test"
  const ARTIFACTS = "http://artifacts.dock.test"
  const appClient = (server: RunningServer) => webClient({ port: server.port, host: "app.dock.test", origin: APP })
  const artifactClient = (server: RunningServer) =>
    webClient({ port: server.port, host: "artifacts.dock.test", origin: ARTIFACTS })

  /** A signature as the server makes it (TEST_SECRET is the in-process server's DOCK_SECRET). */
  const signature = (pageId: string, userId: string, exp: number) =>
    createHmac("sha256", TEST_SECRET).update(`artifact-view\u0000${pageId}\u0000${userId}\u0000${exp}`).digest(
      "base64url"
    )

  layer(ServerWithSmtp({ DOCK_BASE_URL: APP, DOCK_ARTIFACT_ORIGIN: ARTIFACTS }), {
    excludeTestServices: true,
    timeout: 120_000
  })("a separate artifact origin", (it) => {
    it.effect("the frame gets a short-lived signed URL; expired, forged and other people's signatures are 404", () =>
      Effect.gen(function*() {
        const { owner, part, path, server, web } = yield* setup(appClient)
        const page = yield* web.get(path())
        expect(page.status, page.text).toBe(200)
        expect(page.headers["content-security-policy"]).toContain(`frame-src ${ARTIFACTS}`)
        expect(page.headers["content-security-policy"]).not.toContain("frame-src 'self'")
        const src = /<iframe class="artifact" src="([^"]+)"/.exec(page.text)![1]!.replaceAll("&amp;", "&")
        const url = new URL(src)
        expect(url.origin).toBe(ARTIFACTS)
        expect(url.pathname).toBe(`/artifacts/${part.id}`)
        expect(url.searchParams.get("v")).toBe(owner.id)
        const exp = Number(url.searchParams.get("exp"))
        const now = Math.floor(Date.now() / 1000)
        expect(exp).toBeGreaterThan(now)
        expect(exp).toBeLessThanOrEqual(now + 300)

        const artifacts = artifactClient(server)
        const shown = yield* artifacts.get(`${url.pathname}${url.search}`)
        expect(shown.status).toBe(200)
        expectSandboxed(shown)
        // Framed by the app's origin only, never cached.
        expect(shown.headers["content-security-policy"]).toContain(`frame-ancestors ${APP}`)
        expect(shown.headers["cache-control"]).toBe("no-store")
        expect(shown.text).toContain("beta line")

        const refusedAt = (query: string) =>
          Effect.map(artifacts.get(`/artifacts/${part.id}?${query}`), (reply) => {
            expectSandboxed(reply)
            expect(reply.text).not.toContain("beta line")
            return reply.status
          })
        const sig = url.searchParams.get("sig")!
        const stranger = yield* newUser
        const past = now - 60
        // Forged, expired (though rightly signed), another person's id under the owner's signature, too far ahead,
        // and a rightly signed URL for someone who may not read the page.
        expect(yield* refusedAt(`v=${owner.id}&exp=${exp}&sig=${sig.slice(1)}A`)).toBe(404)
        expect(yield* refusedAt(`v=${owner.id}&exp=${past}&sig=${signature(part.id, owner.id, past)}`)).toBe(404)
        expect(yield* refusedAt(`v=${stranger.id}&exp=${exp}&sig=${sig}`)).toBe(404)
        expect(yield* refusedAt(`v=${owner.id}&exp=${now + 86_400}&sig=${signature(part.id, owner.id, now + 86_400)}`))
          .toBe(404)
        expect(yield* refusedAt(`v=${stranger.id}&exp=${exp}&sig=${signature(part.id, stranger.id, exp)}`)).toBe(404)
        // Another page under this page's signature.
        const other = yield* seedPage(owner, owner.default_bucket_id, `other-${unique()}`)
        expect((yield* artifacts.get(`/artifacts/${other.part.id}${url.search}`)).status).toBe(404)
        // No signature at all: the private page is not public.
        expect((yield* artifacts.get(`/artifacts/${part.id}`)).status).toBe(404)
        expect((yield* artifacts.get(`/a/${part.public_slug}`)).status).toBe(404)
      }))

    it.effect("a signed URL is checked against the grants when used: revoking the member ends it", () =>
      Effect.gen(function*() {
        const { owner, path, server } = yield* setup(appClient)
        const viewer = yield* newUser
        yield* grant(owner.default_bucket_id, viewer, "viewer")
        const asViewer = yield* signedIn(appClient(server), viewer)
        const page = yield* asViewer.get(path())
        const src = new URL(/<iframe class="artifact" src="([^"]+)"/.exec(page.text)![1]!.replaceAll("&amp;", "&"))
        const artifacts = artifactClient(server)
        expect((yield* artifacts.get(`${src.pathname}${src.search}`)).status).toBe(200)
        yield* server.sql`delete from dock_members where user_id = ${viewer.id}`.pipe(Effect.orDie)
        const revoked = yield* artifacts.get(`${src.pathname}${src.search}`)
        expect(revoked.status).toBe(404)
        expectSandboxed(revoked)
      }))
  })
})
