/**
 * The ShareLinks port (issue 16, item 7). The owner's side acts as the CurrentPrincipal on a Dock the one resolver
 * found (the web app: a session's principal; the admin API: the Dock's owner, for whom the operator acts): only the
 * Dock's owner, with a writing principal, never a sandbox token, never on an unclaimed sandbox Dock. `open` is the
 * public side of `/s/<secret>`: any unknown, revoked or expired secret is the same `not_found`.
 */
import { Context, type Effect } from "effect"
import type { ResolvedDock } from "../Docks/Docks.ts"
import type { NotFound, PermissionDenied, Unauthorized, Unavailable, ValidationError } from "../Errors.ts"
import type { PageView } from "../Pages/Part.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { CreatedShareLink, ShareLink } from "./ShareLink.ts"

export type ShareLinkError = NotFound | Unauthorized | PermissionDenied | ValidationError

export class ShareLinks extends Context.Tag("@dock/domain/ShareLinks")<ShareLinks, {
  /**
   * A new link to the Dock's page (by UUID or slug; private pages too), live until revoked or until `expiresAt`
   * (which must be in the future). The answer's `url` holds the secret: it is shown this once.
   */
  readonly create: (
    dock: ResolvedDock,
    page: string,
    expiresAt?: Date | null
  ) => Effect.Effect<CreatedShareLink, ShareLinkError, CurrentPrincipal>
  /** The Dock's links, newest first (revoked and expired ones too, with their status); with `page`, that page's. */
  readonly list: (
    dock: ResolvedDock,
    page?: string
  ) => Effect.Effect<ReadonlyArray<ShareLink>, ShareLinkError, CurrentPrincipal>
  /**
   * Revokes a link by id at once (revoking a revoked link answers it unchanged). A link the caller does not own
   * the Dock of is `not_found` or `permission_denied`, as the policy says.
   */
  readonly revoke: (id: string) => Effect.Effect<ShareLink, ShareLinkError, CurrentPrincipal>
  /** The operator's revoke (admin API): any link by id, no policy. */
  readonly revokeAsOperator: (id: string) => Effect.Effect<ShareLink, NotFound>
  /** `/s/<secret>`: the linked page rendered and sanitized, while the link is live; else `not_found`. */
  readonly open: (secret: string) => Effect.Effect<PageView, NotFound | Unavailable>
}>() {}
