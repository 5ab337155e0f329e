/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * The owner's share-link page of one Dock page (issue 16, item 7): the page's links with their state, a form to
 * make one (optionally expiring), a revoke button per live link, and a new link's URL shown the one time it exists.
 */
import type { Dock, ShareLink } from "@dock/domain"
import { CsrfField, Layout, Notice, type Viewer } from "./Layout.tsx"
import { dockPath } from "./Paths.ts"

/** How long a new link may live: the choices the form offers, in days (`never`: until revoked). */
export const SHARE_EXPIRY_CHOICES = [
  { value: "1", label: "1 day" },
  { value: "7", label: "7 days" },
  { value: "30", label: "30 days" },
  { value: "never", label: "Never (until revoked)" }
] as const

/** The share page's path (and the form actions under it) for a Dock's page. */
export const sharePath = (dock: Dock, pageSlug: string, sub = "") =>
  dockPath(dock, `/${encodeURIComponent(pageSlug)}/-/share${sub}`)

const readable = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`

const when = (iso: string | null) => iso === null ? null : <time dateTime={iso}>{readable(iso)}</time>

const STATUS: Record<ShareLink["status"], string> = { active: "live", expired: "expired", revoked: "revoked" }

export const SharePage = (
  { viewer, dock, pageSlug, pageTitle, links, created, error }: {
    readonly viewer: Viewer
    readonly dock: Dock
    readonly pageSlug: string
    readonly pageTitle: string
    readonly links: ReadonlyArray<ShareLink>
    /** a link made by this request: its URL holds the secret and is shown only now */
    readonly created?: { readonly url: string; readonly expiresAt: string | null } | undefined
    readonly error?: string | undefined
  }
) => (
  <Layout title={`Share “${pageTitle}”`} viewer={viewer}>
    <p class="muted mono">
      <a href={dockPath(dock)}>{dock.owner.username}/{dock.slug}</a> /{" "}
      <a href={dockPath(dock, `/${encodeURIComponent(pageSlug)}`)}>{pageSlug}</a>
    </p>
    <h1>Share “{pageTitle}”</h1>
    <p>
      A share link shows this page read-only to anyone who has it, without signing in, even when the Dock is private.
      Revoking it, or its expiry, ends it at once.
    </p>
    {error === undefined ? null : <Notice kind="error">{error}</Notice>}
    {created === undefined ? null : (
      <section class="card share-new" aria-labelledby="new-link">
        <h2 id="new-link">Your new link</h2>
        <Notice kind="ok">
          Copy it now: it is shown only this once (Dock keeps only a fingerprint of it).{" "}
          {created.expiresAt === null ? "It lives until you revoke it." : <>It expires {when(created.expiresAt)}.</>}
        </Notice>
        <label>
          Share link
          <input class="mono" type="text" readOnly value={created.url} />
        </label>
      </section>
    )}
    <section class="card" aria-labelledby="make-link">
      <h2 id="make-link">Make a link</h2>
      <form class="stack" method="post" action={sharePath(dock, pageSlug)}>
        <CsrfField token={viewer.csrf} />
        <label>
          Expires after
          <select name="expires">
            {SHARE_EXPIRY_CHOICES.map((choice) => (
              <option key={choice.value} value={choice.value} selected={choice.value === "7"}>{choice.label}</option>
            ))}
          </select>
        </label>
        <div>
          <button type="submit">Make share link</button>
        </div>
      </form>
    </section>
    <h2>Links to this page</h2>
    {links.length === 0 ? <p class="muted">No share links yet.</p> : (
      <div class="table-wrap">
        <table class="share-links">
          <thead>
            <tr>
              <th scope="col">Made</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
              <th scope="col">
                <span class="visually-hidden">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {links.map((link) => (
              <tr key={link.id}>
                <td>
                  {when(link.created_at)}
                  {link.created_by === null ? null : <div class="muted">by {link.created_by}</div>}
                </td>
                <td>{link.expires_at === null ? <span class="muted">never</span> : when(link.expires_at)}</td>
                <td>
                  <span class={`tag share-${link.status}`}>{STATUS[link.status]}</span>
                  {link.revoked_at === null ? null : <div class="muted">{when(link.revoked_at)}</div>}
                </td>
                <td>
                  {link.status !== "active" ? null : (
                    <form method="post" action={sharePath(dock, pageSlug, "/revoke")}>
                      <CsrfField token={viewer.csrf} />
                      <input type="hidden" name="link" value={link.id} />
                      <button
                        type="submit"
                        class="danger"
                        aria-label={`Revoke the link made ${readable(link.created_at)}`}
                      >
                        Revoke
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
    <p class="muted">Dock does not record when a link is opened.</p>
  </Layout>
)
