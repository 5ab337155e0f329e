/**
 * The known fields of a page's front matter (title, summary, slug, tags, entities, concepts, claims, sources),
 * checked and capped; every other key is kept as inert data.
 */
import { Effect } from "effect"
import { InvalidFrontMatter, InvalidSlug } from "../Errors.ts"
import { isSlug, SLUG_MAX } from "../Slug.ts"
import { FORBIDDEN_KEYS } from "./Text.ts"

const invalid = (message: string, details: Record<string, unknown>) => new InvalidFrontMatter({ message, details })

export const FIELD_LIST_MAX_ITEMS = 64
export const FIELD_ITEM_MAX_CHARS = 200

export type Claim = string | Readonly<Record<string, unknown>>

/**
 * What a page takes from its front matter. Everything else stays in `data`, inert: front matter never sets
 * visibility, owner or target, so keys such as `visibility`, `owner`, `bucket`, `dock` or `public` are kept
 * as data only and nothing reads them for access or placement.
 */
export interface PageFields {
  readonly title: string | undefined
  readonly summary: string | undefined
  readonly slug: string | undefined
  readonly tags: ReadonlyArray<string>
  readonly entities: ReadonlyArray<string>
  readonly concepts: ReadonlyArray<string>
  readonly claims: ReadonlyArray<Claim>
  readonly claimCount: number
  readonly sources: ReadonlyArray<string>
  readonly data: Record<string, unknown>
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  "title",
  "summary",
  "slug",
  "tags",
  "entities",
  "concepts",
  "claims",
  "sources"
])

const wrongType = (field: string, expected: string, value: unknown) =>
  invalid(`front matter field "${field}" must be ${expected}`, { field, found: describe(value) })

const describe = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "list" : typeof value === "object" ? "mapping" : typeof value

/** `null` or a missing key means "not given"; blank strings count as not given too. */
const optionalText = (frontMatter: Record<string, unknown>, field: string) =>
  Effect.suspend((): Effect.Effect<string | undefined, InvalidFrontMatter> => {
    const value = frontMatter[field]
    if (value === undefined || value === null) return Effect.succeed(undefined)
    if (typeof value !== "string") return Effect.fail(wrongType(field, "a string", value))
    const trimmed = value.trim()
    return Effect.succeed(trimmed === "" ? undefined : trimmed)
  })

/** A string or a list of strings → trimmed, blanks dropped, deduplicated (first occurrence wins), capped. */
const stringList = (frontMatter: Record<string, unknown>, field: string) =>
  Effect.suspend((): Effect.Effect<ReadonlyArray<string>, InvalidFrontMatter> => {
    const value = frontMatter[field]
    if (value === undefined || value === null) return Effect.succeed([])
    if (typeof value !== "string" && !Array.isArray(value)) {
      return Effect.fail(wrongType(field, "a string or a list of strings", value))
    }
    const items: ReadonlyArray<unknown> = typeof value === "string" ? [value] : value
    const result: Array<string> = []
    for (const [index, item] of items.entries()) {
      if (typeof item !== "string") {
        return Effect.fail(
          invalid(`front matter field "${field}" must contain only strings`, { field, index, found: describe(item) })
        )
      }
      const trimmed = item.trim()
      if (trimmed.length > FIELD_ITEM_MAX_CHARS) {
        return Effect.fail(
          invalid(`front matter field "${field}" has an item longer than ${FIELD_ITEM_MAX_CHARS} characters`, {
            field,
            index,
            max_chars: FIELD_ITEM_MAX_CHARS
          })
        )
      }
      if (trimmed !== "" && !result.includes(trimmed)) result.push(trimmed)
    }
    return result.length > FIELD_LIST_MAX_ITEMS
      ? Effect.fail(
        invalid(`front matter field "${field}" has more than ${FIELD_LIST_MAX_ITEMS} items`, {
          field,
          count: result.length,
          max_items: FIELD_LIST_MAX_ITEMS
        })
      )
      : Effect.succeed(result)
  })

const claimList = (frontMatter: Record<string, unknown>) =>
  Effect.suspend((): Effect.Effect<ReadonlyArray<Claim>, InvalidFrontMatter> => {
    const value = frontMatter.claims
    if (value === undefined || value === null) return Effect.succeed([])
    if (!Array.isArray(value)) return Effect.fail(wrongType("claims", "a list", value))
    const index = value.findIndex((item) => typeof item !== "string" && describe(item) !== "mapping")
    return index === -1
      ? Effect.succeed(value as ReadonlyArray<Claim>)
      : Effect.fail(
        invalid(`front matter field "claims" must contain strings or mappings`, {
          field: "claims",
          index,
          found: describe(value[index])
        })
      )
  })

const slugField = (frontMatter: Record<string, unknown>) =>
  Effect.suspend((): Effect.Effect<string | undefined, InvalidFrontMatter | InvalidSlug> => {
    const value = frontMatter.slug
    if (value === undefined || value === null) return Effect.succeed(undefined)
    if (typeof value !== "string") return Effect.fail(wrongType("slug", "a string (quote numbers)", value))
    return isSlug(value)
      ? Effect.succeed(value)
      : Effect.fail(
        new InvalidSlug({
          message:
            `front matter slug must be 1-${SLUG_MAX} lowercase letters, digits and single hyphens, starting and ending with a letter or digit`,
          details: { field: "slug", value: value.slice(0, 200) }
        })
      )
  })

/** Reads the known fields of parsed front matter (from `splitFrontMatter`); wrong types name the field. */
export const pageFields = (
  frontMatter: Record<string, unknown>
): Effect.Effect<PageFields, InvalidFrontMatter | InvalidSlug> =>
  Effect.gen(function*() {
    const title = yield* optionalText(frontMatter, "title")
    const summary = yield* optionalText(frontMatter, "summary")
    const slug = yield* slugField(frontMatter)
    const tags = yield* stringList(frontMatter, "tags")
    const entities = yield* stringList(frontMatter, "entities")
    const concepts = yield* stringList(frontMatter, "concepts")
    const claims = yield* claimList(frontMatter)
    const sources = yield* stringList(frontMatter, "sources")
    const data: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(frontMatter)) {
      if (!KNOWN_FIELDS.has(key) && !FORBIDDEN_KEYS.has(key)) data[key] = value
    }
    return { title, summary, slug, tags, entities, concepts, claims, claimCount: claims.length, sources, data }
  })
