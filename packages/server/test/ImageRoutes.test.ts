/**
 * GET /images/<id>.<ext> over real HTTP: the detected content type, nosniff, a sandboxing CSP, an inline
 * Content-Disposition with a sanitized filename (RFC 6266 `filename*` for other characters), a year of immutable
 * caching (with an ETag) for a public Dock's images and `private, no-store` otherwise; visibility following the
 * Dock by every route (anonymous, another user's token, a viewer's, a revoked or malformed token, a sandbox token),
 * one HTML 404 for everything not viewable (unknown id, wrong extension, a private Dock, malformed paths), and the
 * images and their blobs deleted with their Dock. With DOCK_ARTIFACT_ORIGIN, public_url points at the artifact
 * origin, which serves images too.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Http from "node:http"
import { unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import { expectNotFoundPage, fetchBytes, metadataOf, pathOf, pushImage, solid } from "./support/Images.ts"
import type { Era } from "./support/McpClients.ts"
import {
  actor,
  call,
  connect,
  createBucket,
  grant,
  labelledToken,
  ok,
  revokeToken,
  tokenFor
} from "./support/McpTools.ts"
import { startTestServer, TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"
const IMAGE_CSP = "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"

/** Images and blobs rows of a Dock. */
const rowsOf = (dockId: string) =>
  Effect.flatMap(TestServer, (server) =>
    Effect.gen(function*() {
      const images = yield* server.sql<{ n: number }>`select count(*)::int as n from images where dock_id = ${dockId}`
      const blobs = yield* server.sql<{ n: number }>`select count(*)::int as n from blobs where dock_id = ${dockId}`
      return { images: images[0]!.n, blobs: blobs[0]!.n }
    }).pipe(Effect.orDie))

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("GET /images/", (it) => {
  it.scoped("a public Dock's image: its type, nosniff, CSP, inline disposition and a year of immutable caching", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Open", slug: `open-${unique()}`, visibility: "public" })
      for (
        const [format, contentType] of [["jpeg", "image/jpeg"], ["png", "image/png"], ["webp", "image/webp"]] as const
      ) {
        const image = yield* pushImage(owner.client, yield* solid(format, 31, 17), {
          bucket: dock.id,
          filename: `photo.${format}`
        })
        const served = yield* fetchBytes(pathOf(image.public_url))
        expect(served.status).toBe(200)
        expect(served.headers).toMatchObject({
          "content-type": contentType,
          "x-content-type-options": "nosniff",
          "content-security-policy": IMAGE_CSP,
          "cache-control": "public, max-age=31536000, immutable",
          etag: `"${image.image_id}"`,
          "content-length": String(served.bytes.length)
        })
        expect(served.headers["content-disposition"]).toBe(`inline; filename="photo.${format}"`)
        expect((yield* metadataOf(served.bytes)).format).toBe(format)

        // A cache holding it asks again with its ETag: 304, no body.
        const again = yield* fetchBytes(pathOf(image.public_url), undefined, { "if-none-match": `"${image.image_id}"` })
        expect(again.status).toBe(304)
        expect(again.bytes.length).toBe(0)
        expect((yield* fetchBytes(pathOf(image.public_url), undefined, { "if-none-match": `"other"` })).status).toBe(
          200
        )
      }
    }))

  it.scoped("the filename is offered sanitized: no path, quotes, control or bidi characters; the format's extension; filename* for the rest", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const png = yield* solid("png", 6, 6)
      const cases = [
        ["../../etc/passwd", `inline; filename="passwd.png"`],
        ["evil\".html\r\nSet-Cookie: a=b", `inline; filename="evil.png"`],
        ["C:\\fakepath\\\u202egnp.exe", `inline; filename="gnp.png"`],
        ["Été 🌞.PNG", `inline; filename="_t_ __.png"; filename*=UTF-8''%C3%89t%C3%A9%20%F0%9F%8C%9E.png`]
      ] as const
      for (const [filename, disposition] of cases) {
        const image = yield* pushImage(owner.client, png, { filename })
        const served = yield* fetchBytes(pathOf(image.public_url), owner.token)
        expect(served.status).toBe(200)
        expect(served.headers["content-disposition"], filename).toBe(disposition)
        expect(served.headers["set-cookie"]).toBeUndefined()
      }
    }))

  it.scoped("a private Dock's image: only to a bearer whose user can read the Dock, never cached; 404 for everyone else", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Closed", slug: `closed-${unique()}` })
      const image = yield* pushImage(owner.client, yield* solid("jpeg", 20, 20), { bucket: dock.id })
      const path = pathOf(image.public_url)
      const viewer = yield* actor(MODERN)
      yield* grant(dock.id, viewer.user, "viewer")
      const outsider = yield* actor(MODERN)
      const readOnly = yield* tokenFor(owner.user, { scopes: ["mcp:read"] })
      const restricted = yield* tokenFor(owner.user, { docks: [owner.user.default_bucket_id] })

      for (
        const [who, token] of [["owner", owner.token], ["viewer", viewer.token], ["read-only token", readOnly], [
          "restricted token (reads are not restricted)",
          restricted
        ]] as const
      ) {
        const served = yield* fetchBytes(path, token)
        expect(served.status, who).toBe(200)
        expect(served.headers["content-type"]).toBe("image/jpeg")
        expect(served.headers["cache-control"], who).toBe("private, no-store")
        expect(served.headers["etag"]).toBeUndefined()
      }

      const revoked = yield* labelledToken(owner.user, "soon revoked")
      expect((yield* fetchBytes(path, revoked.token)).status).toBe(200)
      yield* revokeToken(revoked.id)
      const registration = (yield* Effect.flatMap(TestServer, (server) => register(server.url))).json
      for (
        const [who, token] of [
          ["anonymous", undefined],
          ["another user's token", outsider.token],
          ["a revoked token", revoked.token],
          ["a malformed token", "dock_mcp_not-a-token"],
          ["a sandbox token", registration.credential as string]
        ] as const
      ) {
        const reply = yield* fetchBytes(path, token)
        expectNotFoundPage(reply)
        expect(reply.headers["www-authenticate"], who).toBeUndefined()
      }
      // The same 404 as an image that does not exist.
      const missing = yield* fetchBytes(`/images/${crypto.randomUUID()}.jpg`, outsider.token)
      expectNotFoundPage(missing)
      expect(Buffer.from(missing.bytes).toString()).toBe(Buffer.from((yield* fetchBytes(path)).bytes).toString())
    }))

  it.scoped("visibility follows the Dock as it changes: public → private hides its images from the public at once", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, {
        title: "Toggle",
        slug: `toggle-${unique()}`,
        visibility: "public"
      })
      const image = yield* pushImage(owner.client, yield* solid("png", 8, 8), { bucket: dock.id })
      expect((yield* fetchBytes(pathOf(image.public_url))).status).toBe(200)
      ok(yield* call(owner.client, "update_bucket", { bucket: dock.id, visibility: "private" }))
      expectNotFoundPage(yield* fetchBytes(pathOf(image.public_url)))
      const owned = yield* fetchBytes(pathOf(image.public_url), owner.token)
      expect(owned.status).toBe(200)
      expect(owned.headers["cache-control"]).toBe("private, no-store")
    }))

  it.scoped("a sandbox's images are its token's alone", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const first = (yield* register(server.url)).json
      const second = (yield* register(server.url)).json
      const client = yield* connect(first.credential, MODERN)
      const image = yield* pushImage(client, yield* solid("webp", 8, 8))
      expect(image.workspace_id).toBe(first.sandbox_bucket.id)
      expect((yield* fetchBytes(pathOf(image.public_url), first.credential)).status).toBe(200)
      expectNotFoundPage(yield* fetchBytes(pathOf(image.public_url), second.credential))
      expectNotFoundPage(yield* fetchBytes(pathOf(image.public_url)))
    }))

  it.scoped("a wrong extension, an unknown id and every malformed path are the same HTML 404", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, {
        title: "Paths",
        slug: `paths-${unique()}`,
        visibility: "public"
      })
      const image = yield* pushImage(owner.client, yield* solid("png", 8, 8), { bucket: dock.id })
      const id = image.image_id
      expect((yield* fetchBytes(`/images/${id}.png`)).status).toBe(200)
      expect((yield* fetchBytes(`/images/${id.toUpperCase()}.png`)).status).toBe(200)
      for (
        const path of [
          `/images/${id}.jpg`,
          `/images/${id}.PNG`,
          `/images/${id}.svg`,
          `/images/${id}.png.html`,
          `/images/${id}`,
          `/images/${id}.`,
          `/images/.png`,
          `/images/${crypto.randomUUID()}.png`,
          `/images/not-a-uuid.png`,
          `/images/${id}.png/extra`,
          `/images/`,
          `/images`,
          `/images/%00.png`,
          `/images/${"x".repeat(5_000)}.png`
        ]
      ) {
        expectNotFoundPage(yield* fetchBytes(path))
      }
    }))

  it.scoped("deleting the Dock deletes its images and their blobs", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, {
        title: "Doomed",
        slug: `doomed-${unique()}`,
        visibility: "public"
      })
      const kept = yield* createBucket(owner.client, { title: "Kept", slug: `kept-${unique()}`, visibility: "public" })
      const images = [
        yield* pushImage(owner.client, yield* solid("png", 8, 8), { bucket: dock.id }),
        yield* pushImage(owner.client, yield* solid("jpeg", 8, 8), { bucket: dock.id })
      ]
      const other = yield* pushImage(owner.client, yield* solid("webp", 8, 8), { bucket: kept.id })
      expect(yield* rowsOf(dock.id)).toEqual({ images: 2, blobs: 2 })
      ok(yield* call(owner.client, "delete_bucket", { bucket: dock.id }))
      expect(yield* rowsOf(dock.id)).toEqual({ images: 0, blobs: 0 })
      const keys = yield* Effect.flatMap(TestServer, (server) =>
        server.sql<{ n: number }>`select count(*)::int as n from blobs where key like ${`docks/${dock.id}/%`}`.pipe(
          Effect.orDie
        ))
      expect(keys[0]!.n).toBe(0)
      for (const image of images) {
        expectNotFoundPage(yield* fetchBytes(pathOf(image.public_url), owner.token))
      }
      expect(yield* rowsOf(kept.id)).toEqual({ images: 1, blobs: 1 })
      expect((yield* fetchBytes(pathOf(other.public_url))).status).toBe(200)
    }))
})

const APP = "http://app.dock.test"
const ARTIFACTS = "http://artifacts.dock.test"

const ArtifactOriginServer = Layer.scoped(
  TestServer,
  startTestServer({ DOCK_BASE_URL: APP, DOCK_ARTIFACT_ORIGIN: ARTIFACTS })
)

/** GET a path naming another Host (fetch cannot set it). */
const getAs = (host: string, path: string) =>
  Effect.flatMap(
    TestServer,
    (server) =>
      Effect.async<{ status: number; headers: Http.IncomingHttpHeaders; body: Buffer }>((resume) => {
        const request = Http.request({ host: "127.0.0.1", port: server.port, path, headers: { host } }, (response) => {
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.on("end", () =>
            resume(
              Effect.succeed({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) })
            ))
        })
        request.on("error", (error) => resume(Effect.die(error)))
        request.end()
      })
  )

layer(ArtifactOriginServer, { excludeTestServices: true, timeout: 60_000 })(
  "GET /images/ with DOCK_ARTIFACT_ORIGIN",
  (it) => {
    it.scoped("public_url is on the artifact origin, which serves images (and the app host too)", () =>
      Effect.gen(function*() {
        const owner = yield* actor(MODERN)
        const dock = yield* createBucket(owner.client, {
          title: "Shown",
          slug: `shown-${unique()}`,
          visibility: "public"
        })
        const image = yield* pushImage(owner.client, yield* solid("png", 12, 9), {
          bucket: dock.id,
          alt_text: "Nine high"
        })
        expect(image.public_url).toBe(`${ARTIFACTS}/images/${image.image_id}.png`)
        expect(image.url).toBe(image.public_url)
        expect(image.markdown).toBe(`![Nine high](${ARTIFACTS}/images/${image.image_id}.png)`)
        for (const host of ["artifacts.dock.test", "app.dock.test"]) {
          const served = yield* getAs(host, pathOf(image.public_url))
          expect(served.status, host).toBe(200)
          expect(served.headers["content-type"]).toBe("image/png")
          expect((yield* metadataOf(served.body)).height).toBe(9)
        }
        const missing = yield* getAs("artifacts.dock.test", `/images/${crypto.randomUUID()}.png`)
        expect(missing.status).toBe(404)
        expect(missing.headers["content-type"]).toBe("text/html; charset=utf-8")
        // The artifact host still serves nothing but untrusted content.
        expect((yield* getAs("artifacts.dock.test", "/healthz")).status).toBe(404)
      }))
  }
)
