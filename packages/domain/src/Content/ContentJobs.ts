/**
 * The work the content workers do (ContentWorkers.ts): everything that parses or sanitizes untrusted content,
 * as synchronous functions of plain data. Inputs and outputs cross a thread boundary by structured clone, so
 * they are data only: no callbacks (where wikilinks point is a list of pairs), no class instances (a refusal
 * is `{ _tag, message, details }`, made an error class again on the calling side).
 */
import { Effect } from "effect"
import type { EditFormat, PageEdit } from "../Pages/Edit.ts"
import type { SourceMediaType } from "../Sources/Source.ts"
import type { ContentJobNames } from "./ContentWorkers.ts"
import { splitFrontMatter } from "./FrontMatter.ts"
import { htmlTitle, htmlToText, sanitizeHtml } from "./HtmlSanitizer.ts"
import { htmlWikilinks, linkWikilinks } from "./HtmlWikilinks.ts"
import { lineDiff, type LineDiffOptions } from "./LineDiff.ts"
import { readMarkdown, renderMarkdown, type Wikilink } from "./MarkdownRender.ts"
import { applyPageEdits, hasFrontMatter, markdownSourceTitle } from "./PageEdits.ts"
import { type PageFields, pageFields } from "./PageFields.ts"
import { extractSourceText } from "./SourceText.ts"

/** A rejection of the content itself (invalid_front_matter, invalid_slug, validation_error), as data. */
export interface ContentRefusal {
  readonly _tag: "InvalidFrontMatter" | "InvalidSlug" | "ValidationError"
  readonly message: string
  readonly details?: unknown
}

/** A job's refusal of its content, as data for the calling thread (its tag kept, so the caller's type is exact). */
const refused = <T extends ContentRefusal["_tag"]>(error: ContentRefusal & { readonly _tag: T }) =>
  Effect.succeed({
    _tag: "Refused" as const,
    refusal: { _tag: error._tag, message: error.message, details: error.details }
  })

/** What a Markdown push keeps from its document: front matter, its known fields, and the rendered text. */
export interface MarkdownPage {
  readonly frontMatter: Record<string, unknown>
  readonly fields: PageFields
  readonly text: string
  readonly wikilinks: ReadonlyArray<Wikilink>
  readonly firstHeading: string | undefined
  readonly lead: string | undefined
  readonly warnings: ReadonlyArray<string>
}

export const contentJobs = {
  /** Stored HTML made safe again for reading. */
  sanitizeHtml: (input: { readonly html: string }) => sanitizeHtml(input.html),

  /**
   * An HTML push: sanitized, its text for search and `format: "text"`, the title it suggests (`<title>`, else
   * the first `<h1>`) and its wikilinks' targets.
   */
  htmlPage: (input: { readonly html: string }) => {
    const sanitized = sanitizeHtml(input.html)
    return {
      html: sanitized.html,
      warnings: sanitized.warnings,
      text: htmlToText(sanitized.html),
      title: htmlTitle(input.html, sanitized.html),
      wikilinks: htmlWikilinks(sanitized.html).map((link) => link.target)
    }
  },

  /**
   * A stored HTML page as safe HTML for reading: sanitized, its wikilinks pointing where `links` says (target →
   * same-origin path) as Markdown's do, then sanitized again.
   */
  renderHtml: (input: { readonly html: string; readonly links: ReadonlyArray<readonly [string, string]> }) =>
    sanitizeHtml(linkWikilinks(sanitizeHtml(input.html).html, new Map(input.links))).html,

  /** A Markdown push: front matter read and checked, then the body rendered for its text and wikilinks. */
  markdownPage: (input: { readonly content: string; readonly frontMatterRequired: boolean }) =>
    Effect.runSync(
      Effect.gen(function*() {
        const document = yield* splitFrontMatter(input.content, { required: input.frontMatterRequired })
        const fields = yield* pageFields(document.frontMatter)
        const rendered = readMarkdown(document.body)
        const page: MarkdownPage = {
          frontMatter: document.frontMatter,
          fields,
          text: rendered.text,
          wikilinks: rendered.wikilinks,
          // A Markdown page that is an HTML document (it starts with a tag) has no Markdown heading: its <title>
          // or <h1> stands in.
          firstHeading: rendered.firstHeading ??
            (/^\s*</.test(document.body) && /<(?:title|h1)[\s>]/i.test(document.body)
              ? htmlTitle(document.body, sanitizeHtml(document.body).html)
              : undefined),
          lead: rendered.lead,
          warnings: rendered.warnings
        }
        return { _tag: "Page" as const, page }
      }).pipe(Effect.catchAll(refused))
    ),

  /**
   * A patch edit (edit_markdown_file, edit_web_page): the source after the operations, or why not; with, for
   * Markdown, the title the unedited source gives itself (PageEdits.ts `markdownSourceTitle`).
   */
  pageEdits: (
    input: { readonly content: string; readonly operations: ReadonlyArray<PageEdit>; readonly format: EditFormat }
  ) =>
    Effect.runSync(
      applyPageEdits(input.content, input.operations, input.format).pipe(
        Effect.map((content) => ({
          _tag: "Edited" as const,
          content,
          sourceTitle: input.format === "markdown" ? markdownSourceTitle(input.content) : null,
          hadFrontMatter: input.format === "markdown" && hasFrontMatter(input.content)
        })),
        Effect.catchAll(refused)
      )
    ),

  /** An operator's source (up to 5 MiB): its text (HTML sanitized, Markdown without front matter), or why not. */
  sourceText: (input: { readonly mediaType: SourceMediaType; readonly content: string }) =>
    Effect.runSync(
      extractSourceText(input.mediaType, input.content).pipe(
        Effect.map((extracted) => ({ _tag: "Text" as const, extracted })),
        Effect.catchAll(refused)
      )
    ),

  /**
   * A stored Markdown document as safe HTML for reading: front matter dropped (unreadable front matter is shown
   * as part of the body), wikilinks pointing where `links` says (target → same-origin path), then sanitized.
   */
  renderMarkdown: (input: { readonly content: string; readonly links: ReadonlyArray<readonly [string, string]> }) => {
    const body = Effect.runSync(
      splitFrontMatter(input.content, { required: false }).pipe(
        Effect.map((document) => document.body),
        Effect.orElseSucceed(() => input.content)
      )
    )
    const hrefs = new Map(input.links)
    const rendered = renderMarkdown(body, {
      resolveWikilink: (target) => {
        const href = hrefs.get(target)
        return href === undefined ? undefined : { href }
      }
    })
    return sanitizeHtml(rendered.html).html
  },

  /** A line diff too big for the calling thread's budget (Diffs.ts), with the whole work budget of lineDiff. */
  lineDiff: (input: { readonly from: string; readonly to: string; readonly options: LineDiffOptions }) =>
    lineDiff(input.from, input.to, input.options)
  // The calling thread's list of the jobs names exactly these (a missing or an extra one fails to compile).
} satisfies Record<ContentJobNames, (input: never) => unknown>

export type ContentJobs = typeof contentJobs
export type ContentJobName = keyof ContentJobs
export type ContentJobInput<K extends ContentJobName> = Parameters<ContentJobs[K]>[0]
export type ContentJobOutput<K extends ContentJobName> = ReturnType<ContentJobs[K]>

/** A job as posted to a worker. */
export interface ContentJobMessage {
  readonly id: number
  readonly name: ContentJobName
  readonly input: unknown
}

/** A worker's answer: `ready` once its modules are loaded, then one answer per job. */
export type ContentWorkerMessage =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Done"; readonly id: number; readonly output: unknown }
  /** The job threw: a RangeError (stack exhausted by deep input) is the content's fault, anything else a bug. */
  | { readonly _tag: "Threw"; readonly id: number; readonly name: string; readonly message: string }

/** Runs one job where it is called (inside a worker). */
export const runContentJob = (message: ContentJobMessage): unknown =>
  (contentJobs[message.name] as (input: unknown) => unknown)(message.input)
