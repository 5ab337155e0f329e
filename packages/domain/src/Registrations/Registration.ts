/**
 * Agent registration and claim: the wire shapes of spec §2 ("Anonymous registration") and architecture §14
 * (claim answers), plus the verified-email preview flow and the operator's sandbox list.
 */
import { Schema } from "effect"
import { Dock } from "../Docks/Dock.ts"
import { DockId, TokenId, UserId } from "../Ids.ts"
import { TokenScope } from "../Tokens/Token.ts"

export const AGENT_LABEL_MAX = 100

export const AnonymousRegistrationRequest = Schema.Struct({
  type: Schema.Literal("anonymous"),
  requested_credential_type: Schema.Literal("mcp_write_token"),
  agent_label: Schema.optional(Schema.String.pipe(Schema.maxLength(AGENT_LABEL_MAX)))
})

export const VerifiedEmailRegistrationRequest = Schema.Struct({
  type: Schema.Literal("verified_email"),
  requested_credential_type: Schema.Literal("mcp_write_token"),
  email: Schema.String.pipe(Schema.maxLength(254)),
  agent_label: Schema.optional(Schema.String.pipe(Schema.maxLength(AGENT_LABEL_MAX)))
})

export const RegistrationRequest = Schema.Union(AnonymousRegistrationRequest, VerifiedEmailRegistrationRequest)
export type RegistrationRequest = typeof RegistrationRequest.Type

export class SandboxBucket extends Schema.Class<SandboxBucket>("SandboxBucket")({
  id: DockId,
  slug: Schema.String
}) {}

/** 201 of `POST /agent/auth` with type anonymous: every field of the spec's registration object. */
export class AnonymousRegistration extends Schema.Class<AnonymousRegistration>("AnonymousRegistration")({
  registration_id: Schema.String,
  registration_type: Schema.Literal("anonymous"),
  credential_type: Schema.Literal("mcp_write_token"),
  credential: Schema.String,
  token_id: TokenId,
  expires_at: Schema.String,
  scopes: Schema.Array(TokenScope),
  sandbox_bucket: SandboxBucket,
  status: Schema.Literal("unclaimed"),
  claim_url: Schema.String,
  claim_instructions: Schema.String
}) {}

/** 202 of `POST /agent/auth` with type verified_email: a claim token and a mailed code, no credential yet. */
export class VerifiedEmailRegistration extends Schema.Class<VerifiedEmailRegistration>("VerifiedEmailRegistration")({
  registration_id: Schema.String,
  registration_type: Schema.Literal("verified_email"),
  credential_type: Schema.Literal("mcp_write_token"),
  status: Schema.Literal("otp_sent"),
  email: Schema.String,
  claim_token_expires: Schema.String,
  claim_url: Schema.String,
  claim_instructions: Schema.String
}) {}

export const ClaimStartRequest = Schema.Struct({
  claim_token: Schema.String.pipe(Schema.maxLength(200)),
  email: Schema.String.pipe(Schema.maxLength(254))
})
export const ClaimCompleteRequest = Schema.Struct({
  claim_token: Schema.String.pipe(Schema.maxLength(200)),
  otp: Schema.String.pipe(Schema.maxLength(32))
})
/** The claim token alone: answered with what to send (an email to start, a code to finish), never decoded as either. */
export const ClaimTokenOnlyRequest = Schema.Struct({
  claim_token: Schema.String.pipe(Schema.maxLength(200)),
  email: Schema.optionalWith(Schema.Never, { exact: true }),
  otp: Schema.optionalWith(Schema.Never, { exact: true })
})
export const ClaimRequest = Schema.Union(ClaimCompleteRequest, ClaimStartRequest, ClaimTokenOnlyRequest)
export type ClaimRequest = typeof ClaimRequest.Type

export class ClaimStarted extends Schema.Class<ClaimStarted>("ClaimStarted")({
  status: Schema.Literal("otp_sent"),
  registration_id: Schema.String,
  claim_token_expires: Schema.String
}) {}

export class ClaimAccount extends Schema.Class<ClaimAccount>("ClaimAccount")({
  id: UserId,
  username: Schema.String,
  email: Schema.String
}) {}

/** An anonymous sandbox claimed: the Dock, its new owner, and the (same) token's new expiry. */
export class ClaimCompleted extends Schema.Class<ClaimCompleted>("ClaimCompleted")({
  status: Schema.Literal("claimed"),
  registration_id: Schema.String,
  bucket: Dock,
  account: ClaimAccount,
  token: Schema.Struct({ id: TokenId, expires_at: Schema.NullOr(Schema.String) })
}) {}

/** A verified-email registration completed: the credential, returned once. */
export class CredentialIssued extends Schema.Class<CredentialIssued>("CredentialIssued")({
  status: Schema.Literal("claimed"),
  registration_id: Schema.String,
  credential_type: Schema.Literal("mcp_write_token"),
  credential: Schema.String,
  account: ClaimAccount,
  token: Schema.Struct({
    id: TokenId,
    label: Schema.NullOr(Schema.String),
    scopes: Schema.Array(TokenScope),
    allowed_bucket_ids: Schema.NullOr(Schema.Array(DockId)),
    expires_at: Schema.NullOr(Schema.String)
  })
}) {}

export const ClaimAnswer = Schema.Union(ClaimStarted, ClaimCompleted, CredentialIssued)
export type ClaimAnswer = typeof ClaimAnswer.Type

export const SandboxStatus = Schema.Literal("unclaimed", "claimed", "expired")
export type SandboxStatus = typeof SandboxStatus.Type

/** `dock sandboxes list`: never the registration id (it is the claim secret). */
export class SandboxSummary extends Schema.Class<SandboxSummary>("SandboxSummary")({
  bucket_id: Schema.NullOr(DockId),
  bucket_slug: Schema.NullOr(Schema.String),
  status: SandboxStatus,
  created_at: Schema.String,
  expires_at: Schema.String
}) {}

export class SweepResult extends Schema.Class<SweepResult>("SweepResult")({
  expired: Schema.Number,
  purged: Schema.Number
}) {}
