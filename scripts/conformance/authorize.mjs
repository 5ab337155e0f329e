/**
 * The browser half of the suite's `authorization-code-grant` scenario, for scripts/conformance.sh.
 *
 *   node scripts/conformance/authorize.mjs <suite output file> <base url> <email> <outbox dir>
 *
 * Run with the project's Node (playwright-core is in the root node_modules). The suite prints an authorization
 * URL and then waits for a browser to come back to its loopback callback; this script waits for that URL in the
 * suite's output, opens it in headless Chromium (DOCK_CHROMIUM_PATH, default /usr/bin/chromium), signs in at
 * /login with <email> (the server has no SMTP in the conformance run, so the code is read from the newest `.eml`
 * for <email> in <outbox dir>), clicks Allow on the consent page, and lets the browser follow the redirect to the
 * suite's callback. The suite then exchanges the code and judges the answers itself. Exits 1 on any failure (the
 * script then stops the suite rather than letting it wait five minutes).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { chromium } from "playwright-core"

const [outputFile, baseUrl, email, outboxDir] = process.argv.slice(2)
if (outboxDir === undefined) {
  console.error("usage: node authorize.mjs <suite output file> <base url> <email> <outbox dir>")
  process.exit(2)
}
const CHROMIUM_PATH = process.env["DOCK_CHROMIUM_PATH"] || "/usr/bin/chromium"
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]
const DEADLINE = Date.now() + 120_000
const say = (message) => console.log(`[authorize] ${message}`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls until `probe` returns something other than undefined, or fails at the deadline. */
const waitFor = async (what, probe) => {
  while (Date.now() < DEADLINE) {
    const value = await probe()
    if (value !== undefined) return value
    await sleep(200)
  }
  throw new Error(`timed out waiting for ${what}`)
}

// The line after "Access the following URL in your browser…" is the authorization URL.
const authorizationUrl = await waitFor("the authorization URL in the suite's output", () => {
  const lines = Fs.existsSync(outputFile) ? Fs.readFileSync(outputFile, "utf8").split("\n") : []
  const at = lines.findIndex((line) => line.startsWith("Access the following URL in your browser"))
  const url = at >= 0 ? lines[at + 1]?.trim() : undefined
  return url !== undefined && url.startsWith(`${baseUrl}/`) ? url : undefined
})
const callbackPrefix = new URL(authorizationUrl).searchParams.get("redirect_uri")
say(`authorization URL: ${authorizationUrl}`)

/** The body of an outbox `.eml` (headers hold a Message-ID uuid, which can contain six digits in a row). */
const mailsTo = (address) =>
  (Fs.existsSync(outboxDir) ? Fs.readdirSync(outboxDir).filter((name) => name.endsWith(".eml")).sort() : [])
    .map((name) => {
      const raw = Fs.readFileSync(Path.join(outboxDir, name), "utf8")
      const split = raw.indexOf("\r\n\r\n")
      const headers = raw.slice(0, split)
      const to = /^To: (.*)$/m.exec(headers)?.[1]?.trim() ?? ""
      return { name, to, body: raw.slice(split + 4) }
    })
    .filter((mail) => mail.to.toLowerCase() === address.toLowerCase())

if (!Fs.existsSync(CHROMIUM_PATH)) {
  console.error(
    `[authorize] Chromium is missing at ${CHROMIUM_PATH} (apt-get install chromium, or set DOCK_CHROMIUM_PATH)`
  )
  process.exit(1)
}
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
try {
  const page = await browser.newPage()
  page.setDefaultTimeout(Math.max(1_000, DEADLINE - Date.now()))
  const callback = page.waitForRequest((request) => request.url().startsWith(`${callbackPrefix}?`))
  await page.goto(authorizationUrl)
  if (new URL(page.url()).pathname === "/login") {
    say(`signing in as ${email}`)
    const before = new Set(mailsTo(email).map((mail) => mail.name))
    await page.getByLabel("Email address").fill(email)
    await page.getByRole("button", { name: "Mail me a code" }).click()
    await page.getByLabel("Six-digit code").waitFor()
    const mail = await waitFor(
      `a new mail to ${email} in ${outboxDir}`,
      () => mailsTo(email).findLast((mail) => !before.has(mail.name))
    )
    const codes = mail.body.match(/(?<![0-9])[0-9]{6}(?![0-9])/g) ?? []
    if (codes.length !== 1) throw new Error(`expected one six-digit code in ${mail.name}, found ${codes.length}`)
    await page.getByLabel("Six-digit code").fill(codes[0])
    await page.getByRole("button", { name: "Sign in" }).click()
  }
  say("approving on the consent page")
  await page.getByRole("button", { name: "Allow" }).click()
  const answer = new URL((await callback).url())
  say(`the browser came back to ${answer.origin}${answer.pathname} with ${[...answer.searchParams.keys()].join(", ")}`)
  // Let the callback's answer arrive so that the suite has seen the request before the browser goes away.
  await page.waitForURL((url) => url.href.startsWith(`${callbackPrefix}?`)).catch(() => undefined)
} finally {
  await browser.close()
}
