/**
 * The Dock's pages in the web app over real HTTP (issue 16, items 3 and 6; docs/web.md, "The Dock view, settings
 * and members"): the Dock view with each page's author agent and paging, a live Micro DB table with paging and
 * escaped cells, the owner's settings (saved, and refused to an editor with nothing changed), CSRF and Origin
 * refusals that change nothing, delete behind the typed slug, members granted and revoked (never as owner), a
 * viewer's grant on their /app, and Fork. People sign in with the mailed code; content is written through the
 * domain as an agent (a principal with an agent label) would.
 */
import {
  CurrentPrincipal,
  type DockId,
  Docks,
  MicroDb,
  Pages,
  type Principal,
  type UserId,
  userPrincipal
} from "@dock/domain"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import { type RunningServer, TestServer } from "./support/TestServer.ts"
import { browserFor, ServerWithSmtp, signIn } from "./support/WebApp.ts"
import { csrfIn, type WebClient, type WebReply } from "./support/WebClient.ts"

interface Person {
  readonly client: WebClient
  readonly id: string
  readonly username: string
  readonly email: string
}

/** A person signed in through the pages (their account is made at first sign-in). */
const person = (server: RunningServer, name: string) =>
  Effect.gen(function*() {
    const email = `${name}-${unique()}@example.com`
    const client = browserFor(server)
    expect((yield* signIn(client, email)).status).toBe(303)
    const [row] = yield* server.sql<{ id: string; username: string }>`select id, username from users
      where email = ${email}`.pipe(Effect.orDie)
    return { client, id: row!.id, username: row!.username, email } satisfies Person
  })

/** The person acting through an agent (their token's label). */
const agentOf = (who: Person, label: string | null = null): Principal =>
  userPrincipal({ id: who.id as UserId, username: who.username }, { agentLabel: label })

const as = <A, E>(server: RunningServer, principal: Principal, effect: Effect.Effect<A, E, any>) =>
  server.domain(effect.pipe(Effect.provideService(CurrentPrincipal, principal), Effect.orDie) as any) as Effect.Effect<
    A
  >

const newDock = (server: RunningServer, owner: Person, fields: { visibility?: "public" | "private" } = {}) =>
  as(
    server,
    agentOf(owner),
    Effect.flatMap(Docks, (docks) =>
      docks.create({
        title: "Field notes",
        slug: `field-notes-${unique()}`,
        visibility: fields.visibility ?? "private"
      }))
  )

const savePage = (server: RunningServer, principal: Principal, dockId: string, slug: string, title = slug) =>
  as(
    server,
    principal,
    Effect.flatMap(Pages, (pages) =>
      pages.save(dockId as DockId, {
        slug,
        title,
        summary: "",
        contentType: "html",
        pageKind: "web_page",
        content: `<p>${slug}</p>`,
        bodyText: slug
      }))
  )

const path = (dock: { slug: string; owner: { username: string } }, sub = "") =>
  `/app/buckets/${dock.slug}${sub}?owner=${dock.owner.username}`

const rowsIn = (html: string, id: string) => {
  const section = html.slice(html.indexOf(`id="${id}"`))
  const body = section.slice(section.indexOf("<tbody>"), section.indexOf("</tbody>"))
  return body.split("<tr").length - 1
}

const dockRow = (server: RunningServer, id: string) =>
  server.sql<{
    title: string
    description: string | null
    visibility: string
    discoverable: boolean
    allow_forks: boolean
  }>`select title, description, visibility, discoverable, allow_forks from docks where id = ${id}`.pipe(
    Effect.map((rows) => rows[0]),
    Effect.orDie
  )

const grants = (server: RunningServer, dockId: string) =>
  server.sql<{ username: string; role: string }>`select u.username, m.role from dock_members m
    join users u on u.id = m.user_id where m.dock_id = ${dockId} order by u.username`.pipe(Effect.orDie)

/** A form POST from the page's own form (its CSRF token) with these fields. */
const submit = (client: WebClient, page: WebReply, action: string, fields: Record<string, string>) =>
  client.post(action, { csrf: csrfIn(page.text), ...fields })

const SETTINGS = { title: "Renamed notes", description: "What we saw", visibility: "public", discoverable: "on" }

describe("the Dock in the web app", () => {
  layer(ServerWithSmtp(), { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.effect("the Dock view lists pages with their author agent, newest first, 25 at a time", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* person(server, "owner")
        const dock = yield* newDock(server, owner)
        for (let n = 1; n <= 27; n++) {
          yield* savePage(server, agentOf(owner, n === 27 ? "Claude Code" : "Cursor"), dock.id, `page-${n}`)
        }
        const first = yield* owner.client.get(path(dock))
        expect(first.status).toBe(200)
        expect(rowsIn(first.text, "pages")).toBe(25)
        // The newest page first, with who wrote it and through which agent; links into the page view.
        const newest = first.text.indexOf(">page-27<")
        expect(newest).toBeGreaterThan(0)
        expect(first.text.indexOf(">page-26<")).toBeGreaterThan(newest)
        expect(first.text).toContain(`href="${path(dock, "/page-27")}"`)
        expect(first.text).toContain(`<span>${owner.username}</span> <span class="agent">via Claude Code</span>`)
        expect(first.text).toContain("via Cursor")
        expect(first.text).not.toContain(">page-2<")
        const older = /href="([^"]+&amp;cursor=[^"]+)">Older pages</.exec(first.text)
        expect(older).not.toBeNull()
        const second = yield* owner.client.get(older![1]!.replaceAll("&amp;", "&"))
        expect(second.status).toBe(200)
        expect(rowsIn(second.text, "pages")).toBe(2)
        expect(second.text).toContain(">page-2<")
        expect(second.text).toContain(">page-1<")
        expect(second.text).not.toContain(">page-27<")
        expect(second.text).not.toContain("Older pages")
        // Recent activity names who and which agent.
        expect(first.text).toContain("Recent activity")
        // A bad cursor is the domain's 400; a Dock that does not exist the 404 page.
        expect((yield* owner.client.get(`${path(dock)}&cursor=nonsense`)).status).toBe(400)
        expect((yield* owner.client.get(`/app/buckets/no-such-${unique()}?owner=${owner.username}`)).status).toBe(404)
        // Someone else does not see a private Dock at all.
        const outsider = yield* person(server, "outsider")
        const refused = yield* outsider.client.get(path(dock))
        expect(refused.status).toBe(404)
        expect(refused.text).not.toContain("page-27")
      }))

    it.effect("a Micro DB table shows live, its columns typed, newest rows first, 50 at a time, cells escaped", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* person(server, "tables")
        const dock = yield* newDock(server, owner)
        const target = { bucket_id: dock.id }
        yield* as(
          server,
          agentOf(owner, "Claude Code"),
          Effect.gen(function*() {
            const microDb = yield* MicroDb
            yield* microDb.createTable(target, {
              name: "Birds seen",
              description: "Counted at dawn",
              columns: [{ name: "Species", type: "text" }, { name: "Count", type: "number" }, {
                name: "Notes",
                type: "long_text"
              }]
            })
            for (let n = 1; n <= 55; n++) {
              yield* microDb.insertRows(target, "birds-seen", [{
                species: n === 55 ? "<script>alert(1)</script>" : `bird ${n}`,
                count: n,
                notes: n === 54 ? "x".repeat(400) : "ok"
              }])
            }
          })
        )
        const view = yield* owner.client.get(path(dock))
        expect(view.text).toContain(
          `href="${path(dock, "/-/tables/birds-seen").replaceAll("&", "&amp;")}">Birds seen</a>`
        )
        expect(view.text).toContain("55 rows, 3 columns")

        const first = yield* owner.client.get(path(dock, "/-/tables/birds-seen"))
        expect(first.status).toBe(200)
        expect(first.text).toContain("Species<span class=\"type\">text</span>")
        expect(first.text).toContain("Count<span class=\"type\">number</span>")
        expect(rowsIn(first.text, "main")).toBe(50)
        expect(first.text).toContain("&lt;script>alert(1)&lt;/script>")
        expect(first.text).not.toContain("<script>")
        expect(first.text).toContain(`${"x".repeat(300)}…`)
        expect(first.text).not.toContain("x".repeat(301))
        expect(first.text.indexOf("&lt;script>")).toBeLessThan(first.text.indexOf(">bird 53<"))
        expect(first.text).not.toContain(">bird 5<")
        const older = /href="([^"]+&amp;cursor=50)">Older rows</.exec(first.text)
        expect(older).not.toBeNull()
        const second = yield* owner.client.get(older![1]!.replaceAll("&amp;", "&"))
        expect(rowsIn(second.text, "main")).toBe(5)
        expect(second.text).toContain(">bird 1<")
        expect(second.text).not.toContain("Older rows")
        // No such table, and an outsider: the 404 page.
        expect((yield* owner.client.get(path(dock, "/-/tables/nothing-here"))).status).toBe(404)
        const outsider = yield* person(server, "outsider")
        expect((yield* outsider.client.get(path(dock, "/-/tables/birds-seen"))).status).toBe(404)
      }))

    it.effect("the owner saves settings; an editor is refused and nothing changes; CSRF and Origin are checked", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* person(server, "owner")
        const editor = yield* person(server, "editor")
        const dock = yield* newDock(server, owner)
        const members = yield* owner.client.get(path(dock, "/-/members"))
        expect(
          (yield* submit(owner.client, members, path(dock, "/-/members"), { user: editor.email, role: "editor" }))
            .status
        ).toBe(303)

        // The editor sees the Dock but no settings link, and the settings are refused to them.
        const editorView = yield* editor.client.get(path(dock))
        expect(editorView.status).toBe(200)
        expect(editorView.text).not.toContain("/-/settings")
        expect((yield* editor.client.get(path(dock, "/-/settings"))).status).toBe(403)
        const refused = yield* submit(editor.client, editorView, path(dock, "/-/settings"), SETTINGS)
        expect(refused.status).toBe(403)
        expect(refused.text).toContain("Only the Dock's owner can do this")
        expect((yield* dockRow(server, dock.id))!.title).toBe("Field notes")

        const form = yield* owner.client.get(path(dock, "/-/settings"))
        expect(form.status).toBe(200)
        expect((yield* owner.client.get(path(dock))).text).toContain(path(dock, "/-/settings").replaceAll("&", "&amp;"))
        // No token, a wrong one, a foreign Origin: 403 and nothing changed.
        expect((yield* owner.client.post(path(dock, "/-/settings"), SETTINGS)).status).toBe(403)
        expect((yield* owner.client.post(path(dock, "/-/settings"), { ...SETTINGS, csrf: "wrong" })).status).toBe(403)
        expect(
          (yield* owner.client.post(path(dock, "/-/settings"), { ...SETTINGS, csrf: csrfIn(form.text) }, {
            origin: "https://evil.example"
          })).status
        ).toBe(403)
        expect(yield* dockRow(server, dock.id)).toEqual({
          title: "Field notes",
          description: null,
          visibility: "private",
          discoverable: false,
          allow_forks: false
        })

        const saved = yield* submit(owner.client, form, path(dock, "/-/settings"), { ...SETTINGS, allow_forks: "on" })
        expect(saved.status).toBe(303)
        expect(saved.headers["location"]).toBe(`/app/buckets/${dock.slug}/-/settings?saved=1&owner=${owner.username}`)
        expect(yield* dockRow(server, dock.id)).toEqual({
          title: "Renamed notes",
          description: "What we saw",
          visibility: "public",
          discoverable: true,
          allow_forks: true
        })
        const after = yield* owner.client.get(saved.headers["location"]!)
        expect(after.text).toContain("Settings saved.")
        // An empty title is the domain's refusal, shown on the form; nothing changes.
        const empty = yield* submit(owner.client, after, path(dock, "/-/settings"), { ...SETTINGS, title: " " })
        expect(empty.status).toBe(400)
        expect(empty.text).toContain(`class="notice error"`)
        expect((yield* dockRow(server, dock.id))!.title).toBe("Renamed notes")
      }))

    it.effect("delete needs the slug typed: a wrong one deletes nothing, the right one deletes the Dock", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* person(server, "owner")
        const dock = yield* newDock(server, owner)
        yield* savePage(server, agentOf(owner, "Cursor"), dock.id, "kept")
        const form = yield* owner.client.get(path(dock, "/-/settings"))
        expect((yield* owner.client.post(path(dock, "/-/delete"), { confirm: dock.slug })).status).toBe(403)
        const wrong = yield* submit(owner.client, form, path(dock, "/-/delete"), { confirm: "field-notes" })
        expect(wrong.status).toBe(400)
        expect(wrong.text).toContain("Nothing was deleted")
        expect(yield* dockRow(server, dock.id)).toBeDefined()
        const done = yield* submit(owner.client, form, path(dock, "/-/delete"), { confirm: dock.slug })
        expect(done.status).toBe(303)
        expect(done.headers["location"]).toBe(`/app?deleted=${encodeURIComponent(`${owner.username}/${dock.slug}`)}`)
        expect(yield* dockRow(server, dock.id)).toBeUndefined()
        const home = yield* owner.client.get(done.headers["location"]!)
        expect(home.text).toContain(`The Dock ${owner.username}/${dock.slug} was deleted.`)
        expect((yield* owner.client.get(path(dock))).status).toBe(404)
      }))

    it.effect("members: the owner grants editor or viewer by email or username and revokes; never owner", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* person(server, "owner")
        const viewer = yield* person(server, "viewer")
        const editor = yield* person(server, "editor")
        const dock = yield* newDock(server, owner)
        yield* savePage(server, agentOf(owner, "Cursor"), dock.id, "shared-page", "Shared page")
        const action = path(dock, "/-/members")
        const page = yield* owner.client.get(action)
        expect(page.status).toBe(200)
        expect(page.text).toContain("Nobody else has access yet.")
        expect(page.text).not.toContain(`value="owner"`)

        const granted = yield* submit(owner.client, page, action, { user: viewer.email, role: "viewer" })
        expect(granted.status).toBe(303)
        yield* submit(owner.client, page, action, { user: editor.username, role: "editor" })
        expect(yield* grants(server, dock.id)).toEqual(
          [{ username: viewer.username, role: "viewer" }, { username: editor.username, role: "editor" }].sort((a, b) =>
            a.username < b.username ? -1 : 1
          )
        )
        const listed = yield* owner.client.get(granted.headers["location"]!)
        expect(listed.text).toContain("Access granted.")
        expect(listed.text).toContain(`<td>${viewer.username}</td><td>viewer</td>`)

        // An owner grant is refused by the domain, and changes nothing.
        const asOwner = yield* submit(owner.client, page, action, { user: viewer.username, role: "owner" })
        expect(asOwner.status).toBe(400)
        expect(asOwner.text).toContain("A grant is editor or viewer")
        expect((yield* grants(server, dock.id)).find((row) => row.username === viewer.username)!.role).toBe("viewer")
        // An unknown person: the domain's clear message.
        const unknown = yield* submit(owner.client, page, action, {
          user: `nobody-${unique()}@example.com`,
          role: "viewer"
        })
        expect(unknown.status).toBe(404)
        expect(unknown.text).toContain("the person must sign in to Dock once")
        // CSRF: refused, nothing changed.
        expect((yield* owner.client.post(action, { user: viewer.username, role: "editor", csrf: "x" })).status).toBe(
          403
        )

        // The viewer finds it on /app with their role, reads it, and sees no settings or members links.
        const home = yield* viewer.client.get("/app")
        expect(home.text).toContain("Shared with me")
        expect(home.text).toMatch(
          new RegExp(`${dock.title}</a><span class="tag">private</span><span class="tag">viewer</span>`)
        )
        const view = yield* viewer.client.get(path(dock))
        expect(view.status).toBe(200)
        expect(view.text).toContain("Shared page")
        expect(view.text).not.toContain("/-/settings")
        expect(view.text).not.toContain("/-/members")
        // The members page is the owner's: the viewer is refused, and cannot grant.
        expect((yield* viewer.client.get(action)).status).toBe(403)
        expect((yield* submit(viewer.client, view, action, { user: viewer.username, role: "editor" })).status).toBe(403)
        expect((yield* grants(server, dock.id)).find((row) => row.username === viewer.username)!.role).toBe("viewer")

        const revoked = yield* submit(owner.client, page, path(dock, "/-/members/revoke"), { user: viewer.username })
        expect(revoked.status).toBe(303)
        expect(yield* grants(server, dock.id)).toEqual([{ username: editor.username, role: "editor" }])
        expect((yield* viewer.client.get(path(dock))).status).toBe(404)
        expect((yield* viewer.client.get("/app")).text).not.toContain(dock.slug)
      }))

    it.effect("Fork: a public Dock that allows forks offers it to others, and forking makes their copy", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* person(server, "owner")
        const reader = yield* person(server, "reader")
        const dock = yield* newDock(server, owner, { visibility: "public" })
        yield* savePage(server, agentOf(owner, "Cursor"), dock.id, "recipe", "Recipe")
        // Not offered while forks are not allowed, nor to the owner.
        expect((yield* reader.client.get(path(dock))).text).not.toContain("Fork this Dock")
        const settings = yield* owner.client.get(path(dock, "/-/settings"))
        yield* submit(owner.client, settings, path(dock, "/-/settings"), {
          title: "Field notes",
          visibility: "public",
          allow_forks: "on"
        })
        expect((yield* owner.client.get(path(dock))).text).not.toContain("Fork this Dock")
        const view = yield* reader.client.get(path(dock))
        expect(view.text).toContain("Fork this Dock")
        expect((yield* reader.client.post(path(dock, "/-/fork"), {})).status).toBe(403)
        const forked = yield* submit(reader.client, view, path(dock, "/-/fork"), {})
        expect(forked.status).toBe(303)
        const [copy] = yield* server.sql<
          { slug: string; forked_from_id: string }
        >`select slug, forked_from_id from docks
          where owner_id = ${reader.id} and forked_from_id = ${dock.id}`.pipe(Effect.orDie)
        expect(copy).toBeDefined()
        expect(forked.headers["location"]).toBe(`/app/buckets/${copy!.slug}?owner=${reader.username}`)
        const theirs = yield* reader.client.get(forked.headers["location"]!)
        expect(theirs.status).toBe(200)
        expect(theirs.text).toContain("Recipe")
        expect(theirs.text).toContain("/-/settings")
      }))
  })
})
