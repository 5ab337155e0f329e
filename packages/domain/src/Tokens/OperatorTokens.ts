/**
 * What `dock tokens create` asks for, turned into a token: the user named by email, username or id; each Dock
 * by id or `owner/slug`, and only Docks that user may write; the expiry as a Duration string.
 */
import { Clock, Duration, Effect, Option } from "effect"
import { Accounts } from "../Accounts/Accounts.ts"
import { Docks } from "../Docks/Docks.ts"
import { NotFound, ValidationError } from "../Errors.ts"
import type { UserId } from "../Ids.ts"
import { checkWrite } from "../Policy.ts"
import { CurrentPrincipal, userPrincipal } from "../Principal.ts"
import { traced } from "../Spans.ts"
import type { CreateTokenRequest } from "./Token.ts"
import { Tokens } from "./Tokens.ts"

export const parseExpiresIn = (value: string) =>
  Option.match(Duration.decodeUnknown(value.trim()), {
    onNone: () =>
      Effect.fail(
        new ValidationError({
          message: `expires_in must be a duration such as "90 days" or "12 hours", not "${value}"`,
          details: { field: "expires_in" }
        })
      ),
    onSome: (duration) =>
      Duration.toMillis(duration) > 0 && Duration.isFinite(duration)
        ? Effect.succeed(duration)
        : Effect.fail(
          new ValidationError({ message: "expires_in must be a positive duration", details: { field: "expires_in" } })
        )
  })

/** The user named by email, username or id, as operators type them. */
const findUser = (identifier: string) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return yield* accounts.findByIdentifier(identifier).pipe(
      Effect.catchTag("NotFound", () => accounts.findById(identifier as UserId)),
      Effect.mapError(() => new NotFound({ message: `No user "${identifier}"`, details: { field: "user" } }))
    )
  })

/** `dock tokens list [--user U]`: every token, or one user's, never with secrets. */
export const listOperatorTokens = traced("Tokens.listForOperator")(function*(user: string | undefined) {
  const tokens = yield* Tokens
  if (user === undefined) return yield* tokens.list()
  return yield* tokens.list((yield* findUser(user)).id)
})

export const issueOperatorToken = traced("Tokens.issueForOperator")(function*(request: CreateTokenRequest) {
  const docks = yield* Docks
  const tokens = yield* Tokens
  const user = yield* findUser(request.user)
  const principal = userPrincipal(user)
  const allowed = request.docks === undefined || request.docks.length === 0 ?
    null :
    yield* Effect.forEach(request.docks, (name) =>
      Effect.gen(function*() {
        const { access } = yield* docks.named({ bucket: name })
        yield* checkWrite(principal, access)
        return access.dockId
      }).pipe(
        Effect.provideService(CurrentPrincipal, principal),
        Effect.mapError(() =>
          new ValidationError({
            message: `${user.username} cannot write to a Dock "${name}"`,
            details: { field: "docks", value: name }
          })
        )
      ))
  const expiresAt = request.expires_in === undefined ? null : yield* Effect.gen(function*() {
    const duration = yield* parseExpiresIn(request.expires_in!)
    return new Date((yield* Clock.currentTimeMillis) + Duration.toMillis(duration))
  })
  return yield* tokens.create({
    userId: user.id,
    label: request.label,
    kind: "personal",
    scopes: request.scopes,
    allowedBucketIds: allowed,
    expiresAt
  })
})
