/**
 * From what an agent pushes to what the pages store keeps: the size limit, HTML through the one sanitizer,
 * Markdown through front matter and the renderer (for its text, wikilinks and first heading). Explicit
 * `page_title` / `page_slug` win over front matter, front matter over what the content suggests. The parsing
 * and sanitizing run in the content workers, under their deadline.
 */
import { Effect } from "effect"
import { ContentWorkers, refusalError } from "../Content/ContentWorkers.ts"
import { contentTooLarge, deriveSummary, PAGE_CONTENT_MAX_BYTES, utf8Bytes } from "../Content/Text.ts"
import { type InvalidFrontMatter, InvalidSlug, type Unavailable, ValidationError } from "../Errors.ts"
import { isSlug, SLUG_MAX } from "../Slug.ts"
import { checkWikilinkCount } from "./Links.ts"
import { type PageContent, type PageKind } from "./Part.ts"

export const checkContentSize = (content: string): Effect.Effect<void, ValidationError> => {
  const bytes = utf8Bytes(content)
  return bytes <= PAGE_CONTENT_MAX_BYTES ? Effect.void : Effect.fail(contentTooLarge(bytes))
}

/** A page slug given by the caller (`page_slug` or front matter `slug`). */
const explicitSlug = (slug: string | null | undefined): Effect.Effect<string | undefined, InvalidSlug> => {
  if (slug === undefined || slug === null) return Effect.succeed(undefined)
  const trimmed = slug.trim()
  return isSlug(trimmed) ? Effect.succeed(trimmed) : Effect.fail(
    new InvalidSlug({
      message: `page_slug must be 1-${SLUG_MAX} lowercase letters, digits and single hyphens`,
      details: { field: "page_slug", value: slug }
    })
  )
}

export interface PushInput {
  readonly title?: string | null | undefined
  readonly slug?: string | null | undefined
  readonly content: string
  /**
   * The write precondition (`base_version`): the page's version the caller read. When the page's current version
   * is another (or the page is gone: current version 0), the push fails with `conflict` (details.current_version,
   * details.base_version and details.diff from it to the current one) and writes nothing.
   */
  readonly baseVersion?: number | undefined
}

export interface Prepared {
  readonly content: PageContent
  /** What the agent should know (a derived slug, Markdown shown as plain text, …). */
  readonly warnings: ReadonlyArray<string>
  /** What the HTML sanitizer removed (HTML pushes only). */
  readonly sanitizationWarnings?: ReadonlyArray<string>
}

/**
 * An HTML page: sanitized before storage; its text extracted for search and `format: "text"`; untitled, it takes
 * the title its content suggests.
 */
export const prepareHtml = (
  input: PushInput
): Effect.Effect<Prepared, ValidationError | InvalidSlug | Unavailable, ContentWorkers> =>
  Effect.gen(function*() {
    yield* checkContentSize(input.content)
    const slug = yield* explicitSlug(input.slug)
    const workers = yield* ContentWorkers
    const { text, title: suggested, wikilinks, ...sanitized } = yield* workers.run("htmlPage", { html: input.content })
    yield* checkWikilinkCount(wikilinks)
    // `page_title`, else the page's own <title>, else its first <h1>; the slug follows the title (Pages.push).
    const title = input.title?.trim() || suggested
    return {
      content: {
        slug,
        title: title ?? null,
        summary: deriveSummary(text),
        contentType: "html",
        pageKind: "web_page",
        content: sanitized.html,
        bodyText: text,
        // Wikilinks as in Markdown: recorded for get_web_page_links and backlinks, resolved when read.
        entities: wikilinks,
        links: wikilinks
      },
      warnings: [],
      sanitizationWarnings: sanitized.warnings
    }
  })

/**
 * A Markdown page: the complete document (front matter included) is what is stored and versioned; rendering
 * gives the text, the wikilinks and the first heading. Front matter is data: it never names a Dock, an owner
 * or a visibility.
 */
export const prepareMarkdown = (
  input: PushInput,
  options: { readonly frontMatterRequired: boolean; readonly pageKind: PageKind }
): Effect.Effect<Prepared, ValidationError | InvalidSlug | InvalidFrontMatter | Unavailable, ContentWorkers> =>
  Effect.gen(function*() {
    yield* checkContentSize(input.content)
    const workers = yield* ContentWorkers
    const outcome = yield* workers.run("markdownPage", {
      content: input.content,
      frontMatterRequired: options.frontMatterRequired
    })
    if (outcome._tag === "Refused") return yield* refusalError(outcome.refusal)
    const { fields, frontMatter, ...rendered } = outcome.page
    const slug = (yield* explicitSlug(input.slug)) ?? fields.slug
    const title = input.title?.trim() || fields.title?.trim() || rendered.firstHeading?.trim() || null
    const linkTargets = rendered.wikilinks.map((link) => link.target)
    yield* checkWikilinkCount(linkTargets)
    return {
      content: {
        slug,
        title,
        summary: fields.summary?.trim() || deriveSummary(rendered.lead ?? rendered.text),
        contentType: "markdown",
        pageKind: options.pageKind,
        content: input.content,
        bodyText: rendered.text,
        frontMatter: { ...fields.data, ...frontMatter },
        tags: fields.tags,
        entities: [...new Set([...fields.entities, ...linkTargets])],
        concepts: fields.concepts,
        sourceIds: fields.sources,
        links: [...new Set(linkTargets)],
        claimCount: fields.claimCount
      },
      warnings: rendered.warnings
    }
  })
