/** The operator's admin API: bearer DOCK_ADMIN_TOKEN, then one domain call per endpoint. */
import {
  Accounts,
  AdminAuthorization,
  AgentChanges,
  createOperatorShareLink,
  DockApi,
  Docks,
  issueOperatorToken,
  listOperatorShareLinks,
  listOperatorTokens,
  Members,
  Registrations,
  ShareLinks,
  SOURCE_CONTENT_MAX_BYTES,
  Sources,
  Tokens,
  Unauthorized
} from "@dock/domain"
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import type { BodyLimit } from "./BodyLimit.ts"

/** Twice SOURCE_CONTENT_MAX_BYTES and some: room for escaped quotes, backslashes and line breaks. */
export const SOURCES_MAX_BODY_BYTES = 2 * SOURCE_CONTENT_MAX_BYTES + 1024 * 1024

/** POST /admin/sources carries a source of up to 5 MiB of text, JSON-escaped: more than the usual small JSON. */
export const sourcesBodyLimit: BodyLimit = {
  matches: (url) => url === "/admin/sources" || url.startsWith("/admin/sources?"),
  bytes: SOURCES_MAX_BODY_BYTES
}

export const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

export const adminAuthorizationLayer = (adminToken: Option.Option<Redacted.Redacted>) =>
  Layer.succeed(
    AdminAuthorization,
    AdminAuthorization.of({
      adminToken: (given) =>
        Option.match(adminToken, {
          onNone: () =>
            Effect.fail(new Unauthorized({ message: "The admin API is disabled: DOCK_ADMIN_TOKEN is not set" })),
          onSome: (expected) =>
            sameSecret(Redacted.value(given), Redacted.value(expected))
              ? Effect.void
              : Effect.fail(new Unauthorized({ message: "Missing or wrong admin token" }))
        })
    })
  )

export const AdminUsersHttp = HttpApiBuilder.group(DockApi, "adminUsers", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("create", ({ payload }) => accounts.createByOperator(payload))
      .handle("list", ({ urlParams }) => accounts.list(urlParams))
  }))

export const AdminTokensHttp = HttpApiBuilder.group(DockApi, "adminTokens", (handlers) =>
  Effect.gen(function*() {
    const tokens = yield* Tokens
    const context = yield* Effect.context<Accounts | Docks | Tokens>()
    return handlers
      .handle("create", ({ payload }) => issueOperatorToken(payload).pipe(Effect.provide(context)))
      .handle("list", ({ urlParams }) => listOperatorTokens(urlParams.user).pipe(Effect.provide(context)))
      .handle("revoke", ({ path }) => tokens.revoke(path.id))
  }))

export const AdminSandboxesHttp = HttpApiBuilder.group(DockApi, "adminSandboxes", (handlers) =>
  Effect.gen(function*() {
    const registrations = yield* Registrations
    return handlers
      .handle("list", ({ urlParams }) => registrations.list(urlParams.status))
      .handle("sweep", () => registrations.sweep)
  }))

export const AdminMembersHttp = HttpApiBuilder.group(DockApi, "adminMembers", (handlers) =>
  Effect.gen(function*() {
    const members = yield* Members
    return handlers
      .handle("add", ({ payload }) => members.add(payload.dock, payload.user, payload.role))
      .handle("list", ({ urlParams }) => members.list(urlParams.dock))
      .handle("remove", ({ payload }) => members.remove(payload.dock, payload.user))
  }))

export const AdminShareLinksHttp = HttpApiBuilder.group(
  DockApi,
  "adminShareLinks",
  (handlers) =>
    Effect.gen(function*() {
      const shareLinks = yield* ShareLinks
      return handlers
        .handle("create", ({ payload }) => createOperatorShareLink(payload))
        .handle("list", ({ urlParams }) => listOperatorShareLinks(urlParams.dock, urlParams.page))
        .handle("revoke", ({ path }) => shareLinks.revokeAsOperator(path.id))
    })
)

export const AdminSourcesHttp = HttpApiBuilder.group(DockApi, "adminSources", (handlers) =>
  Effect.gen(function*() {
    const sources = yield* Sources
    return handlers
      .handle("add", ({ payload }) => sources.add(payload))
      .handle("list", ({ urlParams }) => sources.listAll(urlParams.dock))
      .handle("archive", ({ path }) => sources.archive(path.id))
  }))

export const AdminRevertHttp = HttpApiBuilder.group(DockApi, "adminRevert", (handlers) =>
  Effect.gen(function*() {
    const agentChanges = yield* AgentChanges
    return handlers.handle("revert", ({ payload }) =>
      agentChanges.revertAsOperator(payload.dock, {
        tokenId: payload.token,
        since: payload.since,
        dryRun: payload.dry_run ?? false
      }))
  }))
