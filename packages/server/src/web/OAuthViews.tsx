/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * OAuth's pages (issue 17, docs/oauth.md): the consent page a person sees when an MCP client asks for access,
 * the error page for a request that cannot be sent back to the client, and the connected-apps section that lists
 * and revokes a person's grants.
 */
import type { Dock, GrantInfo } from "@dock/domain"
import { CsrfField, Layout, Notice, type Viewer } from "./Layout.tsx"

/** The authorization request as the consent form carries it back (validated again on POST). */
export interface AuthorizeParams {
  readonly client_id: string
  readonly redirect_uri: string
  readonly response_type: string
  readonly code_challenge: string
  readonly code_challenge_method: string
  readonly scope: string
  readonly state: string | undefined
  readonly resource: string
}

const SCOPE_TEXT = {
  "mcp:read": "Read your Docks and their pages",
  "mcp:write": "Create and change pages in your Docks"
} as const

export const ConsentPage = (
  { viewer, clientName, clientUri, redirectHost, params, wantsWrite, docks, error }: {
    readonly viewer: Viewer
    readonly clientName: string
    readonly clientUri: string | null
    readonly redirectHost: string
    readonly params: AuthorizeParams
    readonly wantsWrite: boolean
    readonly docks: ReadonlyArray<Dock>
    readonly error?: string | undefined
  }
) => (
  <Layout title="Allow access" viewer={viewer}>
    <h1>Allow {clientName} to use your Docks?</h1>
    {error === undefined ? null : <Notice kind="error">{error}</Notice>}
    <div class="card">
      <p>
        <strong>{clientName}</strong> is asking to act for you, <strong>{viewer.username}</strong>, on this Dock server.
      </p>
      <p>
        After you answer, you go back to <strong class="mono">{redirectHost}</strong>.
        {clientUri === null ? null : (
          <>
            {" "}The app says it is <span class="mono">{clientUri}</span>.
          </>
        )}
      </p>
      <p class="muted">
        Only allow apps you started connecting yourself. You can revoke access at any time under Agents.
      </p>
    </div>
    <form class="stack" method="post" action="/oauth/authorize">
      <CsrfField token={viewer.csrf} />
      {Object.entries(params).map(([name, value]) =>
        value === undefined ? null : <input key={name} type="hidden" name={name} value={value} />
      )}
      <fieldset>
        <legend>What it may do</legend>
        <label>
          <input type="radio" name="access" value="read" checked={!wantsWrite} /> {SCOPE_TEXT["mcp:read"]} (mcp:read)
        </label>
        {wantsWrite
          ? (
            <label>
              <input type="radio" name="access" value="write" checked /> {SCOPE_TEXT["mcp:write"]} (mcp:read, mcp:write)
            </label>
          )
          : null}
      </fieldset>
      <fieldset>
        <legend>Which Docks it may change</legend>
        <label>
          <input type="radio" name="docks" value="all" checked /> Every Dock I can edit
        </label>
        <label>
          <input type="radio" name="docks" value="some" /> Only the Docks ticked below
        </label>
        {docks.length === 0 ? <p class="muted">You cannot edit any Dock yet.</p> : (
          <div class="oauth-docks">
            {docks.map((dock) => (
              <label key={dock.id}>
                <input type="checkbox" name="dock" value={dock.id} /> {dock.title}{" "}
                <span class="muted mono">{dock.owner.username}/{dock.slug}</span>
              </label>
            ))}
          </div>
        )}
        <p class="muted">Reading follows what you may read; this choice limits writing.</p>
      </fieldset>
      <div class="oauth-actions">
        <button type="submit" name="decision" value="approve">Allow</button>
        <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
      </div>
    </form>
  </Layout>
)

/** A request that cannot go back to the client (no valid client or redirect URI): said here, never redirected. */
export const AuthorizeErrorPage = (
  { viewer, message }: { readonly viewer: Viewer | undefined; readonly message: string }
) => (
  <Layout title="This connection request is not valid" viewer={viewer}>
    <h1>This connection request is not valid</h1>
    <Notice kind="error">{message}</Notice>
    <p>The app that sent you here asked in a way Dock cannot accept. Go back to it and try connecting again.</p>
  </Layout>
)

/**
 * A request from a known client to its registered redirect URI, refused before the person answered: said here,
 * with a link back that carries the error. Never followed by itself, so this server cannot be used to bounce
 * people to wherever an open registration points (RFC 9700 §4.11.2).
 */
export const AuthorizeRefusedPage = (
  { clientName, description, error, location, redirectHost, viewer }: {
    readonly viewer: Viewer | undefined
    readonly clientName: string
    readonly error: string
    readonly description: string
    readonly redirectHost: string
    /** The redirect URI with error, error_description, state and iss. */
    readonly location: string
  }
) => (
  <Layout title="This connection request is not valid" viewer={viewer}>
    <h1>This connection request is not valid</h1>
    <Notice kind="error">
      {description} (<span class="mono">{error}</span>)
    </Notice>
    <p>
      <strong>{clientName}</strong> asked in a way Dock cannot accept, so nothing was shared. Its answer goes to{" "}
      <strong class="mono">{redirectHost}</strong>; go back there only if you started connecting this app yourself.
    </p>
    <p>
      <a href={location} rel="noreferrer">Return to {redirectHost}</a>
    </p>
  </Layout>
)

const dateText = (date: Date | null) =>
  date === null ? "never" : date.toISOString().slice(0, 16).replace("T", " ") + " UTC"

/** The person's connected apps (OAuth grants), each with a revoke button. Joins /app/mcp. */
export const OAuthGrantsSection = (
  { viewer, grants, dockNames }: {
    readonly viewer: Viewer
    readonly grants: ReadonlyArray<GrantInfo>
    /** Titles of the Docks grants name, by id (a Dock the person can no longer see shows as its id). */
    readonly dockNames: ReadonlyMap<string, string>
  }
) => (
  <section aria-labelledby="oauth-grants">
    <h2 id="oauth-grants">Connected apps</h2>
    <p class="muted">Apps you allowed through “Connect” (OAuth). Revoking one stops it at once.</p>
    {grants.length === 0 ? <p class="muted">No app is connected.</p> : (
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">App</th>
              <th scope="col">May</th>
              <th scope="col">Docks</th>
              <th scope="col">Allowed</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Revoke</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {grants.map((grant) => (
              <tr key={grant.id}>
                <td>
                  {grant.clientName}
                  <div class="muted mono oauth-client-id">{grant.clientId}</div>
                </td>
                <td>{grant.scopes.includes("mcp:write") ? "read and write" : "read"}</td>
                <td>
                  {grant.allowedBucketIds === null
                    ? "all I can edit"
                    : grant.allowedBucketIds.map((id) => dockNames.get(id) ?? id).join(", ")}
                </td>
                <td>{dateText(grant.createdAt)}</td>
                <td>{dateText(grant.lastUsedAt)}</td>
                <td>
                  <form method="post" action={`/app/mcp/oauth/${grant.id}/revoke`}>
                    <CsrfField token={viewer.csrf} />
                    <button type="submit" class="secondary" aria-label={`Revoke ${grant.clientName}`}>Revoke</button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
  </section>
)

/** GET /docs/connect/agents: how to connect each kind of agent to this server, its URLs filled in. */
export const ConnectAgentsPage = (
  { baseUrl, viewer, anonymousRegistration }: {
    readonly baseUrl: string
    readonly viewer: Viewer | undefined
    readonly anonymousRegistration: boolean
  }
) => {
  const mcp = `${baseUrl}/mcp`
  return (
    <Layout title="Connect an agent" viewer={viewer}>
      <h1>Connect an agent</h1>
      <p>
        Dock's MCP server is{" "}
        <code>{mcp}</code>. Apps that speak OAuth only need this URL: they send you here to sign in and allow them, and
        you choose whether they may write and to which Docks. You can revoke them under <a href="/app/mcp">Agents</a>.
      </p>
      <h2>Claude (claude.ai and Claude Desktop)</h2>
      <p>
        Settings → Connectors → Add custom connector; URL{" "}
        <code>{mcp}</code>. Leave the OAuth client fields empty: Claude registers itself.
      </p>
      <h2>ChatGPT</h2>
      <p>
        Settings → Connectors (developer mode) → Create; MCP server URL <code>{mcp}</code>, authentication OAuth.
      </p>
      <h2>Claude Code</h2>
      <pre><code>{`claude mcp add --transport http dock ${mcp}`}</code></pre>
      <p>
        Then run <code>/mcp</code> in Claude Code and choose Authenticate.
      </p>
      <h2>Cursor</h2>
      <p>
        In <code>~/.cursor/mcp.json</code>:
      </p>
      <pre><code>{JSON.stringify({ mcpServers: { dock: { url: mcp } } }, null, 2)}</code></pre>
      <h2>VS Code</h2>
      <p>
        In <code>.vscode/mcp.json</code>:
      </p>
      <pre><code>{JSON.stringify({ servers: { dock: { type: "http", url: mcp } } }, null, 2)}</code></pre>
      <h2>MCP Inspector</h2>
      <pre><code>{`npx @modelcontextprotocol/inspector`}</code></pre>
      <p>
        Transport Streamable HTTP, URL <code>{mcp}</code>, then Open Auth Settings → Quick OAuth Flow.
      </p>
      <h2>Headless agents</h2>
      <p>
        An agent with no browser uses a token in the <code>Authorization: Bearer</code>{" "}
        header: a personal token from your operator (<code>dock tokens create</code>){anonymousRegistration
          ? <>, or an anonymous registration that gives it a sandbox Dock a person can claim later</>
          : null}. How: <a href="/auth.md">{`${baseUrl}/auth.md`}</a>.
      </p>
      <h2>For client developers</h2>
      <p>
        Authorization server metadata:{" "}
        <code>{`${baseUrl}/.well-known/oauth-authorization-server`}</code>; protected resource metadata:{" "}
        <code>{`${baseUrl}/.well-known/oauth-protected-resource/mcp`}</code>. Authorization code with PKCE (S256),
        dynamic client registration or an https Client ID Metadata Document, scopes <code>mcp:read</code> and{" "}
        <code>mcp:write</code>, <code>resource={mcp}</code>.
      </p>
    </Layout>
  )
}
