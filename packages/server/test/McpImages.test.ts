/**
 * push_image (spec §4.3 "Images") over the wire with real MCP clients: the result's nine fields, each accepted
 * format round-tripping through GET /images/ with its dimensions and type, orientation applied, every metadata
 * block gone, the format decided by the decoder whatever the hint or filename say (SVG, HTML, GIF, TIFF, AVIF and
 * animated WebP refused), the pixel cap checked before decoding, the exact 15,000,000-byte bound, the base64 the
 * tool takes (data-URL prefix, line breaks) and refuses, every targeting form, each error of its spec row
 * (validation_error, tier_limit_exceeded, permission_denied, plus not_found for an unknown Dock), the snippet
 * staying one harmless image when pushed into a page served at /a/, and the content caps (a sandbox's 10 MB, the
 * plan's per-Dock bytes) counting image bytes.
 *
 * Serving (headers, caching, visibility by every route, deletion with the Dock) is in ImageRoutes.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import sharp from "sharp"
import { unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import {
  animatedWebp,
  base64,
  COMMENT,
  fetchBytes,
  hasGpsPointer,
  HTML,
  hugePng,
  IMAGE_KEYS,
  jpegWithMetadata,
  metadataOf,
  noisy,
  pathOf,
  pushImage,
  pushImageError,
  sidewaysJpeg,
  solid,
  SVG
} from "./support/Images.ts"
import { type Era, ERAS } from "./support/McpClients.ts"
import {
  actor,
  call,
  cast,
  connect,
  connectPublic,
  createBucket,
  listedTool,
  ok,
  outputShapes,
  ownInputSchema,
  pathOf as dockPath,
  tokenFor
} from "./support/McpTools.ts"
import { startTestServer, TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const MAX_BYTES = 15_000_000

const baseUrl = Effect.map(TestServer, (server) => server.config.baseUrl)

/** Rows the database holds for a Dock's images and blobs. */
const stored = (dockId: string) =>
  Effect.flatMap(TestServer, (server) =>
    Effect.gen(function*() {
      const images = yield* server.sql<{ n: number }>`select count(*)::int as n from images where dock_id = ${dockId}`
      const blobs = yield* server.sql<{ n: number; bytes: number }>`select count(*)::int as n,
          coalesce(sum(size_bytes), 0)::int as bytes from blobs where dock_id = ${dockId}`
      const usage = yield* server.sql<{ bytes: number }>`select bytes::int from dock_usage where dock_id = ${dockId}`
      return { images: images[0]!.n, blobs: blobs[0]!.n, blobBytes: blobs[0]!.bytes, usageBytes: usage[0]?.bytes ?? 0 }
    }).pipe(Effect.orDie))

/** The decoded text of a served page's <main>. */
const mainOf = (html: string) => /<main>\n([\s\S]*)\n<\/main>/.exec(html)?.[1] ?? ""

const decodeEntities = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, entity: string) =>
    entity[0] === "#"
      ? String.fromCodePoint(
        entity[1]!.toLowerCase() === "x" ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10)
      )
      : ({ amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'" } as Record<string, string>)[entity.toLowerCase()]!)

/** Every element of served HTML with its attributes (names, decoded values), in document order. */
const elementsOf = (html: string) =>
  [...html.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=>/]+(?:="[^"]*")?)*)\s*\/?>/g)].map(([, tag, attributes]) => ({
    tag: tag!.toLowerCase(),
    attributes: Object.fromEntries(
      [...attributes!.matchAll(/([^\s=>/]+)(?:="([^"]*)")?/g)].map((
        [, name, value]
      ) => [name!.toLowerCase(), decodeEntities(value ?? "")])
    )
  }))

layer(TestServerLive, { excludeTestServices: true, timeout: 180_000 })("push_image", (it) => {
  it.scoped("returns workspace_id, image_id, public_url, url, storage_path, format, width, height and markdown", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, {
        title: "Pictures",
        slug: `pictures-${unique()}`,
        visibility: "public"
      })
      const image = yield* pushImage(owner.client, yield* solid("png", 40, 30), {
        bucket: dock.id,
        filename: "square.png",
        alt_text: "A red rectangle",
        caption: "Figure 1"
      })
      expect(Object.keys(image).sort()).toEqual(IMAGE_KEYS)
      const base = yield* baseUrl
      expect(image.workspace_id).toBe(dock.id)
      expect(image.image_id).toMatch(UUID)
      expect(image.public_url).toBe(`${base}/images/${image.image_id}.png`)
      expect(image.url).toBe(image.public_url)
      expect(image.storage_path).toBe(`docks/${dock.id}/images/${image.image_id}.png`)
      expect(image).toMatchObject({ format: "png", width: 40, height: 30 })
      expect(image.markdown).toBe(`![A red rectangle](${image.public_url} "Figure 1")`)

      // Without a caption (absent or null) the snippet has no title.
      for (const caption of [undefined, null]) {
        const plain = yield* pushImage(owner.client, yield* solid("png", 4, 4), {
          bucket: dock.id,
          alt_text: "Plain",
          ...(caption === undefined ? {} : { caption })
        })
        expect(plain.markdown).toBe(`![Plain](${plain.public_url})`)
      }
    }))

  for (const era of ERAS) {
    it.scoped(`${era}: JPEG, PNG and WebP each round-trip with their dimensions and content type`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const dock = yield* createBucket(owner.client, { title: "Formats", slug: `formats-${unique()}` })
        for (
          const [format, extension, contentType] of [["jpeg", "jpg", "image/jpeg"], ["png", "png", "image/png"], [
            "webp",
            "webp",
            "image/webp"
          ]] as const
        ) {
          const image = yield* pushImage(owner.client, yield* solid(format, 123, 45), {
            bucket: dock.id,
            filename: `x.${extension}`
          })
          expect(image).toMatchObject({ format, width: 123, height: 45 })
          expect(image.public_url.endsWith(`/images/${image.image_id}.${extension}`)).toBe(true)
          const served = yield* fetchBytes(pathOf(image.public_url), owner.token)
          expect(served.status).toBe(200)
          expect(served.headers["content-type"]).toBe(contentType)
          const facts = yield* metadataOf(served.bytes)
          expect({ format: facts.format, width: facts.width, height: facts.height }).toEqual({
            format,
            width: 123,
            height: 45
          })
        }
      }))
  }

  it.scoped("PNG and lossless WebP keep every pixel through re-encoding", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const pixels = (bytes: Uint8Array) => Effect.promise(() => sharp(Buffer.from(bytes)).raw().toBuffer())
      const png = yield* noisy("png", 64, 64)
      const lossless = yield* Effect.promise(() => sharp(Buffer.from(png)).webp({ lossless: true }).toBuffer())
      for (const original of [png, lossless]) {
        const image = yield* pushImage(owner.client, original)
        const served = yield* fetchBytes(pathOf(image.public_url), owner.token)
        expect(Buffer.compare(yield* pixels(served.bytes), yield* pixels(original)), image.format).toBe(0)
      }
    }))

  it.scoped("orientation is applied: a sideways JPEG (EXIF orientation 6) is stored upright with swapped dimensions", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const sideways = yield* sidewaysJpeg(80, 20)
      expect((yield* metadataOf(sideways)).orientation).toBe(6)
      const image = yield* pushImage(owner.client, sideways)
      expect(image).toMatchObject({ format: "jpeg", width: 20, height: 80 })
      const served = yield* metadataOf((yield* fetchBytes(pathOf(image.public_url), owner.token)).bytes)
      expect({ width: served.width, height: served.height, orientation: served.orientation }).toEqual({
        width: 20,
        height: 80,
        orientation: undefined
      })
    }))

  it.scoped("a JPEG with GPS EXIF, an ICC profile, XMP and a comment comes out with no metadata at all", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const original = yield* jpegWithMetadata
      const before = yield* metadataOf(original)
      expect(before.exif !== undefined && hasGpsPointer(before.exif)).toBe(true)
      expect(before.icc).toBeDefined()
      expect(before.xmp).toBeDefined()
      expect(Buffer.from(original).includes(COMMENT)).toBe(true)

      const image = yield* pushImage(owner.client, original, { filename: "holiday.jpg" })
      const served = yield* fetchBytes(pathOf(image.public_url), owner.token)
      expect(served.status).toBe(200)
      const after = yield* metadataOf(served.bytes)
      expect(after.format).toBe("jpeg")
      expect({ exif: after.exif, icc: after.icc, xmp: after.xmp, iptc: after.iptc, comments: after.comments }).toEqual({
        exif: undefined,
        icc: undefined,
        xmp: undefined,
        iptc: undefined,
        comments: undefined
      })
      const text = Buffer.from(served.bytes).toString("latin1")
      for (const secret of [COMMENT, "SecretCam", "Ada Secret", "Exif", "ICC_PROFILE", "http://ns.adobe.com/xap"]) {
        expect(text.includes(secret), secret).toBe(false)
      }
    }))

  it.scoped("the format is what the decoder finds: format_hint, filename and data-URL label do not change it", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const png = yield* solid("png", 10, 10)
      const hinted = yield* pushImage(owner.client, png, { format_hint: "jpeg", filename: "photo.jpg" })
      expect(hinted.format).toBe("png")
      expect(hinted.public_url.endsWith(".png")).toBe(true)
      const labelled = yield* Effect.map(
        call(owner.client, "push_image", {
          image_base64: `data:image/webp;base64,${base64(yield* solid("jpeg", 10, 10))}`,
          filename: "x.webp",
          alt_text: "",
          format_hint: "webp"
        }),
        ok
      )
      expect(labelled.format).toBe("jpeg")
      for (const hint of ["jpg", "png", "webp", null]) {
        expect((yield* pushImage(owner.client, png, { format_hint: hint })).format).toBe("png")
      }
      const error = yield* pushImageError(owner.client, { image_base64: base64(png), format_hint: "gif" })
      expect(error.code).toBe("validation_error")
    }))

  it.scoped("SVG, HTML, a GIF labelled png, TIFF, AVIF and an animated WebP are refused with validation_error", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Refused", slug: `refused-${unique()}` })
      const cases: Array<[string, Uint8Array, Record<string, unknown>]> = [
        ["svg", new TextEncoder().encode(SVG), { filename: "logo.png", format_hint: "png" }],
        ["html", new TextEncoder().encode(HTML), { filename: "index.jpg", format_hint: "jpeg" }],
        ["gif labelled png", yield* solid("gif", 10, 10), { filename: "pic.png", format_hint: "png" }],
        ["tiff", yield* solid("tiff", 10, 10), { filename: "scan.webp", format_hint: "webp" }],
        ["avif", yield* solid("avif", 10, 10), { filename: "pic.jpg", format_hint: "jpg" }],
        ["empty after a JPEG signature", new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0]), {}],
        ["a truncated PNG", (yield* solid("png", 10, 10)).subarray(0, 40), {}]
      ]
      for (const [name, bytes, args] of cases) {
        const error = yield* pushImageError(owner.client, { bucket: dock.id, image_base64: base64(bytes), ...args })
        expect(error, name).toMatchObject({ code: "validation_error", status: 400, details: { field: "image_base64" } })
      }
      const animated = yield* pushImageError(owner.client, {
        bucket: dock.id,
        image_base64: base64(yield* animatedWebp)
      })
      expect(animated).toMatchObject({ code: "validation_error", details: { frames: 2 } })
      expect(animated.message).toMatch(/Animated images are not accepted/)
      expect(yield* stored(dock.id)).toMatchObject({ images: 0, blobs: 0, usageBytes: 0 })
    }))

  it.scoped("a 14,000 × 14,000 PNG is refused from its header, before any decoding", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const png = hugePng(14_000, 14_000)
      expect(yield* Effect.map(metadataOf(png), ({ height, width }) => ({ width, height }))).toEqual({
        width: 14_000,
        height: 14_000
      })
      const started = performance.now()
      const error = yield* pushImageError(owner.client, { image_base64: base64(png) })
      const elapsed = performance.now() - started
      console.log(`push_image of a 14,000 × 14,000 PNG (${png.length} bytes) refused in ${elapsed.toFixed(0)} ms`)
      expect(error).toMatchObject({
        code: "validation_error",
        details: { width: 14_000, height: 14_000, max_pixels: 40_000_000 }
      })
      // Just under the cap is accepted (6,000 × 6,000 = 36 MP).
      expect(yield* pushImage(owner.client, hugePng(6_000, 6_000))).toMatchObject({
        format: "png",
        width: 6_000,
        height: 6_000
      })
    }))

  it.scoped("exactly 15,000,000 decoded bytes are accepted (what follows the image is dropped); one more is refused", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const jpeg = yield* solid("jpeg", 20, 10)
      // A JPEG followed by junk up to exactly 15,000,000 bytes: the decoder stops at the image's end.
      const padded = new Uint8Array(MAX_BYTES)
      padded.set(jpeg)
      padded.fill(0x3c, jpeg.length) // "<<<<": nothing of it may survive re-encoding
      const image = yield* pushImage(owner.client, padded)
      expect(image).toMatchObject({ format: "jpeg", width: 20, height: 10 })
      const served = yield* fetchBytes(pathOf(image.public_url), owner.token)
      expect(served.bytes.length).toBeLessThan(10_000)

      const over = "A".repeat((MAX_BYTES / 3) * 4 + 2) + "=="
      const error = yield* pushImageError(owner.client, { image_base64: over })
      expect(error).toMatchObject({
        code: "validation_error",
        status: 400,
        details: { field: "image_base64", bytes: MAX_BYTES + 1, max_bytes: MAX_BYTES }
      })
      // Past the schema's bound the answer is refused before decoding, and does not echo the payload.
      const huge = yield* pushImageError(owner.client, { image_base64: "A".repeat(20_971_521) })
      expect(huge.code).toBe("validation_error")
      expect(JSON.stringify(huge).length).toBeLessThan(2_000)
    }))

  it.scoped("an image of nearly 15 MB that stays that large is stored and served whole", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const png = yield* noisy("png", 2_150, 2_150)
      expect(png.length).toBeGreaterThan(13_000_000)
      expect(png.length).toBeLessThanOrEqual(MAX_BYTES)
      const image = yield* pushImage(owner.client, png)
      expect(image).toMatchObject({ format: "png", width: 2_150, height: 2_150 })
      const served = yield* fetchBytes(pathOf(image.public_url), owner.token)
      expect(served.status).toBe(200)
      expect(served.headers["content-length"]).toBe(String(served.bytes.length))
      const rows = yield* Effect.flatMap(TestServer, (server) =>
        server.sql<{ size_bytes: number }>`select size_bytes from images where id = ${image.image_id}`.pipe(
          Effect.orDie
        ))
      expect(served.bytes.length).toBe(rows[0]!.size_bytes)
      expect(served.bytes.length).toBeGreaterThan(13_000_000)
      const pixels = (bytes: Uint8Array) =>
        Effect.promise(() =>
          sharp(Buffer.from(bytes)).raw().toBuffer()
        )
      expect(Buffer.compare(yield* pixels(served.bytes), yield* pixels(png))).toBe(0)
    }))

  it.scoped("a data-URL prefix and whitespace are tolerated; what is not base64 is validation_error", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const body = base64(yield* solid("webp", 30, 20))
      const wrapped = body.match(/.{1,76}/g)!.join("\r\n")
      for (
        const text of [
          `data:image/webp;base64,${body}`,
          wrapped,
          `data:image/png;base64,\n${wrapped}\n`,
          ` \t${body.match(/.{1,64}/g)!.join("\n")} `
        ]
      ) {
        expect(yield* pushImage(owner.client, new Uint8Array(), { image_base64: text })).toMatchObject({
          format: "webp",
          width: 30,
          height: 20
        })
      }
      for (
        const text of [
          "",
          "   ",
          "data:image/png;base64,",
          "not base64 at all!",
          `${body}!`,
          body.slice(0, -1) + "-_",
          "abcde"
        ]
      ) {
        const error = yield* pushImageError(owner.client, { image_base64: text })
        expect(error, JSON.stringify(text.slice(0, 30))).toMatchObject({
          code: "validation_error",
          details: { field: "image_base64" }
        })
      }
      expect(yield* pushImageError(owner.client, { image_base64: 42 })).toMatchObject({ code: "validation_error" })
    }))

  it.scoped("filename, alt_text and caption are checked; filename is data, never a path", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const png = base64(yield* solid("png", 5, 5))
      for (
        const args of [{ filename: "" }, { filename: "   " }, { filename: "x".repeat(256) }, {
          alt_text: "x".repeat(1_001)
        }, { caption: "x".repeat(2_001) }]
      ) {
        expect(yield* pushImageError(owner.client, { image_base64: png, ...args }), JSON.stringify(args).slice(0, 40))
          .toMatchObject({
            code: "validation_error"
          })
      }
      for (const missing of ["filename", "alt_text", "image_base64"]) {
        const args: Record<string, unknown> = { image_base64: png, filename: "a.png", alt_text: "A" }
        delete args[missing]
        expect(
          yield* Effect.map(call(owner.client, "push_image", args), (result) => result.structuredContent.error.code)
        ).toBe(
          "validation_error"
        )
      }
      const pathLike = yield* pushImage(owner.client, yield* solid("png", 5, 5), { filename: "../../../etc/passwd" })
      expect(pathLike.storage_path).toMatch(/^docks\/[0-9a-f-]{36}\/images\/[0-9a-f-]{36}\.png$/)
    }))

  it.scoped("targets bucket, bucket_id or bucket_path, else the default Dock; an unknown Dock is not_found", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Target", slug: `target-${unique()}` })
      const png = yield* solid("png", 5, 5)
      for (
        const target of [{ bucket: dock.id }, { bucket: dock.slug }, { bucket: dockPath(owner.user, dock) }, {
          bucket_id: dock.id
        }, { bucket_path: dockPath(owner.user, dock) }]
      ) {
        expect((yield* pushImage(owner.client, png, target)).workspace_id, JSON.stringify(target)).toBe(dock.id)
      }
      expect((yield* pushImage(owner.client, png)).workspace_id).toBe(owner.user.default_bucket_id)
      expect(yield* pushImageError(owner.client, { image_base64: base64(png), bucket: `missing-${unique()}` }))
        .toMatchObject({
          code: "not_found",
          status: 404
        })
      expect(yield* pushImageError(owner.client, { image_base64: base64(png), bucket_id: crypto.randomUUID() }))
        .toMatchObject({
          code: "not_found"
        })
      expect(
        yield* pushImageError(owner.client, {
          image_base64: base64(png),
          bucket: dock.id,
          bucket_id: owner.user.default_bucket_id
        })
      )
        .toMatchObject({ code: "bad_request" })
      expect(yield* pushImageError(owner.client, { image_base64: base64(png), bucket_id: "not-a-uuid" })).toMatchObject(
        {
          code: "validation_error"
        }
      )
      expect(yield* stored(dock.id)).toMatchObject({ images: 5, blobs: 5 })
    }))

  it.scoped("writes need an owner or editor with mcp:write in an allowed Dock: permission_denied otherwise", () =>
    Effect.gen(function*() {
      const { dock, editor, outsider, owner, viewer } = yield* cast("Guarded", MODERN)
      const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), MODERN)
      const restricted = yield* connect(yield* tokenFor(owner.user, { docks: [owner.user.default_bucket_id] }), MODERN)
      const args = { bucket: dock.id, image_base64: base64(yield* solid("png", 5, 5)) }

      for (
        const [who, client] of [["viewer", viewer.client], ["read-only token", readOnly], [
          "restricted token",
          restricted
        ]] as const
      ) {
        expect(yield* pushImageError(client, args), who).toMatchObject({ code: "permission_denied", status: 403 })
      }
      // A private Dock the caller cannot read does not exist for it.
      expect(yield* pushImageError(outsider.client, args)).toMatchObject({ code: "not_found", status: 404 })
      // permission_denied comes before the payload is looked at.
      expect(yield* pushImageError(viewer.client, { bucket: dock.id, image_base64: "not base64!" })).toMatchObject({
        code: "permission_denied"
      })
      expect((yield* pushImage(editor.client, yield* solid("png", 5, 5), { bucket: dock.id })).workspace_id).toBe(
        dock.id
      )
      expect(yield* stored(dock.id)).toMatchObject({ images: 1 })
    }))

  it.scoped("tools/list advertises push_image with its parameters, bounds, required fields and output", () =>
    Effect.gen(function*() {
      const { client } = yield* actor(MODERN)
      const listed = (yield* listedTool(client, "push_image"))!
      expect(listed).toBeDefined()
      const schema = ownInputSchema(listed.inputSchema) as {
        properties: Record<string, any>
        required: Array<string>
        additionalProperties: boolean
      }
      expect(Object.keys(schema.properties).sort()).toEqual(
        ["alt_text", "bucket", "bucket_id", "bucket_path", "caption", "filename", "format_hint", "image_base64"]
      )
      expect([...schema.required].sort()).toEqual(["alt_text", "filename", "image_base64"])
      expect(schema.additionalProperties).toBe(false)
      expect(schema.properties["image_base64"]).toMatchObject({ type: "string", maxLength: 20_971_520 })
      expect(schema.properties["filename"]).toMatchObject({ type: "string", maxLength: 255 })
      expect(JSON.stringify(schema.properties["format_hint"])).toContain("\"jpg\"")
      expect(listed.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false })
      expect(outputShapes(listed)).toContainEqual(IMAGE_KEYS)
      // A write tool: not offered on /mcp/public.
      expect(yield* listedTool(yield* connectPublic(MODERN), "push_image")).toBeUndefined()
    }))

  it.scoped("a hostile alt text and caption stay one harmless image when the snippet is pushed into a page", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, {
        title: "Gallery",
        slug: `gallery-${unique()}`,
        visibility: "public"
      })
      const alt = `x](javascript:alert(1)) ![y](https://evil.example/y.png) <script>alert(2)</script>\n\n` +
        `<img src=x onerror=alert(3)> [[Other page]] \`code\` *em* & &amp; "q" \\`
      const caption = `" onerror="alert(4)" x="\n\n</p><script>alert(5)</script><a href="javascript:alert(6)">a</a>`
      const image = yield* pushImage(owner.client, yield* solid("png", 12, 12), {
        bucket: dock.id,
        alt_text: alt,
        caption
      })
      const expectedAlt = alt.replace(/\s+/g, " ").trim()
      const expectedTitle = caption.replace(/\s+/g, " ").trim()

      const pages = [
        ["push_markdown", {
          bucket: dock.id,
          page_title: "Gallery one",
          page_content: `# Gallery\n\n${image.markdown}\n\nAfter.\n`
        }],
        ["push_web_page", {
          bucket: dock.id,
          content_type: "markdown",
          page_title: "Gallery two",
          page_content: `Before ${image.markdown} after.\n`
        }],
        ["push_markdown_file", {
          bucket: dock.id,
          page_content: `---\ntitle: Gallery three\n---\n\n| picture |\n| --- |\n| ${image.markdown} |\n`
        }]
      ] as const
      for (const [tool, args] of pages) {
        const part = ok(yield* call(owner.client, tool, args)).part
        const page = yield* Effect.flatMap(
          TestServer,
          (server) =>
            Effect.promise(() => fetch(`${server.url}/a/${part.public_slug}`).then((response) => response.text()))
        )
        const elements = elementsOf(mainOf(page))
        const images = elements.filter((element) => element.tag === "img")
        expect(images, `${tool}: ${page}`).toHaveLength(1)
        expect(images[0]!.attributes, tool).toEqual({ src: image.public_url, alt: expectedAlt, title: expectedTitle })
        // Nothing else came out of the snippet: no script, link, or event handler anywhere in the body.
        expect(
          elements.filter((element) =>
            !["h1", "p", "img", "table", "thead", "tbody", "tr", "th", "td"].includes(element.tag)
          ),
          tool
        )
          .toEqual([])
        expect(
          elements.flatMap((element) => Object.keys(element.attributes)).filter((name) => name.startsWith("on")),
          tool
        ).toEqual([])
        // The hostile text is there only as escaped attribute text: no tag of it opens anywhere in the document.
        expect(page).not.toMatch(/<script|<a[\s>]|<img src=x/i)
      }
    }))

  it.scoped("each push is recorded in the Dock's activity, attributed to the agent", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Logged", slug: `logged-${unique()}` })
      const image = yield* pushImage(owner.client, yield* solid("webp", 9, 7), { bucket: dock.id })
      const details = ok(yield* call(owner.client, "get_bucket", { bucket: dock.id })).bucket
      const entry = details.recent_activity.find((item: { action: string }) => item.action === "image.created")
      expect(entry).toMatchObject({
        subject_type: "image",
        subject_id: image.image_id,
        actor: { username: owner.user.username }
      })
      const rows = yield* Effect.flatMap(TestServer, (server) =>
        server.sql<{ user_id: string; filename: string; alt_text: string; caption: string | null; size_bytes: number }>`
          select user_id, filename, alt_text, caption, size_bytes from images where id = ${image.image_id}`.pipe(
          Effect.orDie
        ))
      expect(rows[0]).toMatchObject({
        user_id: owner.user.id,
        filename: "image.bin",
        alt_text: "An image",
        caption: null
      })
      expect(yield* stored(dock.id)).toMatchObject({
        images: 1,
        blobs: 1,
        blobBytes: rows[0]!.size_bytes,
        usageBytes: rows[0]!.size_bytes
      })
    }))

  it.scoped("a sandbox's 10 MB (10,485,760 bytes) counts image bytes: the push that would pass it is tier_limit_exceeded", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const registration = (yield* register(server.url, { agent_label: "image-agent" })).json
      const client = yield* connect(registration.credential, MODERN)
      const sandbox = registration.sandbox_bucket.id as string
      // 1,000 × 1,000 of noise is ~3 MB as PNG: three fit, the fourth would pass 10 MiB.
      const png = yield* noisy("png", 1_000, 1_000)
      for (let n = 0; n < 3; n++) expect((yield* pushImage(client, png)).workspace_id).toBe(sandbox)
      const before = yield* stored(sandbox)
      expect(before.images).toBe(3)
      expect(before.usageBytes).toBe(before.blobBytes)
      expect(before.usageBytes).toBeGreaterThan(3 * 2_900_000)
      const error = yield* pushImageError(client, { image_base64: base64(png) })
      expect(error).toMatchObject({
        code: "tier_limit_exceeded",
        status: 403,
        details: { max_bytes: 10_485_760, sandbox: true }
      })
      expect(yield* stored(sandbox)).toEqual(before)
      // A sandbox token writes only inside its sandbox.
      const owner = yield* actor(MODERN)
      const other = yield* createBucket(owner.client, {
        title: "Not yours",
        slug: `notyours-${unique()}`,
        visibility: "public"
      })
      expect(yield* pushImageError(client, { bucket: other.id, image_base64: base64(yield* solid("png", 4, 4)) }))
        .toMatchObject({
          code: "not_found"
        })
    }))
})

const SmallPlanServer = Layer.scoped(
  TestServer,
  startTestServer({ DOCK_PLAN_MAX_DOCK_BYTES: "300000", DOCK_TOKEN_WRITES_PER_MINUTE: "0" })
)

layer(SmallPlanServer, { excludeTestServices: true, timeout: 120_000 })(
  "push_image under the plan's content size",
  (it) => {
    it.scoped("image bytes count against DOCK_PLAN_MAX_DOCK_BYTES: tier_limit_exceeded, and nothing of the refused push is kept", () =>
      Effect.gen(function*() {
        const owner = yield* actor(MODERN)
        const dock = yield* createBucket(owner.client, { title: "Full", slug: `full-${unique()}` })
        const png = yield* noisy("png", 250, 250)
        const first = yield* pushImage(owner.client, png, { bucket: dock.id })
        const before = yield* stored(dock.id)
        expect(before).toMatchObject({ images: 1, blobs: 1 })
        expect(before.usageBytes).toBeGreaterThan(150_000)
        const error = yield* pushImageError(owner.client, { bucket: dock.id, image_base64: base64(png) })
        expect(error).toMatchObject({
          code: "tier_limit_exceeded",
          status: 403,
          details: { max_bytes: 300_000, sandbox: false }
        })
        expect(yield* stored(dock.id)).toEqual(before)
        // A page push sees the same usage: images and pages share the Dock's content size.
        const page = yield* call(owner.client, "push_web_page", {
          bucket: dock.id,
          page_content: `<p>${"x".repeat(200_000)}</p>`
        })
        expect(page.structuredContent.error).toMatchObject({ code: "tier_limit_exceeded" })
        expect(first.workspace_id).toBe(dock.id)
      }))
  }
)
