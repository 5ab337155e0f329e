/**
 * A pushed image as Chromium sees it: the `markdown` snippet of push_image, with a hostile alt text and caption,
 * pushed into a page and opened at /a/ under the sandboxing CSP, shows exactly one image that loads (the CSP's
 * `img-src 'self'` admits the image route of the same origin even though the sandboxed page's own origin is
 * opaque), with the alt text and caption as plain attributes, and nothing runs. The image opened on its own is an
 * image document.
 *
 * The server's base URL is its real address here (a port chosen before it starts), so `public_url` is loadable.
 * Skipped with a warning without Chromium, failed when DOCK_REQUIRE_CHROMIUM=1 (support/Browser.ts).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Net from "node:net"
import { BrowserLive, isBrowserReport, openPage, skipBrowserTests } from "./support/Browser.ts"
import { unique } from "./support/Http.ts"
import { pushImage, solid } from "./support/Images.ts"
import { actor, call, createBucket, ok } from "./support/McpTools.ts"
import { startTestServer, TestServer } from "./support/TestServer.ts"

/** A port free a moment ago: the server's base URL must name it before the server starts. */
const freePort = Effect.async<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const port = (probe.address() as Net.AddressInfo).port
    probe.close(() => resume(Effect.succeed(port)))
  })
})

const SelfAddressedServer = Layer.scoped(
  TestServer,
  Effect.flatMap(freePort, (port) => startTestServer({ PORT: String(port), DOCK_BASE_URL: `http://127.0.0.1:${port}` }))
)

const PWN = "window.top.__pwned=1;document.title='pwned';alert(1)"

describe.skipIf(skipBrowserTests)("images in Chromium", () => {
  layer(Layer.merge(SelfAddressedServer, BrowserLive), { excludeTestServices: true, timeout: 120_000 })((it) => {
    it.scoped("the snippet pushed into a page shows one image that loads, with hostile alt text and caption inert", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor("v2 modern")
        const dock = yield* createBucket(owner.client, {
          title: "Shown",
          slug: `shown-${unique()}`,
          visibility: "public"
        })
        const alt = `x](javascript:${PWN}) <img src=x onerror="${PWN}"> <script>${PWN}</script>\n\n# not a heading`
        const caption = `" onerror="${PWN}" x="\n\n</p><script>${PWN}</script>`
        const image = yield* pushImage(owner.client, yield* solid("jpeg", 37, 23), {
          bucket: dock.id,
          alt_text: alt,
          caption
        })
        expect(image.public_url.startsWith(`${server.url}/images/`)).toBe(true)
        const part = ok(
          yield* call(owner.client, "push_markdown", {
            bucket: dock.id,
            page_title: "Gallery",
            page_content: `# Gallery\n\n${image.markdown}\n\nAfter the image.\n`
          })
        ).part

        const recorded = yield* openPage({ origin: server.url })
        const response = yield* Effect.promise(() =>
          recorded.page.goto(`${server.url}/a/${part.public_slug}`, { waitUntil: "load" })
        )
        expect(response?.status()).toBe(200)
        const seen = yield* Effect.promise(() =>
          recorded.page.evaluate(() => ({
            images: [...document.images].map((img) => ({
              src: img.src,
              alt: img.alt,
              title: img.title,
              complete: img.complete,
              width: img.naturalWidth,
              height: img.naturalHeight
            })),
            scripts: document.scripts.length,
            links: document.links.length,
            title: document.title,
            pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
            origin: window.origin
          }))
        )
        expect(seen.images).toEqual([{
          src: image.public_url,
          alt: alt.replace(/\s+/g, " ").trim(),
          title: caption.replace(/\s+/g, " ").trim(),
          complete: true,
          width: 37,
          height: 23
        }])
        expect({ scripts: seen.scripts, links: seen.links, title: seen.title, pwned: seen.pwned, origin: seen.origin })
          .toEqual({
            scripts: 0,
            links: 0,
            title: "Gallery",
            pwned: null,
            origin: "null"
          })
        expect(recorded.dialogs).toEqual([])
        expect(recorded.pageErrors).toEqual([])
        expect(recorded.console.filter((message) => isBrowserReport(message.text))).toEqual([])
        expect(recorded.requests.map((request) => request.url)).toEqual([
          `${server.url}/a/${part.public_slug}`,
          image.public_url
        ])
      }))

    it.scoped("opened on its own, the image is an image document", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* actor("v2 modern")
        const dock = yield* createBucket(owner.client, {
          title: "Alone",
          slug: `alone-${unique()}`,
          visibility: "public"
        })
        const image = yield* pushImage(owner.client, yield* solid("png", 19, 11), {
          bucket: dock.id,
          filename: "alone.png"
        })
        const recorded = yield* openPage({ origin: server.url })
        const response = yield* Effect.promise(() => recorded.page.goto(image.public_url, { waitUntil: "load" }))
        expect(response?.headers()["content-type"]).toBe("image/png")
        const seen = yield* Effect.promise(() =>
          recorded.page.evaluate(() => ({
            contentType: document.contentType,
            images: [...document.images].map((img) => [img.naturalWidth, img.naturalHeight])
          }))
        )
        expect(seen).toEqual({ contentType: "image/png", images: [[19, 11]] })
        expect(recorded.dialogs).toEqual([])
      }))
  })
})
