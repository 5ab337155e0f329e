// Slug rules shared by usernames and Dock slugs: what counts as a slug, how free text becomes one, and the
// validation_error a bad one gets.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck } from "effect"
import { isSlug, SLUG_MAX, slugify, validateSlug } from "../src/Slug.ts"

describe("isSlug", () => {
  const valid = ["a", "0", "abc", "a1", "1a", "a-b", "a-b-c", "2024-report", "x".repeat(SLUG_MAX)]
  const invalid = [
    "",
    "-",
    "-a",
    "a-",
    "a--b",
    "A",
    "aBc",
    "a b",
    " a",
    "a ",
    "a_b",
    "a.b",
    "a/b",
    "é",
    "café",
    "a\n",
    "x".repeat(SLUG_MAX + 1)
  ]

  it.each(valid)("accepts %j", (value) => {
    expect(isSlug(value)).toBe(true)
  })

  it.each(invalid)("rejects %j", (value) => {
    expect(isSlug(value)).toBe(false)
  })

  it("honours a custom maximum length", () => {
    expect(isSlug("abcde", 5)).toBe(true)
    expect(isSlug("abcdef", 5)).toBe(false)
    expect(SLUG_MAX).toBe(64)
  })
})

describe("slugify", () => {
  it.each([
    ["Hello World", "hello-world"],
    ["Café Déjà Vu", "cafe-deja-vu"],
    ["Ångström über naïve", "angstrom-uber-naive"],
    ["İstanbul", "istanbul"],
    ["ﬁle", "file"],
    ["  --Trim me--  ", "trim-me"],
    ["a   b___c...d", "a-b-c-d"],
    ["Q3 2024: Results!", "q3-2024-results"],
    ["already-a-slug", "already-a-slug"],
    ["日本語", ""],
    ["!!!", ""],
    ["", ""]
  ])("turns %j into %j", (text, slug) => {
    expect(slugify(text)).toBe(slug)
  })

  it("cuts at the maximum and never leaves a trailing hyphen", () => {
    expect(slugify("abc def", 4)).toBe("abc")
    expect(slugify("x".repeat(100))).toBe("x".repeat(SLUG_MAX))
    expect(slugify("word ".repeat(30), 10)).toBe("word-word")
  })

  it.prop(
    "always gives a valid slug within the maximum, or nothing",
    [FastCheck.string({ unit: "grapheme" })],
    ([text]) => {
      const slug = slugify(text)
      expect(slug === "" || isSlug(slug)).toBe(true)
      expect(slug.length).toBeLessThanOrEqual(SLUG_MAX)
    }
  )

  it.prop(
    "is idempotent and leaves slugs unchanged",
    [FastCheck.string({ unit: "grapheme-ascii" }), FastCheck.integer({ min: 1, max: 80 })],
    ([text, max]) => {
      const slug = slugify(text, max)
      expect(slug.length).toBeLessThanOrEqual(max)
      expect(slugify(slug, max)).toBe(slug)
      if (isSlug(text, max)) expect(slugify(text, max)).toBe(text)
    }
  )
})

describe("validateSlug", () => {
  it.effect("returns a valid slug unchanged", () =>
    Effect.gen(function*() {
      expect(yield* validateSlug("slug", "my-dock-2")).toBe("my-dock-2")
    }))

  it.effect.each(["", "My Dock", "-x", "x-", "a--b", "ünï", "x".repeat(SLUG_MAX + 1)])(
    "rejects %j with validation_error naming the field and value",
    (value) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(validateSlug("slug", value))
        expect(error.code).toBe("validation_error")
        expect(error.status).toBe(400)
        expect(error.details).toEqual({ field: "slug", value })
        expect(error.message).toContain(`slug must be 1-${SLUG_MAX}`)
      })
  )

  it.effect("applies a custom maximum and names it in the message", () =>
    Effect.gen(function*() {
      expect(yield* Effect.exit(validateSlug("username", "abc", 3))).toStrictEqual(Exit.succeed("abc"))
      const error = yield* Effect.flip(validateSlug("username", "abcd", 3))
      expect(error.details).toEqual({ field: "username", value: "abcd" })
      expect(error.message).toMatch(/^username must be 1-3 /)
    }))
})
