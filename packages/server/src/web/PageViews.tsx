/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * A page of a Dock in the web app (issue 16, item 3; docs/web.md, "Pages in the app"): the rendered artifact in a
 * sandboxed frame with its metadata and backlinks, its versions with a diff between any two and restore for
 * writers, the diff itself, and the stored source. Plain functions of what they show; no client script.
 */
import type { Dock, InboundLink, PageDiff, Part, PartVersion } from "@dock/domain"
import { CsrfField, Layout, Notice, type Viewer } from "./Layout.tsx"
import { dockPath } from "./Paths.ts"

const KIND: Record<string, string> = { web_page: "Web page", markdown_file: "Markdown file", micro_db: "Table" }

/** "2026-11-21 03:40 UTC" */
const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`

const Time = ({ iso }: { readonly iso: string }) => <time dateTime={iso}>{when(iso)}</time>

/** The page's path in the app, or a sub-page of it (`/-/diff`, `/-/source`, `/-/restore`). */
export const pagePath = (dock: Pick<Dock, "slug" | "owner">, pageSlug: string, sub = "") =>
  dockPath(dock, `/${encodeURIComponent(pageSlug)}${sub}`)

/** Who wrote a version: the agent's label and the person, as far as they are known. */
const Author = ({ author }: { readonly author: PartVersion["author"] }) => {
  const person = author.username ?? "an unknown person"
  return author.agent_label === null || author.agent_label === author.username
    ? <span>{person}</span>
    : (
      <span>
        <span class="agent">{author.agent_label}</span> <span class="muted">for {person}</span>
      </span>
    )
}

const pageTitle = (part: Part) => part.title ?? part.slug ?? "Untitled"

const PageHeading = ({ dock, part, sub }: { readonly dock: Dock; readonly part: Part; readonly sub?: string }) => (
  <>
    <nav aria-label="Breadcrumb" class="crumbs">
      <a href={dockPath(dock)}>{dock.owner.username}/{dock.slug}</a>
      {sub === undefined ? null : (
        <>
          {" / "}
          <a href={pagePath(dock, part.slug ?? "")}>{pageTitle(part)}</a>
        </>
      )}
    </nav>
    <h1>
      {sub === undefined ? pageTitle(part) : `${sub}: ${pageTitle(part)}`}
    </h1>
  </>
)

/** The two selects of a diff between any two versions, as a GET form to `/-/diff`. */
const DiffForm = (
  { dock, part, versions, from, to }: {
    readonly dock: Dock
    readonly part: Part
    readonly versions: ReadonlyArray<PartVersion>
    readonly from: number
    readonly to: number
  }
) => (
  <form
    class="diff-form"
    method="get"
    action={`/app/buckets/${encodeURIComponent(dock.slug)}/${encodeURIComponent(part.slug ?? "")}/-/diff`}
  >
    <input type="hidden" name="owner" value={dock.owner.username} />
    <label>
      From version
      <select name="from">
        {versions.map((v) => (
          <option key={v.version} value={String(v.version)} selected={v.version === from}>{v.version}</option>
        ))}
      </select>
    </label>
    <label>
      To version
      <select name="to">
        {versions.map((v) => (
          <option key={v.version} value={String(v.version)} selected={v.version === to}>{v.version}</option>
        ))}
      </select>
    </label>
    <div>
      <button type="submit">Show the changes</button>
    </div>
  </form>
)

export interface PageOverviewProps {
  readonly viewer: Viewer | undefined
  readonly dock: Dock
  readonly part: Part
  /** where the frame loads the artifact from (a signed URL on a separate artifact origin) */
  readonly frameSrc: string
  readonly versions: ReadonlyArray<PartVersion>
  readonly backlinks: ReadonlyArray<InboundLink>
  readonly canWrite: boolean
  /** The Dock's owner: offered the page's share links. */
  readonly canShare?: boolean
  readonly notice?: { readonly kind: "ok" | "error"; readonly text: string } | undefined
}

export const PageOverview = (
  { backlinks, canShare, canWrite, dock, frameSrc, notice, part, versions, viewer }: PageOverviewProps
) => {
  const newestFirst = [...versions].sort((a, b) => b.version - a.version)
  const current = newestFirst[0]
  const slug = part.slug ?? ""
  return (
    <Layout title={pageTitle(part)} viewer={viewer} here={pagePath(dock, slug)}>
      <PageHeading dock={dock} part={part} />
      {notice === undefined ? null : <Notice kind={notice.kind}>{notice.text}</Notice>}
      {part.summary === "" ? null : <p class="summary">{part.summary}</p>}
      <dl class="meta">
        <div>
          <dt>Kind</dt>
          <dd>
            {KIND[part.page_kind] ?? part.page_kind}
            {part.page_kind === "web_page" ? ` (${part.content_type === "markdown" ? "Markdown" : "HTML"})` : ""}
          </dd>
        </div>
        <div>
          <dt>Visibility</dt>
          <dd>{dock.visibility}</dd>
        </div>
        <div>
          <dt>Slug</dt>
          <dd class="mono">{slug}</dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>
            <Time iso={part.last_updated} /> (version {part.version})
          </dd>
        </div>
        <div>
          <dt>Author</dt>
          <dd>{current === undefined ? "unknown" : <Author author={current.author} />}</dd>
        </div>
      </dl>
      <p class="actions">
        <a href={frameSrc}>Open the page on its own</a>
        <a href={pagePath(dock, slug, "/-/source")}>
          {part.content_type === "markdown" ? "Markdown source" : "HTML source"}
        </a>
        {canShare === true ? <a href={pagePath(dock, slug, "/-/share")}>Share links</a> : null}
      </p>
      <iframe
        class="artifact"
        src={frameSrc}
        sandbox=""
        title={`The page "${pageTitle(part)}" as published`}
        referrerpolicy="no-referrer"
      />

      <h2 id="backlinks">Pages that link here</h2>
      {backlinks.length === 0
        ? <p class="muted">No page links here yet.</p>
        : (
          <ul class="backlinks">
            {backlinks.map((link) => {
              const [owner, dockSlug] = link.page.bucket_path.split("/")
              const href = link.page.slug === null || owner === undefined || dockSlug === undefined
                ? link.page.url
                : pagePath({ slug: dockSlug, owner: { username: owner } as Dock["owner"] }, link.page.slug)
              return (
                <li key={link.page.id}>
                  <a href={href}>{link.page.title ?? link.page.slug ?? link.page.id}</a>{" "}
                  <span class="muted mono">{link.page.bucket_path}</span>
                </li>
              )
            })}
          </ul>
        )}

      <h2 id="versions">Versions</h2>
      {versions.length > 1
        ? (
          <DiffForm
            dock={dock}
            part={part}
            versions={newestFirst}
            from={newestFirst[1]!.version}
            to={newestFirst[0]!.version}
          />
        )
        : null}
      <div class="table-wrap">
        <table class="versions">
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Written by</th>
              <th scope="col">When</th>
              <th scope="col">Change</th>
              {canWrite
                ? (
                  <th scope="col">
                    <span class="sr-only">Restore</span>
                  </th>
                )
                : null}
            </tr>
          </thead>
          <tbody>
            {newestFirst.map((v) => (
              <tr key={v.version}>
                <td>
                  Version {v.version}
                  {v.version === part.version ? <span class="tag">current</span> : null}
                </td>
                <td>
                  <Author author={v.author} />
                </td>
                <td>
                  <Time iso={v.created_at} />
                </td>
                <td>
                  {v.reason === "restored" && v.restored_from !== null ? `restored from ${v.restored_from}` : v.reason}
                  {v.added === null ? null : (
                    <span class="counts mono">
                      {" "}+{v.added} −{v.removed ?? 0}
                    </span>
                  )}
                </td>
                {canWrite
                  ? (
                    <td>
                      {v.version === part.version ?
                        null :
                        (
                          <form method="post" action={pagePath(dock, slug, "/-/restore")} class="inline">
                            {/* canWrite needs a signed-in writer: the public never sees this form. */}
                            <CsrfField token={viewer?.csrf ?? ""} />
                            <input type="hidden" name="version" value={String(v.version)} />
                            <input type="hidden" name="base_version" value={String(part.version)} />
                            <button type="submit" class="secondary">Restore version {v.version}</button>
                          </form>
                        )}
                    </td>
                  )
                  : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Layout>
  )
}

/** One line of a unified diff, by its first character: a change is marked by `+`/`-` as well as by colour. */
const DiffLine = ({ line }: { readonly line: string }) => {
  if (line.startsWith("+++ ") || line.startsWith("--- ")) return <span class="diff-file">{line}{"\n"}</span>
  if (line.startsWith("@@")) return <span class="diff-hunk">{line}{"\n"}</span>
  if (line.startsWith("+")) return <ins>{line}{"\n"}</ins>
  if (line.startsWith("-")) return <del>{line}{"\n"}</del>
  return <span>{line}{"\n"}</span>
}

export const PageDiffView = (
  { diff, dock, part, versions, viewer }: {
    readonly viewer: Viewer | undefined
    readonly dock: Dock
    readonly part: Part
    readonly versions: ReadonlyArray<PartVersion>
    readonly diff: PageDiff
  }
) => {
  const newestFirst = [...versions].sort((a, b) => b.version - a.version)
  const lines = diff.diff === "" ? [] : diff.diff.replace(/\n$/, "").split("\n")
  return (
    <Layout title={`Changes: ${pageTitle(part)}`} viewer={viewer} here={pagePath(dock, part.slug ?? "")}>
      <PageHeading dock={dock} part={part} sub="Changes" />
      <DiffForm dock={dock} part={part} versions={newestFirst} from={diff.from_version} to={diff.to_version} />
      <h2>
        Version {diff.from_version} → version {diff.to_version}
      </h2>
      <p>
        <strong>{diff.added}</strong> {diff.added === 1 ? "line" : "lines"} added (marked +),{" "}
        <strong>{diff.removed}</strong> {diff.removed === 1 ? "line" : "lines"} removed (marked −).
        {diff.truncated ? " The diff is shortened: the page changed almost everywhere, or the diff is too long." : ""}
      </p>
      {lines.length === 0
        ? <p class="muted">These versions have the same content.</p>
        : (
          <pre class="diff" aria-label={`Changes from version ${diff.from_version} to version ${diff.to_version}`}>
            {lines.map((line, index) => <DiffLine key={index} line={line} />)}
          </pre>
        )}
    </Layout>
  )
}

export const PageSourceView = (
  { content, dock, part, viewer }: {
    readonly viewer: Viewer | undefined
    readonly dock: Dock
    readonly part: Part
    readonly content: string
  }
) => (
  <Layout title={`Source: ${pageTitle(part)}`} viewer={viewer} here={pagePath(dock, part.slug ?? "", "/-/source")}>
    <PageHeading dock={dock} part={part} sub={part.content_type === "markdown" ? "Markdown source" : "HTML source"} />
    <p class="muted">Version {part.version}, as stored.</p>
    <pre class="source">{content}</pre>
  </Layout>
)
