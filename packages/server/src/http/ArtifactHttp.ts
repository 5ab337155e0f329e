/**
 * The browser routes of spec §4.1: `/a/[public_slug]` and `/artifacts/[pageId]` serve one artifact as a
 * standalone HTML document, and `/b/...` redirect to the web app's Dock views.
 *
 * Artifacts are untrusted content, so every answer from these routes — 200, 404 and 500 alike — is a
 * `text/html` page under the sandboxing CSP of architecture §10: no script runs, nothing loads but images,
 * no form submits, and only this origin may frame it. The body is rendered and sanitized when read (see
 * `Pages.view`), so what is stored, even content planted in the database, is never served as is.
 *
 * Until the web app brings sessions, these routes read as the anonymous public: private content is 404.
 */
import { HttpLayerRouter, HttpRouter, HttpServerResponse } from "@effect/platform"
import { anonymousPrincipal, CurrentPrincipal, escapeHtml, Pages, type PageView } from "@dock/domain"
import { Effect } from "effect"

export const ARTIFACT_CSP =
  "sandbox; default-src 'none'; img-src 'self' https: data:; style-src 'unsafe-inline'; form-action 'none'; " +
  "base-uri 'none'; frame-ancestors 'self'"

const ARTIFACT_HEADERS = {
  "content-security-policy": ARTIFACT_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // frame-ancestors 'self' lets the web app show an artifact in a frame; X-Frame-Options agrees for old browsers.
  "x-frame-options": "SAMEORIGIN"
}

/** A small readable stylesheet: a measure of text, system fonts, tables and code that do not overflow. */
const STYLESHEET = `
:root { color-scheme: light dark; }
body { margin: 0; font: 17px/1.6 system-ui, -apple-system, "Segoe UI", sans-serif; }
main, footer { max-width: 46rem; margin: 0 auto; padding: 1.5rem 1.25rem; }
main { overflow-wrap: break-word; }
h1, h2, h3, h4 { line-height: 1.25; margin: 1.6em 0 .6em; }
h1:first-child, h2:first-child { margin-top: 0; }
img { max-width: 100%; height: auto; }
pre, code { font: .9em/1.5 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { padding: .75rem 1rem; overflow-x: auto; background: rgba(127, 127, 127, .12); border-radius: 6px; }
table { border-collapse: collapse; display: block; overflow-x: auto; }
th, td { border: 1px solid rgba(127, 127, 127, .4); padding: .3rem .6rem; text-align: left; }
blockquote { margin: 1em 0; padding-left: 1em; border-left: 3px solid rgba(127, 127, 127, .5); opacity: .9; }
.wikilink-unresolved { text-decoration: underline dotted; }
.contains-task-list { padding-left: .25rem; }
li.task-list-item { list-style: none; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.footnotes { font-size: .9rem; }
footer { font-size: .85rem; opacity: .75; border-top: 1px solid rgba(127, 127, 127, .3); }
`

const document = (title: string, body: string, footer: string) =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLESHEET}</style>
</head>
<body>
<main>
${body}
</main>
<footer>${footer}</footer>
</body>
</html>
`

const htmlPage = (status: number, html: string) =>
  HttpServerResponse.text(html, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { ...ARTIFACT_HEADERS, "cache-control": status === 200 ? "no-cache" : "no-store" }
  })

/** "Version 3, written by research-bot (ada) on 21 Nov 2026, 03:40 UTC." */
const footerOf = (view: PageView) => {
  const who = view.author.agentLabel !== null && view.author.agentLabel !== view.author.username
    ? `${escapeHtml(view.author.agentLabel)}${view.author.username === null ? "" : ` (${escapeHtml(view.author.username)})`}`
    : escapeHtml(view.author.username ?? "an unknown author")
  const when = view.author.at.toISOString()
  const shown = `${when.slice(0, 10)} ${when.slice(11, 16)} UTC`
  return `Version ${view.part.version}, written by ${who} on <time datetime="${when}">${shown}</time>.`
}

export const notFoundPage = htmlPage(
  404,
  document("Not found", "<h1>Not found</h1>\n<p>There is no artifact here, or it is not public.</p>", "Dock")
)

const errorPage = htmlPage(
  500,
  document("Something went wrong", "<h1>Something went wrong</h1>\n<p>This artifact could not be shown.</p>", "Dock")
)

const serveArtifact = (ref: { readonly publicSlug: string } | { readonly id: string }) =>
  Effect.flatMap(Pages, (pages) => pages.view(ref)).pipe(
    Effect.map((view) =>
      htmlPage(200, document(view.part.title ?? view.part.slug ?? "Untitled", view.html, footerOf(view)))
    ),
    Effect.provideService(CurrentPrincipal, anonymousPrincipal),
    Effect.catchTag("NotFound", () => Effect.succeed(notFoundPage)),
    Effect.catchAllCause((cause) => Effect.as(Effect.logError("Serving an artifact failed", cause), errorPage))
  )

const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

/** The web app's views (they arrive with the web app); each path segment is encoded again, so it stays one. */
const redirect = (segments: ReadonlyArray<string>) =>
  HttpServerResponse.empty({
    status: 308,
    headers: { location: `/app/buckets/${segments.map(encodeURIComponent).join("/")}` }
  })

/**
 * Untrusted content's paths: /a/, /artifacts/ and /images/ (ImageHttp.ts). What the DOCK_ARTIFACT_ORIGIN host
 * serves, and where a path no route takes (empty, nested, too long for a route parameter, not UTF-8) names no
 * artifact: the request middleware answers it with `notFoundPage`, under the same headers.
 */
export const isArtifactPath = (url: string) => /^\/(?:a|artifacts|images)(?:[/?#]|$)/.test(url)

export const artifactRoutes = HttpLayerRouter.addAll([
  HttpLayerRouter.route("GET", "/a/:slug", Effect.flatMap(param("slug"), (publicSlug) => serveArtifact({ publicSlug }))),
  HttpLayerRouter.route("GET", "/artifacts/:pageId", Effect.flatMap(param("pageId"), (id) => serveArtifact({ id }))),
  HttpLayerRouter.route("GET", "/b/:slug", Effect.map(param("slug"), (slug) => redirect([slug]))),
  HttpLayerRouter.route(
    "GET",
    "/b/:slug/:pageSlug",
    Effect.flatMap(param("slug"), (slug) => Effect.map(param("pageSlug"), (pageSlug) => redirect([slug, pageSlug])))
  )
])
