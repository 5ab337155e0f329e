/**
 * get_web_page_links (spec §4.3, "Web pages") over the wire with real MCP clients: how `[[…]]` targets resolve
 * (slug, then title case-insensitively, then the slugified text; `[[owner/dock/page]]` in another Dock), that
 * they resolve when read (a link starts working when its target appears and stops when it goes), inbound
 * backlinks from the same Dock and from other Docks, and that neither direction ever shows a page the caller
 * cannot read: other users' private Docks, pages marked private to non-members, sandboxes. Errors, the
 * grounding and default Dock, anonymous use over /mcp/public and what tools/list advertises.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { type AnyClient, type Era, ERAS } from "./support/McpClients.ts"
import {
  actor,
  call,
  connect,
  connectPublic,
  createBucket,
  grant,
  listedTool,
  makePrivate,
  NOT_FOUND,
  ok,
  outputShapes,
  pathOf,
  refused
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"

interface Linked {
  readonly id: string
  readonly slug: string | null
  readonly title: string | null
  readonly url: string
  readonly bucket_path: string
}
interface Links {
  readonly outbound: Array<{ target: string; resolved: boolean; page: Linked | null }>
  readonly inbound: Array<{ target: string; page: Linked }>
}

/** A Markdown page (wikilinks are Markdown's) with this slug, title and body. */
const page = (client: AnyClient, bucket: string, slug: string, title: string, body = "No links here.") =>
  Effect.map(
    call(client, "push_web_page", {
      bucket,
      content_type: "markdown",
      page_slug: slug,
      page_title: title,
      page_content: body
    }),
    (result) => ok(result).part as { id: string; slug: string; title: string; url: string; bucket_id: string }
  )

/** The LinkedPage a part is, in the Dock at `path`. */
const linked = (part: { id: string; slug: string; title: string; url: string }, path: string): Linked => ({
  id: part.id,
  slug: part.slug,
  title: part.title,
  url: part.url,
  bucket_path: path
})

const links = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(call(client, "get_web_page_links", args), (result) => ok(result) as Links)

const error = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(call(client, "get_web_page_links", args), (result) => refused(result).error)

const unresolved = (target: string) => ({ target, resolved: false, page: null })
const resolved = (target: string, to: Linked) => ({ target, resolved: true, page: to })

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("get_web_page_links over MCP", (it) => {
  // ---------------------------------------------------------------------------------------------------------
  // outbound resolution

  it.scoped("outbound: [[Title]] by title case-insensitively, [[slug|label]] by slug, [[Some Text]] by its slug, [[owner/dock/page]] across Docks; unresolved ones too, in document order as written", () =>
    Effect.gen(function*() {
      const alice = yield* actor(MODERN)
      const dock = yield* createBucket(alice.client, { title: "Notes", slug: `notes-${unique()}` })
      const other = yield* createBucket(alice.client, {
        title: "Other",
        slug: `other-${unique()}`,
        visibility: "public"
      })
      const here = pathOf(alice.user, dock)
      const there = pathOf(alice.user, other)
      const harbour = yield* page(alice.client, dock.id, "log-2024", "Harbour Log")
      const beta = yield* page(alice.client, dock.id, "beta-page", "Other Title")
      const start = yield* page(alice.client, dock.id, "getting-started", "Welcome aboard")
      // a slug equal to the text wins over a title equal to it
      const bySlug = yield* page(alice.client, dock.id, "welcome", "Something else")
      const remote = yield* page(alice.client, other.id, "remote-page", "Remote")

      const body = [
        "# Index",
        "",
        "See [[harbour LOG]] and [[beta-page|the beta]], then [[Getting Started]].",
        "",
        `Also [[Nowhere At All]], [[${there}/remote-page]], [[${there}/missing]] and [[nobody-${unique()}/none/x]].`,
        "",
        "By slug first: [[Welcome]]; by title: [[welcome aboard]]. `[[in code]]` is no link.",
        ""
      ].join("\n")
      const source = yield* page(alice.client, dock.id, "index", "Index", body)
      const result = yield* links(alice.client, { bucket: dock.id, page_slug: "index" })
      expect(Object.keys(result).sort()).toEqual(["inbound", "outbound"])
      expect(result.outbound).toEqual([
        resolved("harbour LOG", linked(harbour, here)),
        resolved("beta-page", linked(beta, here)),
        resolved("Getting Started", linked(start, here)),
        unresolved("Nowhere At All"),
        resolved(`${there}/remote-page`, linked(remote, there)),
        unresolved(`${there}/missing`),
        unresolved(result.outbound[6]!.target),
        resolved("Welcome", linked(bySlug, here)),
        resolved("welcome aboard", linked(start, here))
      ])
      expect(result.outbound[6]!.target).toMatch(/^nobody-[a-z0-9]+\/none\/x$/)
      expect(result.inbound).toEqual([])
      // the url is the page's own /a/ link
      expect(result.outbound[0]!.page!.url).toMatch(/\/a\/log-2024-[a-z0-9]+$/)

      // the page named by its UUID, the Dock by path or by the deprecated slug alias: the same answer
      expect(yield* links(alice.client, { bucket: here, page_slug: source.id })).toEqual(result)
      expect(yield* links(alice.client, { bucket_slug: dock.slug, page_slug: "index" })).toEqual(result)
      expect(
        yield* links(alice.client, { bucket_slug: dock.slug, owner_username: alice.user.username, page_slug: "index" })
      )
        .toEqual(result)

      // the other direction: each target lists the index as a backlink, with the link as written
      const inbound = (slug: string, bucket = dock.id) =>
        Effect.map(links(alice.client, { bucket, page_slug: slug }), (answer) => answer.inbound)
      expect(yield* inbound("log-2024")).toEqual([{ target: "harbour LOG", page: linked(source, here) }])
      expect(yield* inbound("beta-page")).toEqual([{ target: "beta-page", page: linked(source, here) }])
      expect(yield* inbound("getting-started")).toEqual([{ target: "Getting Started", page: linked(source, here) }])
      expect(yield* inbound("welcome")).toEqual([{ target: "Welcome", page: linked(source, here) }])
      expect(yield* inbound("remote-page", other.id)).toEqual([{
        target: `${there}/remote-page`,
        page: linked(source, here)
      }])
      // a page without links
      expect(yield* links(alice.client, { bucket: dock.id, page_slug: "log-2024" })).toEqual({
        outbound: [],
        inbound: [{ target: "harbour LOG", page: linked(source, here) }]
      })
    }))

  it.scoped("links resolve when read: unresolved until the target is pushed, resolved, unresolved again once it is deleted", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Later", slug: `later-${unique()}` })
      const here = pathOf(owner.user, dock)
      const a = yield* page(owner.client, dock.id, "a", "A", "Points at [[B Page]].")
      const ask = links(owner.client, { bucket: dock.id, page_slug: "a" })
      expect(yield* ask).toEqual({ outbound: [unresolved("B Page")], inbound: [] })

      const b = yield* page(owner.client, dock.id, "b-page", "Bee")
      expect(yield* ask).toEqual({ outbound: [resolved("B Page", linked(b, here))], inbound: [] })
      expect((yield* links(owner.client, { bucket: dock.id, page_slug: "b-page" })).inbound).toEqual([
        { target: "B Page", page: linked(a, here) }
      ])

      ok(yield* call(owner.client, "delete_web_page", { bucket: dock.id, web_page: "b-page" }))
      expect(yield* ask).toEqual({ outbound: [unresolved("B Page")], inbound: [] })

      // a new page by that title (another slug) is found by the title rule
      const titled = yield* page(owner.client, dock.id, "bee-two", "b page")
      expect(yield* ask).toEqual({ outbound: [resolved("B Page", linked(titled, here))], inbound: [] })

      // editing the link away updates both directions
      ok(
        yield* call(owner.client, "push_web_page", {
          bucket: dock.id,
          content_type: "markdown",
          page_slug: "a",
          page_title: "A",
          page_content: "No more links."
        })
      )
      expect(yield* ask).toEqual({ outbound: [], inbound: [] })
      expect((yield* links(owner.client, { bucket: dock.id, page_slug: "bee-two" })).inbound).toEqual([])
    }))

  it.scoped("two pages with one title: the oldest the caller may read is the one linked, and only it lists the backlink", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const outsider = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, {
        title: "Twins",
        slug: `twins-${unique()}`,
        visibility: "public"
      })
      const here = pathOf(owner.user, dock)
      const older = yield* page(owner.client, dock.id, "twin-one", "Twin")
      const newer = yield* page(owner.client, dock.id, "twin-two", "twin")
      const source = yield* page(owner.client, dock.id, "source", "Source", "Which one? [[TWIN]]")
      const backlink = { target: "TWIN", page: linked(source, here) }
      const ask = (client: AnyClient, slug: string) => links(client, { bucket: dock.id, page_slug: slug })

      expect((yield* ask(owner.client, "source")).outbound).toEqual([resolved("TWIN", linked(older, here))])
      expect((yield* ask(owner.client, "twin-one")).inbound).toEqual([backlink])
      expect((yield* ask(owner.client, "twin-two")).inbound).toEqual([])
      expect((yield* ask(outsider.client, "source")).outbound).toEqual([resolved("TWIN", linked(older, here))])

      // the older one private: members still get it, others the newer one (and the backlink moves with it)
      yield* makePrivate(older.id)
      expect((yield* ask(owner.client, "source")).outbound).toEqual([resolved("TWIN", linked(older, here))])
      expect((yield* ask(outsider.client, "source")).outbound).toEqual([resolved("TWIN", linked(newer, here))])
      expect((yield* ask(outsider.client, "twin-two")).inbound).toEqual([backlink])
      expect((yield* ask(owner.client, "twin-two")).inbound).toEqual([])
    }))

  // ---------------------------------------------------------------------------------------------------------
  // inbound and tenancy

  it.scoped("inbound: from the same Dock and other readable Docks, never the page itself, only from pages the caller can read", () =>
    Effect.gen(function*() {
      const alice = yield* actor(MODERN)
      const bob = yield* actor(MODERN)
      const viewer = yield* actor(MODERN)
      const anonymous = yield* connectPublic(MODERN)
      const server = yield* TestServer
      const open = yield* createBucket(alice.client, { title: "Open", slug: `open-${unique()}`, visibility: "public" })
      const closed = yield* createBucket(alice.client, { title: "Closed", slug: `closed-${unique()}` })
      const bobs = yield* createBucket(bob.client, { title: "Bob's", slug: `bobs-${unique()}` })
      yield* grant(open.id, viewer.user, "viewer")
      const openPath = pathOf(alice.user, open)
      const closedPath = pathOf(alice.user, closed)
      const bobsPath = pathOf(bob.user, bobs)
      const full = `${openPath}/target`

      const target = yield* page(alice.client, open.id, "target", "Target", "I link to myself: [[target]].")
      const s1 = yield* page(alice.client, open.id, "same-dock", "Same Dock", "Back to [[Target]].")
      const s2 = yield* page(alice.client, open.id, "same-dock-full", "Same Dock, full path", `Back to [[${full}]].`)
      const s3 = yield* page(alice.client, closed.id, "private-dock", "Alice's private Dock", `Back to [[${full}]].`)
      const s4 = yield* page(bob.client, bobs.id, "bobs-link", "Bob's private Dock", `Back to [[${full}|the target]].`)
      const s5 = yield* page(alice.client, open.id, "private-page", "A private page", "Back to [[target]] quietly.")
      yield* makePrivate(s5.id)
      // neither of these names the target: a bare link from another Dock, and another page
      yield* page(alice.client, closed.id, "bare-elsewhere", "Bare elsewhere", "[[Target]] means a page of this Dock.")
      yield* page(alice.client, open.id, "unrelated", "Unrelated", "[[Something else]]")
      // a sandbox page linking in: its sandbox is nobody else's to read
      const registration = yield* register(server.url)
      expect(registration.status, registration.text).toBe(201)
      const sandbox = yield* connect(registration.json.credential as string, MODERN)
      const sandboxId = registration.json.sandbox_bucket.id as string
      const fromSandbox = yield* page(sandbox, sandboxId, "sandboxed", "Sandboxed", `Back to [[${full}]].`)

      const ask = (client: AnyClient) => links(client, { bucket: openPath, page_slug: "target" })
      const self = linked(target, openPath)
      const fromS1 = { target: "Target", page: linked(s1, openPath) }
      const fromS2 = { target: full, page: linked(s2, openPath) }
      const fromS3 = { target: full, page: linked(s3, closedPath) }
      const fromS4 = { target: full, page: linked(s4, bobsPath) }
      const fromS5 = { target: "target", page: linked(s5, openPath) }

      // the owner: own Docks and pages; bob's private Dock is not hers to read
      expect(yield* ask(alice.client)).toEqual({
        outbound: [resolved("target", self)],
        inbound: [fromS1, fromS2, fromS3, fromS5]
      })
      // bob: his own private Dock's backlink, but not alice's private Dock or private page
      expect((yield* ask(bob.client)).inbound).toEqual([fromS1, fromS2, fromS4])
      // a viewer of the open Dock is a member: the private page too
      expect((yield* ask(viewer.client)).inbound).toEqual([fromS1, fromS2, fromS5])
      expect((yield* ask(anonymous)).inbound).toEqual([fromS1, fromS2])
      // the sandbox sees its own page's link (and the target, which is public), nothing else
      const sandboxView = yield* links(sandbox, { bucket: sandboxId, page_slug: "sandboxed" })
      expect(sandboxView).toEqual({ outbound: [unresolved(full)], inbound: [] })
      expect((yield* ask(alice.client)).inbound).not.toContainEqual(
        expect.objectContaining({ page: expect.objectContaining({ id: fromSandbox.id }) })
      )

      // bob's own view of his page: the link resolves (the open Dock is public)
      expect(yield* links(bob.client, { bucket: bobs.id, page_slug: "bobs-link" })).toEqual({
        outbound: [resolved(full, self)],
        inbound: []
      })
    }))

  it.scoped("a link into someone else's private Dock is unresolved for the caller (nothing leaks) and resolved for that Dock's owner", () =>
    Effect.gen(function*() {
      const alice = yield* actor(MODERN)
      const bob = yield* actor(MODERN)
      const secretDock = yield* createBucket(alice.client, { title: "Secret", slug: `secret-${unique()}` })
      const openDock = yield* createBucket(alice.client, {
        title: "Open",
        slug: `open-${unique()}`,
        visibility: "public"
      })
      const bobsDock = yield* createBucket(bob.client, {
        title: "Bob's",
        slug: `bobs-${unique()}`,
        visibility: "public"
      })
      const secretPath = pathOf(alice.user, secretDock)
      const openPath = pathOf(alice.user, openDock)
      const bobsPath = pathOf(bob.user, bobsDock)
      const hidden = yield* page(alice.client, secretDock.id, "hidden-page", "Hidden")
      const quiet = yield* page(alice.client, openDock.id, "quiet-page", "Quiet")
      yield* makePrivate(quiet.id)
      const body =
        `Guessing: [[${secretPath}/hidden-page]], [[${openPath}/quiet-page]] and [[${secretPath}/nothing-here]].`
      const guess = yield* page(bob.client, bobsDock.id, "guess", "Guess", body)

      const ask = (client: AnyClient) => links(client, { bucket: bobsPath, page_slug: "guess" })
      // bob cannot tell an existing page of the private Dock, or a private page, from a missing one
      expect(yield* ask(bob.client)).toEqual({
        outbound: [
          unresolved(`${secretPath}/hidden-page`),
          unresolved(`${openPath}/quiet-page`),
          unresolved(`${secretPath}/nothing-here`)
        ],
        inbound: []
      })
      expect((yield* ask(yield* connectPublic(MODERN))).outbound).toEqual((yield* ask(bob.client)).outbound)
      // alice reads bob's public page: her pages resolve for her
      expect(yield* ask(alice.client)).toEqual({
        outbound: [
          resolved(`${secretPath}/hidden-page`, linked(hidden, secretPath)),
          resolved(`${openPath}/quiet-page`, linked(quiet, openPath)),
          unresolved(`${secretPath}/nothing-here`)
        ],
        inbound: []
      })
      // and she sees bob's public page among the backlinks of hers
      expect((yield* links(alice.client, { bucket: secretDock.id, page_slug: "hidden-page" })).inbound).toEqual([
        { target: `${secretPath}/hidden-page`, page: linked(guess, bobsPath) }
      ])
      expect((yield* links(alice.client, { bucket: openDock.id, page_slug: "quiet-page" })).inbound).toEqual([
        { target: `${openPath}/quiet-page`, page: linked(guess, bobsPath) }
      ])
      // bob cannot ask about either page
      expect(yield* error(bob.client, { bucket: secretDock.id, page_slug: "hidden-page" })).toEqual(NOT_FOUND.error)
      expect(yield* error(bob.client, { bucket: openDock.id, page_slug: "quiet-page" })).toMatchObject({
        code: "not_found",
        status: 404
      })
    }))

  // ---------------------------------------------------------------------------------------------------------
  // errors and the Dock

  it.scoped("errors: an unknown page is not_found; a Dock the caller cannot read is the same not_found as a missing one; page_slug is required", () =>
    Effect.gen(function*() {
      const alice = yield* actor(MODERN)
      const bob = yield* actor(MODERN)
      const closed = yield* createBucket(alice.client, { title: "Closed", slug: `closed-${unique()}` })
      yield* page(alice.client, closed.id, "there", "There")

      const unknown = yield* error(alice.client, { bucket: closed.id, page_slug: "not-there" })
      expect(unknown).toMatchObject({ code: "not_found", status: 404 })
      expect(unknown.message).toContain("not-there")
      expect(yield* error(alice.client, { bucket: closed.id, page_slug: crypto.randomUUID() })).toMatchObject({
        code: "not_found",
        status: 404
      })

      const cannotRead = [
        { bucket: closed.id, page_slug: "there" },
        { bucket: pathOf(alice.user, closed), page_slug: "there" },
        { bucket_slug: closed.slug, owner_username: alice.user.username, page_slug: "there" }
      ]
      for (const args of cannotRead) expect(yield* error(bob.client, args)).toEqual(NOT_FOUND.error)
      const missing = [
        { bucket: crypto.randomUUID(), page_slug: "there" },
        { bucket: `${alice.user.username}/missing-${unique()}`, page_slug: "there" },
        { bucket_slug: `missing-${unique()}`, owner_username: alice.user.username, page_slug: "there" }
      ]
      for (const args of missing) expect(yield* error(bob.client, args)).toEqual(NOT_FOUND.error)

      expect(yield* error(alice.client, { bucket: closed.id })).toMatchObject({ code: "validation_error", status: 400 })
      expect(yield* error(alice.client, { bucket: closed.id, page_slug: 3 })).toMatchObject({
        code: "validation_error"
      })
      expect(yield* error(alice.client, { bucket: closed.id, page_slug: "x".repeat(201) })).toMatchObject({
        code: "validation_error"
      })
    }))

  it.scoped("a page naming more than 1,000 distinct targets is refused with validation_error; 1,000 are accepted and listed", () =>
    Effect.gen(function*() {
      const alice = yield* actor(MODERN)
      const dock = yield* createBucket(alice.client, { title: "Many", slug: `many-${unique()}` })
      const targets = Array.from({ length: 1_000 }, (_, i) => `page-${i}`)
      const body = (names: ReadonlyArray<string>) => names.map((name) => `[[${name}]]`).join("\n\n")
      const push = (slug: string, names: ReadonlyArray<string>) =>
        call(alice.client, "push_web_page", {
          bucket: dock.id,
          content_type: "markdown",
          page_slug: slug,
          page_content: body(names)
        })

      expect(refused(yield* push("over", [...targets, "one-more"])).error).toMatchObject({
        code: "validation_error",
        status: 400,
        details: { field: "page_content", limit: 1_000, count: 1_001 }
      })
      ok(yield* push("at-cap", targets))
      const result = yield* links(alice.client, { bucket: dock.id, page_slug: "at-cap" })
      expect(result.outbound.map((link) => link.target)).toEqual(targets)
    }))

  it.scoped("untargeted: the grounding Dock (set_grounding_bucket) when set, else the default Dock", () =>
    Effect.gen(function*() {
      const alice = yield* actor(MODERN)
      const reader = yield* actor(MODERN)
      const open = yield* createBucket(alice.client, { title: "Open", slug: `open-${unique()}`, visibility: "public" })
      const openPath = pathOf(alice.user, open)
      const defaultPath = `${reader.user.username}/${
        ok(yield* call(reader.client, "get_bucket", { bucket: reader.user.default_bucket_id })).bucket.slug
      }`
      const target = yield* page(alice.client, open.id, "shared", "Shared")
      yield* page(alice.client, open.id, "pointer", "Pointer", "See [[Shared]].")
      const home = yield* page(
        reader.client,
        reader.user.default_bucket_id,
        "home",
        "Home",
        "See [[Away]] and [[home]]."
      )

      expect(yield* links(reader.client, { page_slug: "home" })).toEqual({
        outbound: [unresolved("Away"), resolved("home", linked(home, defaultPath))],
        inbound: []
      })
      expect(yield* error(reader.client, { page_slug: "pointer" })).toMatchObject({ code: "not_found" })

      ok(yield* call(reader.client, "set_grounding_bucket", { bucket_path: openPath }))
      expect(yield* links(reader.client, { page_slug: "pointer" })).toEqual({
        outbound: [resolved("Shared", linked(target, openPath))],
        inbound: []
      })
      expect((yield* links(reader.client, { page_slug: "shared" })).inbound.map((link) => link.page.slug)).toEqual([
        "pointer"
      ])
      expect(yield* error(reader.client, { page_slug: "home" })).toMatchObject({ code: "not_found" })
      // a named Dock beats the grounding
      expect((yield* links(reader.client, { bucket: reader.user.default_bucket_id, page_slug: "home" })).outbound)
        .toHaveLength(2)
    }))

  it.scoped("/mcp/public: anonymous calls work on a public Dock; a private Dock is not_found", () =>
    Effect.gen(function*() {
      const alice = yield* actor(MODERN)
      const anonymous = yield* connectPublic(MODERN)
      const open = yield* createBucket(alice.client, { title: "Open", slug: `open-${unique()}`, visibility: "public" })
      const closed = yield* createBucket(alice.client, { title: "Closed", slug: `closed-${unique()}` })
      const openPath = pathOf(alice.user, open)
      const topic = yield* page(alice.client, open.id, "topic", "Topic", "Related: [[Other]].")
      const other = yield* page(alice.client, open.id, "other", "Other")
      yield* page(alice.client, closed.id, "secret", "Secret")

      expect(yield* links(anonymous, { bucket: openPath, page_slug: "topic" })).toEqual({
        outbound: [resolved("Other", linked(other, openPath))],
        inbound: []
      })
      expect(
        yield* links(anonymous, { bucket_slug: open.slug, owner_username: alice.user.username, page_slug: other.id })
      )
        .toEqual({ outbound: [], inbound: [{ target: "Other", page: linked(topic, openPath) }] })
      expect(yield* error(anonymous, { bucket: closed.id, page_slug: "secret" })).toEqual(NOT_FOUND.error)
      expect(yield* error(anonymous, { bucket: pathOf(alice.user, closed), page_slug: "secret" })).toEqual(
        NOT_FOUND.error
      )
      // anonymous, with no Dock named, there is no grounding or default Dock
      expect(yield* error(anonymous, { page_slug: "topic" })).toMatchObject({ code: "bad_request", status: 400 })
    }))

  for (const era of ERAS) {
    it.scoped(`${era}: a link and its backlink`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const dock = yield* createBucket(owner.client, { title: "Era", slug: `era-${unique()}` })
        const here = pathOf(owner.user, dock)
        const from = yield* page(owner.client, dock.id, "from", "From", "[[To]]")
        const to = yield* page(owner.client, dock.id, "to", "To")
        expect(yield* links(owner.client, { bucket: dock.id, page_slug: "from" })).toEqual({
          outbound: [resolved("To", linked(to, here))],
          inbound: []
        })
        expect(yield* links(owner.client, { bucket: dock.id, page_slug: "to" })).toEqual({
          outbound: [],
          inbound: [{ target: "To", page: linked(from, here) }]
        })
      }))
  }

  it.scoped("tools/list: get_web_page_links needs page_slug, is read-only, and is served on /mcp/public", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const tool = (yield* listedTool(owner.client, "get_web_page_links"))!
      expect(tool).toBeDefined()
      expect(tool.inputSchema.required).toEqual(["page_slug"])
      expect(Object.keys(tool.inputSchema.properties ?? {}).sort()).toEqual([
        "bucket",
        "bucket_slug",
        "owner_username",
        "page_slug"
      ])
      expect(tool.inputSchema.properties).toMatchObject({ page_slug: { type: "string", maxLength: 200 } })
      expect(tool.annotations).toMatchObject({ readOnlyHint: true })
      // the output schema: the success shape (beside the error body of a refused call)
      expect(outputShapes(tool)).toContainEqual(["inbound", "outbound"])
      const anonymous = yield* connectPublic(MODERN)
      const served = yield* listedTool(anonymous, "get_web_page_links")
      expect(served?.inputSchema).toEqual(tool.inputSchema)
    }))
})
