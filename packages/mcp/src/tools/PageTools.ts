/** The Web page and Markdown file tools of spec §4.3: catalogue entries, one domain call each. */
import {
  type DockTarget,
  InboundLink,
  OutboundLink,
  PageDiff,
  type PageNames,
  Pages,
  PageSearchResult,
  Part,
  PartVersion,
  type PushKind
} from "@dock/domain"
import { Effect, Schema } from "effect"
import { DESTRUCTIVE, READ, tool, WRITE } from "../Tool.ts"
import { Bucket, BucketPath, BucketSlug, optional, OwnerUsername, Text, WriteTarget } from "./Params.ts"

export const PageRef = (what: string) =>
  Text(200).pipe(Schema.annotations({ description: `The ${what}: its UUID or its slug in the Dock` }))
const PageTitle = Schema.NullOr(Text(300))
const PageSlug = Schema.NullOr(Text(64)).pipe(
  Schema.annotations({
    description: "lowercase letters, digits and single hyphens; the page is updated when it exists"
  })
)
// A UTF-16 length bound the schema can show; the exact rule (1 MiB of UTF-8) is checked by the domain.
const PageContent = Schema.String.pipe(
  Schema.maxLength(1_048_576),
  Schema.annotations({ description: "At most 1 MiB (1,048,576 bytes of UTF-8)" })
)
const Version = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
/** The write precondition every page write takes (docs/versions.md, "Write preconditions"). */
export const BaseVersion = Schema.Int.pipe(
  Schema.greaterThanOrEqualTo(1),
  Schema.annotations({
    description: "Optional precondition: the page's version you read (part.version). If the page is at another " +
      "version now, nothing is written and the answer is conflict with details.current_version and details.diff " +
      "(what changed since base_version)"
  })
)
/** What the LLM-facing descriptions say about base_version. */
const BASE_VERSION_NOTE = " Pass `base_version` (the version you read) to write only if nobody changed the page " +
  "since: if someone did, the answer is conflict (409) with details.current_version and details.diff, the diff " +
  "from your version to the current one, and nothing is written."

/** What a push and a patch edit answer. */
export const PushOutput = Schema.Struct({
  part: Part,
  action: Schema.Literal("created", "updated", "unchanged"),
  warnings: Schema.Array(Schema.String),
  sanitization_warnings: optional(Schema.Array(Schema.String))
})

const withPages = <A, E, R>(f: (pages: Pages["Type"]) => Effect.Effect<A, E, R>) => Effect.flatMap(Pages, f)

/** What every push takes besides its Dock. */
const PushFields = {
  page_title: optional(PageTitle),
  page_slug: optional(PageSlug),
  page_content: PageContent,
  base_version: optional(BaseVersion)
}

/** The three push tools differ only in their kind and which Dock fields they take. */
const runPush = (kind: PushKind) =>
({ base_version, content_type, page_content, page_slug, page_title, ...target }: {
  readonly content_type?: "markdown" | "html"
  readonly page_title?: string | null
  readonly page_slug?: string | null
  readonly page_content: string
  readonly base_version?: number
} & DockTarget) =>
  withPages((pages) =>
    pages.push(kind, target, {
      contentType: content_type,
      title: page_title,
      slug: page_slug,
      content: page_content,
      baseVersion: base_version
    })
  )

export const pushWebPage = tool({
  name: "push_web_page",
  description:
    "Create or update one page (HTML by default, or Markdown with content_type \"markdown\"). The page is found by " +
    "`page_slug` (or the slug derived from `page_title`): pushing again updates it and makes a new version, identical " +
    "content answers action \"unchanged\". Without `page_title` an HTML page is titled by its <title>, else its first " +
    "<h1>; with no title at all its slug is `untitled-` and a hash of the content (the same content again is " +
    "\"unchanged\"). HTML is sanitized before storage (its CSS too); `sanitization_warnings` says what was " +
    "removed. With no Dock named it goes to your default Dock. Returns `{ part, action, warnings }`." +
    BASE_VERSION_NOTE + " A base_version for a page that does not exist (any more) is conflict with " +
    "current_version 0.",
  input: Schema.Struct({ ...WriteTarget, content_type: optional(Schema.Literal("markdown", "html")), ...PushFields }),
  output: PushOutput,
  annotations: WRITE,
  scope: "mcp:write",
  run: runPush("web_page")
})

export const pushMarkdownFile = tool({
  name: "push_markdown_file",
  description: "Create or update a Markdown file: a complete Markdown document that starts with YAML front matter " +
    "(---\\ntitle: …\\n---). Front matter fields title, summary, slug, tags, entities, concepts, claims and sources " +
    "feed the page record; `page_title` / `page_slug` override them. Bad front matter is invalid_front_matter, a bad " +
    "slug invalid_slug. With no Dock named it goes to your default Dock. Returns `{ part, action, warnings }`." +
    BASE_VERSION_NOTE,
  input: Schema.Struct({ ...WriteTarget, ...PushFields }),
  output: PushOutput,
  annotations: WRITE,
  scope: "mcp:write",
  run: runPush("markdown_file")
})

export const pushMarkdown = tool({
  name: "push_markdown",
  description: "Save Markdown (front matter optional). With `bucket` it is created or updated in that Dock like " +
    "push_markdown_file; without it, it becomes a standalone artifact of yours, in no Dock, reachable at its `url`. " +
    "A standalone artifact is public: anyone with its link can read it, without a token (it is never listed or " +
    "found by search); put private content in a private Dock instead. Returns `{ part, action, warnings }`." +
    BASE_VERSION_NOTE + " base_version needs `bucket` (a standalone artifact is new each time: validation_error).",
  input: Schema.Struct({ bucket: optional(Bucket), ...PushFields }),
  output: PushOutput,
  annotations: WRITE,
  scope: "mcp:write",
  run: runPush("markdown")
})

const Grounding = Schema.Struct({
  tags: Schema.Array(Schema.String),
  entities: Schema.Array(Schema.String),
  concepts: Schema.Array(Schema.String),
  sources: Schema.Array(Schema.String),
  links: Schema.Array(Schema.String),
  front_matter: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const getWebPage = tool({
  name: "get_web_page",
  description:
    "Read one page with its content and grounding fields (tags, entities, concepts, cited sources, wikilinks, front " +
    "matter). Name the page with `web_page` (UUID or slug) or `page_slug`; the Dock with `bucket` (or the " +
    "deprecated `bucket_slug` + `owner_username`), else the Dock set by set_grounding_bucket, else your default " +
    "Dock. `format`: \"native\" (sanitized HTML or the Markdown source; default) or \"text\" (extracted text). " +
    "Returns `{ part, content_type, grounding }`.",
  input: Schema.Struct({
    bucket: optional(Bucket),
    web_page: optional(PageRef("page")),
    bucket_slug: optional(BucketSlug),
    page_slug: optional(Text(64)),
    format: optional(Schema.Literal("native", "text")),
    owner_username: optional(OwnerUsername)
  }),
  output: Schema.Struct({ part: Part, content_type: Schema.String, grounding: Grounding }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ format, page_slug, web_page, ...target }) =>
    withPages((pages) => pages.read(target, { web_page, page_slug })).pipe(
      Effect.map(({ part, record }) => {
        const content = format === "text" ? record.text : part.content
        return {
          part: new Part({ ...part, ...(content === undefined ? {} : { content }) }, true),
          content_type: format === "text" ? "text" : part.content_type,
          grounding: {
            tags: record.tags,
            entities: record.entities,
            concepts: record.concepts,
            sources: record.sourceIds,
            links: record.links,
            front_matter: record.frontMatter
          }
        }
      })
    )
})

/** list_web_pages / list_markdown_files page past their limit: an opaque cursor in, the next one out. */
const Cursor = Text(500).pipe(
  Schema.annotations({ description: "The next_cursor of an earlier answer (same sort): the page after it" })
)
const PageListOutput = Schema.Struct({
  parts: Schema.Array(Part),
  has_more: Schema.Boolean.pipe(Schema.annotations({ description: "Whether more pages follow this answer" })),
  next_cursor: Schema.NullOr(Schema.String).pipe(
    Schema.annotations({ description: "Pass as `cursor` for the next page; null on the last" })
  )
})
const pageList = (
  { nextCursor, parts }: { readonly parts: ReadonlyArray<Part>; readonly nextCursor: string | null }
) => ({
  parts,
  has_more: nextCursor !== null,
  next_cursor: nextCursor
})

export const listWebPages = tool({
  name: "list_web_pages",
  description:
    "List a Dock's pages: title, slug, summary, content_type, page_kind, last_updated, claim_count. `sort`: " +
    "\"alphabetical\" (default, deterministic) or \"recent\"; `limit` 1-100 (default 50) per answer. The Dock as in " +
    "get_web_page. Returns `{ parts, has_more, next_cursor }`: while `has_more`, call again with " +
    "`cursor: next_cursor` (and the same sort) for the next pages; a bad cursor is validation_error.",
  input: Schema.Struct({
    bucket: optional(Bucket),
    bucket_slug: optional(BucketSlug),
    owner_username: optional(OwnerUsername),
    limit: optional(Schema.Int.pipe(Schema.between(1, 100))),
    sort: optional(Schema.Literal("alphabetical", "recent")),
    cursor: optional(Cursor)
  }),
  output: PageListOutput,
  annotations: READ,
  scope: "mcp:read",
  run: ({ cursor, limit, sort, ...target }) =>
    withPages((pages) =>
      pages.list(target, {
        limit: limit ?? 50,
        sort: sort ?? "alphabetical",
        kinds: ["web_page", "markdown_file", "micro_db"],
        cursor
      })
    ).pipe(Effect.map(pageList))
})

export const searchWebPages = tool({
  name: "search_web_pages",
  description:
    "Full-text search over page titles (weighted most), summaries and text, across every Dock you can read: your " +
    "own, those you work in, and public discoverable ones. `bucket` (the Dock's UUID, owner_username/dock_slug or " +
    "a slug of yours) or the deprecated `bucket_slug` (+ `owner_username`) limits it to one Dock; `owner_username` " +
    "alone to that owner's Docks. Query syntax: words, \"quoted phrases\", OR, -excluded. " +
    "`limit` 1-50 (default 20). Returns `{ pages }`, best first: each `{ part, bucket, snippet, rank }`, where " +
    "`snippet` marks matching words with **.",
  input: Schema.Struct({
    query: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)),
    bucket: optional(Bucket),
    bucket_slug: optional(BucketSlug),
    owner_username: optional(OwnerUsername.pipe(Schema.annotations({ description: "Only this owner's Docks" }))),
    limit: optional(Schema.Int.pipe(Schema.between(1, 50)))
  }),
  output: Schema.Struct({ pages: Schema.Array(PageSearchResult) }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ limit, query, ...target }) =>
    withPages((pages) => pages.search(query, { target, limit: limit ?? 20 })).pipe(Effect.map((pages) => ({ pages })))
})

export const getWebPageLinks = tool({
  name: "get_web_page_links",
  description:
    "The wikilinks of one page: `outbound` lists every [[Page]], [[slug|label]] and [[owner/dock/page-slug]] it " +
    "writes, each with `resolved` and the page it names now (or null); `inbound` lists the pages you can read that " +
    "link to it. Name the page with `page_slug` (slug or UUID), the Dock with `bucket` or `bucket_slug` (+ " +
    "`owner_username`), else the grounding or default Dock. Returns `{ outbound, inbound }`.",
  input: Schema.Struct({
    bucket: optional(Bucket),
    bucket_slug: optional(BucketSlug),
    page_slug: PageRef("page"),
    owner_username: optional(OwnerUsername)
  }),
  output: Schema.Struct({ outbound: Schema.Array(OutboundLink), inbound: Schema.Array(InboundLink) }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ page_slug, ...target }) => withPages((pages) => pages.links(target, page_slug))
})

export const deleteWebPage = tool({
  name: "delete_web_page",
  description:
    "Delete one page (and its versions) from a Dock you own or edit. Name it with `web_page` (UUID or slug) or " +
    "`page_slug`, the Dock with `bucket` or `bucket_path`; a page UUID alone needs no Dock (it names one page). " +
    "Slugs match whatever their case. Returns `{ ok: true }`." + BASE_VERSION_NOTE,
  input: Schema.Struct({
    bucket: optional(Bucket),
    web_page: optional(PageRef("page")),
    bucket_path: optional(BucketPath),
    page_slug: optional(Text(64)),
    base_version: optional(BaseVersion)
  }),
  output: Schema.Struct({ ok: Schema.Literal(true) }),
  annotations: DESTRUCTIVE,
  scope: "mcp:write",
  run: ({ base_version, page_slug, web_page, ...target }) =>
    withPages((pages) => pages.remove(target, { web_page, page_slug }, base_version)).pipe(
      Effect.as({ ok: true as const })
    )
})

/** The version tools come in two families that differ only in the name of the page parameter. */
const versionTools = (family: "web_page" | "markdown_file") => {
  const label = family === "web_page" ? "page" : "Markdown file"
  // The page parameter is `web_page` or `markdown_file`: the schema has the family's name, the type says
  // `web_page`, and `pageOf` reads the real key.
  const fields = { bucket: Bucket, [family]: PageRef(label) } as {
    bucket: typeof Bucket
    web_page: ReturnType<typeof PageRef>
  }
  const pageOf = (input: object): PageNames => ({
    web_page: (input as Record<string, string>)[family]!,
    ...(family === "markdown_file" ? { kinds: ["markdown_file"] as const } : {})
  })
  return {
    list: tool({
      name: `list_${family}_versions`,
      description:
        `List every saved version of a ${label}, oldest first: version number, title, summary, size, why it was made ` +
        "(created, updated, restored, forked, snapshot), who made it (user and agent label) and when, and the lines " +
        "it `added` and `removed` against the version before (version 1: all its lines added; null for versions " +
        `saved before these counts were recorded). diff_${family}_versions shows the lines. Returns \`{ versions }\`.`,
      input: Schema.Struct(fields),
      output: Schema.Struct({ versions: Schema.Array(PartVersion) }),
      annotations: READ,
      scope: "mcp:read" as const,
      run: (input) =>
        withPages((pages) => pages.versions({ bucket: input.bucket }, pageOf(input))).pipe(
          Effect.map((versions) => ({ versions }))
        )
    }),
    get: tool({
      name: `get_${family}_version`,
      description: `Read the content of one saved version of a ${label}. Returns \`{ version, content }\`.`,
      input: Schema.Struct({ ...fields, version: Version }),
      output: Schema.Struct({ version: Schema.Int, content: Schema.String }),
      annotations: READ,
      scope: "mcp:read" as const,
      run: (input) => withPages((pages) => pages.version({ bucket: input.bucket }, pageOf(input), input.version))
    }),
    restore: tool({
      name: `restore_${family}_version`,
      description: `Make an old version of a ${label} current again, as a new version (history is never rewritten). ` +
        "Returns `{ part }`." + BASE_VERSION_NOTE,
      input: Schema.Struct({ ...fields, version: Version, base_version: optional(BaseVersion) }),
      output: Schema.Struct({ part: Part }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      scope: "mcp:write" as const,
      run: (input) =>
        withPages((pages) => pages.restore({ bucket: input.bucket }, pageOf(input), input.version, input.base_version))
          .pipe(Effect.map((part) => ({ part })))
    }),
    diff: tool({
      name: `diff_${family}_versions`,
      description: `What changed in a ${label} between two saved versions: a unified line diff of the source ` +
        "(`@@ -a,b +c,d @@` hunks with 3 lines of context; `-` lines only in from_version, `+` lines only in " +
        "to_version). `to_version` defaults to the current version. The diff is at most 64 KiB; `truncated` says " +
        "it was cut, or that the versions differ almost everywhere and the whole changed region is shown removed " +
        "then added (`added`/`removed` are then upper bounds). A version the page does not have is not_found. " +
        "Returns `{ from_version, to_version, diff, added, removed, truncated }`.",
      input: Schema.Struct({
        ...fields,
        from_version: Version.pipe(Schema.annotations({ description: "The older version (the diff's `-` side)" })),
        to_version: optional(
          Version.pipe(Schema.annotations({ description: "The newer version (the `+` side); default: current" }))
        )
      }),
      // The fields at the top of the answer (a class would be a $ref in tools/list).
      output: Schema.Struct(PageDiff.fields),
      annotations: READ,
      scope: "mcp:read" as const,
      run: (input) =>
        withPages((pages) => pages.diff({ bucket: input.bucket }, pageOf(input), input.from_version, input.to_version))
    })
  }
}

const webPageVersions = versionTools("web_page")
const markdownFileVersions = versionTools("markdown_file")

export const listWebPageVersions = webPageVersions.list
export const getWebPageVersion = webPageVersions.get
export const restoreWebPageVersion = webPageVersions.restore
export const diffWebPageVersions = webPageVersions.diff
export const listMarkdownFileVersions = markdownFileVersions.list
export const getMarkdownFileVersion = markdownFileVersions.get
export const restoreMarkdownFileVersion = markdownFileVersions.restore
export const diffMarkdownFileVersions = markdownFileVersions.diff

export const getMarkdownFile = tool({
  name: "get_markdown_file",
  description: "Read one Markdown file of a Dock (its complete document in `content`). Returns `{ part }`.",
  input: Schema.Struct({ bucket: Bucket, markdown_file: PageRef("Markdown file") }),
  output: Schema.Struct({ part: Part }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ bucket, markdown_file }) =>
    withPages((pages) => pages.read({ bucket }, { web_page: markdown_file, kinds: ["markdown_file"] })).pipe(
      Effect.map(({ part }) => ({ part }))
    )
})

export const listMarkdownFiles = tool({
  name: "list_markdown_files",
  description: "List the Markdown files of a Dock, alphabetically, 100 per answer. Returns " +
    "`{ parts, has_more, next_cursor }`: while `has_more`, call again with `cursor: next_cursor` for the next files.",
  input: Schema.Struct({ bucket: Bucket, cursor: optional(Cursor) }),
  output: PageListOutput,
  annotations: READ,
  scope: "mcp:read",
  run: ({ bucket, cursor }) =>
    withPages((pages) => pages.list({ bucket }, { limit: 100, sort: "alphabetical", kinds: ["markdown_file"], cursor }))
      .pipe(Effect.map(pageList))
})

export const deleteMarkdownFile = tool({
  name: "delete_markdown_file",
  description: "Delete one Markdown file (and its versions) from a Dock you own or edit. Name the Dock with " +
    "`bucket` and the file with `markdown_file` (UUID or slug); a UUID alone needs no `bucket` (it names one " +
    "file). Returns `{ ok: true }`." + BASE_VERSION_NOTE,
  input: Schema.Struct({
    bucket: optional(Bucket),
    markdown_file: PageRef("Markdown file"),
    base_version: optional(BaseVersion)
  }),
  output: Schema.Struct({ ok: Schema.Literal(true) }),
  annotations: DESTRUCTIVE,
  scope: "mcp:write",
  run: ({ base_version, bucket, markdown_file }) =>
    withPages((pages) => pages.remove({ bucket }, { web_page: markdown_file, kinds: ["markdown_file"] }, base_version))
      .pipe(
        Effect.as({ ok: true as const })
      )
})
