/**
 * The HTTP contract of Dock, shared by the server (handlers) and the CLI (a client derived from it): health
 * probes and the operator's admin API. Errors travel as the one error body of Errors.ts.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import { CreateUser, User } from "../Accounts/User.ts"
import { wire } from "../Errors.ts"

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

export class DockApi extends HttpApi.make("dock").add(HealthGroup).add(AdminUsersGroup) {}

