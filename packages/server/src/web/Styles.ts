/** The web app's one stylesheet, served at /app.css: light and dark (prefers-color-scheme), phone-first. */
export const APP_CSS = `
:root {
  color-scheme: light dark;
  --bg: #f7f7f5; --surface: #ffffff; --text: #1d1f23; --muted: #55595f; --border: #d5d7db;
  --accent: #1f5fbf; --accent-text: #ffffff; --danger: #a32020; --focus: #f2a900; --code: #eef0f3;
  --ok-bg: #e7f4ea; --ok-text: #17532a; --err-bg: #fbeaea;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15171a; --surface: #1e2125; --text: #e8e9eb; --muted: #a4a9b0; --border: #3a3f46;
    --accent: #7fb0ff; --accent-text: #0d1117; --danger: #ff8f8f; --focus: #ffcc4d; --code: #272b31;
    --ok-bg: #183222; --ok-text: #a6e3b8; --err-bg: #3a1d1d;
  }
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--text);
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--accent); text-underline-offset: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 3px; }
.skip { position: absolute; left: -999px; top: 0; }
.skip:focus { left: 8px; top: 8px; background: var(--surface); padding: 6px 10px; z-index: 10; }
header.top {
  display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 10px 16px;
  background: var(--surface); border-bottom: 1px solid var(--border);
}
header.top .brand { font-weight: 700; font-size: 1.15rem; color: var(--text); text-decoration: none; margin-right: auto; }
header.top nav { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; }
header.top form { margin: 0; }
main { max-width: 52rem; margin: 0 auto; padding: 20px 16px 48px; }
h1 { font-size: 1.7rem; line-height: 1.25; margin: 0.2em 0 0.5em; }
h2 { font-size: 1.25rem; margin: 1.6em 0 0.5em; }
p { margin: 0.5em 0 0.9em; }
.muted { color: var(--muted); }
.card > h2:first-child { margin-top: 0; }
.card {
  background: var(--surface); border: 1px solid var(--border); border-radius: 10px; padding: 16px 18px; margin: 20px 0;
}
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
code { background: var(--code); padding: 0.1em 0.35em; border-radius: 4px; overflow-wrap: anywhere; }
pre { background: var(--code); padding: 10px 12px; border-radius: 6px; overflow-x: auto; }
form.stack { display: grid; gap: 12px; max-width: 28rem; }
label { display: grid; gap: 4px; font-weight: 600; }
label .hint { font-weight: 400; color: var(--muted); font-size: 0.9rem; }
input[type=text], input[type=email], input[type=search], select, textarea {
  font: inherit; color: var(--text); background: var(--bg); border: 1px solid var(--muted);
  border-radius: 6px; padding: 9px 10px; width: 100%; min-height: 44px;
}
input.code { letter-spacing: 0.3em; font-size: 1.3rem; max-width: 12rem; }
button, .button {
  font: inherit; font-weight: 600; cursor: pointer; display: inline-block; text-decoration: none;
  background: var(--accent); color: var(--accent-text); border: 1px solid var(--accent);
  border-radius: 6px; padding: 9px 16px; min-height: 44px;
}
button.link {
  background: none; border: none; color: var(--accent); padding: 4px 2px; min-height: 0; font-weight: 500;
  text-decoration: underline; text-underline-offset: 2px;
}
.notice { border-radius: 8px; padding: 10px 14px; margin: 12px 0; }
.notice.ok { background: var(--ok-bg); color: var(--ok-text); }
.notice.error { background: var(--err-bg); color: var(--danger); }
ul.docks { list-style: none; padding: 0; margin: 0; display: grid; gap: 10px; }
ul.docks li { background: var(--surface); border: 1px solid var(--border); border-radius: 8px; padding: 10px 14px; }
ul.docks .title { font-weight: 600; }
.tag {
  display: inline-block; font-size: 0.8rem; border: 1px solid var(--border); border-radius: 999px;
  padding: 0 8px; margin-left: 6px; color: var(--muted); vertical-align: middle;
}
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--border); vertical-align: top; }
th { font-size: 0.9rem; color: var(--muted); }
.table-wrap { overflow-x: auto; }
fieldset { border: 1px solid var(--border); border-radius: 8px; padding: 8px 12px 12px; }
legend { font-weight: 600; padding: 0 4px; }
fieldset label { display: flex; align-items: center; gap: 8px; font-weight: 400; min-height: 36px; }
footer { max-width: 52rem; margin: 0 auto; padding: 0 16px 32px; color: var(--muted); font-size: 0.9rem; }
/* The Dock view, its tables, settings and members (DockViews.tsx) */
.crumbs { margin-bottom: 0; overflow-wrap: anywhere; }
.dock-actions { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; margin: 8px 0 4px; }
.dock-actions form { margin: 0; }
.button.secondary, button.secondary { background: var(--surface); color: var(--accent); border-color: var(--border); }
button.danger { background: var(--danger); border-color: var(--danger); color: var(--bg); }
.card.danger { border-color: var(--danger); }
.author .agent { display: block; color: var(--muted); font-size: 0.9rem; }
ul.plain { list-style: none; padding: 0; margin: 0; display: grid; gap: 8px; }
ul.plain li { overflow-wrap: anywhere; }
ul.activity .author, ul.activity .author .agent { display: inline; }
ul.activity time { color: var(--muted); margin-right: 6px; }
ul.images { list-style: none; padding: 0; margin: 0; display: grid; gap: 12px;
  grid-template-columns: repeat(auto-fill, minmax(160px, 1fr)); }
ul.images li { background: var(--surface); border: 1px solid var(--border); border-radius: 8px; padding: 8px; }
ul.images img { display: block; width: 100%; height: 120px; object-fit: cover; border-radius: 4px; margin-bottom: 6px; }
ul.images .filename { overflow-wrap: anywhere; }
th .type { display: block; font-weight: 400; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.8rem; }
table.data td { max-width: 24rem; overflow-wrap: break-word; }
table.data td:last-child { white-space: nowrap; }
.pager { display: flex; gap: 16px; }
td form { margin: 0; }
label input, label textarea, label select { font-weight: 400; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
/* Connected agents (/app/mcp) and the claim page (/claim) */
ul.tokens, ul.plain { list-style: none; padding: 0; margin: 0; }
ul.tokens { display: grid; gap: 12px; margin: 8px 0; }
ul.tokens li.token { background: var(--surface); border: 1px solid var(--border); border-radius: 8px; padding: 12px 14px; }
ul.tokens li.token:not(.active) { opacity: 0.85; }
.token-head { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 0; }
.token-head strong { margin-right: 4px; overflow-wrap: anywhere; }
.tag.status-active { color: var(--ok-text); background: var(--ok-bg); border-color: transparent; }
.tag.status-revoked, .tag.status-expired { color: var(--danger); background: var(--err-bg); border-color: transparent; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 10px 0 4px; }
dl.facts dt { color: var(--muted); font-size: 0.92rem; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.actions { display: flex; flex-wrap: wrap; gap: 10px; margin-top: 10px; }
.actions form { margin: 0; }
button.secondary { background: var(--surface); color: var(--accent); }
button.danger { background: var(--surface); color: var(--danger); border-color: var(--danger); }
.choices { display: grid; gap: 2px; margin-top: 4px; padding-left: 26px; }
.choices label { align-items: flex-start; }
.choices input { margin-top: 6px; }
.choices .muted { display: block; font-size: 0.85rem; overflow-wrap: anywhere; }
button.copy { min-height: 36px; padding: 4px 12px; margin: 4px 0 8px; }
button.copy[hidden] { display: none; }
pre code { background: none; padding: 0; border-radius: 0; }
details { margin: 16px 0; }
summary { cursor: pointer; font-weight: 600; min-height: 32px; }
label.secret input { font-size: 1rem; background: var(--code); }
.card h3 { margin: 0 0 0.3em; font-size: 1.08rem; }
.card pre { white-space: pre-wrap; overflow-wrap: anywhere; }
@media (max-width: 480px) { dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: 6px; } }
/* Pages in the app (PageViews.tsx): the framed artifact, metadata, versions, diff and source. */
:root { --add-bg: #e3f3e6; --add-text: #11461f; --del-bg: #fbe5e5; --del-text: #7a1414; --frame-bg: #ffffff; }
@media (prefers-color-scheme: dark) {
  :root { --add-bg: #16351f; --add-text: #b4ecc3; --del-bg: #401c1c; --del-text: #ffc2c2; --frame-bg: #1e2125; }
}
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
nav.crumbs { font-size: 0.95rem; margin-bottom: 4px; overflow-wrap: anywhere; }
p.summary { font-size: 1.05rem; }
dl.meta { display: grid; grid-template-columns: repeat(auto-fit, minmax(9.5rem, 1fr)); gap: 8px 16px; margin: 12px 0; }
dl.meta div { min-width: 0; }
dl.meta dt { font-size: 0.85rem; color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
p.actions { display: flex; flex-wrap: wrap; gap: 8px 20px; }
iframe.artifact {
  display: block; width: 100%; height: 70vh; min-height: 20rem; border: 1px solid var(--border); border-radius: 8px;
  background: var(--frame-bg);
}
ul.backlinks { padding-left: 1.2rem; }
form.diff-form { display: flex; flex-wrap: wrap; align-items: end; gap: 12px; margin: 8px 0 16px; }
form.diff-form label { min-width: 8rem; }
form.inline { margin: 0; }
button.secondary { background: var(--surface); color: var(--accent); white-space: nowrap; }
table.versions th { position: relative; }
@media (max-width: 40rem) {
  /* On a phone each version is a small card: number, author, time, change, restore. */
  table.versions, table.versions tbody, table.versions tr, table.versions td { display: block; }
  table.versions thead { display: none; }
  table.versions tr { border-bottom: 1px solid var(--border); padding: 8px 0; }
  table.versions td { border: 0; padding: 2px 0; }
  table.versions td:first-child { font-weight: 600; }
}
.agent { font-weight: 600; }
.counts { white-space: nowrap; color: var(--muted); }
pre.diff, pre.source { white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.45; }
pre.diff > * { display: block; text-decoration: none; padding: 0 4px; border-radius: 2px; }
pre.diff ins { background: var(--add-bg); color: var(--add-text); }
pre.diff del { background: var(--del-bg); color: var(--del-text); }
pre.diff .diff-hunk { color: var(--muted); font-style: italic; margin-top: 6px; }
pre.diff .diff-file { color: var(--muted); font-weight: 600; }
/* Landing (/b/ chooser) and share links in the app (LandingViews.tsx, ShareViews.tsx) */
.visually-hidden {
  position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
button.danger { background: var(--surface); color: var(--danger); border-color: var(--danger); }
.share-new input { font-size: 0.95rem; }
.share-links form { margin: 0; }
.tag.share-active { color: var(--ok-text); border-color: var(--ok-text); }
.tag.share-revoked, .tag.share-expired { color: var(--muted); }
/* OAuth (issue 17): the consent page and connected apps. */
.oauth-actions { display: flex; flex-wrap: wrap; gap: 12px; }
button.secondary { background: var(--surface); color: var(--text); border-color: var(--muted); }
.oauth-docks { display: grid; gap: 2px; margin: 4px 0 0 24px; }
.oauth-client-id { font-size: 0.8rem; overflow-wrap: anywhere; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;
}
`
