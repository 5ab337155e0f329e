/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * Connected agents (`/app/mcp`, spec §5.7): the person's tokens, the form that makes one, and the page that shows
 * a new secret once with copy-paste setup for common MCP clients. Views only: the routes fetch, the domain decides.
 */
import type { CreatedToken, Dock, TokenInfo } from "@dock/domain"
import { OWN_TOKEN_LIFETIMES_DAYS } from "@dock/domain"
import type { ComponentChildren } from "preact"
import { CsrfField, Layout, Notice, type Viewer } from "./Layout.tsx"
import { dockPath } from "./Paths.ts"

/** What the create form held when it is shown again with an error. */
export interface TokenForm {
  readonly label?: string | undefined
  readonly access?: "read" | "write" | undefined
  readonly docks?: "all" | "chosen" | undefined
  readonly dockIds?: ReadonlyArray<string> | undefined
  readonly expires?: string | undefined
}

const KIND: Record<TokenInfo["kind"], string> = {
  personal: "Personal",
  claimed_from_anonymous: "Claimed sandbox",
  anonymous: "Sandbox (unclaimed)",
  oauth: "OAuth"
}

/** `2026-11-25 04:31 UTC`: one readable form for every time on the page. */
export const when = (iso: string | null, none = "never") =>
  iso === null ? none : `${iso.slice(0, 16).replace("T", " ")} UTC`

export const tokenStatus = (token: TokenInfo, now: number): "active" | "revoked" | "expired" =>
  token.revoked_at !== null
    ? "revoked"
    : token.expires_at !== null && Date.parse(token.expires_at) <= now
    ? "expired"
    : "active"

const DockNames = (
  { ids, docks }: { readonly ids: TokenInfo["allowed_bucket_ids"]; readonly docks: ReadonlyMap<string, Dock> }
) =>
  ids === null ? <span>All Docks you can write</span> : (
    <ul class="plain">
      {ids.map((id) => {
        const dock = docks.get(id)
        return (
          <li key={id}>
            {dock === undefined
              ? <span class="muted">a Dock you no longer see</span>
              : <a href={dockPath(dock)}>{dock.title}</a>}
          </li>
        )
      })}
    </ul>
  )

const TokenList = (
  { tokens, docks, csrf, now }: {
    readonly tokens: ReadonlyArray<TokenInfo>
    readonly docks: ReadonlyMap<string, Dock>
    readonly csrf: string
    readonly now: number
  }
) => (
  <ul class="tokens">
    {tokens.map((token) => <TokenRow key={token.id} token={token} docks={docks} csrf={csrf} now={now} />)}
  </ul>
)

const TokenRow = (
  { token, docks, csrf, now }: {
    readonly token: TokenInfo
    readonly docks: ReadonlyMap<string, Dock>
    readonly csrf: string
    readonly now: number
  }
) => {
  const status = tokenStatus(token, now)
  const name = token.label ?? "Unnamed token"
  return (
    <li class={`token ${status}`}>
      <div class="token-head">
        <strong>{name}</strong>
        <span class="tag">{KIND[token.kind]}</span>
        <span class={`tag status-${status}`}>{status}</span>
      </div>
      <dl class="facts">
        <dt>Access</dt>
        <dd>{token.scopes.includes("mcp:write") ? "Read and write" : "Read only"} ({token.scopes.join(", ")})</dd>
        <dt>Docks</dt>
        <dd>
          <DockNames ids={token.allowed_bucket_ids} docks={docks} />
        </dd>
        <dt>Created</dt>
        <dd>{when(token.created_at)}</dd>
        <dt>Last used</dt>
        <dd>{when(token.last_used_at, "not yet")}</dd>
        <dt>{status === "expired" ? "Expired" : "Expires"}</dt>
        <dd>{when(token.expires_at)}</dd>
        {token.revoked_at === null ? null : (
          <>
            <dt>Revoked</dt>
            <dd>{when(token.revoked_at)}</dd>
          </>
        )}
      </dl>
      {status !== "active" ? null : (
        <div class="actions">
          {token.kind === "oauth" ? null : (
            <form method="post" action={`/app/mcp/tokens/${token.id}/rotate`}>
              <CsrfField token={csrf} />
              <button type="submit" class="secondary" aria-label={`Rotate ${name}`}>Rotate</button>
            </form>
          )}
          <form method="post" action={`/app/mcp/tokens/${token.id}/revoke`}>
            <CsrfField token={csrf} />
            <button type="submit" class="danger" aria-label={`Revoke ${name}`}>Revoke</button>
          </form>
        </div>
      )}
    </li>
  )
}

/**
 * `/app/mcp`. `extra` is rendered after the token list: other connections (OAuth grants) add their section there.
 * `docks` maps every Dock id the page may name (the person's writable Docks and those the tokens name) to it.
 */
export const AgentsPage = (
  { viewer, baseUrl, tokens, writable, docks, now, notice, error, form, extra }: {
    readonly viewer: Viewer
    readonly baseUrl: string
    readonly tokens: ReadonlyArray<TokenInfo>
    readonly writable: ReadonlyArray<Dock>
    readonly docks: ReadonlyMap<string, Dock>
    readonly now: number
    readonly notice?: string | undefined
    readonly error?: string | undefined
    readonly form?: TokenForm | undefined
    readonly extra?: ComponentChildren
  }
) => {
  const active = tokens.filter((token) => tokenStatus(token, now) === "active")
  const ended = tokens.filter((token) => tokenStatus(token, now) !== "active")
  const chosen = new Set(form?.dockIds ?? [])
  const expires = form?.expires ?? "90"
  return (
    <Layout title="Connected agents" viewer={viewer}>
      <h1>Connected agents</h1>
      <p>
        Agents connect to <code>{`${baseUrl}/mcp`}</code>{" "}
        with a token. Make one per agent or machine; rotate or revoke it here at any time. A token acts as you, within
        the access and Docks you give it.
      </p>
      {notice === undefined ? null : <Notice kind="ok">{notice}</Notice>}

      <section class="card" aria-labelledby="create-token">
        <h2 id="create-token">Create a token</h2>
        {error === undefined ? null : <Notice kind="error">{error}</Notice>}
        <form class="stack" method="post" action="/app/mcp/tokens">
          <CsrfField token={viewer.csrf} />
          <label>
            Label <span class="hint">the agent or machine that will use it</span>
            <input type="text" name="label" required maxlength={100} value={form?.label ?? ""} />
          </label>
          <fieldset>
            <legend>Access</legend>
            <label>
              <input type="radio" name="access" value="read" checked={form?.access === "read"} /> Read only (mcp:read)
            </label>
            <label>
              <input type="radio" name="access" value="write" checked={form?.access !== "read"} />{" "}
              Read and write (mcp:read, mcp:write)
            </label>
          </fieldset>
          <fieldset>
            <legend>Docks it may change</legend>
            <label>
              <input type="radio" name="docks" value="all" checked={form?.docks !== "chosen"} /> All Docks I can write
            </label>
            <label>
              <input type="radio" name="docks" value="chosen" checked={form?.docks === "chosen"} />{" "}
              Only the Docks chosen below
            </label>
            {writable.length === 0
              ? <p class="muted">You cannot write to any Dock yet.</p>
              : (
                <div class="choices">
                  {writable.map((dock) => (
                    <label key={dock.id}>
                      <input type="checkbox" name="dock" value={dock.id} checked={chosen.has(dock.id)} />
                      <span>
                        {dock.title}
                        <span class="muted mono">{dock.owner.username}/{dock.slug}</span>
                      </span>
                    </label>
                  ))}
                </div>
              )}
          </fieldset>
          <label>
            Expires
            <select name="expires">
              {OWN_TOKEN_LIFETIMES_DAYS.map((days) => (
                <option key={days} value={String(days)} selected={expires === String(days)}>in {days} days</option>
              ))}
              <option value="never" selected={expires === "never"}>never</option>
            </select>
          </label>
          <div>
            <button type="submit">Create token</button>
          </div>
        </form>
      </section>

      <section aria-labelledby="tokens">
        <h2 id="tokens">Your tokens</h2>
        {active.length === 0 ?
          <p class="muted">No active tokens.</p> :
          <TokenList tokens={active} docks={docks} csrf={viewer.csrf} now={now} />}
        {ended.length === 0 ? null : (
          <details>
            <summary>Revoked and expired ({ended.length})</summary>
            <TokenList tokens={ended} docks={docks} csrf={viewer.csrf} now={now} />
          </details>
        )}
      </section>
      {extra}
    </Layout>
  )
}

/** The MCP client setups for a token, each as the text to paste. */
export const clientSetups = (baseUrl: string, secret: string) => {
  const url = `${baseUrl}/mcp`
  const headers = { Authorization: `Bearer ${secret}` }
  return {
    claudeCode: `claude mcp add --transport http dock ${url} --header "Authorization: Bearer ${secret}"`,
    cursor: JSON.stringify({ mcpServers: { dock: { url, headers } } }, null, 2),
    vscode: JSON.stringify({ servers: { dock: { type: "http", url, headers } } }, null, 2),
    inspector:
      `npx @modelcontextprotocol/inspector --cli ${url} --transport http --header "Authorization: Bearer ${secret}" --method tools/list`,
    url
  }
}

/** A copy button for the element `target` (hidden until /app.js shows it: without the script, select the text). */
const CopyButton = ({ target, label }: { readonly target: string; readonly label: string }) => (
  <button type="button" class="secondary copy" data-copy={target} aria-label={label} hidden>Copy</button>
)

const Snippet = ({ id, title, children, text }: {
  readonly id: string
  readonly title: string
  readonly children?: ComponentChildren
  readonly text: string
}) => (
  <section class="card" aria-labelledby={id}>
    <h3 id={id}>{title}</h3>
    {children}
    <pre><code id={`${id}-text`}>{text}</code></pre>
    <CopyButton target={`${id}-text`} label={`Copy the ${title} setup`} />
  </section>
)

/** A token's secret, shown once (after creation or rotation), with setup for common clients. */
export const TokenSecretPage = (
  { viewer, baseUrl, token, rotated }: {
    readonly viewer: Viewer
    readonly baseUrl: string
    readonly token: CreatedToken
    readonly rotated: boolean
  }
) => {
  const setups = clientSetups(baseUrl, token.token)
  return (
    <Layout title="Your new token" viewer={viewer}>
      <h1>{rotated ? "Token rotated" : "Token created"}: {token.label ?? "unnamed"}</h1>
      <Notice kind="ok">
        {rotated ? "The old secret no longer works. " : ""}
        Copy the token now: it is shown only this once. Dock keeps only its hash.
      </Notice>
      <label class="secret">
        Token
        <input id="secret" class="mono" type="text" readonly value={token.token} aria-describedby="secret-hint" />
      </label>
      <CopyButton target="secret" label="Copy the token" />
      <p id="secret-hint" class="muted">
        Access: {token.scopes.join(", ")} · Expires: {when(token.expires_at)}
      </p>
      <h2>Connect a client</h2>
      <Snippet id="claude-code" title="Claude Code" text={setups.claudeCode}>
        <p>Run in a terminal:</p>
      </Snippet>
      <Snippet id="cursor" title="Cursor" text={setups.cursor}>
        <p>
          Add to <code>~/.cursor/mcp.json</code> (or <code>.cursor/mcp.json</code> in a project):
        </p>
      </Snippet>
      <Snippet id="vscode" title="VS Code" text={setups.vscode}>
        <p>
          Add to <code>.vscode/mcp.json</code> in your workspace:
        </p>
      </Snippet>
      <Snippet id="inspector" title="MCP Inspector" text={setups.inspector}>
        <p>
          Run <code>npx @modelcontextprotocol/inspector</code>, choose the Streamable HTTP transport, enter{" "}
          <code>{setups.url}</code> and add the header <code>Authorization: Bearer …</code>{" "}
          with the token above. Or list the tools from a terminal:
        </p>
      </Snippet>
      <p>
        <a class="button" href="/app/mcp">Done: back to connected agents</a>
      </p>
      <script src="/app.js" defer />
    </Layout>
  )
}
