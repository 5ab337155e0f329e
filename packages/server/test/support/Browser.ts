/**
 * Chromium for the browser tests, driven by playwright-core: Debian's `/usr/bin/chromium` (no browser download;
 * `DOCK_CHROMIUM_PATH` names another executable), launched once per test file by `BrowserLive`
 * (`layer(Layer.merge(TestServerLive, BrowserLive), …)`) and closed after the file's last test. `openPage` gives
 * each test its own browser context and page, with every dialog, console message and request recorded, and the
 * network fenced in: only the test server is reachable; listed image URLs are answered with a 1×1 PNG; every
 * other request is aborted (and recorded).
 *
 * When Chromium is missing:
 * - with `DOCK_REQUIRE_CHROMIUM=1` (set by `.ci/run`) they fail: `BrowserLive` dies with a message naming the
 *   missing executable, vitest reports the file's suite as failed (its tests as not run) and exits non-zero. CI
 *   never passes without having run them.
 * - otherwise `skipBrowserTests` is true (computed when this module loads), a loud warning goes to the console,
 *   and the file wraps its tests in `describe.skipIf(skipBrowserTests)(…)`: a developer without Chromium sees
 *   them reported as skipped rather than failed. That is a condition, not a left-behind `.skip`.
 */
import { Context, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import { type Browser as PlaywrightBrowser, chromium, type Page } from "playwright-core"

/** Debian's Chromium; DOCK_CHROMIUM_PATH points elsewhere (another distribution, or to try the missing case). */
export const CHROMIUM_PATH = process.env["DOCK_CHROMIUM_PATH"] || "/usr/bin/chromium"

/**
 * The machine's network is closed; without the background-networking flags Chromium keeps trying (and failing)
 * to reach Google's services. `--no-sandbox` because the tests may run as root in a container.
 */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

const chromiumPresent = Fs.existsSync(CHROMIUM_PATH)
const chromiumRequired = process.env["DOCK_REQUIRE_CHROMIUM"] === "1"

/** True when Chromium is missing and not required: the browser tests are skipped (with a warning). */
export const skipBrowserTests = !chromiumPresent && !chromiumRequired

if (skipBrowserTests) {
  const bar = "!".repeat(100)
  console.warn(
    `\n${bar}\n!!! ${CHROMIUM_PATH} is missing: SKIPPING the browser tests (apt-get install chromium, or set ` +
      `DOCK_REQUIRE_CHROMIUM=1 to make this a failure) !!!\n${bar}\n`
  )
}

export class Browser extends Context.Tag("@dock/server/test/Browser")<Browser, PlaywrightBrowser>() {}

/** Chromium for the lifetime of the layer; dies with a clear message when it is required but missing. */
export const BrowserLive = Layer.scoped(
  Browser,
  Effect.acquireRelease(
    Effect.suspend(() =>
      chromiumPresent
        ? Effect.promise(() => chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS }))
        : Effect.dieMessage(
          `The browser tests need Chromium at ${CHROMIUM_PATH} (DOCK_REQUIRE_CHROMIUM=1 makes its absence a ` +
            `failure): install Debian's chromium package.`
        )
    ),
    (browser) => Effect.promise(() => browser.close())
  )
)

/** One request the page made, as Chromium reported it. */
export interface RecordedRequest {
  readonly url: string
  readonly method: string
  readonly resourceType: string
  /** Whether it reached the route handler, i.e. left the renderer (a request blocked by CSP never does). */
  sent: boolean
  /** Chromium's reason when it failed: "csp" when the page's CSP blocked it before it was sent. */
  failure: string | undefined
}

export interface RecordedPage {
  readonly page: Page
  /** Messages of every dialog (alert, confirm, prompt, beforeunload), each dismissed at once. */
  readonly dialogs: Array<string>
  /** Every console message, including Chromium's own CSP and sandbox reports. */
  readonly console: Array<{ readonly type: string; readonly text: string }>
  /** Uncaught errors thrown by page scripts. */
  readonly pageErrors: Array<string>
  /** Every request the page attempted, in order. */
  readonly requests: Array<RecordedRequest>
}

/** A valid 1×1 transparent PNG, the answer to every listed image URL. */
export const PIXEL_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64"
)

/**
 * A fresh browser context and page for the lifetime of the scope. Requests to `origin` (the test server) go
 * through; requests for the URLs in `images` are answered with `PIXEL_PNG`; anything else is aborted. Every one
 * is recorded either way.
 */
export const openPage = (options: { readonly origin: string; readonly images?: ReadonlyArray<string> }) =>
  Effect.gen(function*() {
    const browser = yield* Browser
    const context = yield* Effect.acquireRelease(
      Effect.promise(() => browser.newContext({ viewport: { width: 1000, height: 800 } })),
      (context) => Effect.promise(() => context.close())
    )
    const page = yield* Effect.promise(() => context.newPage())
    const recorded: RecordedPage = { page, dialogs: [], console: [], pageErrors: [], requests: [] }
    const byRequest = new Map<unknown, RecordedRequest>()
    const images = new Set(options.images ?? [])

    page.on("dialog", (dialog) => {
      recorded.dialogs.push(`${dialog.type()}: ${dialog.message()}`)
      void dialog.dismiss().catch(() => undefined)
    })
    page.on("console", (message) => recorded.console.push({ type: message.type(), text: message.text() }))
    page.on("pageerror", (error) => recorded.pageErrors.push(String(error)))
    page.on("request", (request) => {
      const entry: RecordedRequest = {
        url: request.url(),
        method: request.method(),
        resourceType: request.resourceType(),
        sent: false,
        failure: undefined
      }
      byRequest.set(request, entry)
      recorded.requests.push(entry)
    })
    page.on("requestfailed", (request) => {
      const entry = byRequest.get(request)
      if (entry !== undefined) entry.failure = request.failure()?.errorText
    })
    yield* Effect.promise(() =>
      context.route("**/*", (route) => {
        const request = route.request()
        const entry = byRequest.get(request)
        if (entry !== undefined) entry.sent = true
        const url = request.url()
        if (url.startsWith(`${options.origin}/`)) return route.continue()
        if (images.has(url)) return route.fulfill({ status: 200, contentType: "image/png", body: PIXEL_PNG })
        return route.abort("blockedbyclient")
      })
    )
    return recorded
  })

/**
 * Chromium's own console reports — what the page's CSP, sandbox or Local Network Access refused, and resources
 * that failed to load —
 * as opposed to output of page scripts (a script that ran would log in its own words).
 */
export const isBrowserReport = (text: string) =>
  /violates the following Content Security Policy directive|^Blocked script execution in|^Blocked form submission to|^Refused to |^Failed to load resource: |^Access to .* has been blocked by CORS policy/
    .test(text)
