/**
 * Discovery documents: RFC 9728 protected-resource metadata for /mcp, and /auth.md, the authentication manifest
 * an agent reads to register, use its token and have a person claim its sandbox — written from this server's
 * own base URL and limits.
 */
import {
  describeDuration,
  DockApi,
  ErrorStatus,
  OTP_WRONG_TRIES_PER_CODE,
  OTP_WRONG_TRIES_PER_DAY,
  ProtectedResource,
  Scopes,
  SpecErrorCodes
} from "@dock/domain"
import { HttpApiBuilder, HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { ServerConfig } from "../Config.ts"
import { resourceMetadataUrl } from "./BearerAuth.ts"
import { WORKING_TOGETHER_PATH } from "./WorkingTogetherHttp.ts"

export const wellKnownHttp = (config: ServerConfig) => {
  const metadata = new ProtectedResource({
    resource: `${config.baseUrl}/mcp`,
    resource_name: "Dock MCP server",
    authorization_servers: [config.baseUrl],
    bearer_methods_supported: ["header"],
    scopes_supported: [...Scopes],
    resource_documentation: `${config.baseUrl}/auth.md`
  })
  return HttpApiBuilder.group(DockApi, "wellKnown", (handlers) =>
    handlers
      .handle("protectedResource", () => Effect.succeed(metadata))
      .handle("protectedResourceMcp", () => Effect.succeed(metadata)))
}

const perMinute = (count: number) => (count === 0 ? "unlimited" : `${count} per minute`)

export const authManifest = (config: ServerConfig): string => {
  const base = config.baseUrl
  const l = config.limits
  const codes = SpecErrorCodes.map((code) => `| \`${code}\` | ${ErrorStatus[code]} |`).join("\n")
  return `# Dock authentication for agents

Dock is an agent-first store for living artifacts. Agents call its MCP server at \`${base}/mcp\` (Streamable
HTTP, JSON-RPC) with a bearer token in the \`Authorization\` header — never in the URL or the body.

## 1. Get a token

Apps that can open a browser for a person use OAuth 2.1 instead: authorization code with PKCE (S256), dynamic
client registration or a Client ID Metadata Document, scopes \`mcp:read\` and \`mcp:write\`, resource
\`${base}/mcp\`. Metadata: \`${base}/.well-known/oauth-authorization-server\`. How to connect each client:
${base}/docs/connect/agents

${
    config.anonymousRegistrationEnabled
      ? `Register anonymously; you get a write token confined to a private sandbox Dock:

\`\`\`http
POST ${base}/agent/auth
Content-Type: application/json

{"type":"anonymous","requested_credential_type":"mcp_write_token","agent_label":"<your name>"}
\`\`\`

The answer (201) holds \`credential\` (the token, shown once — keep it), \`token_id\`, \`expires_at\`, \`scopes\`,
\`sandbox_bucket\` (\`id\`, \`slug\`), \`status\` (\`unclaimed\`), \`registration_id\` (the claim token, a
secret), \`claim_url\` and \`claim_instructions\`.`
      : "Anonymous registration is disabled on this server: ask its operator for a token (`dock tokens create`)."
  }
${
    config.verifiedEmailRegistration
      ? `
Verified email (preview): \`POST ${base}/agent/auth\` with
\`{"type":"verified_email","requested_credential_type":"mcp_write_token","email":"<address>"}\` mails a six-digit
code and answers 202 with a claim token; completing the claim (below) issues a write token for that person.
`
      : ""
  }
## 2. Use it

\`\`\`http
POST ${base}/mcp
Authorization: Bearer <credential>
Accept: application/json, text/event-stream
\`\`\`

Scopes: \`mcp:read\` (read tools) and \`mcp:write\` (write tools; implies read). A token may be restricted to some
Docks (\`allowed_bucket_ids\`). Missing, invalid, revoked or expired tokens get HTTP 401 with
\`WWW-Authenticate: Bearer resource_metadata="${resourceMetadataUrl(base)}"\`.

## 3. Have a person claim the sandbox

1. \`POST ${base}/agent/auth/claim\` with \`{"claim_token":"<registration_id>","email":"<person's email>"}\` →
   \`{"status":"otp_sent","registration_id":…,"claim_token_expires":…}\`; a six-digit code is mailed.
2. The person gives you the code; \`POST ${base}/agent/auth/claim\` with
   \`{"claim_token":"<registration_id>","otp":"<six digits>"}\` → \`{"status":"claimed","bucket":…,"account":…,"token":…}\`.

Or send the person to the claim page, \`${base}/claim?token=<registration_id>\`: they enter their email and the
mailed code in a browser (signed in or not) and end with the sandbox in their account. Claiming signs nobody in:
to open the Dock the person signs in with a code of their own.

The sandbox then belongs to that person's account (created if needed) and your same token keeps working, confined
to the sandbox, for ${describeDuration(l.claimedTokenTtl)}. A wrong, expired or used code gets one answer
(400 \`validation_error\`); a code lives ${
    describeDuration(l.otpTtl)
  }, allows ${OTP_WRONG_TRIES_PER_CODE} wrong tries, and a new
code voids the old one.

## Limits on this server

| what | limit |
|---|---|
| claim window | ${describeDuration(l.sandboxClaimWindow)}; then the sandbox is hidden, its token revoked |
| retention after expiry | ${describeDuration(l.sandboxRetention)}; then the sandbox is deleted |
| registrations per IP | ${l.registrationsPerIpPerDay} per day |
| registrations in all | ${l.registrationsPerHour} per hour |
| artifacts per sandbox | ${l.sandboxMaxArtifacts} |
| sandbox content | ${l.sandboxMaxBytes} bytes |
| writes per sandbox token | ${perMinute(l.sandboxWritesPerMinute)} |
| codes mailed | ${l.otpSendsPerHour} per hour per registration and per email |
| wrong codes | ${OTP_WRONG_TRIES_PER_DAY} per day per registration and per email |
| requests per token | ${perMinute(l.tokenRequestsPerMinute)} |
| writes per token | ${perMinute(l.tokenWritesPerMinute)} |

A sandbox token cannot make anything public or discoverable, publish, share, grant, fork, create Docks or write
outside its sandbox. Throttled calls get HTTP 429 with \`Retry-After\` (inside MCP: \`rate_limited\` with
\`retry_after_seconds\`).

## Working with other agents

Docks are shared: other agents and people may write the pages you write. Send \`base_version\` with your writes
(a \`conflict\` answer carries what changed), an \`idempotency_key\` to retry safely, and edit with
\`edit_markdown_file\` / \`edit_web_page\` instead of resending whole pages; a Dock's owner can undo an agent's
writes. The guide: ${base}${WORKING_TOGETHER_PATH}

## Errors

Every error body is \`{"error":{"code","status","message","details"?}}\`.

| code | HTTP |
|---|---|
${codes}
`
}

/** GET /auth.md, rendered once from the configuration. */
export const authManifestRoute = (config: ServerConfig) => {
  const body = authManifest(config)
  return HttpLayerRouter.add(
    "GET",
    "/auth.md",
    Effect.succeed(HttpServerResponse.text(body, { contentType: "text/markdown; charset=utf-8" }))
  )
}
