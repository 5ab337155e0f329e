/** `dock tokens`: create, list and revoke MCP tokens (admin API). */
import type { TokenInfo } from "@dock/domain/api"
import { Args, Command, Options } from "@effect/cli"
import { adminCommand, present } from "../ApiCommand.ts"

const tokenLine = (token: TokenInfo) =>
  `${token.id}  ${token.label ?? "-"}  ${token.kind}  ${token.scopes.join(",")}` +
  `  docks ${token.allowed_bucket_ids?.join(",") ?? "any"}  expires ${token.expires_at ?? "never"}` +
  (token.revoked_at === null ? "" : `  REVOKED ${token.revoked_at}`)

const create = adminCommand(
  "create",
  {
    user: Options.text("user").pipe(Options.withDescription("The token's user: email, username or id")),
    label: Options.text("label").pipe(Options.withDescription("The agent's visible identity"), Options.optional),
    scope: Options.choice("scope", ["mcp:read", "mcp:write"]).pipe(
      Options.withDescription("mcp:read or mcp:write (write implies read); repeat for several; default mcp:write"),
      Options.repeated
    ),
    dock: Options.text("dock").pipe(
      Options.withDescription("Restrict writes to this Dock (id or owner/slug); repeat for several"),
      Options.repeated
    ),
    expiresIn: Options.text("expires-in").pipe(
      Options.withDescription(`Lifetime as a duration, e.g. "90 days" (default: no expiry)`),
      Options.optional
    )
  },
  (options) => ({
    call: (client) =>
      client.adminTokens.create({
        payload: {
          user: options.user,
          ...present("label", options.label),
          ...(options.scope.length === 0 ? {} : { scopes: options.scope }),
          ...(options.dock.length === 0 ? {} : { docks: options.dock }),
          ...present("expires_in", options.expiresIn)
        }
      }),
    human: (token) =>
      [
        `Token ${token.id} (${token.scopes.join(", ")}; docks: ${
          token.allowed_bucket_ids?.join(", ") ?? "any"
        }; expires: ${token.expires_at ?? "never"})`,
        "",
        `  ${token.token}`,
        "",
        "This is the only time the token is shown."
      ].join("\n")
  })
).pipe(Command.withDescription("Create an MCP token for a user (the secret is printed once)"))

const list = adminCommand(
  "list",
  {
    user: Options.text("user").pipe(
      Options.withDescription("Only this user's tokens (email, username or id)"),
      Options.optional
    )
  },
  (options) => ({
    call: (client) => client.adminTokens.list({ urlParams: present("user", options.user) }),
    human: (tokens) => tokens.length === 0 ? "No tokens" : tokens.map(tokenLine).join("\n")
  })
).pipe(Command.withDescription("List tokens (never their secrets)"))

const revoke = adminCommand(
  "revoke",
  { id: Args.text({ name: "token-id" }).pipe(Args.withDescription("The token's id")) },
  (options) => ({
    call: (client) => client.adminTokens.revoke({ path: { id: options.id } }),
    human: (token) => `Revoked ${tokenLine(token)}`
  })
).pipe(Command.withDescription("Revoke a token: it fails from the next request on"))

export const tokens = Command.make("tokens").pipe(
  Command.withDescription("Manage MCP tokens (admin API)"),
  Command.withSubcommands([create, list, revoke])
)
