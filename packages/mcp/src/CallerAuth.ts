/**
 * The caller crosses the MCP SDK inside its AuthInfo: the HTTP mount puts the authenticated Principal and the
 * caller's key there (`callerAuthInfo`), and the dispatcher reads them back checked against their schema
 * (`callerOf`), so nothing untyped passes from one side to the other.
 */
import { anonymousPrincipal, DockId, type Principal, TokenId, UserId } from "@dock/domain"
import type { AuthInfo } from "@modelcontextprotocol/server"
import { Schema, type Tracer } from "effect"

const PRINCIPAL_KEY = "dock.principal"
const CALLER_KEY = "dock.caller"
const REQUEST_ID_KEY = "dock.request_id"
const PARENT_SPAN_KEY = "dock.parent_span"

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
  /** The HTTP request's id, which the tool call's log lines carry too. */
  readonly requestId?: string | undefined
  /** The HTTP request's span, the parent of the tool call's span when traces are exported. */
  readonly parentSpan?: Tracer.AnySpan | undefined
}

/** The AuthInfo the HTTP mount hands the SDK for one request. */
export const callerAuthInfo = (caller: Caller): AuthInfo => ({
  token: "",
  clientId: caller.principal.tokenId ?? "anonymous",
  scopes: [...caller.principal.scopes],
  extra: {
    [PRINCIPAL_KEY]: caller.principal,
    [CALLER_KEY]: caller.key,
    ...(caller.requestId === undefined ? {} : { [REQUEST_ID_KEY]: caller.requestId }),
    ...(caller.parentSpan === undefined ? {} : { [PARENT_SPAN_KEY]: caller.parentSpan })
  }
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
  const requestId = authInfo?.extra?.[REQUEST_ID_KEY]
  const parentSpan = authInfo?.extra?.[PARENT_SPAN_KEY]
  return {
    principal,
    key,
    requestId: typeof requestId === "string" ? requestId : undefined,
    parentSpan: isSpan(parentSpan) ? parentSpan : undefined
  }
}

const isSpan = (value: unknown): value is Tracer.AnySpan =>
  typeof value === "object" && value !== null &&
  ((value as { _tag?: unknown })._tag === "Span" || (value as { _tag?: unknown })._tag === "ExternalSpan")
