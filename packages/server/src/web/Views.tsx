/** @jsxRuntime automatic @jsxImportSource preact */
/** The web app's views: plain functions of what they show, rendered on the server (no client script). */
import type { Dock, Role } from "@dock/domain"
import { CodeField, CsrfField, Layout, Notice, type Viewer } from "./Layout.tsx"
import { dockPath } from "./Paths.ts"

const DockList = (
  { docks, empty, roles }: {
    readonly docks: ReadonlyArray<Dock>
    readonly empty: string
    readonly roles?: ReadonlyMap<string, Role> | undefined
  }
) =>
  docks.length === 0 ? <p class="muted">{empty}</p> : (
    <ul class="docks">
      {docks.map((dock) => (
        <li key={dock.id}>
          <a
            class="title"
            href={dockPath(dock)}
          >
            {dock.title}
          </a>
          <span class="tag">{dock.visibility}</span>
          {roles?.get(dock.id) === undefined ? null : <span class="tag">{roles.get(dock.id)}</span>}
          <div class="muted mono">{dock.owner.username}/{dock.slug}</div>
          {dock.description === null ? null : <div>{dock.description}</div>}
        </li>
      ))}
    </ul>
  )

export const HomePage = (
  { viewer, baseUrl, discoverable }: {
    readonly viewer: Viewer | undefined
    readonly baseUrl: string
    readonly discoverable: ReadonlyArray<Dock>
  }
) => (
  <Layout title="Home" viewer={viewer}>
    <h1>Dock: a shared place for what your agents make</h1>
    <p>
      Dock keeps the web pages, Markdown files and small tables your AI agents write, in Docks you own and share. Agents
      write over MCP; people read, review and manage access here.
    </p>
    <p>
      {viewer === undefined
        ? <a class="button" href="/login">Sign in with your email</a>
        : <a class="button" href="/app">Go to my Docks</a>}
    </p>
    <section class="card" aria-labelledby="connect">
      <h2 id="connect">Connect an agent</h2>
      <p>Point your MCP client at this server:</p>
      <pre><code>{`${baseUrl}/mcp`}</code></pre>
      <p class="muted">
        An agent without a token can register itself (see{" "}
        <a href="/auth.md">/auth.md</a>); reading public Docks needs no token at <code>{`${baseUrl}/mcp/public`}</code>.
      </p>
    </section>
    <h2>Public Docks</h2>
    <DockList docks={discoverable} empty="No public Docks are listed yet." />
  </Layout>
)

export const LoginEmailPage = (
  { csrf, next, email, error }: {
    readonly csrf: string
    readonly next: string
    readonly email?: string | undefined
    readonly error?: string | undefined
  }
) => (
  <Layout title="Sign in" viewer={undefined}>
    <h1>Sign in</h1>
    <p>Enter your email address. We mail you a six-digit code; no password needed.</p>
    {error === undefined ? null : <Notice kind="error">{error}</Notice>}
    <form class="stack" method="post" action="/login">
      <CsrfField token={csrf} />
      <input type="hidden" name="next" value={next} />
      <label>
        Email address
        <input type="email" name="email" autocomplete="email" required value={email ?? ""} />
      </label>
      <div>
        <button type="submit">Mail me a code</button>
      </div>
    </form>
  </Layout>
)

export const LoginCodePage = (
  { csrf, next, email, error }: {
    readonly csrf: string
    readonly next: string
    readonly email: string
    readonly error?: string | undefined
  }
) => (
  <Layout title="Enter your code" viewer={undefined}>
    <h1>Check your email</h1>
    {error === undefined
      ? (
        <Notice kind="ok">
          If <strong>{email}</strong> may sign in here, a six-digit code is on its way. It works for 10 minutes.
        </Notice>
      )
      : <Notice kind="error">{error}</Notice>}
    <form class="stack" method="post" action="/login">
      <CsrfField token={csrf} />
      <input type="hidden" name="next" value={next} />
      <input type="hidden" name="email" value={email} />
      <CodeField name="code" />
      <div>
        <button type="submit">Sign in</button>
      </div>
    </form>
    <p>
      <a href={`/login?next=${encodeURIComponent(next)}`}>Use another email or ask for a new code</a>
    </p>
  </Layout>
)

export interface CreateDockForm {
  readonly title?: string | undefined
  readonly slug?: string | undefined
  readonly visibility?: string | undefined
}

export const AppHomePage = (
  { viewer, owned, collaborations, error, form, notice }: {
    readonly viewer: Viewer
    readonly owned: ReadonlyArray<Dock>
    readonly collaborations: ReadonlyArray<{ readonly dock: Dock; readonly role: Role }>
    readonly error?: string | undefined
    readonly form?: CreateDockForm | undefined
    readonly notice?: string | undefined
  }
) => (
  <Layout title="My Docks" viewer={viewer}>
    <h1>My Docks</h1>
    {notice === undefined ? null : <Notice kind="ok">{notice}</Notice>}
    <DockList docks={owned} empty="You own no Docks yet." />
    <h2>Shared with me</h2>
    <DockList
      docks={collaborations.map(({ dock }) => dock)}
      roles={new Map(collaborations.map(({ dock, role }) => [dock.id, role]))}
      empty="Nobody has shared a Dock with you yet."
    />
    <section class="card" aria-labelledby="create">
      <h2 id="create">Create a Dock</h2>
      {error === undefined ? null : <Notice kind="error">{error}</Notice>}
      <form class="stack" method="post" action="/app/buckets">
        <CsrfField token={viewer.csrf} />
        <label>
          Title
          <input type="text" name="title" required maxlength={200} value={form?.title ?? ""} />
        </label>
        <label>
          Slug <span class="hint">lowercase letters, digits and hyphens; from the title when empty</span>
          <input type="text" name="slug" maxlength={100} pattern="[a-z0-9-]*" value={form?.slug ?? ""} />
        </label>
        <fieldset>
          <legend>Visibility</legend>
          <label>
            <input type="radio" name="visibility" value="private" checked={form?.visibility !== "public"} />{" "}
            Private: only you and the people you add
          </label>
          <label>
            <input type="radio" name="visibility" value="public" checked={form?.visibility === "public"} />{" "}
            Public: anyone with the link can read it
          </label>
        </fieldset>
        <div>
          <button type="submit">Create Dock</button>
        </div>
      </form>
    </section>
  </Layout>
)

export const ErrorView = (
  { viewer, title, message }: { readonly viewer: Viewer | undefined; readonly title: string; readonly message: string }
) => (
  <Layout title={title} viewer={viewer}>
    <h1>{title}</h1>
    <p>{message}</p>
    <p>
      <a href={viewer === undefined ? "/" : "/app"}>Back to the start</a>
    </p>
  </Layout>
)
