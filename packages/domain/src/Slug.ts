/** Slug rules shared by usernames and Dock slugs: lowercase ASCII letters and digits in hyphen-separated runs. */
import { Effect } from "effect"
import { ValidationError } from "./Errors.ts"

export const SLUG_MAX = 64
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

export const isSlug = (value: string, max = SLUG_MAX): boolean => value.length <= max && SLUG.test(value)

/** A slug derived from free text: accents dropped, everything else folded into single hyphens. */
export const slugify = (text: string, max = SLUG_MAX): string =>
  text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+/, "")
    .slice(0, max)
    .replace(/-+$/, "")

export const validateSlug = (field: string, value: string, max = SLUG_MAX): Effect.Effect<string, ValidationError> =>
  isSlug(value, max)
    ? Effect.succeed(value)
    : Effect.fail(
      new ValidationError({
        message:
          `${field} must be 1-${max} lowercase letters, digits and single hyphens, starting and ending with a letter or digit`,
        details: { field, value }
      })
    )
