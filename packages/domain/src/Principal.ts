/**
 * Who is calling: the user behind a token (or nobody, for anonymous public reads), with the token's scopes,
 * Dock restriction, sandbox flag and agent label. Domain services take it from the context, never a token.
 */
import { Context } from "effect"
import type { DockId, TokenId, UserId } from "./Ids.ts"

export type Scope = "mcp:read" | "mcp:write"
export const Scopes: ReadonlyArray<Scope> = ["mcp:read", "mcp:write"]

export interface Principal {
  /** null for an anonymous public reader (no token). */
  readonly userId: UserId | null
  readonly username: string | null
  readonly tokenId: TokenId | null
  readonly scopes: ReadonlyArray<Scope>
  /** null = any Dock the user may edit; otherwise the only Docks this token may change. */
  readonly allowedBucketIds: ReadonlyArray<DockId> | null
  /** An anonymous sandbox token: confined to its sandbox whatever the parameters say. */
  readonly sandbox: boolean
  /** The agent's visible identity (the token label), recorded on every write. */
  readonly agentLabel: string | null
}

export class CurrentPrincipal extends Context.Tag("@dock/domain/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** `mcp:write` implies `mcp:read`. */
export const hasScope = (principal: Principal, scope: Scope): boolean =>
  principal.scopes.includes(scope) || (scope === "mcp:read" && principal.scopes.includes("mcp:write"))

export const anonymousPrincipal: Principal = {
  userId: null,
  username: null,
  tokenId: null,
  scopes: ["mcp:read"],
  allowedBucketIds: null,
  sandbox: false,
  agentLabel: null
}

/** A user acting with full rights of their own (operator actions on a user's behalf, app sessions, tests). */
export const userPrincipal = (
  user: { readonly id: UserId; readonly username: string },
  options: Partial<Omit<Principal, "userId" | "username">> = {}
): Principal => ({
  userId: user.id,
  username: user.username,
  tokenId: options.tokenId ?? null,
  scopes: options.scopes ?? ["mcp:read", "mcp:write"],
  allowedBucketIds: options.allowedBucketIds ?? null,
  sandbox: options.sandbox ?? false,
  agentLabel: options.agentLabel ?? null
})
