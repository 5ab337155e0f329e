/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * The claim page for people (`/claim`, issue 16 item 10): the claim token an agent got at registration and the
 * person's email, then the mailed six-digit code, then the sandbox Dock in their account.
 */
import type { Dock } from "@dock/domain"
import { CodeField, CsrfField, Layout, Notice, type Viewer } from "./Layout.tsx"
import { dockPath } from "./Paths.ts"

export const ClaimStartPage = (
  { viewer, csrf, token, email, fixedEmail, error }: {
    readonly viewer: Viewer | undefined
    readonly csrf: string
    readonly token: string
    readonly email?: string | undefined
    /** Signed in: the sandbox goes to this account's email, not one typed here. */
    readonly fixedEmail?: string | undefined
    readonly error?: string | undefined
  }
) => (
  <Layout title="Claim an agent's sandbox" viewer={viewer}>
    <h1>Claim an agent's sandbox</h1>
    <p>
      An agent registered on its own and wrote into a private sandbox Dock. Claim it to keep what it made: the Dock
      moves into your account and the agent's token keeps working, confined to that Dock.
    </p>
    {error === undefined ? null : <Notice kind="error">{error}</Notice>}
    <form class="stack" method="post" action="/claim">
      <CsrfField token={csrf} />
      <label>
        Claim token <span class="hint">the registration_id your agent received</span>
        <input class="mono" type="text" name="claim_token" required maxlength={200} autocomplete="off" value={token} />
      </label>
      {fixedEmail === undefined
        ? (
          <label>
            Your email address <span class="hint">we mail you a six-digit code</span>
            <input type="email" name="email" autocomplete="email" required value={email ?? ""} />
          </label>
        )
        : (
          <p>
            <input type="hidden" name="email" value={fixedEmail} />
            The sandbox goes to your account, <strong>{fixedEmail}</strong>; the code is mailed there.
          </p>
        )}
      <div>
        <button type="submit">Mail me a code</button>
      </div>
    </form>
  </Layout>
)

export const ClaimCodePage = (
  { viewer, csrf, token, email, expires, error }: {
    readonly viewer: Viewer | undefined
    readonly csrf: string
    readonly token: string
    readonly email: string
    readonly expires?: string | undefined
    readonly error?: string | undefined
  }
) => (
  <Layout title="Enter your claim code" viewer={viewer}>
    <h1>Check your email</h1>
    {error === undefined
      ? (
        <Notice kind="ok">
          A six-digit code is on its way to <strong>{email}</strong>. It works for a few minutes.
        </Notice>
      )
      : <Notice kind="error">{error}</Notice>}
    <form class="stack" method="post" action="/claim">
      <CsrfField token={csrf} />
      <input type="hidden" name="claim_token" value={token} />
      <input type="hidden" name="email" value={email} />
      <CodeField name="otp" />
      <div>
        <button type="submit">Claim the sandbox</button>
      </div>
    </form>
    {expires === undefined ?
      null :
      <p class="muted">The claim window of this sandbox ends {expires.slice(0, 16).replace("T", " ")} UTC.</p>}
    <p>
      <a href={`/claim?token=${encodeURIComponent(token)}`}>Use another email or ask for a new code</a>
    </p>
  </Layout>
)

/**
 * Who is looking at a finished claim: the account the sandbox went to, another account, or nobody (a claim never
 * signs anyone in: the person signs in for the Dock).
 */
export type ClaimedAccess = "owner" | "other-account" | "signed-out"

export const ClaimedPage = (
  { viewer, dock, email, access }: {
    readonly viewer: Viewer | undefined
    readonly dock: Dock
    readonly email: string
    readonly access: ClaimedAccess
  }
) => (
  <Layout title="Sandbox claimed" viewer={viewer}>
    <h1>Sandbox claimed</h1>
    <Notice kind="ok">
      <strong>{dock.title}</strong> is now in the account of {email}. The agent's token keeps working inside it.
    </Notice>
    {access === "owner"
      ? (
        <p>
          <a class="button" href={dockPath(dock)}>Open {dock.title}</a>
        </p>
      )
      : access === "signed-out"
      ? (
        <p>
          <a class="button" href={`/login?next=${encodeURIComponent(dockPath(dock))}`}>Sign in to open it</a>
        </p>
      )
      : (
        <p>
          You are signed in to another account. Sign out, then sign in as {email} to open the Dock.
        </p>
      )}
    <p>
      The agent's token is listed under <a href="/app/mcp">Connected agents</a>, where you can rotate or revoke it.
    </p>
  </Layout>
)

/** A verified-email registration completed here: its new token, shown this once. */
export const CredentialPage = (
  { viewer, credential, email }: {
    readonly viewer: Viewer | undefined
    readonly credential: string
    readonly email: string
  }
) => (
  <Layout title="Registration completed" viewer={viewer}>
    <h1>Registration completed</h1>
    <Notice kind="ok">
      A token for the account of {email} was issued. Copy it now and give it to your agent: it is shown only this once.
    </Notice>
    <label class="secret">
      Token
      <input class="mono" type="text" readonly value={credential} />
    </label>
    <p>
      Manage it under <a href="/app/mcp">Connected agents</a>.
    </p>
  </Layout>
)
