/** Token rules: the secret format, hashing, scopes, Dock restrictions, expiry and revocation. */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Option, Schema } from "effect"
import { transactional } from "../Database/Transactional.ts"
import { NotFound, Unauthorized, ValidationError } from "../Errors.ts"
import { TokenId, type UserId } from "../Ids.ts"
import type { Principal, Scope } from "../Principal.ts"
import { forToken, type PerTokenRate, refusalOf, windowStartOf } from "../RateLimits/RateLimits.ts"
import { isWellFormedToken, newAccessToken, newToken, sha256 } from "../Secrets.ts"
import { traced } from "../Spans.ts"
import { CreatedToken, LABEL_MAX, TokenInfo } from "./Token.ts"
import { type NewToken, Tokens } from "./Tokens.ts"
import { makeTokensRepo, type TokenRow } from "./TokensRepo.ts"

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

const toTokenInfo = (row: TokenRow) =>
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
    const repo = yield* makeTokensRepo
    const sql = yield* SqlClient.SqlClient

    const create = traced("Tokens.create")(function*(input: NewToken) {
      const label = input.label?.trim() || null
      if (label !== null && label.length > LABEL_MAX) {
        return yield* new ValidationError({
          message: `label is longer than ${LABEL_MAX} characters`,
          details: { field: "label" }
        })
      }
      const scopes = normalizeScopes(input.scopes ?? ["mcp:write"])
      const now = new Date(yield* Clock.currentTimeMillis)
      if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
        return yield* new ValidationError({
          message: "expires_at must be in the future",
          details: { field: "expires_in" }
        })
      }
      const secret = input.kind === "oauth" ? newAccessToken() : newToken()
      const row = yield* repo.insert({
        userId: input.userId,
        secretHash: sha256(secret),
        label,
        kind: input.kind,
        scopes,
        allowedBucketIds: input.allowedBucketIds == null ? null : [...new Set(input.allowedBucketIds)],
        createdAt: now,
        expiresAt: input.expiresAt ?? null,
        grantId: input.grantId ?? null,
        audience: input.audience ?? null
      })
      return new CreatedToken({
        id: row.id,
        token: secret,
        label: row.label,
        scopes: row.scopes,
        allowed_bucket_ids: row.allowed_bucket_ids,
        expires_at: iso(row.expires_at)
      })
    })

    const list = traced("Tokens.list")(function*(userId?: UserId) {
      return (yield* repo.list(userId)).map(toTokenInfo)
    })

    const notFound = () => new NotFound({ message: "Token not found" })

    const revoke = traced("Tokens.revoke")(function*(id: string, owner?: UserId) {
      if (!Schema.is(TokenId)(id)) return yield* notFound()
      const now = new Date(yield* Clock.currentTimeMillis)
      const row = yield* repo.revoke(id, now, owner ?? null)
      if (Option.isNone(row)) return yield* notFound()
      return toTokenInfo(row.value)
    })

    const rotate = traced("Tokens.rotate")(function*(id: string, owner: UserId) {
      if (!Schema.is(TokenId)(id)) return yield* notFound()
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* transactional(
        sql,
        Effect.gen(function*() {
          const found = yield* repo.lockLive(id, owner, now)
          if (Option.isNone(found)) return yield* notFound()
          const old = found.value
          if (old.kind === "oauth" || old.kind === "anonymous") {
            return yield* new ValidationError({
              message: old.kind === "oauth"
                ? "An OAuth token is renewed by its client; revoke the grant instead"
                : "An unclaimed sandbox token cannot be rotated; claim the sandbox first",
              details: { field: "token" }
            })
          }
          yield* repo.revoke(old.id, now, owner)
          const secret = newToken()
          const row = yield* repo.insert({
            userId: old.user_id,
            secretHash: sha256(secret),
            label: old.label,
            kind: old.kind,
            scopes: old.scopes,
            allowedBucketIds: old.allowed_bucket_ids,
            createdAt: now,
            expiresAt: old.expires_at
          })
          return new CreatedToken({
            id: row.id,
            token: secret,
            label: row.label,
            scopes: row.scopes,
            allowed_bucket_ids: row.allowed_bucket_ids,
            expires_at: iso(row.expires_at)
          })
        })
      )
    })

    const invalid = () => new Unauthorized({ message: "The bearer token is invalid, revoked or expired" })

    const authenticate = traced("Tokens.authenticate")(
      function*(secret: string, rate?: PerTokenRate, audience?: string) {
        if (!isWellFormedToken(secret)) return yield* invalid()
        const now = yield* Clock.currentTimeMillis
        const counted = rate !== undefined && rate.limit > 0 ? rate : undefined
        const found = yield* repo.authenticate({
          secretHash: sha256(secret),
          now: new Date(now),
          usedUnlessSince: new Date(now - Duration.toMillis(LAST_USED_RESOLUTION)),
          audience,
          count: counted === undefined ? undefined : {
            keyPrefix: counted.keyPrefix,
            windowStart: new Date(windowStartOf(now, counted.window)),
            hits: counted.hits ?? 1,
            durable: counted.durable ?? true
          }
        })
        if (Option.isNone(found)) return yield* invalid()
        const token = found.value
        if (counted !== undefined) {
          const refusal = refusalOf(forToken(counted, token.id), token.requests ?? 0, now)
          if (refusal !== undefined) return yield* refusal
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
      }
    )

    return { create, list, revoke, rotate, authenticate }
  })
)
