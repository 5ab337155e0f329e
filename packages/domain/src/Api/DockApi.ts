/**
 * The HTTP contract of Dock, shared by the server (handlers) and the CLI (a client derived from it): health
 * probes and the operator's admin API. Errors travel as the one error body of Errors.ts.
 */
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity
} from "@effect/platform"
import { Schema } from "effect"
import { CreateUser, User } from "../Accounts/User.ts"
import { RevertRequest, RevertResult } from "../AgentChanges/AgentChange.ts"
import { wire } from "../Errors.ts"
import { Member, Role } from "../Members/Member.ts"
import {
  AnonymousRegistration,
  ClaimAnswer,
  ClaimRequest,
  RegistrationRequest,
  SandboxStatus,
  SandboxSummary,
  SweepResult,
  VerifiedEmailRegistration
} from "../Registrations/Registration.ts"
import { CreatedShareLink, CreateShareLinkRequest, ShareLink } from "../ShareLinks/ShareLink.ts"
import { AddSourceRequest, Source } from "../Sources/Source.ts"
import { CreatedToken, CreateTokenRequest, TokenInfo } from "../Tokens/Token.ts"

export class Health extends Schema.Class<Health>("Health")({ status: Schema.Literal("ok") }) {}
export class Readiness extends Schema.Class<Readiness>("Readiness")({
  status: Schema.Literal("ready"),
  migration: Schema.Number
}) {}

export class HealthGroup extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Readiness).addError(wire("unavailable")))
{}

/** Operator credential (DOCK_ADMIN_TOKEN) as a bearer token. */
export class AdminAuthorization extends HttpApiMiddleware.Tag<AdminAuthorization>()("AdminAuthorization", {
  failure: wire("unauthorized"),
  security: { adminToken: HttpApiSecurity.bearer }
}) {}

export const ListParams = Schema.Struct({
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))),
  offset: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative()))
})

export class AdminUsersGroup extends HttpApiGroup.make("adminUsers")
  .add(
    HttpApiEndpoint.post("create", "/users")
      .setPayload(CreateUser)
      .addSuccess(User, { status: 201 })
      .addError(wire("validation_error"))
      .addError(wire("conflict"))
  )
  .add(HttpApiEndpoint.get("list", "/users").setUrlParams(ListParams).addSuccess(Schema.Array(User)))
  .middleware(AdminAuthorization)
  .prefix("/admin")
{}

/** RFC 9728 protected-resource metadata for the MCP endpoint. */
export class ProtectedResource extends Schema.Class<ProtectedResource>("ProtectedResource")({
  resource: Schema.String,
  resource_name: Schema.String,
  /** The authorization server (RFC 8414 metadata at `<issuer>/.well-known/oauth-authorization-server`). */
  authorization_servers: Schema.Array(Schema.String),
  bearer_methods_supported: Schema.Array(Schema.String),
  scopes_supported: Schema.Array(Schema.String),
  resource_documentation: Schema.String
}) {}

export class WellKnownGroup extends HttpApiGroup.make("wellKnown")
  .add(HttpApiEndpoint.get("protectedResource", "/.well-known/oauth-protected-resource").addSuccess(ProtectedResource))
  .add(
    HttpApiEndpoint.get("protectedResourceMcp", "/.well-known/oauth-protected-resource/mcp").addSuccess(
      ProtectedResource
    )
  )
{}

/** Agent registration (anonymous sandbox, verified email) and claim: spec §4.2. */
export class AgentAuthGroup extends HttpApiGroup.make("agentAuth")
  .add(
    HttpApiEndpoint.post("register", "/agent/auth")
      .setPayload(RegistrationRequest)
      .addSuccess(AnonymousRegistration, { status: 201 })
      .addSuccess(VerifiedEmailRegistration, { status: 202 })
      .addError(wire("validation_error"))
      .addError(wire("forbidden"))
      .addError(wire("rate_limited"))
      .addError(wire("unavailable"))
  )
  .add(
    HttpApiEndpoint.post("claim", "/agent/auth/claim")
      .setPayload(ClaimRequest)
      .addSuccess(ClaimAnswer)
      .addError(wire("validation_error"))
      .addError(wire("not_found"))
      .addError(wire("forbidden"))
      .addError(wire("rate_limited"))
      .addError(wire("unavailable"))
  )
{}

export class AdminTokensGroup extends HttpApiGroup.make("adminTokens")
  .add(
    HttpApiEndpoint.post("create", "/tokens")
      .setPayload(CreateTokenRequest)
      .addSuccess(CreatedToken, { status: 201 })
      .addError(wire("validation_error"))
      .addError(wire("not_found"))
  )
  .add(
    HttpApiEndpoint.get("list", "/tokens")
      .setUrlParams(Schema.Struct({ user: Schema.optional(Schema.String) }))
      .addSuccess(Schema.Array(TokenInfo))
      .addError(wire("not_found"))
  )
  .add(
    HttpApiEndpoint.post("revoke")`/tokens/${HttpApiSchema.param("id", Schema.String)}/revoke`
      .addSuccess(TokenInfo)
      .addError(wire("not_found"))
  )
  .middleware(AdminAuthorization)
  .prefix("/admin")
{}

export class AdminSandboxesGroup extends HttpApiGroup.make("adminSandboxes")
  .add(
    HttpApiEndpoint.get("list", "/sandboxes")
      .setUrlParams(Schema.Struct({ status: Schema.optional(SandboxStatus) }))
      .addSuccess(Schema.Array(SandboxSummary))
  )
  .add(HttpApiEndpoint.post("sweep", "/sandboxes/sweep").addSuccess(SweepResult))
  .middleware(AdminAuthorization)
  .prefix("/admin")
{}

export const MemberRequest = Schema.Struct({
  dock: Schema.String,
  user: Schema.String,
  role: Schema.optionalWith(Role, { default: () => "editor" as const })
})

export class AdminMembersGroup extends HttpApiGroup.make("adminMembers")
  .add(
    HttpApiEndpoint.post("add", "/members")
      .setPayload(MemberRequest)
      .addSuccess(Member, { status: 201 })
      .addError(wire("validation_error"))
      .addError(wire("not_found"))
  )
  .add(
    HttpApiEndpoint.get("list", "/members")
      .setUrlParams(Schema.Struct({ dock: Schema.String }))
      .addSuccess(Schema.Array(Member))
      .addError(wire("validation_error"))
      .addError(wire("not_found"))
  )
  .add(
    HttpApiEndpoint.post("remove", "/members/remove")
      .setPayload(Schema.Struct({ dock: Schema.String, user: Schema.String }))
      .addSuccess(Member)
      .addError(wire("validation_error"))
      .addError(wire("not_found"))
  )
  .middleware(AdminAuthorization)
  .prefix("/admin")
{}

/**
 * Share links (issue 16, item 7): the operator acts for the Dock's owner, until the web app offers them to people.
 * `create` answers the link's url (it holds the secret) this once.
 */
export class AdminShareLinksGroup extends HttpApiGroup.make("adminShareLinks")
  .add(
    HttpApiEndpoint.post("create", "/share-links")
      .setPayload(CreateShareLinkRequest)
      .addSuccess(CreatedShareLink, { status: 201 })
      .addError(wire("validation_error"))
      .addError(wire("not_found"))
      .addError(wire("permission_denied"))
  )
  .add(
    HttpApiEndpoint.get("list", "/share-links")
      .setUrlParams(Schema.Struct({ dock: Schema.String, page: Schema.optional(Schema.String) }))
      .addSuccess(Schema.Array(ShareLink))
      .addError(wire("validation_error"))
      .addError(wire("not_found"))
      .addError(wire("permission_denied"))
  )
  .add(
    HttpApiEndpoint.post("revoke")`/share-links/${HttpApiSchema.param("id", Schema.String)}/revoke`
      .addSuccess(ShareLink)
      .addError(wire("not_found"))
  )
  .middleware(AdminAuthorization)
  .prefix("/admin")
{}

/** Sources (issue 7): the operator adds them to a Dock, lists them (archived ones too) and archives them. */
export class AdminSourcesGroup extends HttpApiGroup.make("adminSources")
  .add(
    HttpApiEndpoint.post("add", "/sources")
      .setPayload(AddSourceRequest)
      .addSuccess(Source, { status: 201 })
      .addError(wire("validation_error"))
      .addError(wire("invalid_front_matter"))
      .addError(wire("not_found"))
      .addError(wire("tier_limit_exceeded"))
      .addError(wire("unavailable"))
  )
  .add(
    HttpApiEndpoint.get("list", "/sources")
      .setUrlParams(Schema.Struct({ dock: Schema.String }))
      .addSuccess(Schema.Array(Source))
      .addError(wire("validation_error"))
      .addError(wire("not_found"))
  )
  .add(
    HttpApiEndpoint.post("archive")`/sources/${HttpApiSchema.param("id", Schema.String)}/archive`
      .addSuccess(Source)
      .addError(wire("not_found"))
  )
  .middleware(AdminAuthorization)
  .prefix("/admin")
{}

/** Undo an agent (docs/undo.md): the operator reverts a token's changes since a time, in one Dock or all. */
export class AdminRevertGroup extends HttpApiGroup.make("adminRevert")
  .add(
    HttpApiEndpoint.post("revert", "/revert")
      .setPayload(RevertRequest)
      .addSuccess(RevertResult)
      .addError(wire("validation_error"))
      .addError(wire("not_found"))
      .addError(wire("tier_limit_exceeded"))
      .addError(wire("unavailable"))
  )
  .middleware(AdminAuthorization)
  .prefix("/admin")
{}

export class DockApi extends HttpApi.make("dock")
  .add(HealthGroup)
  .add(WellKnownGroup)
  .add(AgentAuthGroup)
  .add(AdminUsersGroup)
  .add(AdminTokensGroup)
  .add(AdminSandboxesGroup)
  .add(AdminMembersGroup)
  .add(AdminSourcesGroup)
  .add(AdminRevertGroup)
  .add(AdminShareLinksGroup)
{}
