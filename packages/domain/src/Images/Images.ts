/**
 * The Images port: push_image and the image route. A push is checked (Dock, permission, fields, base64, size)
 * before any decoding, processed by the ImageProcessor, then stored in one transaction (ImagesLive). Reading
 * follows the Dock: whoever can read the Dock can fetch its images; anyone else gets not_found.
 */
import { Context, type Effect } from "effect"
import type { DockTarget } from "../Docks/Dock.ts"
import type { ResolvedDock } from "../Docks/Docks.ts"
import type {
  BadRequest,
  NotFound,
  PermissionDenied,
  RateLimited,
  TierLimitExceeded,
  Unauthorized,
  ValidationError
} from "../Errors.ts"
import type { ImageId } from "../Ids.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { ImageFormat, PushedImage } from "./Image.ts"

export interface ImageInput {
  readonly imageBase64: string
  readonly filename: string
  readonly altText: string
  readonly caption?: string | null | undefined
  /** Advisory only: the stored format is what the decoder finds. */
  readonly formatHint?: "jpeg" | "jpg" | "png" | "webp" | null | undefined
}

/** An image as the route serves it. */
export interface ImageFile {
  readonly id: ImageId
  readonly format: ImageFormat
  readonly contentType: string
  readonly filename: string
  readonly data: Uint8Array
  /** In a public Dock: anyone may fetch it, so it may be cached anywhere. */
  readonly public: boolean
}

/** An image as a Dock's listing shows it (no bytes): its path under the service's /images/ route, size and date. */
export interface ImageSummary {
  readonly id: ImageId
  readonly format: ImageFormat
  readonly filename: string
  readonly alt_text: string
  readonly width: number
  readonly height: number
  readonly size_bytes: number
  /** `/images/<id>.<ext>`, relative to the artifact base URL */
  readonly path: string
  readonly created_at: string
}

export type PushImageError =
  | NotFound
  | BadRequest
  | Unauthorized
  | PermissionDenied
  | RateLimited
  | ValidationError
  | TierLimitExceeded

export class Images extends Context.Tag("@dock/domain/Images")<Images, {
  /** push_image: into the Dock named, else the caller's default Dock (a sandbox token's sandbox). */
  readonly push: (target: DockTarget, input: ImageInput) => Effect.Effect<PushedImage, PushImageError, CurrentPrincipal>
  /**
   * GET /images/<id>.<ext>: the image when the caller can read its Dock and the extension is its format's;
   * anything else (unknown id, wrong extension, a Dock the caller cannot read) is the same not_found.
   */
  readonly view: (
    ref: { readonly id: string; readonly extension: string }
  ) => Effect.Effect<ImageFile, NotFound, CurrentPrincipal>
  /** The newest `limit` images of a Dock the one resolver found for the caller (so the caller may read it). */
  readonly list: (dock: ResolvedDock, limit: number) => Effect.Effect<ReadonlyArray<ImageSummary>>
}>() {}
