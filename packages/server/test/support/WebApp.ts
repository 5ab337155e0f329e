/**
 * The web app's test kit: a server with a real SMTP receiver, sign-in through the pages (a cookie-keeping
 * WebClient over HTTP, or Chromium), and, for browser tests, screenshots in light and dark and the check that
 * a page raised no CSP report, script error or dialog.
 */
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { Page } from "playwright-core"
import { isBrowserReport, type RecordedPage } from "./Browser.ts"
import { codeIn } from "./Identity.ts"
import { bodyText, mailTo, SmtpReceiver, SmtpReceiverLive } from "./SmtpReceiver.ts"
import { type RunningServer, startTestServer, TestServer } from "./TestServer.ts"
import { csrfIn, type WebClient, webClient, type WebReply } from "./WebClient.ts"

export const ServerWithSmtp = (env: Record<string, string> = {}) =>
  Layer.scoped(
    TestServer,
    Effect.flatMap(SmtpReceiver, (receiver) =>
      startTestServer({
        DOCK_SMTP_URL: `smtp://127.0.0.1:${receiver.port}`,
        DOCK_MAIL_FROM: "Dock <sign-in@dock.test>",
        ...env
      }))
  ).pipe(Layer.provideMerge(SmtpReceiverLive))

export const browserFor = (server: RunningServer) =>
  webClient({ port: server.port, host: `127.0.0.1:${server.port}`, origin: `http://127.0.0.1:${server.port}` })

/** Asks for a code at /login (from the page's own form) and answers the code page. */
export const requestCode = (client: WebClient, email: string, next?: string) =>
  Effect.gen(function*() {
    const form = yield* client.get(next === undefined ? "/login" : `/login?next=${encodeURIComponent(next)}`)
    expect(form.status).toBe(200)
    return yield* client.post("/login", {
      csrf: csrfIn(form.text),
      email,
      next: /name="next" value="([^"]*)"/.exec(form.text)![1]!.replaceAll("&amp;", "&")
    })
  })

export const codeFromSmtp = (email: string, count = 1) =>
  Effect.flatMap(
    SmtpReceiver,
    (receiver) => Effect.map(mailTo(receiver, email, count), (mails) => codeIn(bodyText(mails[count - 1]!.raw)))
  )

export const submitCode = (client: WebClient, codePage: WebReply, email: string, code: string) =>
  client.post("/login", {
    csrf: csrfIn(codePage.text),
    email,
    code,
    next: /name="next" value="([^"]*)"/.exec(codePage.text)![1]!.replaceAll("&amp;", "&")
  })

/** A full sign-in through the pages; answers the final reply (303 to `next`). */
export const signIn = (client: WebClient, email: string, next?: string) =>
  Effect.gen(function*() {
    const codePage = yield* requestCode(client, email, next)
    expect(codePage.status).toBe(200)
    return yield* submitCode(client, codePage, email, yield* codeFromSmtp(email))
  })

/** Where browser tests put screenshots: DOCK_SCREENSHOT_DIR, else test-results/web (ignored by git). */
export const SCREENSHOTS = process.env["DOCK_SCREENSHOT_DIR"] ||
  Path.resolve(import.meta.dirname, "../../../../test-results/web")

export const step = <A>(run: () => Promise<A>) => Effect.promise(run)

/** Light and dark full-page screenshots of what the page shows now, as `<name>-light.png` and `<name>-dark.png`. */
export const screenshots = (page: Page, name: string) =>
  step(async () => {
    Fs.mkdirSync(SCREENSHOTS, { recursive: true })
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      await page.screenshot({ path: Path.join(SCREENSHOTS, `${name}-${scheme}.png`), fullPage: true })
    }
    await page.emulateMedia({ colorScheme: "light" })
  })

/** No CSP report, script error or dialog on the page so far. */
export const noBrowserComplaints = (recorded: RecordedPage) => {
  expect(recorded.console.filter((message) => isBrowserReport(message.text))).toEqual([])
  expect(recorded.pageErrors).toEqual([])
  expect(recorded.dialogs).toEqual([])
}

/**
 * Signs `email` in through the pages in Chromium: /login?next=, the mailed code from the SMTP receiver, and back to
 * `next` (default /app).
 */
export const signInInBrowser = (page: Page, serverUrl: string, email: string, next = "/app") =>
  Effect.gen(function*() {
    const receiver = yield* SmtpReceiver
    const before = receiver.received().filter((mail) => mail.to.includes(email)).length
    yield* step(() => page.goto(`${serverUrl}/login?next=${encodeURIComponent(next)}`))
    yield* step(() => page.getByLabel("Email address").fill(email))
    yield* step(() => page.getByRole("button", { name: "Mail me a code" }).click())
    yield* step(() => page.getByLabel("Six-digit code").waitFor())
    const mails = yield* mailTo(receiver, email, before + 1)
    yield* step(() => page.getByLabel("Six-digit code").fill(codeIn(bodyText(mails[before]!.raw))))
    yield* step(() => page.getByRole("button", { name: "Sign in" }).click())
    yield* step(() => page.waitForURL(`${serverUrl}${next}`))
  })
