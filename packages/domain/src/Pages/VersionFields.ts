/**
 * What a new version equal to an old one stores (restore_*_version, revert_agent_changes): everything derived
 * from the content is derived again from the old content, so the new version is wholly the old one (text for
 * search, front matter fields, wikilinks, claim count); HTML is sanitized again. It was accepted once: only the
 * content workers' bound (or their being busy) can refuse it now.
 */
import { Effect } from "effect"
import type { ContentWorkers } from "../Content/ContentWorkers.ts"
import type { InvalidFrontMatter, InvalidSlug, Unavailable, ValidationError } from "../Errors.ts"
import { type PartFields, partFields } from "../Parts/PartRow.ts"
import type { ContentType, PageContent } from "./Part.ts"
import { prepareHtml, prepareMarkdown } from "./Prepare.ts"

/** A stored version's own fields (part_versions). */
export interface StoredVersion {
  readonly title: string | null
  readonly summary: string
  readonly content_type: string
  readonly content: string
}

export const fieldsOfVersion = (
  old: StoredVersion,
  current: PartFields
): Effect.Effect<PartFields, ValidationError | Unavailable, ContentWorkers> =>
  Effect.gen(function*() {
    const accepted = <A, R>(
      prepare: Effect.Effect<A, ValidationError | Unavailable | InvalidSlug | InvalidFrontMatter, R>
    ) => prepare.pipe(Effect.catchTags({ InvalidSlug: Effect.die, InvalidFrontMatter: Effect.die }))
    const derived: PageContent = old.content_type === "html"
      ? {
        ...(yield* accepted(prepareHtml({ title: old.title, content: old.content }))).content,
        pageKind: current.pageKind
      }
      : old.content_type === "markdown"
      ? (yield* accepted(prepareMarkdown({ title: old.title, content: old.content }, {
        frontMatterRequired: false,
        pageKind: current.pageKind
        // A version stored before a limit (the wikilink cap) is refused as a push of it would be.
      }))).content
      : { ...current, content: old.content, contentType: old.content_type as ContentType }
    return partFields({ ...derived, title: old.title, summary: old.summary }, current.slug)
  })
