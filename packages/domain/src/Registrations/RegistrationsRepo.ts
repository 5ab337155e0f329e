/**
 * Registration rows and their OTP codes: SQL in, typed rows out; SqlError is a defect here. A registration's
 * lifecycle also moves rows it does not own, inside the same transaction: the anonymous user it creates, the
 * sandbox Dock's owner and visibility, and the sandbox token's holder and revocation. Those statements are here
 * too, named for what the lifecycle does to them.
 */
import { type SqlError, SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Schema } from "effect"
import { DockId, RegistrationId, TokenId, UserId } from "../Ids.ts"
import { SandboxStatus } from "./Registration.ts"

/** An arbitrary constant naming the sandbox sweep among advisory locks. */
const SWEEP_LOCK = 736_110_002

export const RegistrationRow = Schema.Struct({
  id: RegistrationId,
  kind: Schema.Literal("anonymous", "verified_email"),
  status: Schema.Literal("unclaimed", "otp_sent", "claimed", "expired"),
  user_id: Schema.NullOr(UserId),
  dock_id: Schema.NullOr(DockId),
  token_id: Schema.NullOr(TokenId),
  agent_label: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  expires_at: Schema.DateFromSelf
})
export type RegistrationRow = typeof RegistrationRow.Type

export const OtpCodeRow = Schema.Struct({
  id: Schema.UUID,
  email: Schema.String,
  code_hash: Schema.String,
  expires_at: Schema.DateFromSelf,
  wrong_tries: Schema.Number
})
export type OtpCodeRow = typeof OtpCodeRow.Type

const SandboxRow = Schema.Struct({
  status: SandboxStatus,
  bucket_id: Schema.NullOr(DockId),
  bucket_slug: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
})

/** What the sweep needs of a registration it expires or purges. */
const SweptRow = Schema.Struct({
  id: RegistrationId,
  kind: Schema.Literal("anonymous", "verified_email"),
  user_id: Schema.NullOr(UserId),
  dock_id: Schema.NullOr(DockId),
  token_id: Schema.NullOr(TokenId)
})
export type SweptRow = typeof SweptRow.Type

const UserNameRow = Schema.Struct({ id: UserId, username: Schema.String })

export interface InsertAnonymousRegistration {
  readonly secretHash: string
  readonly userId: UserId
  readonly dockId: DockId
  readonly tokenId: TokenId
  readonly agentLabel: string
  readonly requesterIp: string
  readonly createdAt: Date
  readonly expiresAt: Date
}

export interface InsertVerifiedEmailRegistration {
  readonly secretHash: string
  readonly agentLabel: string | null
  readonly requesterIp: string
  readonly email: string
  readonly createdAt: Date
  readonly expiresAt: Date
}

export interface InsertOtpCode {
  readonly registrationId: RegistrationId
  readonly email: string
  readonly codeHash: string
  readonly createdAt: Date
  readonly expiresAt: Date
}

export const makeRegistrationsRepo = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient

  // Registrations

  const insertAnonymous = (row: InsertAnonymousRegistration) =>
    sql`insert into registrations (secret_hash, kind, status, user_id, dock_id, token_id, agent_label, requester_ip,
        created_at, expires_at)
      values (${row.secretHash}, 'anonymous', 'unclaimed', ${row.userId}, ${row.dockId}, ${row.tokenId},
        ${row.agentLabel}, ${row.requesterIp}, ${row.createdAt}, ${row.expiresAt})`

  const insertVerifiedEmail = (row: InsertVerifiedEmailRegistration) =>
    sql<{ id: RegistrationId }>`insert into registrations (secret_hash, kind, status, agent_label, requester_ip, email,
        created_at, expires_at)
      values (${row.secretHash}, 'verified_email', 'unclaimed', ${row.agentLabel}, ${row.requesterIp}, ${row.email},
        ${row.createdAt}, ${row.expiresAt})
      returning id`.pipe(Effect.map((rows) => rows[0]!.id))

  /** The registration behind a claim token's hash, locked until the transaction ends. */
  const lockBySecretHash = SqlSchema.findOne({
    Request: Schema.String,
    Result: RegistrationRow,
    execute: (secretHash) =>
      sql`select id, kind, status, user_id, dock_id, token_id, agent_label, email, expires_at
        from registrations where secret_hash = ${secretHash} for update`
  })

  const markClaimed = (id: RegistrationId, claimedBy: UserId, at: Date) =>
    sql`update registrations set status = 'claimed', claimed_user_id = ${claimedBy}, claimed_at = ${at}
      where id = ${id}`

  /** A verified-email registration's credential, issued at claim-complete. */
  const recordIssuedToken = (id: RegistrationId, tokenId: TokenId) =>
    sql`update registrations set token_id = ${tokenId} where id = ${id}`

  const listSandboxes = SqlSchema.findAll({
    Request: Schema.UndefinedOr(SandboxStatus),
    Result: SandboxRow,
    execute: (status) =>
      sql`select r.status, r.dock_id as bucket_id, d.slug as bucket_slug, r.created_at, r.expires_at
        from registrations r left join docks d on d.id = r.dock_id
        where r.kind = 'anonymous' ${status === undefined ? sql`` : sql`and r.status = ${status}`}
        order by r.created_at, r.id`
  })

  // OTP codes

  /** Earlier codes of the registration stop working when a new one is sent. */
  const voidOpenCodes = (registrationId: RegistrationId, at: Date) =>
    sql`update otp_codes set voided_at = ${at}
      where registration_id = ${registrationId} and used_at is null and voided_at is null`

  const insertCode = (code: InsertOtpCode) =>
    sql`insert into otp_codes (registration_id, email, code_hash, created_at, expires_at)
      values (${code.registrationId}, ${code.email}, ${code.codeHash}, ${code.createdAt}, ${code.expiresAt})`

  /** The newest code neither used nor voided, locked until the transaction ends. */
  const lockLatestOpenCode = SqlSchema.findOne({
    Request: RegistrationId,
    Result: OtpCodeRow,
    execute: (registrationId) =>
      sql`select id, email, code_hash, expires_at, wrong_tries from otp_codes
        where registration_id = ${registrationId} and used_at is null and voided_at is null
        order by created_at desc limit 1 for update`
  })

  const countWrongTry = (codeId: string) => sql`update otp_codes set wrong_tries = wrong_tries + 1 where id = ${codeId}`

  const markCodeUsed = (codeId: string, at: Date) => sql`update otp_codes set used_at = ${at} where id = ${codeId}`

  // Users a registration creates or claims for

  const insertAnonymousUser = (username: string, at: Date) =>
    sql<{ id: UserId }>`insert into users (username, email, kind, confirmed, created_at, updated_at)
      values (${username}, null, 'anonymous', false, ${at}, ${at}) returning id`.pipe(Effect.map((rows) => rows[0]!.id))

  const setDefaultDock = (userId: UserId, dockId: DockId) =>
    sql`update users set default_dock_id = ${dockId} where id = ${userId}`

  /** The user with this email, locked until the transaction ends (two claims for one email queue up here). */
  const lockUserByEmail = SqlSchema.findOne({
    Request: Schema.String,
    Result: UserNameRow,
    execute: (email) => sql`select id, username from users where email = ${email} for update`
  })

  const findUserByEmail = SqlSchema.findOne({
    Request: Schema.String,
    Result: UserNameRow,
    execute: (email) => sql`select id, username from users where email = ${email}`
  })

  /** The code mailed to the address proved it. */
  const confirmUser = (id: UserId) => sql`update users set confirmed = true where id = ${id}`

  /** The anonymous user stays (earlier activity is attributed to it) but no longer points at its claimed Dock. */
  const detachAnonymousUser = (id: UserId | null) =>
    sql`update users set default_dock_id = null where id = ${id} and kind = 'anonymous'`

  // The sandbox Dock and its token

  const startDockUsage = (dockId: DockId) => sql`insert into dock_usage (dock_id) values (${dockId})`

  /** The sandbox becomes an ordinary Dock of the person who claimed it. */
  const handDockToClaimant = (dockId: DockId | null, ownerId: UserId, at: Date) =>
    sql`update docks set owner_id = ${ownerId}, sandbox = false, updated_at = ${at} where id = ${dockId}`

  /** The very token the agent holds moves to the person, with the expiry of a claimed token. */
  const handTokenToClaimant = (tokenId: TokenId | null, userId: UserId, expiresAt: Date) =>
    sql`update tokens set user_id = ${userId}, kind = 'claimed_from_anonymous', expires_at = ${expiresAt}
      where id = ${tokenId}`

  // The sweep

  /** One sweep at a time across all instances: the periodic job and `dock sandboxes sweep` queue up here. */
  const lockSweep = sql`select pg_advisory_xact_lock(${SWEEP_LOCK})`

  const expireUnclaimed = SqlSchema.findAll({
    Request: Schema.DateFromSelf,
    Result: SweptRow,
    execute: (at) =>
      sql`update registrations set status = 'expired', expired_at = ${at}
        where status = 'unclaimed' and expires_at <= ${at}
        returning id, kind, user_id, dock_id, token_id`
  })

  const listExpiredBefore = SqlSchema.findAll({
    Request: Schema.DateFromSelf,
    Result: SweptRow,
    execute: (before) =>
      sql`select id, kind, user_id, dock_id, token_id from registrations
        where status = 'expired' and expired_at <= ${before}`
  })

  const revokeTokens = (ids: ReadonlyArray<TokenId>, at: Date) =>
    ids.length === 0
      ? Effect.void
      : sql`update tokens set revoked_at = coalesce(revoked_at, ${at}) where ${sql.in("id", ids)}`

  const hideDocks = (ids: ReadonlyArray<DockId>, at: Date) =>
    ids.length === 0 ? Effect.void : sql`update docks set hidden_at = ${at} where ${sql.in("id", ids)}`

  const deleteSandboxDocks = (ids: ReadonlyArray<DockId>) =>
    ids.length === 0 ? Effect.void : sql`delete from docks where ${sql.in("id", ids)} and sandbox`

  const deleteRegistrations = (ids: ReadonlyArray<RegistrationId>) =>
    ids.length === 0 ? Effect.void : sql`delete from registrations where ${sql.in("id", ids)}`

  const deleteAnonymousUsers = (ids: ReadonlyArray<UserId>) =>
    ids.length === 0 ? Effect.void : sql`delete from users where ${sql.in("id", ids)} and kind = 'anonymous'`

  /** A write whose answer nobody reads. */
  const orDie = (effect: Effect.Effect<unknown, SqlError.SqlError>) => Effect.orDie(Effect.asVoid(effect))

  return {
    insertAnonymous: (row: InsertAnonymousRegistration) => orDie(insertAnonymous(row)),
    insertVerifiedEmail: (row: InsertVerifiedEmailRegistration) => Effect.orDie(insertVerifiedEmail(row)),
    lockBySecretHash: (secretHash: string) => Effect.orDie(lockBySecretHash(secretHash)),
    markClaimed: (id: RegistrationId, claimedBy: UserId, at: Date) => orDie(markClaimed(id, claimedBy, at)),
    recordIssuedToken: (id: RegistrationId, tokenId: TokenId) => orDie(recordIssuedToken(id, tokenId)),
    listSandboxes: (status: SandboxStatus | undefined) => Effect.orDie(listSandboxes(status)),
    voidOpenCodes: (registrationId: RegistrationId, at: Date) => orDie(voidOpenCodes(registrationId, at)),
    insertCode: (code: InsertOtpCode) => orDie(insertCode(code)),
    lockLatestOpenCode: (registrationId: RegistrationId) => Effect.orDie(lockLatestOpenCode(registrationId)),
    countWrongTry: (codeId: string) => orDie(countWrongTry(codeId)),
    markCodeUsed: (codeId: string, at: Date) => orDie(markCodeUsed(codeId, at)),
    insertAnonymousUser: (username: string, at: Date) => Effect.orDie(insertAnonymousUser(username, at)),
    setDefaultDock: (userId: UserId, dockId: DockId) => orDie(setDefaultDock(userId, dockId)),
    lockUserByEmail: (email: string) => Effect.orDie(lockUserByEmail(email)),
    findUserByEmail: (email: string) => Effect.orDie(findUserByEmail(email)),
    confirmUser: (id: UserId) => orDie(confirmUser(id)),
    detachAnonymousUser: (id: UserId | null) => orDie(detachAnonymousUser(id)),
    startDockUsage: (dockId: DockId) => orDie(startDockUsage(dockId)),
    handDockToClaimant: (dockId: DockId | null, ownerId: UserId, at: Date) =>
      orDie(handDockToClaimant(dockId, ownerId, at)),
    handTokenToClaimant: (tokenId: TokenId | null, userId: UserId, expiresAt: Date) =>
      orDie(handTokenToClaimant(tokenId, userId, expiresAt)),
    lockSweep: orDie(lockSweep),
    expireUnclaimed: (at: Date) => Effect.orDie(expireUnclaimed(at)),
    listExpiredBefore: (before: Date) => Effect.orDie(listExpiredBefore(before)),
    revokeTokens: (ids: ReadonlyArray<TokenId>, at: Date) => orDie(revokeTokens(ids, at)),
    hideDocks: (ids: ReadonlyArray<DockId>, at: Date) => orDie(hideDocks(ids, at)),
    deleteSandboxDocks: (ids: ReadonlyArray<DockId>) => orDie(deleteSandboxDocks(ids)),
    deleteRegistrations: (ids: ReadonlyArray<RegistrationId>) => orDie(deleteRegistrations(ids)),
    deleteAnonymousUsers: (ids: ReadonlyArray<UserId>) => orDie(deleteAnonymousUsers(ids))
  } as const
})
