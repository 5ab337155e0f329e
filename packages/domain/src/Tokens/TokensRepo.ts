/** Token rows: SQL in, typed rows out. SqlError is a defect here; absence is an Option. */
import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Option, Schema } from "effect"
import { DockId, TokenId, UserId } from "../Ids.ts"
import type { Scope } from "../Principal.ts"
import { hitStatement } from "../RateLimits/RateLimitsRepo.ts"
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

/** What authenticating a bearer secret needs: the token's rights and its user's name (and its request count). */
export const BearerRow = Schema.Struct({
  id: TokenId,
  user_id: UserId,
  username: Schema.String,
  label: Schema.NullOr(Schema.String),
  kind: TokenKind,
  scopes: Schema.Array(TokenScope),
  allowed_bucket_ids: Schema.NullOr(Schema.Array(DockId)),
  /** The window's count after this request; null when it was not counted. */
  requests: Schema.NullOr(Schema.Number)
})
export type BearerRow = typeof BearerRow.Type

/** One bearer check: the secret's hash, the time, and the request count to add (see TokensRepo.authenticate). */
export interface BearerCheck {
  readonly secretHash: string
  readonly now: Date
  /** `last_used_at` is set to `now` unless it is already later than this. */
  readonly usedUnlessSince: Date
  /** The resource this request is for: a token bound to another audience (OAuth) matches no row. */
  readonly audience: string | undefined
  readonly count:
    | {
      readonly keyPrefix: string
      readonly windowStart: Date
      readonly hits: number
      readonly durable: boolean
    }
    | undefined
}

export interface InsertToken {
  readonly userId: UserId
  readonly secretHash: string
  readonly label: string | null
  readonly kind: TokenKind
  readonly scopes: ReadonlyArray<Scope>
  readonly allowedBucketIds: ReadonlyArray<DockId> | null
  readonly createdAt: Date
  readonly expiresAt: Date | null
  /** OAuth access tokens: the grant they were issued under and the resource they are for. */
  readonly grantId?: string | null
  readonly audience?: string | null
}

export const makeTokensRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const columns = sql`id, user_id, label, kind, scopes, allowed_bucket_ids, created_at, expires_at, revoked_at,
      last_used_at`

  const decodeToken = Schema.decodeUnknown(TokenRow)
  const insert = (token: InsertToken) =>
    sql`insert into tokens (user_id, secret_hash, label, kind, scopes, allowed_bucket_ids, created_at, expires_at,
        grant_id, audience)
      values (${token.userId}, ${token.secretHash}, ${token.label}, ${token.kind}, ${[...token.scopes]}::text[],
        ${token.allowedBucketIds === null ? null : [...token.allowedBucketIds]}::uuid[], ${token.createdAt},
        ${token.expiresAt}, ${token.grantId ?? null}::uuid, ${token.audience ?? null})
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

  /** Revoking twice keeps the first revocation time. With `owner`, only that user's token matches. */
  const revoke = SqlSchema.findOne({
    Request: Schema.Struct({ id: TokenId, at: Schema.DateFromSelf, owner: Schema.NullOr(UserId) }),
    Result: TokenRow,
    execute: ({ at, id, owner }) =>
      sql`update tokens set revoked_at = coalesce(revoked_at, ${at})
        where id = ${id} ${owner === null ? sql`` : sql`and user_id = ${owner}`} returning ${columns}`
  })

  /** The owner's live token (unrevoked, unexpired at `now`), locked until the transaction ends: rotation's first step. */
  const lockLive = SqlSchema.findOne({
    Request: Schema.Struct({ id: TokenId, owner: UserId, now: Schema.DateFromSelf }),
    Result: TokenRow,
    execute: ({ id, now, owner }) =>
      sql`select ${columns} from tokens where id = ${id} and user_id = ${owner} and revoked_at is null
        and (expires_at is null or expires_at > ${now}) for update`
  })

  /**
   * The whole bearer check in one statement: the live token (not revoked, not expired at `now`) with its user's
   * name; `last_used_at` set when it is older than a minute (the only durable write, once a minute: a concurrent
   * check finds it set and writes nothing); and, with `count`, the request added to the token's counter (RateLimits'
   * upsert, in the same statement), answering the window's count. An unknown, revoked or expired token matches no
   * row: nothing is written or counted for it.
   */
  const decodeBearers = Schema.decodeUnknown(Schema.Array(BearerRow))
  const authenticate = (check: BearerCheck) =>
    sql`/* prepared */ with bearer as (
        select t.id, t.user_id, u.username, t.label, t.kind, t.scopes, t.allowed_bucket_ids
        from tokens t join users u on u.id = t.user_id
        where t.secret_hash = ${check.secretHash} and t.revoked_at is null
          and (t.expires_at is null or t.expires_at > ${check.now})
          and (t.audience is null or t.audience = ${check.audience ?? null})
      ), used as (
        update tokens set last_used_at = ${check.now} where id = (select id from bearer)
          and (last_used_at is null or last_used_at <= ${check.usedUnlessSince})
      )${
      check.count === undefined ? sql`` : sql`, counted as (${
        hitStatement(
          sql,
          sql`select ${check.count.keyPrefix}::text || id::text from bearer`,
          check.count.windowStart,
          check.count.hits,
          check.count.durable
        )
      })`
    }
      select bearer.*, ${check.count === undefined ? sql`null::int` : sql`(select count from counted)`} as requests
      from bearer`.pipe(
      Effect.flatMap((rows) => Effect.map(decodeBearers(rows), (found) => found[0])),
      Effect.map(Option.fromNullable)
    )

  return {
    insert: (token: InsertToken) => Effect.orDie(insert(token)),
    list: (userId?: UserId) => Effect.orDie(userId === undefined ? listAll(undefined) : listOfUser(userId)),
    revoke: (id: TokenId, at: Date, owner: UserId | null = null) => Effect.orDie(revoke({ id, at, owner })),
    lockLive: (id: TokenId, owner: UserId, now: Date) => Effect.orDie(lockLive({ id, owner, now })),
    authenticate: (check: BearerCheck) => Effect.orDie(authenticate(check))
  } as const
})
