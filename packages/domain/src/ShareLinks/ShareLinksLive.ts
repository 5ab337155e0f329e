/**
 * The ShareLinks rules: a link is the Dock owner's alone (Policy.checkPublish with `share`: owner, writing
 * principal, never a sandbox token) and never on an unclaimed sandbox Dock; its secret is 256 random bits, shown
 * once and stored as SHA-256; `open` finds a live link by that hash and renders its page for the anonymous public
 * (wikilinks resolve only to what anyone may read), so revocation and expiry hold on the next request.
 */
import { Clock, Effect, Layer } from "effect"
import { Docks, type ResolvedDock } from "../Docks/Docks.ts"
import { NotFound, PermissionDenied, ValidationError } from "../Errors.ts"
import { isUuid } from "../Ids.ts"
import { Pages } from "../Pages/Pages.ts"
import { Parts } from "../Parts/Parts.ts"
import { checkPublish } from "../Policy.ts"
import { anonymousPrincipal, CurrentPrincipal } from "../Principal.ts"
import { sha256 } from "../Secrets.ts"
import { PublicBaseUrl } from "../Settings.ts"
import { traced } from "../Spans.ts"
import { CreatedShareLink, ShareLink, type ShareLinkId } from "./ShareLink.ts"
import { ShareLinks } from "./ShareLinks.ts"
import { makeShareLinksRepo, type ShareLinkRow } from "./ShareLinksRepo.ts"
import { isWellFormedShareSecret, newShareSecret, shareUrl } from "./ShareSecret.ts"

const iso = (date: Date | null) => (date === null ? null : new Date(date).toISOString())

const toShareLink = (row: ShareLinkRow, now: number) =>
  new ShareLink({
    id: row.id,
    bucket_id: row.dock_id,
    page_id: row.part_id,
    page_slug: row.page_slug,
    page_title: row.page_title,
    created_by: row.created_by,
    created_at: new Date(row.created_at).toISOString(),
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
    status: row.revoked_at !== null
      ? "revoked"
      : row.expires_at !== null && new Date(row.expires_at).getTime() <= now
      ? "expired"
      : "active"
  })

const noLink = () => new NotFound({ message: "No such share link" })
const closed = () => new NotFound({ message: "This link does not exist, or it was revoked or has expired" })

export const ShareLinksLive = Layer.effect(
  ShareLinks,
  Effect.gen(function*() {
    const repo = yield* makeShareLinksRepo
    const docks = yield* Docks
    const parts = yield* Parts
    const pages = yield* Pages
    const baseUrl = yield* PublicBaseUrl

    /** The Dock's owner, writing, not a sandbox token, and not an unclaimed sandbox Dock. */
    const checkShare = (resolved: ResolvedDock) =>
      Effect.gen(function*() {
        yield* checkPublish(yield* CurrentPrincipal, resolved.access, { share: true })
        if (resolved.sandbox) {
          return yield* new PermissionDenied({
            message: "An unclaimed sandbox Dock cannot have share links: claim it first (see /auth.md)",
            details: { sandbox: true }
          })
        }
      })

    const pageOf = (resolved: ResolvedDock, page: string) =>
      Effect.flatMap(
        parts.findInDock(resolved.dock.id, page.trim()),
        (row) =>
          row === undefined
            ? Effect.fail(new NotFound({ message: `No page "${page}" in this Dock`, details: { field: "page" } }))
            : Effect.succeed(row)
      )

    const create = traced("ShareLinks.create")(
      function*(resolved: ResolvedDock, page: string, expiresAt: Date | null = null) {
        yield* checkShare(resolved)
        const principal = yield* CurrentPrincipal
        const row = yield* pageOf(resolved, page)
        const now = yield* Clock.currentTimeMillis
        if (expiresAt !== null && !(expiresAt.getTime() > now)) {
          return yield* new ValidationError({
            message: "expires_at must be in the future",
            details: { field: "expires_at" }
          })
        }
        const secret = newShareSecret()
        const id = yield* repo.insert({
          dockId: resolved.dock.id,
          partId: row.id,
          secretHash: sha256(secret),
          createdBy: principal.userId!,
          createdAt: new Date(now),
          expiresAt
        })
        return new CreatedShareLink({
          id,
          url: shareUrl(baseUrl, secret),
          bucket_id: resolved.dock.id,
          page_id: row.id,
          expires_at: iso(expiresAt)
        })
      }
    )

    const list = traced("ShareLinks.list")(function*(resolved: ResolvedDock, page?: string) {
      yield* checkShare(resolved)
      const partId = page === undefined ? null : (yield* pageOf(resolved, page)).id
      const now = yield* Clock.currentTimeMillis
      return (yield* repo.list(resolved.dock.id, partId)).map((row) => toShareLink(row, now))
    })

    const found = (id: string) =>
      Effect.flatMap(
        isUuid(id) ? repo.byId(id.toLowerCase() as ShareLinkId) : Effect.succeed(undefined),
        (row) => row === undefined ? Effect.fail(noLink()) : Effect.succeed(row)
      )

    const revokeRow = (row: ShareLinkRow) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const revoked = yield* repo.revoke(row.id, new Date(now))
        if (revoked === undefined) return yield* noLink()
        return toShareLink(revoked, now)
      })

    const revoke = traced("ShareLinks.revoke")(function*(id: string) {
      const row = yield* found(id)
      // Not visible ≡ not existing: a Dock the caller cannot read answers as if the link did not exist.
      const resolved = yield* docks.byId(row.dock_id).pipe(Effect.mapError(noLink))
      yield* checkShare(resolved)
      return yield* revokeRow(row)
    })

    const revokeAsOperator = traced("ShareLinks.revokeAsOperator")(function*(id: string) {
      return yield* revokeRow(yield* found(id))
    })

    const open = traced("ShareLinks.open")(function*(secret: string) {
      if (!isWellFormedShareSecret(secret)) return yield* closed()
      const now = yield* Clock.currentTimeMillis
      const partId = yield* repo.livePage(sha256(secret), new Date(now))
      if (partId === undefined) return yield* closed()
      return yield* pages.view({ sharedPageId: partId }).pipe(
        Effect.provideService(CurrentPrincipal, anonymousPrincipal),
        Effect.mapError((error) => error._tag === "NotFound" ? closed() : error)
      )
    })

    return { create, list, revoke, revokeAsOperator, open }
  })
)
