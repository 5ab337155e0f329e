/**
 * What `dock share` asks for (admin API): the operator acts for the Dock's owner, so the owner's rules hold (an
 * unclaimed sandbox Dock still gets no links). The Dock by id or `owner/slug`; the expiry as a Duration string.
 */
import { Clock, Duration, Effect } from "effect"
import { Docks } from "../Docks/Docks.ts"
import { CurrentPrincipal, userPrincipal } from "../Principal.ts"
import { traced } from "../Spans.ts"
import { parseExpiresIn } from "../Tokens/OperatorTokens.ts"
import type { CreateShareLinkRequest } from "./ShareLink.ts"
import { ShareLinks } from "./ShareLinks.ts"

/** The Dock as its owner resolves it, and that owner as the principal to act as. */
const asOwner = (dockName: string) =>
  Effect.gen(function*() {
    const docks = yield* Docks
    const dock = yield* docks.forOperator(dockName)
    const principal = userPrincipal(dock.owner)
    const resolved = yield* docks.byId(dock.id).pipe(Effect.provideService(CurrentPrincipal, principal))
    return { resolved, principal }
  })

export const createOperatorShareLink = traced("ShareLinks.createForOperator")(
  function*(request: CreateShareLinkRequest) {
    const shareLinks = yield* ShareLinks
    const { principal, resolved } = yield* asOwner(request.dock)
    const expiresAt = request.expires_in === undefined ? null : yield* Effect.map(
      Effect.zip(parseExpiresIn(request.expires_in), Clock.currentTimeMillis),
      ([duration, now]) => new Date(now + Duration.toMillis(duration))
    )
    return yield* shareLinks.create(resolved, request.page, expiresAt).pipe(
      Effect.provideService(CurrentPrincipal, principal),
      // The owner's principal has a user: `unauthorized` (no caller) cannot happen here.
      Effect.catchTag("Unauthorized", (error) => Effect.die(error))
    )
  }
)

export const listOperatorShareLinks = traced("ShareLinks.listForOperator")(
  function*(dockName: string, page: string | undefined) {
    const shareLinks = yield* ShareLinks
    const { principal, resolved } = yield* asOwner(dockName)
    return yield* shareLinks.list(resolved, page).pipe(
      Effect.provideService(CurrentPrincipal, principal),
      // The owner's principal has a user: `unauthorized` (no caller) cannot happen here.
      Effect.catchTag("Unauthorized", (error) => Effect.die(error))
    )
  }
)
