/**
 * The one wrapper around sharp (libvips): decides what an uploaded image is and makes the bytes that are stored.
 *
 * The format is what the bytes are, never what anyone says: only JPEG, PNG and WebP signatures reach the decoder
 * at all (SVG, GIF, TIFF, AVIF, HTML and the rest are refused before libvips sees them), and the decoder must
 * agree. The pixel count is read from the header and capped before anything is decoded; animated images are
 * refused. The image is then turned upright (EXIF orientation), converted to sRGB and re-encoded to its own
 * format, which drops every metadata block (EXIF with GPS, ICC, XMP, IPTC, comments) and anything appended.
 *
 * sharp is loaded on first use (a dynamic import): processes that never take an image (the CLI, most tests) do
 * not load libvips, and a platform without the native binary still starts and serves everything else.
 */
import { Context, Effect, Layer } from "effect"
import { ValidationError } from "../Errors.ts"
import { traced } from "../Spans.ts"
import { type ImageFormat, MAX_IMAGE_PIXELS } from "./Image.ts"

/** A processed image: the bytes to store and what they are. */
export interface ProcessedImage {
  readonly format: ImageFormat
  readonly width: number
  readonly height: number
  readonly data: Uint8Array
}

export class ImageProcessor extends Context.Tag("@dock/domain/ImageProcessor")<ImageProcessor, {
  /** The image re-encoded without metadata, upright; validation_error for anything that is not an acceptable image. */
  readonly process: (bytes: Uint8Array) => Effect.Effect<ProcessedImage, ValidationError>
}>() {}

/** Images decoded at once per process: each may hold up to 40 MP × 4 bytes while it is worked on. */
export const IMAGE_CONCURRENCY = 2
/** libvips stops a pipeline that runs longer than this (a pathological file), and the image is refused. */
export const IMAGE_TIMEOUT_SECONDS = 30

const ascii = (bytes: Uint8Array, from: number, length: number) =>
  String.fromCharCode(...bytes.subarray(from, from + length))

/** The container the first bytes announce, or undefined: only these three are ever handed to the decoder. */
export const sniffFormat = (bytes: Uint8Array): ImageFormat | undefined => {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg"
  if (bytes.length >= 8 && ascii(bytes, 0, 8) === "\x89PNG\r\n\x1a\n") return "png"
  if (bytes.length >= 16 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return "webp"
  return undefined
}

/** A WebP whose image data is the lossless (VP8L) kind: re-encoded losslessly too. Walks the first RIFF chunks. */
const isLosslessWebp = (bytes: Uint8Array) => {
  let offset = 12
  for (let chunk = 0; chunk < 16 && offset + 8 <= bytes.length; chunk++) {
    const fourcc = ascii(bytes, offset, 4)
    if (fourcc === "VP8L") return true
    if (fourcc === "VP8 ") return false
    const size = bytes[offset + 4]! + bytes[offset + 5]! * 2 ** 8 + bytes[offset + 6]! * 2 ** 16 +
      bytes[offset + 7]! * 2 ** 24
    offset += 8 + size + (size % 2)
  }
  return false
}

const refused = (message: string, details: Record<string, unknown> = {}) =>
  new ValidationError({ message, details: { field: "image_base64", ...details } })

const NOT_AN_IMAGE = "image_base64 is not a JPEG, PNG or WebP image (the format is decided by the bytes, not the " +
  "filename or format_hint)"

type Sharp = typeof import("sharp").default

/** What libvips said, without paths or internals beyond the first line. */
const reason = (error: unknown) => String(error instanceof Error ? error.message : error).split("\n")[0]!.slice(0, 200)

export const ImageProcessorLive = Layer.effect(
  ImageProcessor,
  Effect.gen(function*() {
    const loadSharp = yield* Effect.cached(
      Effect.promise(async () => {
        const sharp: Sharp = (await import("sharp")).default
        // Every image is different: libvips' operation cache would only hold on to memory.
        sharp.cache(false)
        return sharp
      })
    )
    const permits = yield* Effect.makeSemaphore(IMAGE_CONCURRENCY)

    const process = traced("ImageProcessor.process")(function*(bytes: Uint8Array) {
      const sniffed = sniffFormat(bytes)
      if (sniffed === undefined) return yield* refused(NOT_AN_IMAGE)
      const sharp = yield* loadSharp
      const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      const options = { limitInputPixels: MAX_IMAGE_PIXELS, failOn: "error", pages: 1 } as const
      return yield* permits.withPermits(1)(Effect.gen(function*() {
        // The header only: format, size, frames. Nothing is decoded, so the pixel limit is ours to check and name.
        const metadata = yield* Effect.tryPromise({
          try: () => sharp(input, { ...options, limitInputPixels: false }).metadata(),
          catch: (error) => refused(`The image could not be read: ${reason(error)}`)
        })
        if (metadata.format !== sniffed) return yield* refused(NOT_AN_IMAGE, { decoded_as: metadata.format })
        const pixels = metadata.width * metadata.height
        if (!(pixels > 0) || pixels > MAX_IMAGE_PIXELS) {
          return yield* refused(
            `The image is ${metadata.width} × ${metadata.height} pixels; at most ${MAX_IMAGE_PIXELS} pixels (40 megapixels) are accepted`,
            { width: metadata.width, height: metadata.height, max_pixels: MAX_IMAGE_PIXELS }
          )
        }
        if ((metadata.pages ?? 1) > 1) {
          return yield* refused("Animated images are not accepted: push one frame as a still image", {
            frames: metadata.pages
          })
        }
        const pipeline = sharp(input, options).autoOrient().timeout({ seconds: IMAGE_TIMEOUT_SECONDS })
        const encoded = sniffed === "jpeg"
          ? pipeline.jpeg({ quality: 90 })
          : sniffed === "png"
          ? pipeline.png({ compressionLevel: 6 })
          : isLosslessWebp(bytes)
          ? pipeline.webp({ lossless: true })
          : pipeline.webp({ quality: 90 })
        const { data, info } = yield* Effect.tryPromise({
          try: () => encoded.toBuffer({ resolveWithObject: true }),
          catch: (error) => refused(`The image could not be decoded: ${reason(error)}`)
        })
        return {
          format: sniffed,
          width: info.width,
          height: info.height,
          data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
        } satisfies ProcessedImage
      }))
    })

    return { process }
  })
)
