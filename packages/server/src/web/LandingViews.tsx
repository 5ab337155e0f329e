/** @jsxRuntime automatic @jsxImportSource preact */
/**
 * What `/b/<slug>` shows when it cannot simply redirect (docs/web.md, "Landing, the page API and share links in
 * the app"): the chooser for a bare slug that several readable Docks share. A missing one is the kit's `hiddenFrom`.
 */
import type { Dock } from "@dock/domain"
import { Layout, type Viewer } from "./Layout.tsx"

/** One Dock a bare slug could mean, and where in the app it lands (the Dock, or the page asked for in it). */
export interface LandingChoice {
  readonly dock: Dock
  readonly href: string
}

export const ChooserPage = (
  { viewer, slug, pageSlug, here, choices }: {
    readonly viewer: Viewer | undefined
    readonly slug: string
    readonly pageSlug: string | undefined
    /** The `/b/` path asked: sign-in comes back to it (a private Dock of theirs may join the choice). */
    readonly here: string
    readonly choices: ReadonlyArray<LandingChoice>
  }
) => (
  <Layout title={`Which “${slug}”?`} viewer={viewer} here={here}>
    <h1>Which “{slug}” did you mean?</h1>
    <p>
      Several Docks you can read are called <code>{slug}</code>. Choose one by its owner
      {pageSlug === undefined ? "" : (
        <>
          ; you land on its page <code>{pageSlug}</code>
        </>
      )}.
    </p>
    <ul class="docks">
      {choices.map(({ dock, href }) => (
        <li key={dock.id}>
          <a class="title" href={href}>
            <span class="mono">{dock.owner.username}/{dock.slug}</span>
          </a>
          <span class="tag">{dock.visibility}</span>
          <div>{dock.title}</div>
        </li>
      ))}
    </ul>
  </Layout>
)
