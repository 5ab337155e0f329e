/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * The Dock's own pages in the web app (docs/web.md, "The Dock view, settings and members"): the Dock view (pages
 * with their author agent, Micro DB tables, sources, images, recent activity, Fork), a live Micro DB table, the
 * owner's settings and delete form, and the members page. Plain functions of what they show; no client script.
 */
import type {
  ActivityItem,
  Dock,
  ImageSummary,
  Member,
  MicroDbRow,
  MicroDbTable,
  PageAuthor,
  Part,
  Source
} from "@dock/domain"
import { cellText, columnsInOrder } from "../http/MicroDbPage.ts"
import { CsrfField, Layout, Notice, type Viewer } from "./Layout.tsx"
import { dockPath } from "./Paths.ts"

const KIND: Record<string, string> = { web_page: "web page", markdown_file: "Markdown", micro_db: "Micro DB" }

/** An ISO time as "YYYY-MM-DD HH:MM" (UTC), in a <time> element. */
const When = ({ at }: { readonly at: string }) => <time dateTime={at}>{at.slice(0, 16).replace("T", " ")}</time>

const sizeText = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
    ? `${(bytes / 1024).toFixed(1)} KB`
    : `${(bytes / 1024 / 1024).toFixed(1)} MB`

/** Who wrote something: the person, and the agent (token label) they wrote through, if any. */
const Author = ({ username, agent }: { readonly username: string | null; readonly agent: string | null }) =>
  username === null
    ? <span class="author">{agent ?? "someone"}</span>
    : (
      <span class="author">
        <span>{username}</span>
        {agent === null ? null : (
          <>
            {" "}
            <span class="agent">via {agent}</span>
          </>
        )}
      </span>
    )

/** The Dock's name line and heading, shared by its pages. */
const DockHeading = ({ dock, sub }: { readonly dock: Dock; readonly sub?: string | undefined }) => (
  <>
    <p class="muted mono crumbs">
      {sub === undefined ? `${dock.owner.username}/${dock.slug}` : (
        <>
          <a href={dockPath(dock)}>{dock.owner.username}/{dock.slug}</a> / {sub}
        </>
      )}
    </p>
  </>
)

export interface DockViewData {
  readonly dock: Dock
  readonly owner: boolean
  readonly canFork: boolean
  readonly pages: ReadonlyArray<Part>
  readonly authors: ReadonlyMap<string, PageAuthor>
  readonly olderPages: string | null
  readonly firstPage: boolean
  readonly tables: ReadonlyArray<MicroDbTable>
  readonly sources: ReadonlyArray<Source>
  readonly images: ReadonlyArray<ImageSummary>
  /** Thumbnails load only where the image route serves them to this page (a public Dock's images). */
  readonly thumbnails: boolean
  readonly activity: ReadonlyArray<ActivityItem>
  readonly notice?: string | undefined
  readonly error?: string | undefined
}

const ACTION: Record<string, string> = {
  "dock.created": "created the Dock",
  "dock.updated": "updated the Dock",
  "dock.metadata_updated": "changed the Dock's settings",
  "dock.forked": "forked the Dock"
}

/** "micro_db.rows.inserted" → "micro db rows inserted", and the page's title when it is one listed here. */
const actionText = (item: ActivityItem, titles: ReadonlyMap<string, string>) => {
  const what = ACTION[item.action] ?? item.action.replaceAll(/[._]/g, " ")
  const title = item.subject_id === null ? undefined : titles.get(item.subject_id)
  return title === undefined ? what : `${what}: ${title}`
}

export const DockPage = ({ viewer, data }: { readonly viewer: Viewer | undefined; readonly data: DockViewData }) => {
  const { dock } = data
  const titles = new Map(data.pages.map((page) => [page.id, page.title ?? page.slug ?? page.public_slug]))
  return (
    <Layout title={dock.title} viewer={viewer} here={dockPath(dock)}>
      <DockHeading dock={dock} />
      <h1>
        {dock.title}
        <span class="tag">{dock.visibility}</span>
      </h1>
      {dock.description === null ? null : <p>{dock.description}</p>}
      {data.notice === undefined ? null : <Notice kind="ok">{data.notice}</Notice>}
      {data.error === undefined ? null : <Notice kind="error">{data.error}</Notice>}
      {data.owner || data.canFork
        ? (
          <div class="dock-actions">
            {data.owner
              ? (
                <>
                  <a class="button secondary" href={dockPath(dock, "/-/settings")}>Settings</a>
                  <a class="button secondary" href={dockPath(dock, "/-/members")}>Members</a>
                </>
              )
              : null}
            {data.canFork
              ? viewer === undefined
                ? (
                  <a class="button secondary" href={`/login?next=${encodeURIComponent(dockPath(dock))}`}>
                    Sign in to fork
                  </a>
                )
                : (
                  <form method="post" action={dockPath(dock, "/-/fork")}>
                    <CsrfField token={viewer.csrf} />
                    <button type="submit">Fork this Dock</button>
                  </form>
                )
              : null}
          </div>
        )
        : null}

      <section id="pages" aria-labelledby="pages-heading">
        <h2 id="pages-heading">Pages</h2>
        {data.pages.length === 0
          ? (
            <p class="muted">
              {data.firstPage ? "No pages yet. Connect an agent and ask it to write here." : "No older pages."}
            </p>
          )
          : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Title</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Updated</th>
                    <th scope="col">Author</th>
                  </tr>
                </thead>
                <tbody>
                  {data.pages.map((page) => {
                    const author = data.authors.get(page.id)
                    const href = page.page_kind === "micro_db"
                      ? `${dockPath(dock)}#tables`
                      : dockPath(dock, `/${encodeURIComponent(page.slug ?? page.public_slug)}`)
                    return (
                      <tr key={page.id}>
                        <td>
                          <a href={href}>{page.title ?? page.slug ?? page.public_slug}</a>
                        </td>
                        <td>{KIND[page.page_kind] ?? page.page_kind}</td>
                        <td>
                          <When at={page.last_updated} />
                        </td>
                        <td>
                          {author === undefined
                            ? <span class="muted">unknown</span>
                            : <Author username={author.username} agent={author.agent_label} />}
                        </td>
                      </tr>
                    )
                  })}
                </tbody>
              </table>
            </div>
          )}
        <p class="pager">
          {data.firstPage ? null : <a href={dockPath(dock)}>Newest pages</a>}
          {data.olderPages === null
            ? null
            : <a href={`${dockPath(dock)}&cursor=${encodeURIComponent(data.olderPages)}`}>Older pages</a>}
        </p>
      </section>

      <section id="tables" aria-labelledby="tables-heading">
        <h2 id="tables-heading">Micro DB tables</h2>
        {data.tables.length === 0 ? <p class="muted">No tables yet.</p> : (
          <ul class="plain">
            {data.tables.map((table) => (
              <li key={table.id}>
                <a href={dockPath(dock, `/-/tables/${encodeURIComponent(table.slug)}`)}>{table.name}</a>{" "}
                <span class="muted">
                  {table.row_count} {table.row_count === 1 ? "row" : "rows"}, {table.columns.length}{" "}
                  {table.columns.length === 1 ? "column" : "columns"}
                </span>
                {table.description === null || table.description === "" ? null : <div>{table.description}</div>}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="sources-heading">
        <h2 id="sources-heading">Sources</h2>
        {data.sources.length === 0 ? <p class="muted">No sources.</p> : (
          <ul class="plain">
            {data.sources.map((source) => (
              <li key={source.source_id}>
                <strong>{source.title}</strong>{" "}
                <span class="muted">
                  {source.media_type}, {sizeText(source.size_bytes)}, added <When at={source.created_at} />
                </span>
                <div class="muted mono">{source.origin}</div>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="images-heading">
        <h2 id="images-heading">Images</h2>
        {data.images.length === 0 ? <p class="muted">No images.</p> : (
          <ul class="images">
            {data.images.map((image) => (
              <li key={image.id}>
                {data.thumbnails
                  ? <img src={image.path} alt={image.alt_text} width={160} height={120} loading="lazy" />
                  : null}
                <div>
                  <strong class="filename">{image.filename}</strong>
                  <div class="muted">
                    {image.width}×{image.height}, {sizeText(image.size_bytes)}, <When at={image.created_at} />
                  </div>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="activity-heading">
        <h2 id="activity-heading">Recent activity</h2>
        {data.activity.length === 0 ? <p class="muted">Nothing yet.</p> : (
          <ul class="plain activity">
            {data.activity.map((item, index) => (
              <li key={index}>
                <When at={item.created_at} /> <Author username={item.actor.username} agent={item.actor.agent_label} />
                {" "}
                {actionText(item, titles)}
              </li>
            ))}
          </ul>
        )}
      </section>
    </Layout>
  )
}

/** One Micro DB table, live: its columns (with types) and a page of its rows, newest first. */
export const TablePage = (
  { viewer, dock, table, rows, offset, next }: {
    readonly viewer: Viewer | undefined
    readonly dock: Dock
    readonly table: MicroDbTable
    readonly rows: ReadonlyArray<MicroDbRow>
    readonly offset: number
    readonly next: number | null
  }
) => {
  const columns = columnsInOrder(table)
  const here = dockPath(dock, `/-/tables/${encodeURIComponent(table.slug)}`)
  return (
    <Layout title={`${table.name} · ${dock.title}`} viewer={viewer} here={here}>
      <DockHeading dock={dock} sub="tables" />
      <h1>{table.name}</h1>
      {table.description === null || table.description === "" ? null : <p>{table.description}</p>}
      <p class="muted">
        {table.row_count} {table.row_count === 1 ? "row" : "rows"}, newest first; updated <When at={table.updated_at} />
      </p>
      {columns.length === 0 ? <p class="muted">This table has no columns yet.</p> : (
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                {columns.map((column) => (
                  <th scope="col" key={column.slug}>
                    {column.name}
                    <span class="type">{column.type}</span>
                  </th>
                ))}
                <th scope="col">
                  Added<span class="type">created_at</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id}>
                  {columns.map((column) => <td key={column.slug}>{cellText(row.data[column.slug])}</td>)}
                  <td>
                    <When at={row.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {rows.length === 0 && columns.length > 0
        ? <p class="muted">{offset === 0 ? "No rows yet." : "No more rows."}</p>
        : null}
      <p class="pager">
        {offset === 0 ? null : <a href={here}>Newest rows</a>}
        {next === null ? null : <a href={`${here}&cursor=${next}`}>Older rows</a>}
      </p>
    </Layout>
  )
}

export interface SettingsForm {
  readonly title: string
  readonly description: string
  readonly visibility: "private" | "public"
  readonly discoverable: boolean
  readonly allowForks: boolean
}

export const settingsFormOf = (dock: Dock): SettingsForm => ({
  title: dock.title,
  description: dock.description ?? "",
  visibility: dock.visibility,
  discoverable: dock.discoverable,
  allowForks: dock.allow_forks
})

export const SettingsPage = (
  { viewer, dock, form, notice, error, deleteError }: {
    readonly viewer: Viewer
    readonly dock: Dock
    readonly form: SettingsForm
    readonly notice?: string | undefined
    readonly error?: string | undefined
    readonly deleteError?: string | undefined
  }
) => (
  <Layout title={`Settings · ${dock.title}`} viewer={viewer}>
    <DockHeading dock={dock} sub="settings" />
    <h1>Settings</h1>
    {notice === undefined ? null : <Notice kind="ok">{notice}</Notice>}
    {error === undefined ? null : <Notice kind="error">{error}</Notice>}
    <form class="stack" method="post" action={dockPath(dock, "/-/settings")}>
      <CsrfField token={viewer.csrf} />
      <label>
        Title
        <input type="text" name="title" required maxlength={200} value={form.title} />
      </label>
      <label>
        Description
        <textarea name="description" rows={3} maxlength={2000}>{form.description}</textarea>
      </label>
      <fieldset>
        <legend>Visibility</legend>
        <label>
          <input type="radio" name="visibility" value="private" checked={form.visibility === "private"} />{" "}
          Private: only you and your members
        </label>
        <label>
          <input type="radio" name="visibility" value="public" checked={form.visibility === "public"} />{" "}
          Public: anyone with the link can read it
        </label>
      </fieldset>
      <fieldset>
        <legend>When public</legend>
        <label>
          <input type="checkbox" name="discoverable" value="on" checked={form.discoverable} />{" "}
          Discoverable: listed on the front page and in searches
        </label>
        <label>
          <input type="checkbox" name="allow_forks" value="on" checked={form.allowForks} />{" "}
          Allow forks: others may copy it into their account
        </label>
      </fieldset>
      <div>
        <button type="submit">Save settings</button>
      </div>
    </form>

    <section class="card danger" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete this Dock</h2>
      <p>
        This deletes the Dock with all its pages, tables, sources and images, for everyone. It cannot be undone.
      </p>
      {deleteError === undefined ? null : <Notice kind="error">{deleteError}</Notice>}
      <form class="stack" method="post" action={dockPath(dock, "/-/delete")}>
        <CsrfField token={viewer.csrf} />
        <label>
          <span>
            Type the Dock's slug, <code>{dock.slug}</code>, to confirm
          </span>
          <input type="text" name="confirm" required autocomplete="off" spellcheck={false} />
        </label>
        <div>
          <button type="submit" class="danger">Delete this Dock</button>
        </div>
      </form>
    </section>
  </Layout>
)

export const MembersPage = (
  { viewer, dock, members, notice, error, user, role }: {
    readonly viewer: Viewer
    readonly dock: Dock
    readonly members: ReadonlyArray<Member>
    readonly notice?: string | undefined
    readonly error?: string | undefined
    readonly user?: string | undefined
    readonly role?: string | undefined
  }
) => (
  <Layout title={`Members · ${dock.title}`} viewer={viewer}>
    <DockHeading dock={dock} sub="members" />
    <h1>Members</h1>
    <p>
      You own this Dock. Editors can write to it (their agents too); viewers can read it while it is private.
    </p>
    {notice === undefined ? null : <Notice kind="ok">{notice}</Notice>}
    {error === undefined ? null : <Notice kind="error">{error}</Notice>}
    {members.length === 0 ? <p class="muted">Nobody else has access yet.</p> : (
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Role</th>
              <th scope="col">
                <span class="visually-hidden">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((member) => (
              <tr key={member.user_id}>
                <td>{member.username}</td>
                <td>{member.role}</td>
                <td>
                  <form method="post" action={dockPath(dock, "/-/members/revoke")}>
                    <CsrfField token={viewer.csrf} />
                    <input type="hidden" name="user" value={member.username} />
                    <button type="submit" class="link" aria-label={`Revoke ${member.username}`}>Revoke</button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
    <section class="card" aria-labelledby="grant-heading">
      <h2 id="grant-heading">Add a member</h2>
      <form class="stack" method="post" action={dockPath(dock, "/-/members")}>
        <CsrfField token={viewer.csrf} />
        <label>
          Username or email <span class="hint">the person must have signed in to Dock once</span>
          <input type="text" name="user" required maxlength={320} autocomplete="off" value={user ?? ""} />
        </label>
        <label>
          Role
          <select name="role">
            <option value="viewer" selected={role !== "editor"}>Viewer: can read</option>
            <option value="editor" selected={role === "editor"}>Editor: can read and write</option>
          </select>
        </label>
        <div>
          <button type="submit">Grant access</button>
        </div>
      </form>
    </section>
  </Layout>
)
