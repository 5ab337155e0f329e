/**
 * The caller crosses the MCP SDK inside its AuthInfo: the HTTP mount puts the authenticated Principal and the
 * caller's key there (`callerAuthInfo`), and the dispatcher reads them back checked against their schema
 * (`callerOf`), so nothing untyped passes from one side to the other.
 */
import { anonymousPrincipal, DockId, type Principal, TokenId, UserId } from "@dock/domain"
import type { AuthInfo } from "@modelcontextprotocol/server"
import { Schema } from "effect"

const PRINCIPAL_KEY = "dock.principal"
const CALLER_KEY = "dock.caller"

const PrincipalSchema: Schema.Schema<Principal> = Schema.typeSchema(Schema.Struct({
  userId: Schema.NullOr(UserId),
  username: Schema.NullOr(Schema.String),
  tokenId: Schema.NullOr(TokenId),
  scopes: Schema.Array(Schema.Literal("mcp:read", "mcp:write")),
  allowedBucketIds: Schema.NullOr(Schema.Array(DockId)),
  sandbox: Schema.Boolean,
  agentLabel: Schema.NullOr(Schema.String)
}))
const isPrincipal = Schema.is(PrincipalSchema)

/** Who calls: the principal the tools run as, and the key the per-caller concurrency bound counts under. */
export interface Caller {
  readonly principal: Principal
  /** A token id, or `address:<client address>` on /mcp/public. */
  readonly key: string
}

/** The AuthInfo the HTTP mount hands the SDK for one request. */
export const callerAuthInfo = (caller: Caller): AuthInfo => ({
  token: "",
  clientId: caller.principal.tokenId ?? "anonymous",
  scopes: [...caller.principal.scopes],
  extra: { [PRINCIPAL_KEY]: caller.principal, [CALLER_KEY]: caller.key }
})

/**
 * The caller an AuthInfo carries. No AuthInfo (a handler used without the HTTP mount) is the anonymous public;
 * an AuthInfo whose entries are not a Principal and a key is a bug, and fails loudly rather than run as someone.
 */
export const callerOf = (authInfo: AuthInfo | undefined): Caller => {
  const principal = authInfo?.extra?.[PRINCIPAL_KEY] ?? anonymousPrincipal
  if (!isPrincipal(principal)) throw new Error("The MCP request's AuthInfo carries no valid principal")
  const key = authInfo?.extra?.[CALLER_KEY] ?? principal.tokenId ?? "anonymous"
  if (typeof key !== "string") throw new Error("The MCP request's AuthInfo carries no valid caller key")
  return { principal, key }
}
