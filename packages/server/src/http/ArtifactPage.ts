/**
 * The HTML every untrusted-content path answers with (/a/, /artifacts/, /images/): an artifact as a standalone
 * document, and the 404 and 500 pages, all under the sandboxing CSP of architecture §10. The request middleware
 * answers unrouted artifact paths with `notFoundPage` from here, so it needs no route module.
 */
import { escapeHtml, type PageView } from "@dock/domain"
import { HttpServerResponse } from "@effect/platform"

/** The sandboxing CSP; `frameAncestors` is who may frame it: this origin, or the app's when artifacts are apart. */
export const artifactCsp = (frameAncestors: string) =>
  "sandbox; default-src 'none'; img-src 'self' https: data:; style-src 'unsafe-inline'; form-action 'none'; " +
  `base-uri 'none'; frame-ancestors ${frameAncestors}`

export const ARTIFACT_CSP = artifactCsp("'self'")

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
    ? `${escapeHtml(view.author.agentLabel)}${
      view.author.username === null ? "" : ` (${escapeHtml(view.author.username)})`
    }`
    : escapeHtml(view.author.username ?? "an unknown author")
  const when = view.author.at.toISOString()
  const shown = `${when.slice(0, 10)} ${when.slice(11, 16)} UTC`
  return `Version ${view.part.version}, written by ${who} on <time datetime="${when}">${shown}</time>.`
}

export const notFoundPage = htmlPage(
  404,
  document("Not found", "<h1>Not found</h1>\n<p>There is no artifact here, or it is not public.</p>", "Dock")
)

export const errorPage = htmlPage(
  500,
  document("Something went wrong", "<h1>Something went wrong</h1>\n<p>This artifact could not be shown.</p>", "Dock")
)

/** An artifact as its standalone document, with the footer naming its version and author. */
export const artifactPage = (view: PageView) =>
  htmlPage(200, document(view.part.title ?? view.part.slug ?? "Untitled", view.html, footerOf(view)))

/**
 * Untrusted content's paths: /a/, /artifacts/ and /images/ (ImageHttp.ts). What the DOCK_ARTIFACT_ORIGIN host
 * serves, and where a path no route takes (empty, nested, too long for a route parameter, not UTF-8) names no
 * artifact: the request middleware answers it with `notFoundPage`, under the same headers.
 */
export const isArtifactPath = (url: string) => /^\/(?:a|artifacts|images)(?:[/?#]|$)/.test(url)
