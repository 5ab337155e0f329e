/** The image tool of spec §4.3 ("Images"): push_image, one domain call. */
import { ALT_TEXT_MAX, CAPTION_MAX, FILENAME_MAX, Images, MAX_IMAGE_BASE64_CHARS, PushedImage } from "@dock/domain"
import { Effect, Schema } from "effect"
import { tool, WRITE } from "../Tool.ts"
import { optional, Text, WriteTarget } from "./Params.ts"

// A length bound the schema can show, with a message of its own: the default one quotes the value (20 MB of it).
const ImageBase64 = Schema.String.pipe(
  Schema.maxLength(MAX_IMAGE_BASE64_CHARS, {
    message: () =>
      `image_base64 is longer than ${MAX_IMAGE_BASE64_CHARS} characters; images are at most 15,000,000 bytes`
  }),
  Schema.annotations({
    description: "The image file in base64: JPEG, PNG or WebP, at most 15,000,000 bytes decoded. A data-URL prefix " +
      "(data:image/png;base64,) and line breaks are accepted."
  })
)

export const pushImage = tool({
  name: "push_image",
  description:
    "Upload an image (JPEG, PNG or WebP, at most 15,000,000 bytes, at most 40 megapixels, not animated) into a Dock " +
    "you can write; with no Dock named it goes to your default Dock. The format is what the bytes are (format_hint " +
    "is only a hint); the image is turned upright and re-encoded without metadata (EXIF/GPS, ICC, XMP, comments). " +
    "Returns `{ workspace_id, image_id, public_url, url, storage_path, format, width, height, markdown }`: " +
    "`markdown` is a ready `![alt](url \"caption\")` snippet to paste into a later Markdown push. The image is " +
    "viewable by whoever can read the Dock (public Dock: anyone).",
  input: Schema.Struct({
    ...WriteTarget,
    image_base64: ImageBase64,
    filename: Text(FILENAME_MAX).pipe(
      Schema.annotations({ description: "The file's name (kept as data, never a path)" })
    ),
    alt_text: Text(ALT_TEXT_MAX).pipe(
      Schema.annotations({ description: "What the image shows, for readers who cannot see it" })
    ),
    caption: optional(Schema.NullOr(Text(CAPTION_MAX))),
    format_hint: optional(Schema.NullOr(Schema.Literal("jpeg", "jpg", "png", "webp")))
  }),
  output: PushedImage,
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ alt_text, caption, filename, format_hint, image_base64, ...target }) =>
    Effect.flatMap(
      Images,
      (images) =>
        images.push(target, {
          imageBase64: image_base64,
          filename,
          altText: alt_text,
          caption,
          formatHint: format_hint
        })
    )
})
