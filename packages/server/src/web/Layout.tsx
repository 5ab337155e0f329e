/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * The one layout every web-app page renders in: the header (brand, the signed-in person's links and the sign-out
 * form, or "Sign in"), a skip link, `<main>`, and the stylesheet. Pages pass their content as children.
 */
import type { ComponentChildren } from "preact"

/** Who is looking, as the layout needs it: the person and the CSRF token for the sign-out form. */
export interface Viewer {
  readonly username: string
  readonly csrf: string
}

/** The hidden CSRF field every form carries. */
export const CsrfField = ({ token }: { readonly token: string }) => <input type="hidden" name="csrf" value={token} />

/** The six-digit code an email brought (sign-in, claim): numeric, one-time-code autofill. */
export const CodeField = ({ name }: { readonly name: string }) => (
  <label>
    Six-digit code
    <input
      class="code mono"
      type="text"
      name={name}
      inputmode="numeric"
      autocomplete="one-time-code"
      pattern="[0-9]{6}"
      maxlength={6}
      required
    />
  </label>
)

export const Layout = (
  { title, viewer, here, children }: {
    readonly title: string
    readonly viewer: Viewer | undefined
    /** The page's own path, where the page knows it: "Sign in" comes back here rather than to /app. */
    readonly here?: string | undefined
    readonly children: ComponentChildren
  }
) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${title} · Dock`}</title>
      <link rel="stylesheet" href="/app.css" />
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <a class="brand" href={viewer === undefined ? "/" : "/app"}>Dock</a>
        <nav aria-label="Main">
          {viewer === undefined
            ? <a href={here === undefined ? "/login" : `/login?next=${encodeURIComponent(here)}`}>Sign in</a>
            : (
              <>
                <a href="/app">My Docks</a>
                <a href="/app/mcp">Agents</a>
                <span class="muted">{viewer.username}</span>
                <form method="post" action="/logout">
                  <CsrfField token={viewer.csrf} />
                  <button type="submit" class="link">Sign out</button>
                </form>
              </>
            )}
        </nav>
      </header>
      <main id="main">{children}</main>
    </body>
  </html>
)

/** A message above a form: `ok` for what happened, `error` for what must change. */
export const Notice = ({ kind, children }: { readonly kind: "ok" | "error"; readonly children: ComponentChildren }) => (
  <p class={`notice ${kind}`} role={kind === "error" ? "alert" : "status"}>{children}</p>
)
