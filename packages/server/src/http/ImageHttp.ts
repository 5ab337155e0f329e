/**
 * `GET /images/<id>.<ext>`: a pushed image, as stored (re-encoded, metadata stripped), with the type its decoder
 * found and nothing a browser could take for a document: `nosniff`, a sandboxing CSP, `inline` with a sanitized
 * filename.
 *
 * Visibility follows the Dock. A public Dock's images are anyone's and immutable (a new push is a new id), so they
 * may be cached for a year anywhere. A private Dock's image is served only to a request carrying a bearer token,
 * or the session cookie of the web app (a signed-in reader's thumbnails), whose user can read the Dock, and never
 * stored by caches. Everything else — unknown id, wrong extension, a Dock
 * the caller cannot read, a bad token — is the same HTML 404 as /a/, so nothing tells a private image from none.
 */
import {
  anonymousPrincipal,
  contentDisposition,
  CurrentPrincipal,
  type ImageFile,
  Images,
  type Principal
} from "@dock/domain"
import { HttpLayerRouter, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import type { ServerConfig } from "../Config.ts"
import { artifactReader } from "./ArtifactAccess.ts"
import { notFoundPage } from "./ArtifactPage.ts"
import { authenticateRequest } from "./BearerAuth.ts"
import { errorResponse } from "./ErrorResponse.ts"

/** An image opened on its own is an image document: it needs no script, frame or connection. */
export const IMAGE_CSP = "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"
export const PUBLIC_CACHE = "public, max-age=31536000, immutable"
export const PRIVATE_CACHE = "private, no-store"

/**
 * The caller: a request without Authorization reads as the session's person (reading only), or as the public
 * without one (artifactReader, as the artifact routes find it). A token that does not authenticate reads as the
 * public (a private image is then 404, like any other); only a token over its request rate is refused.
 */
const principalOf = (config: ServerConfig, request: HttpServerRequest.HttpServerRequest) =>
  request.headers["authorization"] === undefined
    ? Effect.map(artifactReader(config, request, undefined), Option.getOrElse((): Principal => anonymousPrincipal))
    : authenticateRequest(request).pipe(
      Effect.catchTag("Unauthorized", () => Effect.succeed<Principal>(anonymousPrincipal))
    )

const imageResponse = (image: ImageFile, request: HttpServerRequest.HttpServerRequest) => {
  const etag = `"${image.id}"`
  const headers = {
    "content-security-policy": IMAGE_CSP,
    "x-content-type-options": "nosniff",
    "content-disposition": contentDisposition(image.filename, image.format),
    "cache-control": image.public ? PUBLIC_CACHE : PRIVATE_CACHE,
    ...(image.public ? { etag } : {})
  }
  if (image.public && request.headers["if-none-match"]?.split(",").some((tag) => tag.trim() === etag)) {
    return HttpServerResponse.empty({ status: 304, headers })
  }
  return HttpServerResponse.uint8Array(image.data, { status: 200, contentType: image.contentType, headers })
}

/** "<uuid>.<ext>" → its parts; anything else names no image. */
const fileOf = (name: string) => {
  const dot = name.lastIndexOf(".")
  return dot <= 0 ? undefined : { id: name.slice(0, dot), extension: name.slice(dot + 1) }
}

const serveImage = (config: ServerConfig) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const file = fileOf((yield* HttpRouter.params)["file"] ?? "")
    if (file === undefined) return notFoundPage
    const principal = yield* principalOf(config, request)
    const image = yield* Effect.flatMap(Images, (images) => images.view(file)).pipe(
      Effect.provideService(CurrentPrincipal, principal)
    )
    return imageResponse(image, request)
  }).pipe(
    Effect.catchTags({
      NotFound: () => Effect.succeed(notFoundPage),
      RateLimited: (error) => Effect.succeed(errorResponse(error))
    })
  )

export const imageRoutes = (config: ServerConfig) =>
  HttpLayerRouter.addAll([HttpLayerRouter.route("GET", "/images/:file", serveImage(config))])
