/** The Registrations port: anonymous sandboxes, verified-email registration, claims and the sandbox lifecycle. */
import { Context, type Effect } from "effect"
import type { Forbidden, NotFound, RateLimited, Unavailable, ValidationError } from "../Errors.ts"
import type {
  AnonymousRegistration,
  ClaimAnswer,
  ClaimRequest,
  RegistrationRequest,
  SandboxStatus,
  SandboxSummary,
  SweepResult,
  VerifiedEmailRegistration
} from "./Registration.ts"

export class Registrations extends Context.Tag("@dock/domain/Registrations")<Registrations, {
  /** `POST /agent/auth`. `requesterIp` is the address the caps count. */
  readonly register: (
    request: RegistrationRequest,
    requesterIp: string
  ) => Effect.Effect<
    AnonymousRegistration | VerifiedEmailRegistration,
    Forbidden | RateLimited | ValidationError | Unavailable
  >
  /** `POST /agent/auth/claim`: claim-start with an email, claim-complete with an OTP. */
  readonly claim: (
    request: ClaimRequest
  ) => Effect.Effect<ClaimAnswer, NotFound | Forbidden | RateLimited | ValidationError | Unavailable>
  readonly list: (status?: SandboxStatus) => Effect.Effect<ReadonlyArray<SandboxSummary>>
  /** Expires unclaimed sandboxes past their window and purges expired ones past retention. */
  readonly sweep: Effect.Effect<SweepResult>
}>() {}
