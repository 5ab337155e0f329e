// Share links (issue 16, item 7): only the Dock's owner makes, lists and revokes them (never an editor, a
// read-only token, a sandbox token, nor on an unclaimed sandbox Dock); the secret is ≥128 random bits and only its
// SHA-256 is stored; `open` shows a private page while the link is live, and revocation and expiry hold at once.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import {
  type Dock,
  type DockId,
  type PageContent,
  Pages,
  type Principal,
  sha256,
  ShareLinks,
  userPrincipal
} from "../src/index.ts"
import { DomainTest } from "../src/testing.ts"
import { as, createDock, grant, newUser, resolvedAt } from "./support/Fixtures.ts"

const NOW = Date.UTC(2031, 4, 1)

const page = (slug: string): PageContent => ({
  slug,
  title: `Secret plan ${slug}`,
  summary: "",
  contentType: "markdown",
  pageKind: "web_page",
  content: `# Secret plan\n\nOnly for people with the link: ${slug}.`,
  bodyText: slug
})

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(NOW)
  const owner = yield* newUser("share")
  const dock = yield* createDock(owner, { title: "Private plans" })
  const saved = yield* Effect.flatMap(Pages, (pages) => pages.save(dock.id as DockId, page("plan"))).pipe(
    as(userPrincipal(owner))
  )
  return { owner, dock, pageId: saved.part.id, asOwner: userPrincipal(owner) }
})

const resolvedFor = (principal: Principal, dock: Dock) => resolvedAt({ _tag: "ById", id: dock.id }).pipe(as(principal))

const create = (principal: Principal, dock: Dock, ref: string, expiresAt: Date | null = null) =>
  Effect.gen(function*() {
    const shareLinks = yield* ShareLinks
    const resolved = yield* resolvedFor(principal, dock)
    return yield* shareLinks.create(resolved, ref, expiresAt).pipe(as(principal))
  })

const secretOf = (url: string) => url.slice(url.lastIndexOf("/s/") + 3)
const open = (secret: string) => Effect.flatMap(ShareLinks, (shareLinks) => shareLinks.open(secret))

layer(DomainTest)("ShareLinks", (it) => {
  it.effect("the owner makes a link to a private page; open shows it; only the hash is stored", () =>
    Effect.gen(function*() {
      const { asOwner, dock, owner, pageId } = yield* setup
      const link = yield* create(asOwner, dock, "plan")
      expect(link.page_id).toBe(pageId)
      expect(link.expires_at).toBeNull()
      const secret = secretOf(link.url)
      expect(secret).toMatch(/^dock_share_[0-9A-Za-z]{43}$/)
      const view = yield* open(secret)
      expect(view.part.id).toBe(pageId)
      expect(view.html).toContain("Only for people with the link")

      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ secret_hash: string; created_by: string }>`select secret_hash, created_by
        from share_links where id = ${link.id}`
      expect(rows).toEqual([{ secret_hash: sha256(secret), created_by: owner.id }])
      const anywhere = yield* sql<{ n: number }>`select count(*)::int as n from share_links
        where secret_hash = ${secret} or secret_hash like ${"%" + secret.slice(11, 30) + "%"}`
      expect(anywhere[0]!.n).toBe(0)

      // two links are two different secrets
      expect(secretOf((yield* create(asOwner, dock, pageId)).url)).not.toBe(secret)
      const listed = yield* Effect.flatMap(
        ShareLinks,
        (shareLinks) =>
          Effect.flatMap(resolvedFor(asOwner, dock), (resolved) => shareLinks.list(resolved, "plan").pipe(as(asOwner)))
      )
      expect(listed).toHaveLength(2)
      expect(listed.every((entry) => entry.created_by === owner.username && entry.status === "active")).toBe(true)
      expect(JSON.stringify(listed)).not.toContain(secret)
    }))

  it.effect("revocation holds at once; unknown and malformed secrets are the same not_found", () =>
    Effect.gen(function*() {
      const { asOwner, dock } = yield* setup
      const link = yield* create(asOwner, dock, "plan")
      const secret = secretOf(link.url)
      yield* open(secret)
      const revoked = yield* Effect.flatMap(ShareLinks, (shareLinks) => shareLinks.revoke(link.id)).pipe(as(asOwner))
      expect(revoked.status).toBe("revoked")
      const afterRevoke = yield* Effect.flip(open(secret))
      const unknown = yield* Effect.flip(open(`dock_share_${"A".repeat(43)}`))
      const malformed = yield* Effect.flip(open("not-a-secret"))
      for (const error of [afterRevoke, unknown, malformed]) {
        expect(error.code).toBe("not_found")
        expect(error.message).toBe(afterRevoke.message)
      }
    }))

  it.effect("expiry holds at once: live until expires_at, not_found from then on; a past expiry is refused", () =>
    Effect.gen(function*() {
      const { asOwner, dock } = yield* setup
      const link = yield* create(asOwner, dock, "plan", new Date(NOW + 60 * 60 * 1000))
      expect(link.expires_at).toBe(new Date(NOW + 60 * 60 * 1000).toISOString())
      yield* open(secretOf(link.url))
      yield* TestClock.adjust("59 minutes")
      yield* open(secretOf(link.url))
      yield* TestClock.adjust("1 minute")
      expect((yield* Effect.flip(open(secretOf(link.url)))).code).toBe("not_found")
      const listed = yield* Effect.flatMap(
        ShareLinks,
        (shareLinks) =>
          Effect.flatMap(resolvedFor(asOwner, dock), (resolved) => shareLinks.list(resolved).pipe(as(asOwner)))
      )
      expect(listed.find((entry) => entry.id === link.id)?.status).toBe("expired")
      const past = yield* Effect.flip(create(asOwner, dock, "plan", new Date(NOW)))
      expect(past.code).toBe("validation_error")
    }))

  it.effect("only the owner: editors, viewers, read-only and restricted tokens, outsiders cannot", () =>
    Effect.gen(function*() {
      const { asOwner, dock } = yield* setup
      const editor = yield* newUser("share")
      const viewer = yield* newUser("share")
      const outsider = yield* newUser("share")
      yield* grant(dock, editor, "editor")
      yield* grant(dock, viewer, "viewer")
      const link = yield* create(asOwner, dock, "plan")
      for (const principal of [userPrincipal(editor), userPrincipal(viewer)]) {
        expect((yield* Effect.flip(create(principal, dock, "plan"))).code).toBe("permission_denied")
        expect(
          (yield* Effect.flip(
            Effect.flatMap(ShareLinks, (shareLinks) => shareLinks.revoke(link.id)).pipe(as(principal))
          ))
            .code
        ).toBe("permission_denied")
      }
      const readOnly = yield* Effect.flip(create(userPrincipal(dock.owner, { scopes: ["mcp:read"] }), dock, "plan"))
      expect(readOnly.code).toBe("permission_denied")
      const restricted = userPrincipal(dock.owner, { allowedBucketIds: [crypto.randomUUID() as DockId] })
      expect((yield* Effect.flip(create(restricted, dock, "plan"))).code).toBe("permission_denied")
      // an outsider cannot see the private Dock: not_found, for the link too
      expect((yield* Effect.flip(resolvedFor(userPrincipal(outsider), dock))).code).toBe("not_found")
      expect(
        (yield* Effect.flip(
          Effect.flatMap(ShareLinks, (shareLinks) => shareLinks.revoke(link.id)).pipe(as(userPrincipal(outsider)))
        )).code
      ).toBe("not_found")
      // the link still works
      yield* open(secretOf(link.url))
    }))

  it.effect("a sandbox token cannot make one, nor can anyone on an unclaimed sandbox Dock", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* setup
      const sandboxToken = userPrincipal(owner, { sandbox: true, allowedBucketIds: [dock.id] })
      const byToken = yield* Effect.flip(create(sandboxToken, dock, "plan"))
      expect(byToken.code).toBe("permission_denied")
      const sql = yield* SqlClient.SqlClient
      yield* sql`update docks set sandbox = true where id = ${dock.id}`
      const onSandbox = yield* Effect.flip(create(userPrincipal(owner), dock, "plan"))
      expect(onSandbox.code).toBe("permission_denied")
      expect(yield* sql`select id from share_links where dock_id = ${dock.id}`).toEqual([])
    }))

  it.effect("a page not in the Dock is not_found on the page field", () =>
    Effect.gen(function*() {
      const { asOwner, dock } = yield* setup
      const error = yield* Effect.flip(create(asOwner, dock, "no-such-page"))
      expect(error.code).toBe("not_found")
      expect(error.details).toEqual({ field: "page" })
    }))
})
