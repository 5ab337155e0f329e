/** MCP bearer tokens. The secret exists only in `CreatedToken`, returned once; everything else shows metadata. */
import { Schema } from "effect"
import { DockId, TokenId, UserId } from "../Ids.ts"

export const TokenScope = Schema.Literal("mcp:read", "mcp:write")
export const TokenKind = Schema.Literal("personal", "anonymous", "claimed_from_anonymous", "oauth")
export type TokenKind = typeof TokenKind.Type

export class TokenInfo extends Schema.Class<TokenInfo>("TokenInfo")({
  id: TokenId,
  user_id: UserId,
  label: Schema.NullOr(Schema.String),
  kind: TokenKind,
  scopes: Schema.Array(TokenScope),
  allowed_bucket_ids: Schema.NullOr(Schema.Array(DockId)),
  created_at: Schema.String,
  expires_at: Schema.NullOr(Schema.String),
  revoked_at: Schema.NullOr(Schema.String),
  last_used_at: Schema.NullOr(Schema.String)
}) {}

/** `dock tokens create --json`: the secret, shown once, with what it may do. */
export class CreatedToken extends Schema.Class<CreatedToken>("CreatedToken")({
  id: TokenId,
  token: Schema.String,
  label: Schema.NullOr(Schema.String),
  scopes: Schema.Array(TokenScope),
  allowed_bucket_ids: Schema.NullOr(Schema.Array(DockId)),
  expires_at: Schema.NullOr(Schema.String)
}) {}

export const LABEL_MAX = 100

/** Operator input: the user by email, username or id; Docks by id or `owner/slug`; expiry as a Duration. */
export class CreateTokenRequest extends Schema.Class<CreateTokenRequest>("CreateTokenRequest")({
  user: Schema.String,
  label: Schema.optional(Schema.String.pipe(Schema.maxLength(LABEL_MAX))),
  scopes: Schema.optional(Schema.Array(TokenScope).pipe(Schema.minItems(1))),
  docks: Schema.optional(Schema.Array(Schema.String)),
  expires_in: Schema.optional(Schema.String)
}) {}
