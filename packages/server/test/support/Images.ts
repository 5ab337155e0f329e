/**
 * Test images, made with sharp itself (no binary fixtures): solid and noisy JPEG/PNG/WebP, a JPEG carrying GPS
 * EXIF, an ICC profile, XMP and a comment, other formats that must be refused, an animated WebP, and a real PNG
 * of any size built by hand (a 1-bit image whose rows deflate to almost nothing), plus push_image and /images/
 * helpers.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import * as Zlib from "node:zlib"
import sharp from "sharp"
import { bearer } from "./Http.ts"
import type { AnyClient } from "./McpClients.ts"
import { call, ok, refused } from "./McpTools.ts"
import { TestServer } from "./TestServer.ts"

export type Format = "jpeg" | "png" | "webp"

export const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

/** A solid image of the given format and size. */
export const solid = (format: Format | "gif" | "tiff" | "avif", width: number, height: number, background = "#c33") =>
  Effect.promise(() => sharp({ create: { width, height, channels: 3, background } }).toFormat(format).toBuffer())

/** Gaussian noise: barely compressible, so the stored size is close to width × height × 3 for PNG. */
export const noisy = (format: Format, width: number, height: number) =>
  Effect.promise(() =>
    sharp({
      create: { width, height, channels: 3, background: "#888", noise: { type: "gaussian", mean: 128, sigma: 60 } }
    })
      .toFormat(format)
      .toBuffer()
  )

/** The EXIF tag that points at the GPS IFD (0x8825), in either byte order. */
export const hasGpsPointer = (exif: Buffer) =>
  exif.includes(Buffer.from([0x88, 0x25])) || exif.includes(Buffer.from([0x25, 0x88]))

export const COMMENT = "secret-comment-6d2f"

/**
 * A JPEG with GPS coordinates, a camera make, a Display P3 ICC profile, XMP and a COM comment segment: everything
 * the stored image must not carry.
 */
export const jpegWithMetadata = Effect.promise(async () => {
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#3a7" } })
    .jpeg()
    .withExif({
      IFD0: { Make: "SecretCam", Model: "X1" },
      IFD3: { GPSLatitudeRef: "N", GPSLatitude: "51/1 30/1 26/1", GPSLongitudeRef: "W", GPSLongitude: "0/1 7/1 39/1" }
    })
    .withIccProfile("p3")
    .withXmp(
      `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
        `<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" dc:creator="Ada Secret"/></rdf:RDF></x:xmpmeta>`
    )
    .toBuffer()
  // A COM segment (FF FE, length, text) right after SOI.
  const text = Buffer.from(COMMENT, "latin1")
  const length = Buffer.alloc(2)
  length.writeUInt16BE(text.length + 2)
  return Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xfe]), length, text, jpeg.subarray(2)])
})

/** A JPEG stored sideways with EXIF orientation 6: shown upright it is `height` wide and `width` tall. */
export const sidewaysJpeg = (width: number, height: number) =>
  Effect.promise(() =>
    sharp({ create: { width, height, channels: 3, background: "#246" } }).jpeg().withMetadata({ orientation: 6 })
      .toBuffer()
  )

/** Two frames joined into an animated WebP. */
export const animatedWebp = Effect.promise(async () => {
  const frame = (background: string) =>
    sharp({ create: { width: 16, height: 16, channels: 3, background } }).png().toBuffer()
  return sharp([await frame("#f00"), await frame("#00f")], { join: { animated: true } }).webp({
    loop: 0,
    delay: [100, 100]
  }).toBuffer()
})

const pngChunk = (type: string, data: Buffer) => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "latin1"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(Zlib.crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A real, valid 1-bit greyscale PNG of any size, made without holding its pixels (14,000² is ~24 KB). */
export const hugePng = (width: number, height: number) => {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 1 // bit depth
  header[9] = 0 // greyscale
  const rows = Zlib.deflateSync(Buffer.alloc((1 + Math.ceil(width / 8)) * height), { level: 9 })
  return Buffer.concat([
    Buffer.from("\x89PNG\r\n\x1a\n", "latin1"),
    pngChunk("IHDR", header),
    pngChunk("IDAT", rows),
    pngChunk("IEND", Buffer.alloc(0))
  ])
}

export const SVG = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">` +
  `<script>alert(1)</script><rect width="10" height="10"/></svg>`
export const HTML =
  `<!doctype html><html><body><script>alert(document.cookie)</script><img src=x onerror=alert(1)></body></html>`

/** What sharp reads from served bytes. */
export const metadataOf = (bytes: Uint8Array) => Effect.promise(() => sharp(Buffer.from(bytes)).metadata())

export interface PushedImage {
  readonly workspace_id: string
  readonly image_id: string
  readonly public_url: string
  readonly url: string
  readonly storage_path: string
  readonly format: Format
  readonly width: number
  readonly height: number
  readonly markdown: string
}

export const IMAGE_KEYS = [
  "format",
  "height",
  "image_id",
  "markdown",
  "public_url",
  "storage_path",
  "url",
  "width",
  "workspace_id"
]

/** push_image with the bytes (base64) and defaults for the other fields; the successful result. */
export const pushImage = (client: AnyClient, bytes: Uint8Array, args: Record<string, unknown> = {}) =>
  Effect.map(
    call(client, "push_image", { image_base64: base64(bytes), filename: "image.bin", alt_text: "An image", ...args }),
    (result) => ok(result) as PushedImage
  )

/** push_image that must be refused: its error. */
export const pushImageError = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(
    call(client, "push_image", { filename: "image.bin", alt_text: "An image", ...args }),
    (result) => refused(result).error
  )

export interface Fetched {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly bytes: Uint8Array
}

/** GET a path of the test server as bytes, with a bearer token when given. */
export const fetchBytes = (path: string, token?: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(TestServer, (server) =>
    Effect.promise(async (): Promise<Fetched> => {
      const response = await fetch(`${server.url}${path}`, {
        headers: { ...(token === undefined ? {} : bearer(token)), ...headers },
        signal: AbortSignal.timeout(20_000)
      })
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        bytes: new Uint8Array(await response.arrayBuffer())
      }
    }))

/** The path of an image URL (the test server listens on an ephemeral port the base URL does not name). */
export const pathOf = (url: string) => new URL(url).pathname

/** The 404 every not-viewable /images/ path answers: the artifact routes' HTML page under their CSP. */
export const expectNotFoundPage = (reply: Fetched) => {
  expect(reply.status).toBe(404)
  expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
  expect(reply.headers["x-content-type-options"]).toBe("nosniff")
  expect(reply.headers["content-security-policy"]).toMatch(/^sandbox;/)
  expect(reply.headers["cache-control"]).toBe("no-store")
  expect(Buffer.from(reply.bytes).toString("utf8")).toContain("<h1>Not found</h1>")
}
