/**
 * `POST /api/artifacts/pages` (spec §4.1, §5.10, §7 rule 5; issue 16, item 9): a signed-in person creates a Markdown
 * artifact in their default Dock from the web app, with JSON `{title, slug, body_markdown, summary?}`.
 *
 * - Auth is the app session only (no bearer token): none, or one that is unknown, expired or revoked, is 401.
 * - Same origin only: the request's Origin (or Referer) must be ours, as for every web-app form (`fromOurOrigin`);
 *   anything else is 403 `forbidden`. The body must be sent as `Content-Type: application/json` (else 400
 *   `bad_request`): a form or a "simple" cross-site fetch can only send text/plain, form or multipart bodies, and
 *   application/json takes a CORS preflight, which nothing here answers. SameSite=Lax keeps the cookie off
 *   cross-site POSTs besides.
 * - The page is made through the same domain path as push_markdown_file (`Pages.push`, kind `markdown_file`): the
 *   same Markdown rendering and sanitizing on read, the same 1 MiB content limit, plan caps and attribution. The
 *   stored document is the body under YAML front matter naming its title, slug and summary.
 * - It only creates: the push runs with the write precondition "no page at this slug yet" (base version 0), checked
 *   under the Dock lock, so an existing page is 409 `conflict` and never overwritten, even by two racing requests.
 * - Answers 201 `{part, collection, artifact_url}`: the page and the Dock as the MCP tools encode them, and the
 *   page's artifact URL. Errors are the one error table's JSON: 400 (`bad_request` for a body that is not JSON or
 *   not sent as application/json, `validation_error` for missing or invalid fields and content over its limit,
 *   `invalid_slug`), 401, 403, 404 (`not_found`: the user has no default Dock), 409, plus 413 past the route's
 *   body limit. The write rates are per token and a session is none, so there is no 429 here.
 */
import {
  BadRequest,
  Conflict,
  CurrentPrincipal,
  Dock,
  type DockId,
  Docks,
  Forbidden,
  isDockError,
  Pages,
  Part,
  Unauthorized,
  ValidationError
} from "@dock/domain"
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, ParseResult, Schema } from "effect"
import { sessionPrincipal, type WebKit } from "../web/WebKit.tsx"
import { fromOurOrigin } from "../web/WebSecurity.ts"
import type { BodyLimit } from "./BodyLimit.ts"
import { errorResponse } from "./ErrorResponse.ts"

const PATH = "/api/artifacts/pages"

/**
 * The content may be 1 MiB of UTF-8 (the page limit the domain checks); JSON escaping can double that (quotes,
 * backslashes, newlines), and the title and summary are small: 4 MiB of body. Past it, 413.
 */
export const apiPagesBodyLimit: BodyLimit = {
  matches: (url) => url === PATH || url.startsWith(`${PATH}?`),
  bytes: 4 * 1024 * 1024
}

/** The request body as spec §4.1 names it. Title and summary are bounded as the MCP tools bound them. */
const NewPage = Schema.Struct({
  title: Schema.String.pipe(Schema.maxLength(300)),
  slug: Schema.String.pipe(Schema.maxLength(64)),
  body_markdown: Schema.String,
  summary: Schema.optional(Schema.String.pipe(Schema.maxLength(2_000)))
})

const decodeNewPage = Schema.decodeUnknownEither(NewPage, { errors: "first", onExcessProperty: "ignore" })

/** A JSON string is a valid YAML double-quoted scalar: the front matter holds exactly what was sent. */
const yamlString = (value: string) => JSON.stringify(value)

/** The Markdown file the page is stored as: its fields as front matter, then the body as sent. */
const markdownFile = (page: typeof NewPage.Type) =>
  [
    "---",
    `title: ${yamlString(page.title)}`,
    `slug: ${yamlString(page.slug)}`,
    ...(page.summary === undefined ? [] : [`summary: ${yamlString(page.summary)}`]),
    "---",
    "",
    page.body_markdown
  ].join("\n")

/** `application/json`, with or without parameters (`; charset=utf-8`), in any case. */
const isJson = (contentType: string | undefined) =>
  contentType !== undefined && contentType.split(";")[0]!.trim().toLowerCase() === "application/json"

const encodePart = Schema.encodeSync(Part)
const encodeDock = Schema.encodeSync(Dock)

const created = (part: Part, dock: Dock) =>
  HttpServerResponse.unsafeJson(
    { part: encodePart(part), collection: encodeDock(dock), artifact_url: part.url },
    { status: 201, headers: { "cache-control": "no-store" } }
  )

export const apiPagesRoutes = (kit: WebKit) => {
  const createPage = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const signed = yield* kit.signedIn(request)
    if (Option.isNone(signed)) {
      return yield* new Unauthorized({ message: "Sign in to the app first: this route takes the app session" })
    }
    if (!fromOurOrigin(request, kit.config)) {
      return yield* new Forbidden({ message: "This route takes requests from the app's own pages only" })
    }
    // Only a JSON media type needs a CORS preflight: accepting text/plain would let any site post here unasked.
    if (!isJson(request.headers["content-type"])) {
      return yield* new BadRequest({
        message: "Send the body as JSON, with Content-Type: application/json",
        details: { field: "content-type" }
      })
    }
    // A body the platform cannot read (past the body limit) fails here; the request middleware answers it (413).
    const text = yield* request.text
    const body = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: () => new BadRequest({ message: "The request body is not valid JSON" })
    })
    const page = yield* Effect.mapError(decodeNewPage(body), (error) => {
      const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      const field = first?.path.map(String).join(".") ?? ""
      return new ValidationError({
        message: field === "" ?
          `Invalid request body: ${first?.message ?? "expected a JSON object"}` :
          `Invalid ${field}: ${first?.message ?? "invalid value"}`,
        details: { field: field === "" ? "body" : field }
      })
    })
    if (page.title.trim() === "") {
      return yield* new ValidationError({ message: "title must not be empty", details: { field: "title" } })
    }
    return yield* Effect.gen(function*() {
      const pushed = yield* Effect.flatMap(Pages, (pages) =>
        pages.push("markdown_file", {}, {
          title: page.title,
          slug: page.slug,
          content: markdownFile(page),
          // Create only: the page must not exist yet (its version is 0), checked under the Dock lock.
          baseVersion: 0
        })).pipe(
          Effect.catchTag("Conflict", () =>
            Effect.fail(
              new Conflict({
                message: `A page with the slug "${page.slug}" already exists in your default Dock`,
                details: { field: "slug", slug: page.slug }
              })
            ))
        )
      const dock = yield* Effect.flatMap(Docks, (docks) => docks.byId(pushed.part.bucket_id as DockId))
      return created(pushed.part, dock.dock)
    }).pipe(Effect.provideService(CurrentPrincipal, sessionPrincipal(signed.value.session)))
  }).pipe(
    // Every refusal is the one error table's JSON; a body that could not be read is left to the middleware.
    Effect.catchAll((error) => isDockError(error) ? Effect.succeed(errorResponse(error)) : Effect.fail(error))
  )

  return HttpLayerRouter.addAll([HttpLayerRouter.route("POST", PATH, createPage)])
}
