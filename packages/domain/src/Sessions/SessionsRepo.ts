/** Sign-in codes and sessions: SQL in, typed rows out; SqlError is a defect here. */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { UserId } from "../Ids.ts"

const CodeRow = Schema.Struct({
  id: Schema.UUID,
  code_hash: Schema.String,
  expires_at: Schema.DateFromSelf,
  wrong_tries: Schema.Number
})

const PersonRow = Schema.Struct({ id: UserId, username: Schema.String, kind: Schema.String })

const SessionRow = Schema.Struct({
  id: Schema.UUID,
  user_id: UserId,
  username: Schema.String,
  email: Schema.NullOr(Schema.String),
  expires_at: Schema.DateFromSelf
})

export const makeSessionsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const latestOpenCode = SqlSchema.findOne({
    Request: Schema.String,
    Result: CodeRow,
    execute: (email) =>
      sql`select id, code_hash, expires_at, wrong_tries from sign_in_codes
        where email = ${email} and used_at is null and voided_at is null
        order by created_at desc limit 1 for update`
  })

  const personByEmail = SqlSchema.findOne({
    Request: Schema.String,
    Result: PersonRow,
    execute: (email) => sql`select id, username, kind from users where email = ${email} for update`
  })

  const authenticate = SqlSchema.findOne({
    Request: Schema.Struct({ hash: Schema.String, now: Schema.DateFromSelf }),
    Result: SessionRow,
    execute: ({ hash, now }) =>
      sql`with s as (
          update sessions set last_seen_at = ${now}
          where id_hash = ${hash} and revoked_at is null and expires_at > ${now}
          returning id, user_id, expires_at)
        select s.id, s.user_id, u.username, u.email, s.expires_at from s join users u on u.id = s.user_id`
  })

  return {
    voidOpenCodes: (email: string, at: Date) =>
      sql`update sign_in_codes set voided_at = ${at}
        where email = ${email} and used_at is null and voided_at is null`.pipe(Effect.asVoid, Effect.orDie),
    insertCode: (row: { email: string; codeHash: string; createdAt: Date; expiresAt: Date }) =>
      sql`insert into sign_in_codes (email, code_hash, created_at, expires_at)
        values (${row.email}, ${row.codeHash}, ${row.createdAt}, ${row.expiresAt})`.pipe(Effect.asVoid, Effect.orDie),
    latestOpenCode: (email: string) => Effect.orDie(latestOpenCode(email)),
    countWrongTry: (id: string) =>
      sql`update sign_in_codes set wrong_tries = wrong_tries + 1 where id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
    markCodeUsed: (id: string, at: Date) =>
      sql`update sign_in_codes set used_at = ${at} where id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
    personByEmail: (email: string) => Effect.orDie(personByEmail(email)),
    confirmUser: (id: UserId, at: Date) =>
      sql`update users set confirmed = true, updated_at = ${at} where id = ${id} and not confirmed`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    insertSession: (row: { hash: string; userId: UserId; createdAt: Date; expiresAt: Date }) =>
      sql`insert into sessions (id_hash, user_id, created_at, expires_at, last_seen_at)
        values (${row.hash}, ${row.userId}, ${row.createdAt}, ${row.expiresAt}, ${row.createdAt})`.pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    authenticate: (hash: string, now: Date) => Effect.orDie(authenticate({ hash, now })),
    sweep: (before: Date) =>
      Effect.gen(function*() {
        const sessions = yield* sql<{ id: string }>`delete from sessions
          where expires_at < ${before} or revoked_at < ${before} returning id`
        yield* sql`delete from sign_in_codes where expires_at < ${before}`
        return sessions.length
      }).pipe(Effect.orDie),
    revoke: (hash: string, at: Date) =>
      sql`update sessions set revoked_at = ${at} where id_hash = ${hash} and revoked_at is null`.pipe(
        Effect.asVoid,
        Effect.orDie
      )
  }
})
