/** Token rows: SQL in, typed rows out. SqlError is a defect here; absence is an Option. */
import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"
import { DockId, TokenId, UserId } from "../Ids.ts"
import type { Scope } from "../Principal.ts"
import { TokenInfo, TokenKind, TokenScope } from "./Token.ts"

/** A token row: TokenInfo's fields with the timestamps as the Dates pg returns. */
export const TokenRow = Schema.Struct({
  ...TokenInfo.fields,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  last_used_at: Schema.NullOr(Schema.DateFromSelf)
})
export type TokenRow = typeof TokenRow.Type

/** What authenticating a bearer secret needs: the token's rights, its times, and its user's name. */
export const BearerRow = Schema.Struct({
  id: TokenId,
  user_id: UserId,
  username: Schema.String,
  label: Schema.NullOr(Schema.String),
  kind: TokenKind,
  scopes: Schema.Array(TokenScope),
  allowed_bucket_ids: Schema.NullOr(Schema.Array(DockId)),
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  last_used_at: Schema.NullOr(Schema.DateFromSelf)
})
export type BearerRow = typeof BearerRow.Type

export interface InsertToken {
  readonly userId: UserId
  readonly secretHash: string
  readonly label: string | null
  readonly kind: TokenKind
  readonly scopes: ReadonlyArray<Scope>
  readonly allowedBucketIds: ReadonlyArray<DockId> | null
  readonly createdAt: Date
  readonly expiresAt: Date | null
}

export const makeTokensRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const columns = sql`id, user_id, label, kind, scopes, allowed_bucket_ids, created_at, expires_at, revoked_at,
      last_used_at`

  const decodeToken = Schema.decodeUnknown(TokenRow)
  const insert = (token: InsertToken) =>
    sql`insert into tokens (user_id, secret_hash, label, kind, scopes, allowed_bucket_ids, created_at, expires_at)
      values (${token.userId}, ${token.secretHash}, ${token.label}, ${token.kind}, ${[...token.scopes]}::text[],
        ${token.allowedBucketIds === null ? null : [...token.allowedBucketIds]}::uuid[], ${token.createdAt},
        ${token.expiresAt})
      returning ${columns}`.pipe(Effect.flatMap((rows) => decodeToken(rows[0])))

  const listAll = SqlSchema.findAll({
    Request: Schema.Void,
    Result: TokenRow,
    execute: () => sql`select ${columns} from tokens order by created_at, id`
  })

  const listOfUser = SqlSchema.findAll({
    Request: UserId,
    Result: TokenRow,
    execute: (userId) => sql`select ${columns} from tokens where user_id = ${userId} order by created_at, id`
  })

  /** Revoking twice keeps the first revocation time. */
  const revoke = SqlSchema.findOne({
    Request: Schema.Struct({ id: TokenId, at: Schema.DateFromSelf }),
    Result: TokenRow,
    execute: ({ at, id }) =>
      sql`update tokens set revoked_at = coalesce(revoked_at, ${at}) where id = ${id} returning ${columns}`
  })

  const findBySecretHash = SqlSchema.findOne({
    Request: Schema.String,
    Result: BearerRow,
    execute: (secretHash) =>
      sql`select t.id, t.user_id, u.username, t.label, t.kind, t.scopes, t.allowed_bucket_ids, t.expires_at,
          t.revoked_at, t.last_used_at
        from tokens t join users u on u.id = t.user_id
        where t.secret_hash = ${secretHash}`
  })

  /** The condition in SQL keeps concurrent requests from each writing the same minute. */
  const recordUse = (id: TokenId, at: Date, unlessUsedSince: Date) =>
    sql`update tokens set last_used_at = ${at} where id = ${id}
      and (last_used_at is null or last_used_at <= ${unlessUsedSince})`.pipe(Effect.asVoid)

  return {
    insert: (token: InsertToken) => Effect.orDie(insert(token)),
    list: (userId?: UserId) => Effect.orDie(userId === undefined ? listAll(undefined) : listOfUser(userId)),
    revoke: (id: TokenId, at: Date) => Effect.orDie(revoke({ id, at })),
    findBySecretHash: (secretHash: string) => Effect.orDie(findBySecretHash(secretHash)),
    recordUse: (id: TokenId, at: Date, unlessUsedSince: Date) => Effect.orDie(recordUse(id, at, unlessUsedSince))
  } as const
})
