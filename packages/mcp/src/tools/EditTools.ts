/** Patch edits (issue 18): edit_markdown_file and edit_web_page, one domain call each (Pages.edit). */
import {
  EDIT_KEY_MAX,
  EDIT_LOCATOR_MAX,
  EDIT_OPERATIONS_MAX,
  type EditKind,
  PAGE_CONTENT_MAX_BYTES,
  type PageEdit,
  Pages
} from "@dock/domain"
import { Effect, Schema } from "effect"
import { tool, WRITE } from "../Tool.ts"
import { BaseVersion, PageRef, PushOutput } from "./PageTools.ts"
import { Bucket, optional, Text } from "./Params.ts"

// Bounds in UTF-16 units the schema can show; the page's exact limit (1 MiB of UTF-8) is checked on the result.
const Locator = (description: string) =>
  Schema.String.pipe(Schema.minLength(1), Schema.maxLength(EDIT_LOCATOR_MAX), Schema.annotations({ description }))
const NewText = (description: string) =>
  Schema.String.pipe(Schema.maxLength(PAGE_CONTENT_MAX_BYTES), Schema.annotations({ description }))

const ReplaceText = Schema.Struct({
  op: Schema.Literal("replace_text"),
  find: Locator("The exact text to replace (case, spaces and line breaks count); it must occur exactly once"),
  replace: NewText("What replaces it (may be empty: a deletion)"),
  occurrence: optional(
    Schema.Literal("all").pipe(Schema.annotations({ description: "\"all\": replace every occurrence (at least one)" }))
  )
}).pipe(Schema.annotations({ description: "Replace an exact piece of the source" }))

const InsertText = Schema.Struct({
  op: Schema.Literal("insert_text"),
  before: optional(Locator("Insert right before this exact text, which must occur exactly once")),
  after: optional(Locator("Insert right after this exact text, which must occur exactly once")),
  text: NewText("The text to insert (add the line breaks it needs)")
}).pipe(Schema.annotations({ description: "Insert text before or after an exact anchor: give `before` or `after`" }))

const ReplaceSection = Schema.Struct({
  op: Schema.Literal("replace_section"),
  heading: Locator(
    "The heading's path, outer levels first, separated by \" > \" (\"Setup > Install\"); levels may be skipped, " +
      "case does not matter; it must name exactly one heading"
  ),
  content: NewText("The section's new body, without its heading line (empty: the heading stays, its body goes)")
}).pipe(
  Schema.annotations({
    description: "Replace the body under a heading, up to the next heading of the same or a higher level"
  })
)

const FrontMatterKey = Text(EDIT_KEY_MAX).pipe(
  Schema.minLength(1),
  Schema.annotations({ description: "A top-level key of the YAML front matter" })
)
const SetFrontMatter = Schema.Struct({
  op: Schema.Literal("set_front_matter"),
  key: FrontMatterKey,
  value: Schema.Unknown.pipe(Schema.annotations({ description: "Any JSON value (string, number, list, object …)" }))
}).pipe(
  Schema.annotations({ description: "Set one front matter key (added last when new); other keys stay as written" })
)

const DeleteFrontMatter = Schema.Struct({
  op: Schema.Literal("delete_front_matter"),
  key: FrontMatterKey
}).pipe(Schema.annotations({ description: "Remove one front matter key, which must be there" }))

const operations = <A extends PageEdit, I>(operation: Schema.Schema<A, I, never>, what: string) =>
  Schema.Array(operation).pipe(
    Schema.minItems(1),
    Schema.maxItems(EDIT_OPERATIONS_MAX),
    Schema.annotations({ description: `1-${EDIT_OPERATIONS_MAX} operations, applied in order to ${what}` })
  )

const runEdit = (kind: EditKind, page: string, ops: ReadonlyArray<PageEdit>, bucket: string, base?: number) =>
  Effect.flatMap(Pages, (pages) => pages.edit(kind, { bucket }, page, ops, base))

const ERRORS = "Errors: validation_error names the operation (`operations[i]`) and the text that matched nowhere " +
  "or more than once, or a result over 1 MiB; invalid_front_matter when the result's front matter does not read; " +
  "conflict (details.current_version) when the page is not at base_version; not_found; permission_denied."

export const editMarkdownFile = tool({
  name: "edit_markdown_file",
  description: "Change part of a Markdown file without sending all of it: `operations` apply in order to its " +
    "stored document (front matter included), all or none, and make one new version, checked like " +
    "push_markdown_file. Operations: replace_section {heading, content} (the body under a heading path such as " +
    "\"Setup > Install\"; the heading line stays; headings in code blocks are ignored), replace_text {find, " +
    "replace, occurrence?: \"all\"}, insert_text {before | after, text}, set_front_matter {key, value}, " +
    "delete_front_matter {key}. Every find/before/after must match the source exactly once. The slug stays. " +
    "Returns `{ part, action, warnings }` (action \"unchanged\" when nothing differs). " + ERRORS +
    " Example: {\"bucket\": \"notes\", \"markdown_file\": \"guide\", \"base_version\": 3, \"operations\": [{\"op\": " +
    "\"replace_section\", \"heading\": \"Setup > Install\", \"content\": \"Run `npm ci`.\"}, {\"op\": " +
    "\"set_front_matter\", \"key\": \"status\", \"value\": \"draft\"}]}",
  input: Schema.Struct({
    bucket: Bucket,
    markdown_file: PageRef("Markdown file"),
    operations: operations(
      Schema.Union(ReplaceSection, ReplaceText, InsertText, SetFrontMatter, DeleteFrontMatter),
      "the Markdown document"
    ),
    base_version: optional(BaseVersion)
  }),
  output: PushOutput,
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ base_version, bucket, markdown_file, operations }) =>
    runEdit("markdown_file", markdown_file, operations, bucket, base_version)
})

export const editWebPage = tool({
  name: "edit_web_page",
  description: "Change part of a web page without sending all of it: `operations` apply in order to its stored " +
    "source (the sanitized HTML, or the Markdown of a Markdown page), all or none, and make one new version; " +
    "the result is sanitized again like push_web_page and `sanitization_warnings` says what was removed. " +
    "Operations: replace_text {find, replace, occurrence?: \"all\"} and insert_text {before | after, text}; each " +
    "find/before/after must match the source exactly once (read the page with get_web_page first: stored HTML " +
    "may differ from what you pushed). The slug and title stay. Returns `{ part, action, warnings, " +
    "sanitization_warnings }`. " + ERRORS + " Example: {\"bucket\": \"notes\", \"web_page\": \"home\", " +
    "\"operations\": [{\"op\": \"replace_text\", \"find\": \"<p>Draft</p>\", \"replace\": \"<p>Final</p>\"}, " +
    "{\"op\": \"insert_text\", \"after\": \"<h1>Home</h1>\", \"text\": \"<p>Welcome.</p>\"}]}",
  input: Schema.Struct({
    bucket: Bucket,
    web_page: PageRef("page"),
    operations: operations(Schema.Union(ReplaceText, InsertText), "the page's source"),
    base_version: optional(BaseVersion)
  }),
  output: PushOutput,
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ base_version, bucket, operations, web_page }) =>
    runEdit("web_page", web_page, operations, bucket, base_version)
})
