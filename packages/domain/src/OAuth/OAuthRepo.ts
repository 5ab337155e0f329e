/** OAuth rows: clients, grants, codes and refresh tokens. SQL in, typed rows out; SqlError is a defect here. */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { DockId, UserId } from "../Ids.ts"
import { TokenScope } from "../Tokens/Token.ts"

export const ClientRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("registered", "metadata_document"),
  client_name: Schema.String,
  client_uri: Schema.NullOr(Schema.String),
  redirect_uris: Schema.Array(Schema.String),
  created_at: Schema.DateFromSelf,
  fetched_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ClientRow = typeof ClientRow.Type

export const GrantRow = Schema.Struct({
  id: Schema.UUID,
  user_id: UserId,
  client_id: Schema.String,
  client_name: Schema.String,
  client_uri: Schema.NullOr(Schema.String),
  scopes: Schema.Array(TokenScope),
  allowed_bucket_ids: Schema.NullOr(Schema.Array(DockId)),
  resource: Schema.String,
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})
export type GrantRow = typeof GrantRow.Type

const CodeRow = Schema.Struct({
  grant_id: Schema.UUID,
  client_id: Schema.String,
  redirect_uri: Schema.String,
  code_challenge: Schema.String,
  expires_at: Schema.DateFromSelf
})

const RefreshRow = Schema.Struct({
  grant_id: Schema.UUID,
  expires_at: Schema.DateFromSelf,
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})

export const makeOAuthRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const clientColumns = sql`id, kind, client_name, client_uri, redirect_uris, created_at, fetched_at`
  // A grant's last use is its own (a code or refresh exchange) or its newest access token's (set by /mcp).
  const grantSelect = sql`select g.id, g.user_id, g.client_id, c.client_name, c.client_uri, g.scopes,
      g.allowed_bucket_ids, g.resource, g.created_at,
      greatest(g.last_used_at, (select max(t.last_used_at) from tokens t where t.grant_id = g.id)) as last_used_at,
      g.revoked_at
    from oauth_grants g join oauth_clients c on c.id = g.client_id`

  const client = SqlSchema.findOne({
    Request: Schema.String,
    Result: ClientRow,
    execute: (id) => sql`select ${clientColumns} from oauth_clients where id = ${id}`
  })

  const grant = SqlSchema.findOne({
    Request: Schema.String,
    Result: GrantRow,
    execute: (id) => sql`${grantSelect} where g.id = ${id}`
  })

  const grantsOf = SqlSchema.findAll({
    Request: Schema.String,
    Result: GrantRow,
    execute: (userId) =>
      sql`${grantSelect} where g.user_id = ${userId} and g.revoked_at is null order by g.created_at desc, g.id`
  })

  // A spend is one conditional update: under READ COMMITTED a concurrent spend of the same row waits for this one
  // to commit, then finds `used_at` set and updates nothing. (Reading the old row in the same statement, as
  // `update … from <table> old` did, sees the snapshot from before the wait: both spends won.) The losers then look
  // the row up `for update`: each holds the spent row before it revokes the grant, so concurrent losers take the
  // row and then the grant in the winner's order, one after another, instead of deadlocking on each other.

  /** Spends an unused code: its row, now marked used; None when no unused code has this hash. */
  const spendCode = SqlSchema.findOne({
    Request: Schema.Struct({ hash: Schema.String, now: Schema.DateFromSelf }),
    Result: CodeRow,
    execute: ({ hash, now }) =>
      sql`update oauth_codes set used_at = ${now} where code_hash = ${hash} and used_at is null
        returning grant_id, client_id, redirect_uri, code_challenge, expires_at`
  })

  /** The grant of a code with this hash that was already spent: a replay. */
  const spentCodeGrant = SqlSchema.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ grant_id: Schema.UUID }),
    execute: (hash) =>
      sql`select grant_id from oauth_codes where code_hash = ${hash} and used_at is not null for update`
  })

  /** Spends an unused refresh token the same way: its row, now marked used. */
  const spendRefresh = SqlSchema.findOne({
    Request: Schema.Struct({ hash: Schema.String, now: Schema.DateFromSelf }),
    Result: RefreshRow,
    execute: ({ hash, now }) =>
      sql`update oauth_refresh_tokens set used_at = ${now} where secret_hash = ${hash} and used_at is null
        returning grant_id, expires_at, revoked_at`
  })

  /** The grant of a refresh token with this hash that was already spent: a reuse. */
  const spentRefreshGrant = SqlSchema.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ grant_id: Schema.UUID }),
    execute: (hash) =>
      sql`select grant_id from oauth_refresh_tokens where secret_hash = ${hash} and used_at is not null for update`
  })

  const refreshGrant = SqlSchema.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ grant_id: Schema.UUID }),
    execute: (hash) => sql`select grant_id from oauth_refresh_tokens where secret_hash = ${hash}`
  })

  const revokeGrant = (id: string, at: Date) =>
    Effect.gen(function*() {
      yield* sql`update oauth_grants set revoked_at = coalesce(revoked_at, ${at}) where id = ${id}`
      yield* sql`update tokens set revoked_at = coalesce(revoked_at, ${at}) where grant_id = ${id}`
      yield* sql`update oauth_refresh_tokens set revoked_at = coalesce(revoked_at, ${at}) where grant_id = ${id}`
    })

  return {
    client: (id: string) => Effect.orDie(client(id)),
    insertClient: (row: {
      id: string
      kind: "registered" | "metadata_document"
      clientName: string
      clientUri: string | null
      redirectUris: ReadonlyArray<string>
      at: Date
    }) =>
      sql`insert into oauth_clients (id, kind, client_name, client_uri, redirect_uris, created_at, fetched_at)
        values (${row.id}, ${row.kind}, ${row.clientName}, ${row.clientUri}, ${[...row.redirectUris]}::text[],
          ${row.at}, ${row.kind === "metadata_document" ? row.at : null})
        on conflict (id) do update set client_name = excluded.client_name, client_uri = excluded.client_uri,
          redirect_uris = excluded.redirect_uris, fetched_at = excluded.fetched_at`.pipe(Effect.asVoid, Effect.orDie),
    insertGrant: (row: {
      userId: UserId
      clientId: string
      scopes: ReadonlyArray<string>
      allowedBucketIds: ReadonlyArray<string> | null
      resource: string
      at: Date
    }) =>
      sql<
        { id: string }
      >`insert into oauth_grants (user_id, client_id, scopes, allowed_bucket_ids, resource, created_at)
        values (${row.userId}, ${row.clientId}, ${[...row.scopes]}::text[],
          ${row.allowedBucketIds === null ? null : [...row.allowedBucketIds]}::uuid[], ${row.resource}, ${row.at})
        returning id`.pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie),
    insertCode: (row: {
      hash: string
      grantId: string
      clientId: string
      redirectUri: string
      codeChallenge: string
      at: Date
      expiresAt: Date
    }) =>
      sql`insert into oauth_codes (code_hash, grant_id, client_id, redirect_uri, code_challenge, created_at, expires_at)
        values (${row.hash}, ${row.grantId}, ${row.clientId}, ${row.redirectUri}, ${row.codeChallenge}, ${row.at},
          ${row.expiresAt})`.pipe(Effect.asVoid, Effect.orDie),
    insertRefresh: (row: { hash: string; grantId: string; at: Date; expiresAt: Date }) =>
      sql`insert into oauth_refresh_tokens (secret_hash, grant_id, created_at, expires_at)
        values (${row.hash}, ${row.grantId}, ${row.at}, ${row.expiresAt})`.pipe(Effect.asVoid, Effect.orDie),
    grant: (id: string) => Effect.orDie(grant(id)),
    grantsOf: (userId: UserId) => Effect.orDie(grantsOf(userId)),
    spendCode: (hash: string, now: Date) => Effect.orDie(spendCode({ hash, now })),
    spendRefresh: (hash: string, now: Date) => Effect.orDie(spendRefresh({ hash, now })),
    spentCodeGrant: (hash: string) => Effect.map(Effect.orDie(spentCodeGrant(hash)), Option.map((row) => row.grant_id)),
    spentRefreshGrant: (hash: string) =>
      Effect.map(Effect.orDie(spentRefreshGrant(hash)), Option.map((row) => row.grant_id)),
    refreshGrant: (hash: string) => Effect.map(Effect.orDie(refreshGrant(hash)), Option.map((row) => row.grant_id)),
    touch: (grantId: string, clientId: string, at: Date) =>
      Effect.gen(function*() {
        yield* sql`update oauth_grants set last_used_at = ${at} where id = ${grantId}`
        yield* sql`update oauth_clients set last_used_at = ${at} where id = ${clientId}`
      }).pipe(Effect.orDie),
    revokeGrant: (id: string, at: Date) => Effect.orDie(revokeGrant(id, at)),
    /** Revokes an OAuth access token by hash; answers its grant's client (to check who asks), if any. */
    revokeAccessToken: (hash: string, at: Date, clientId: string | undefined) =>
      sql`update tokens t set revoked_at = coalesce(t.revoked_at, ${at}) from oauth_grants g
        where t.secret_hash = ${hash} and t.kind = 'oauth' and g.id = t.grant_id
          and (${clientId ?? null}::text is null or g.client_id = ${clientId ?? null})`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    sweep: (times: { before: Date; unusedClientsBefore: Date; metadataFetchedBefore: Date }) =>
      Effect.gen(function*() {
        const { before, metadataFetchedBefore, unusedClientsBefore } = times
        yield* sql`delete from oauth_codes where expires_at < ${before}`
        // Spent refresh tokens stay until they expire: a reuse must still be recognised (and revoke the grant).
        yield* sql`delete from oauth_refresh_tokens where expires_at < ${before} or revoked_at < ${before}`
        const grants = yield* sql<{ id: string }>`delete from oauth_grants where revoked_at < ${before} returning id`
        yield* sql`delete from oauth_clients c where c.kind = 'registered' and c.last_used_at is null
          and c.created_at < ${unusedClientsBefore}
          and not exists (select 1 from oauth_grants g where g.client_id = c.id)`
        // A metadata document's row is only a cache once no grant names it; a stale cache is fetched again anyway.
        yield* sql`delete from oauth_clients c where c.kind = 'metadata_document'
          and (c.fetched_at is null or c.fetched_at < ${metadataFetchedBefore})
          and not exists (select 1 from oauth_grants g where g.client_id = c.id)`
        return grants.length
      }).pipe(Effect.orDie)
  }
})
