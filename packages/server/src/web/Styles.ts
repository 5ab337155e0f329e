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
/* OAuth (issue 17): the consent page and connected apps. */
.oauth-actions { display: flex; flex-wrap: wrap; gap: 12px; }
button.secondary { background: var(--surface); color: var(--text); border-color: var(--muted); }
.oauth-docks { display: grid; gap: 2px; margin: 4px 0 0 24px; }
.oauth-client-id { font-size: 0.8rem; overflow-wrap: anywhere; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;
}
`
