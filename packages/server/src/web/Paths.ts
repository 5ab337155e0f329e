/** Paths into the web app, shared by every view (views import this, never the routes). */
import type { Dock } from "@dock/domain"

/**
 * The path of a Dock's app page, or of something under it. Slugs are `[a-z0-9-]` and never start with `-`, so the
 * Dock's own sub-pages live under `/-/` (`dockPath(dock, "/-/settings")`) and never collide with a page slug;
 * a page is `dockPath(dock, "/" + pageSlug)`. The owner is always named, so the path is unambiguous.
 */
export const dockPath = (dock: Pick<Dock, "slug" | "owner">, sub = "") =>
  `/app/buckets/${encodeURIComponent(dock.slug)}${sub}?owner=${encodeURIComponent(dock.owner.username)}`
