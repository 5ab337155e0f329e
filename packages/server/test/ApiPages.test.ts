/**
 * `POST /api/artifacts/pages` over real HTTP (spec §4.1, §5.10, §7 rule 5; issue 16, item 9): every status. 201
 * with `{part, collection, artifact_url}` and the stored row; 400 for a body that is not JSON or not sent as
 * application/json, missing or invalid fields, a bad slug and content over its limit; 401 without a live session (a bearer token is no session); 403 for
 * a foreign or missing Origin; 404 when the user has no default Dock; 409 when the slug is taken (nothing
 * overwritten); 413 past the route's body limit. No refusal stores anything.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "node:http"
import { unique } from "./support/Http.ts"
import { type AdminUser, DOCK_KEYS, newUser, PART_KEYS, tokenFor } from "./support/McpTools.ts"
import { type RunningServer, TestServer } from "./support/TestServer.ts"
import { browserFor, ServerWithSmtp, signIn } from "./support/WebApp.ts"
import type { WebClient } from "./support/WebClient.ts"

interface ApiReply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly text: string
  readonly json: any
}

/** A raw POST to the route: the client's cookies, our Origin unless told otherwise, the body as given. */
const post = (
  server: RunningServer,
  client: WebClient | undefined,
  body: string,
  headers: Record<string, string | undefined> = {}
) =>
  Effect.async<ApiReply>((resume) => {
    const cookie = client === undefined ? "" : [...client.jar].map(([name, value]) => `${name}=${value}`).join("; ")
    const all: Record<string, string> = {
      host: `127.0.0.1:${server.port}`,
      "content-type": "application/json",
      origin: server.url
    }
    if (cookie !== "") all["cookie"] = cookie
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) delete all[name]
      else all[name] = value
    }
    const request = Http.request(
      {
        host: "127.0.0.1",
        port: server.port,
        method: "POST",
        path: "/api/artifacts/pages",
        agent: false,
        headers: all
      },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () => {
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, text, json }))
        })
      }
    )
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(body)
  })

const json = (value: unknown) => JSON.stringify(value)

/** A user signed in over HTTP (one sign-in per user: the code is read from the first mail). */
const signedInUser = Effect.gen(function*() {
  const server = yield* TestServer
  const user = yield* newUser
  const client = browserFor(server)
  expect((yield* signIn(client, user.email)).status).toBe(303)
  return { server, user, client }
})

const pagesIn = (server: RunningServer, user: AdminUser) =>
  Effect.map(
    server.sql<{ n: string | number }>`select count(*) as n from parts where dock_id = ${user.default_bucket_id}`,
    (rows) => Number(rows[0]!.n)
  ).pipe(Effect.orDie)

const expectError = (reply: ApiReply, status: number, code: string) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.headers["content-type"]).toMatch(/^application\/json/)
  expect(reply.json.error).toMatchObject({ code, status })
  expect(typeof reply.json.error.message).toBe("string")
}

const page = (slug: string) => ({
  title: "Tide tables",
  slug,
  body_markdown: "# Tides\n\nHigh water at [[noon]].\n\n<script>alert(1)</script>",
  summary: "When the water is high"
})

layer(ServerWithSmtp(), { excludeTestServices: true, timeout: 60_000 })("POST /api/artifacts/pages", (it) => {
  it.effect("201: a Markdown artifact in the user's default Dock, as the MCP tools encode page and Dock", () =>
    Effect.gen(function*() {
      const { client, server, user } = yield* signedInUser
      const slug = `tides-${unique()}`
      const reply = yield* post(server, client, json(page(slug)))
      expect(reply.status, reply.text).toBe(201)
      expect(reply.headers["content-type"]).toMatch(/^application\/json/)
      expect(Object.keys(reply.json).sort()).toEqual(["artifact_url", "collection", "part"])
      const { artifact_url, collection, part } = reply.json
      expect(Object.keys(part).filter((key) => key !== "content").sort()).toEqual(PART_KEYS)
      expect(part).toMatchObject({
        bucket_id: user.default_bucket_id,
        slug,
        title: "Tide tables",
        summary: "When the water is high",
        content_type: "markdown",
        page_kind: "markdown_file",
        version: 1
      })
      expect(Object.keys(collection).sort()).toEqual(DOCK_KEYS)
      expect(collection).toMatchObject({ id: user.default_bucket_id, owner: { username: user.username } })
      expect(artifact_url).toBe(part.url)
      expect(artifact_url).toBe(`${server.config.baseUrl}/a/${part.public_slug}`)

      const [row] = yield* server.sql<
        { title: string; summary: string; page_kind: string; content: string; owner_id: string }
      >`select p.title, p.summary, p.page_kind, v.content, p.owner_id from parts p
          join part_versions v on v.part_id = p.id and v.version = 1 where p.id = ${part.id}`.pipe(Effect.orDie)
      expect(row).toEqual({
        title: "Tide tables",
        summary: "When the water is high",
        page_kind: "markdown_file",
        owner_id: user.id,
        content: `---\ntitle: "Tide tables"\nslug: "${slug}"\nsummary: "When the water is high"\n---\n\n${
          page(slug).body_markdown
        }`
      })

      // Rendered and sanitized on read like every pushed Markdown page (the default Dock made public to see it).
      yield* server.sql`update docks set visibility = 'public' where id = ${user.default_bucket_id}`.pipe(Effect.orDie)
      const shown = yield* Effect.promise(() => fetch(`${server.url}/a/${part.public_slug}`).then((r) => r.text()))
      expect(shown).toContain("<h1>Tides</h1>")
      expect(shown).not.toContain("<script>alert(1)</script>")
      expect(shown).not.toContain("title: \"Tide tables\"")

      // summary is optional; without it the summary comes from the text, as for any Markdown push.
      const { summary: _summary, ...bare } = page(`plain-${unique()}`)
      const plain = yield* post(server, client, json(bare))
      expect(plain.status, plain.text).toBe(201)
      expect(plain.json.part.summary).toContain("High water")
    }))

  it.effect("400: not JSON, missing or invalid fields, a bad slug, content over 1 MiB; nothing stored", () =>
    Effect.gen(function*() {
      const { client, server, user } = yield* signedInUser
      const slug = `bad-${unique()}`
      const before = yield* pagesIn(server, user)
      expectError(yield* post(server, client, "{not json"), 400, "bad_request")
      expectError(yield* post(server, client, ""), 400, "bad_request")
      expectError(yield* post(server, client, json([page(slug)])), 400, "validation_error")
      expectError(yield* post(server, client, json("a page")), 400, "validation_error")
      for (const field of ["title", "slug", "body_markdown"] as const) {
        const { [field]: _gone, ...rest } = page(slug)
        const missing = yield* post(server, client, json(rest))
        expectError(missing, 400, "validation_error")
        expect(missing.json.error.details).toEqual({ field })
        expectError(yield* post(server, client, json({ ...page(slug), [field]: 42 })), 400, "validation_error")
      }
      expectError(yield* post(server, client, json({ ...page(slug), summary: null })), 400, "validation_error")
      expectError(yield* post(server, client, json({ ...page(slug), title: "   " })), 400, "validation_error")
      expectError(yield* post(server, client, json({ ...page(slug), title: "t".repeat(301) })), 400, "validation_error")
      expectError(yield* post(server, client, json({ ...page(slug), slug: "Not A Slug" })), 400, "invalid_slug")
      expectError(yield* post(server, client, json({ ...page(slug), slug: "" })), 400, "invalid_slug")
      const huge = yield* post(server, client, json({ ...page(slug), body_markdown: "a".repeat(1_048_577) }))
      expectError(huge, 400, "validation_error")
      expect(yield* pagesIn(server, user)).toBe(before)
    }))

  it.effect("400 unless the body is sent as application/json (a text/plain POST needs no preflight); nothing stored", () =>
    Effect.gen(function*() {
      const { client, server, user } = yield* signedInUser
      const before = yield* pagesIn(server, user)
      // Each would be a "simple" cross-site request (no CORS preflight) but for the media type; the body is valid.
      for (
        const contentType of [
          "text/plain",
          "text/plain;charset=UTF-8",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/jsonx",
          undefined
        ]
      ) {
        const reply = yield* post(server, client, json(page(`k-${unique()}`)), { "content-type": contentType })
        expectError(reply, 400, "bad_request")
        expect(reply.json.error.details).toEqual({ field: "content-type" })
      }
      expect(yield* pagesIn(server, user)).toBe(before)
      // A parameter and the case of the media type do not matter.
      for (const contentType of ["application/json; charset=utf-8", "Application/JSON"]) {
        const reply = yield* post(server, client, json(page(`l-${unique()}`)), { "content-type": contentType })
        expect(reply.status, reply.text).toBe(201)
      }
    }))

  it.effect("413 past the route's body limit", () =>
    Effect.gen(function*() {
      const { client, server, user } = yield* signedInUser
      const before = yield* pagesIn(server, user)
      const reply = yield* post(server, client, json({ ...page("big"), body_markdown: "a".repeat(4 * 1024 * 1024) }))
      expectError(reply, 413, "payload_too_large")
      expect(yield* pagesIn(server, user)).toBe(before)
    }))

  it.effect("401 without a live session: no cookie, an unknown one, a signed-out one, or a bearer token", () =>
    Effect.gen(function*() {
      const { client, server, user } = yield* signedInUser
      const before = yield* pagesIn(server, user)
      expectError(yield* post(server, undefined, json(page(`a-${unique()}`))), 401, "unauthorized")
      const stranger = browserFor(server)
      stranger.jar.set("dock_session", "NotASessionAnyoneWasGiven0123456789abcdef")
      expectError(yield* post(server, stranger, json(page(`b-${unique()}`))), 401, "unauthorized")
      const token = yield* tokenFor(user)
      const bearer = yield* post(server, undefined, json(page(`c-${unique()}`)), { authorization: `Bearer ${token}` })
      expectError(bearer, 401, "unauthorized")
      // After sign-out the same cookie is refused.
      const secret = client.jar.get("dock_session")!
      const home = yield* client.get("/app")
      const csrf = /name="csrf" value="([^"]+)"/.exec(home.text)![1]!
      expect((yield* client.post("/logout", { csrf })).status).toBe(303)
      const old = browserFor(server)
      old.jar.set("dock_session", secret)
      expectError(yield* post(server, old, json(page(`d-${unique()}`))), 401, "unauthorized")
      expect(yield* pagesIn(server, user)).toBe(before)
    }))

  it.effect("403 from another origin, or with no Origin and no Referer; a same-origin Referer is enough", () =>
    Effect.gen(function*() {
      const { client, server, user } = yield* signedInUser
      const before = yield* pagesIn(server, user)
      expectError(
        yield* post(server, client, json(page(`e-${unique()}`)), { origin: "https://evil.example" }),
        403,
        "forbidden"
      )
      expectError(
        yield* post(server, client, json(page(`f-${unique()}`)), { origin: "null" }),
        403,
        "forbidden"
      )
      expectError(yield* post(server, client, json(page(`g-${unique()}`)), { origin: undefined }), 403, "forbidden")
      expectError(
        yield* post(server, client, json(page(`h-${unique()}`)), {
          origin: undefined,
          referer: "https://evil.example/app"
        }),
        403,
        "forbidden"
      )
      expect(yield* pagesIn(server, user)).toBe(before)
      const referred = yield* post(server, client, json(page(`i-${unique()}`)), {
        origin: undefined,
        referer: `${server.url}/app`
      })
      expect(referred.status, referred.text).toBe(201)
    }))

  it.effect("404 when the user has no default Dock", () =>
    Effect.gen(function*() {
      const { client, server, user } = yield* signedInUser
      yield* server.sql`update users set default_dock_id = null where id = ${user.id}`.pipe(Effect.orDie)
      const reply = yield* post(server, client, json(page(`j-${unique()}`)))
      expectError(reply, 404, "not_found")
      expect(yield* pagesIn(server, user)).toBe(0)
    }))

  it.effect("409 when a page has the slug already: nothing is overwritten", () =>
    Effect.gen(function*() {
      const { client, server, user } = yield* signedInUser
      const slug = `taken-${unique()}`
      expect((yield* post(server, client, json(page(slug)))).status).toBe(201)
      const again = yield* post(server, client, json({ ...page(slug), title: "Other", body_markdown: "other" }))
      expectError(again, 409, "conflict")
      expect(again.json.error.details).toEqual({ field: "slug", slug })
      const rows = yield* server.sql<{ title: string; version: number }>`select title, version from parts
        where dock_id = ${user.default_bucket_id} and slug = ${slug}`.pipe(Effect.orDie)
      expect(rows).toEqual([{ title: "Tide tables", version: 1 }])

      // Two requests racing for a new slug: one creates it, the other is 409 (checked under the Dock lock).
      const raced = `raced-${unique()}`
      const replies = yield* Effect.all(
        [post(server, client, json(page(raced))), post(server, client, json({ ...page(raced), title: "Second" }))],
        { concurrency: "unbounded" }
      )
      expect(replies.map((reply) => reply.status).sort()).toEqual([201, 409])
      const racedRows = yield* server.sql<{ version: number }>`select version from parts
        where dock_id = ${user.default_bucket_id} and slug = ${raced}`.pipe(Effect.orDie)
      expect(racedRows).toEqual([{ version: 1 }])
    }))
})
