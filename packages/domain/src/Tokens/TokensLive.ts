/** Token rules: the secret format, hashing, scopes, Dock restrictions, expiry and revocation. */
import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer, Schema } from "effect"
import { NotFound, Unauthorized, ValidationError } from "../Errors.ts"
import { DockId, TokenId, UserId } from "../Ids.ts"
import type { Principal, Scope } from "../Principal.ts"
import { isWellFormedToken, newToken, sha256 } from "../Secrets.ts"
import { CreatedToken, LABEL_MAX, TokenInfo, type TokenKind } from "./Token.ts"
import { type NewToken, Tokens } from "./Tokens.ts"

/** A token row: TokenInfo's fields with the timestamps as the Dates pg returns. */
const TokenRow = Schema.Struct({
  ...TokenInfo.fields,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  last_used_at: Schema.NullOr(Schema.DateFromSelf)
})
type TokenRow = typeof TokenRow.Type

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

export const toTokenInfo = (row: TokenRow) =>
  new TokenInfo({
    ...row,
    created_at: row.created_at.toISOString(),
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
    last_used_at: iso(row.last_used_at)
  })

/** A write-scoped token also reads. */
const normalizeScopes = (scopes: ReadonlyArray<Scope>): ReadonlyArray<Scope> =>
  scopes.includes("mcp:write") ? ["mcp:read", "mcp:write"] : ["mcp:read"]

const LAST_USED_RESOLUTION = Duration.minutes(1)

export const TokensLive = Layer.effect(
  Tokens,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const decodeRows = Schema.decodeUnknown(Schema.Array(TokenRow))
    const columns = sql`id, user_id, label, kind, scopes, allowed_bucket_ids, created_at, expires_at, revoked_at,
      last_used_at`

    const create = Effect.fn("Tokens.create")(function*(input: NewToken) {
      const label = input.label?.trim() || null
      if (label !== null && label.length > LABEL_MAX) {
        return yield* new ValidationError({ message: `label is longer than ${LABEL_MAX} characters`, details: { field: "label" } })
      }
      const scopes = normalizeScopes(input.scopes ?? ["mcp:write"])
      const now = new Date(yield* Clock.currentTimeMillis)
      if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
        return yield* new ValidationError({ message: "expires_at must be in the future", details: { field: "expires_in" } })
      }
      const secret = newToken()
      const allowed = input.allowedBucketIds == null ? null : [...new Set(input.allowedBucketIds)]
      const rows = yield* sql`insert into tokens (user_id, secret_hash, label, kind, scopes, allowed_bucket_ids, created_at,
          expires_at)
        values (${input.userId}, ${sha256(secret)}, ${label}, ${input.kind}, ${[...scopes]}::text[],
          ${allowed}::uuid[], ${now}, ${input.expiresAt ?? null})
        returning ${columns}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
      const row = rows[0]!
      return new CreatedToken({
        id: row.id,
        token: secret,
        label: row.label,
        scopes: row.scopes,
        allowed_bucket_ids: row.allowed_bucket_ids,
        expires_at: iso(row.expires_at)
      })
    })

    const list = Effect.fn("Tokens.list")(function*(userId?: UserId) {
      const rows = yield* (userId === undefined
        ? sql`select ${columns} from tokens order by created_at, id`
        : sql`select ${columns} from tokens where user_id = ${userId} order by created_at, id`).pipe(
          Effect.flatMap(decodeRows),
          Effect.orDie
        )
      return rows.map(toTokenInfo)
    })

    const revoke = Effect.fn("Tokens.revoke")(function*(id: string) {
      if (!Schema.is(TokenId)(id)) return yield* new NotFound({ message: "Token not found" })
      const now = new Date(yield* Clock.currentTimeMillis)
      const rows = yield* sql`update tokens set revoked_at = coalesce(revoked_at, ${now}) where id = ${id}
        returning ${columns}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
      if (rows[0] === undefined) return yield* new NotFound({ message: "Token not found" })
      return toTokenInfo(rows[0])
    })

    const invalid = () => new Unauthorized({ message: "The bearer token is invalid, revoked or expired" })

    const authenticate = Effect.fn("Tokens.authenticate")(function*(secret: string) {
      if (!isWellFormedToken(secret)) return yield* invalid()
      const now = new Date(yield* Clock.currentTimeMillis)
      const rows = yield* sql<{
        id: TokenId
        user_id: UserId
        username: string
        label: string | null
        kind: TokenKind
        scopes: ReadonlyArray<Scope>
        allowed_bucket_ids: ReadonlyArray<DockId> | null
        expires_at: Date | null
        revoked_at: Date | null
        last_used_at: Date | null
      }>`select t.id, t.user_id, u.username, t.label, t.kind, t.scopes, t.allowed_bucket_ids, t.expires_at,
          t.revoked_at, t.last_used_at
        from tokens t join users u on u.id = t.user_id
        where t.secret_hash = ${sha256(secret)}`.pipe(Effect.orDie)
      const token = rows[0]
      if (token === undefined || token.revoked_at !== null) return yield* invalid()
      if (token.expires_at !== null && token.expires_at.getTime() <= now.getTime()) return yield* invalid()
      if (token.last_used_at === null || now.getTime() - token.last_used_at.getTime() >= Duration.toMillis(LAST_USED_RESOLUTION)) {
        // The condition in SQL keeps concurrent requests from each writing the same minute.
        yield* sql`update tokens set last_used_at = ${now} where id = ${token.id}
          and (last_used_at is null or last_used_at <= ${new Date(now.getTime() - Duration.toMillis(LAST_USED_RESOLUTION))})`
          .pipe(Effect.orDie)
      }
      const principal: Principal = {
        userId: token.user_id,
        username: token.username,
        tokenId: token.id,
        scopes: token.scopes,
        allowedBucketIds: token.allowed_bucket_ids,
        sandbox: token.kind === "anonymous",
        agentLabel: token.label
      }
      return principal
    })

    return { create, list, revoke, authenticate }
  })
)
