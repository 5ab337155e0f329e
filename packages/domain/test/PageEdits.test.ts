// Patch edits (issue 18): each operation on a page's source, its not-found and ambiguous matches, the section
// rules (nested levels, the last section, setext headings, headings in code, duplicate names at different paths),
// front matter kept as written, all-or-none and the size limit.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { applyHtmlEdits, applyMarkdownEdits, hasFrontMatter, markdownSourceTitle } from "../src/Content/PageEdits.ts"
import { PAGE_CONTENT_MAX_BYTES } from "../src/Content/Text.ts"
import type { PageEdit } from "../src/Pages/Edit.ts"

const edited = (source: string, operations: ReadonlyArray<PageEdit>) =>
  Effect.runSync(applyMarkdownEdits(source, operations))
const refused = (source: string, operations: ReadonlyArray<PageEdit>, html = false) => {
  const result = Effect.runSync(
    Effect.either(html ? applyHtmlEdits(source, operations) : applyMarkdownEdits(source, operations))
  )
  if (Either.isRight(result)) throw new Error(`expected a refusal, got ${JSON.stringify(result.right)}`)
  return result.left
}

const guide = [
  "---",
  "# who reads this",
  "title: 'Guide' # the title",
  "tags: [a, b]",
  "order: 2",
  "---",
  "# Guide",
  "",
  "Intro.",
  "",
  "## Setup",
  "",
  "Setup text.",
  "",
  "```sh",
  "## Install",
  "```",
  "",
  "### Install",
  "",
  "Old install.",
  "",
  "#### Details",
  "",
  "Deep.",
  "",
  "Usage",
  "-----",
  "",
  "Use it.",
  "",
  "### Install",
  "",
  "Usage install.",
  ""
].join("\n")

describe("replace_text and insert_text", () => {
  it("replace_text replaces the one exact match", () => {
    expect(edited("a cat and a dog", [{ op: "replace_text", find: "cat", replace: "bird" }])).toBe("a bird and a dog")
  })

  it("replace_text with occurrence all replaces every match; an empty replacement deletes", () => {
    expect(edited("x-x-x", [{ op: "replace_text", find: "x", replace: "yy", occurrence: "all" }])).toBe("yy-yy-yy")
    expect(edited("a, b, c", [{ op: "replace_text", find: ", ", replace: "", occurrence: "all" }])).toBe("abc")
  })

  it("a find that matches nowhere or more than once is validation_error naming the operation and the text", () => {
    const none = refused("a cat", [{ op: "replace_text", find: "a", replace: "A", occurrence: "all" }, {
      op: "replace_text",
      find: "dog",
      replace: "x"
    }])
    expect(none._tag).toBe("ValidationError")
    expect(none.message).toBe(
      "operations[1] (replace_text): find \"dog\" matches nowhere in the page (the match is exact)"
    )
    expect(none.details).toMatchObject({ operation: 1, op: "replace_text", field: "find", value: "dog", matches: 0 })
    const many = refused("a cat, a cat", [{ op: "replace_text", find: "cat", replace: "dog" }])
    expect(many.message).toContain("find \"cat\" matches 2 times")
    expect(many.message).toContain("occurrence \"all\"")
    expect(many.details).toMatchObject({ operation: 0, matches: 2 })
    expect(refused("abc", [{ op: "replace_text", find: "z", replace: "", occurrence: "all" }]).details).toMatchObject({
      matches: 0
    })
  })

  it("a long find is quoted cut short", () => {
    const find = "q".repeat(500)
    const error = refused("abc", [{ op: "replace_text", find, replace: "" }])
    expect(error.message).toContain(`"${"q".repeat(80)}…"`)
    expect(error.message.length).toBeLessThan(200)
  })

  it("insert_text goes before or after its one anchor", () => {
    expect(edited("<h1>T</h1><p>x</p>", [{ op: "insert_text", after: "<h1>T</h1>", text: "<p>new</p>" }])).toBe(
      "<h1>T</h1><p>new</p><p>x</p>"
    )
    expect(edited("one\nthree\n", [{ op: "insert_text", before: "three", text: "two\n" }])).toBe("one\ntwo\nthree\n")
  })

  it("insert_text needs exactly one of before and after, matching once", () => {
    expect(refused("ab", [{ op: "insert_text", text: "x" }]).message).toContain("exactly one of `before` and `after`")
    expect(refused("ab", [{ op: "insert_text", before: "a", after: "b", text: "x" }]).message).toContain("exactly one")
    expect(refused("abab", [{ op: "insert_text", after: "ab", text: "x" }]).message).toBe(
      "operations[0] (insert_text): after \"ab\" matches 2 times; include more of the text around it so it matches once"
    )
    expect(refused("ab", [{ op: "insert_text", before: "zz", text: "x" }]).details).toMatchObject({
      field: "before",
      matches: 0
    })
  })

  it("operations apply in order, each on the result of the one before", () => {
    expect(edited("alpha", [
      { op: "replace_text", find: "alpha", replace: "beta" },
      { op: "insert_text", after: "beta", text: " gamma" },
      { op: "replace_text", find: "beta gamma", replace: "done" }
    ])).toBe("done")
  })

  it("all or none: a later refusal leaves nothing applied (the source is never changed in place)", () => {
    const error = refused("one two", [
      { op: "replace_text", find: "one", replace: "1" },
      { op: "replace_text", find: "one", replace: "again" }
    ])
    expect(error.details).toMatchObject({ operation: 1, matches: 0 })
  })

  it("no operations, or more than 100, are refused", () => {
    expect(refused("x", []).message).toBe("operations must list at least one operation")
    const many = Array.from({ length: 101 }, () => ({ op: "replace_text" as const, find: "x", replace: "x" }))
    expect(refused("x", many).message).toContain("the limit is 100")
  })

  it("a result over 1 MiB of UTF-8 is the push's size error, found before the text is built", () => {
    const half = "é".repeat(300_000) // 600,000 bytes
    const error = refused(half, [{ op: "replace_text", find: "é", replace: "éé", occurrence: "all" }])
    expect(error.message).toBe(
      `page_content is 1200000 bytes of UTF-8; the limit is ${PAGE_CONTENT_MAX_BYTES} (1 MiB)`
    )
    expect(error.details).toMatchObject({ field: "page_content", bytes: 1_200_000, operation: 0 })
    // One replacement of a huge text by a huge text a thousand times: refused by arithmetic, nothing allocated.
    const huge = refused("ab".repeat(500_000), [{
      op: "replace_text",
      find: "ab",
      replace: "x".repeat(1000),
      occurrence: "all"
    }])
    expect(huge.details).toMatchObject({ bytes: 500_000 * 1000 })
    expect(refused("a", [{ op: "insert_text", after: "a", text: "x".repeat(PAGE_CONTENT_MAX_BYTES) }]).details)
      .toMatchObject({ bytes: PAGE_CONTENT_MAX_BYTES + 1 })
  })

  it("a web page takes the text operations only", () => {
    expect(Effect.runSync(applyHtmlEdits("<p>a</p>", [{ op: "replace_text", find: "a", replace: "b" }]))).toBe(
      "<p>b</p>"
    )
    expect(refused("<p>a</p>", [{ op: "set_front_matter", key: "k", value: 1 }], true).message).toBe(
      "operations[0] (set_front_matter): a web page takes replace_text and insert_text only"
    )
  })
})

describe("replace_section", () => {
  it("replaces the body under a nested heading path, up to the next heading of its level or higher", () => {
    const result = edited(guide, [{ op: "replace_section", heading: "Setup > Install", content: "New install." }])
    expect(result).toContain("### Install\n\nNew install.\n\nUsage\n-----")
    expect(result).not.toContain("Old install.")
    expect(result).not.toContain("#### Details") // a deeper heading is part of the section
    expect(result).toContain("```sh\n## Install\n```") // the heading in the code fence is text, untouched
    expect(result).toContain("Usage install.")
  })

  it("a heading line inside a code fence is no heading", () => {
    const source = "# Doc\n\n```\n## Fake\n```\n\n## Real\n\nbody\n"
    expect(refused(source, [{ op: "replace_section", heading: "Fake", content: "x" }]).message).toBe(
      "operations[0] (replace_section): heading \"Fake\" matches no heading of the document; its headings: Doc; " +
        "Doc > Real"
    )
    expect(edited(source, [{ op: "replace_section", heading: "Real", content: "new" }])).toBe(
      "# Doc\n\n```\n## Fake\n```\n\n## Real\n\nnew\n"
    )
  })

  it("duplicate headings at different paths: the short path is ambiguous, the full one is not", () => {
    const error = refused(guide, [{ op: "replace_section", heading: "Install", content: "x" }])
    expect(error.message).toBe(
      "operations[0] (replace_section): heading \"Install\" matches 2 headings (Guide > Setup > Install; " +
        "Guide > Usage > Install); give more of its path, such as \"Parent > Heading\""
    )
    expect(error.details).toMatchObject({ field: "heading", matches: 2 })
    const result = edited(guide, [{ op: "replace_section", heading: "usage  >  INSTALL", content: "Changed." }])
    expect(result.endsWith("### Install\n\nChanged.\n")).toBe(true)
    expect(result).toContain("Old install.")
  })

  it("the last section runs to the end of the document; a heading without a final line break gets one", () => {
    expect(edited("# A\n\none\n\n## B\n\ntwo", [{ op: "replace_section", heading: "B", content: "three\n\n" }])).toBe(
      "# A\n\none\n\n## B\n\nthree\n"
    )
    expect(edited("# A\n\n## B", [{ op: "replace_section", heading: "A > B", content: "x" }])).toBe(
      "# A\n\n## B\n\nx\n"
    )
  })

  it("a top-level section takes everything down to the next heading of its level", () => {
    const result = edited(guide, [{ op: "replace_section", heading: "Guide", content: "Only this." }])
    expect(result.endsWith("# Guide\n\nOnly this.\n")).toBe(true)
    expect(result).toContain("tags: [a, b]") // front matter is not part of any section
  })

  it("setext headings are headings, and their body ends at the next heading", () => {
    const source = "Title\n=====\n\nintro\n\nPart\n----\n\nold\n\nNext\n----\n\nkept\n"
    expect(edited(source, [{ op: "replace_section", heading: "Title > Part", content: "new" }])).toBe(
      "Title\n=====\n\nintro\n\nPart\n----\n\nnew\n\nNext\n----\n\nkept\n"
    )
  })

  it("a new body is kept apart from a setext heading after it", () => {
    const source = "## A\n\nold\n\nNext\n----\n"
    const result = edited(source, [{ op: "replace_section", heading: "A", content: "last line" }])
    expect(result).toBe("## A\n\nlast line\n\nNext\n----\n")
  })

  it("empty content leaves the heading with no body", () => {
    expect(edited("# A\n\nold\n\n# B\n\nb\n", [{ op: "replace_section", heading: "A", content: "" }])).toBe(
      "# A\n\n# B\n\nb\n"
    )
  })

  it("paths match the heading's text without markup, or as written; leading #s in a segment are allowed", () => {
    const source = "## The *quick* `fox` ##\n\nold\n"
    expect(edited(source, [{ op: "replace_section", heading: "the quick fox", content: "a" }])).toBe(
      "## The *quick* `fox` ##\n\na\n"
    )
    expect(edited(source, [{ op: "replace_section", heading: "## The *quick* `fox`", content: "b" }])).toBe(
      "## The *quick* `fox` ##\n\nb\n"
    )
  })

  it("headings in quotes and lists are not sections; Windows line ends are counted as lines", () => {
    expect(refused("> # Quoted\n\n- # Listed\n", [{ op: "replace_section", heading: "Quoted", content: "x" }]).message)
      .toContain("(it has none)")
    expect(edited("# A\r\n\r\nold\r\n# B\r\nb\r\n", [{ op: "replace_section", heading: "A", content: "new" }])).toBe(
      "# A\r\n\nnew\n\n# B\r\nb\r\n"
    )
  })

  it("a path with an empty level, or one naming ancestors in the wrong order, is refused", () => {
    expect(refused(guide, [{ op: "replace_section", heading: "Setup > > Install", content: "x" }]).message)
      .toContain("has an empty level")
    expect(refused(guide, [{ op: "replace_section", heading: "Setup > Guide > Install", content: "x" }]).details)
      .toMatchObject({ matches: 0 })
  })
})

describe("set_front_matter and delete_front_matter", () => {
  it("set changes one key in place, keeping the others, their order, comments and quoting", () => {
    const result = edited(guide, [
      { op: "set_front_matter", key: "title", value: "Handbook" },
      { op: "set_front_matter", key: "order", value: 3 },
      { op: "set_front_matter", key: "tags", value: ["c"] }
    ])
    expect(result.split("---\n# Guide")[0]).toBe(
      "---\n# who reads this\ntitle: 'Handbook' # the title\ntags: [c]\norder: 3\n"
    )
  })

  it("set adds a new key last, any JSON value", () => {
    const result = edited("---\ntitle: T\n---\nbody\n", [
      { op: "set_front_matter", key: "status", value: "yes: no" },
      { op: "set_front_matter", key: "owners", value: ["ann", "bo"] },
      { op: "set_front_matter", key: "meta", value: { n: 1, ok: true, none: null } }
    ])
    expect(result).toBe(
      "---\ntitle: T\nstatus: \"yes: no\"\nowners:\n  - ann\n  - bo\nmeta:\n  n: 1\n  ok: true\n  none: null\n---\nbody\n"
    )
  })

  it("set on a document without front matter adds it", () => {
    expect(edited("# Body\n", [{ op: "set_front_matter", key: "title", value: "New" }])).toBe(
      "---\ntitle: New\n---\n# Body\n"
    )
  })

  it("delete removes one key; a missing key is validation_error", () => {
    const result = edited(guide, [{ op: "delete_front_matter", key: "tags" }])
    expect(result.startsWith("---\n# who reads this\ntitle: 'Guide' # the title\norder: 2\n---\n")).toBe(true)
    expect(refused(guide, [{ op: "delete_front_matter", key: "nope" }]).message).toBe(
      "operations[0] (delete_front_matter): key \"nope\" is not in the front matter"
    )
    expect(refused("# x", [{ op: "delete_front_matter", key: "a" }]).message).toContain("(the page has none)")
  })

  it("the last key deleted leaves empty front matter", () => {
    expect(edited("---\na: 1\n---\nbody", [{ op: "delete_front_matter", key: "a" }])).toBe("---\n---\nbody")
  })

  it("unreadable front matter is invalid_front_matter; prototype keys are refused", () => {
    expect(refused("---\na: [\n---\nb", [{ op: "set_front_matter", key: "a", value: 1 }])._tag).toBe(
      "InvalidFrontMatter"
    )
    expect(refused("---\na: 1\n", [{ op: "set_front_matter", key: "a", value: 1 }])._tag).toBe("InvalidFrontMatter")
    expect(refused("---\na: 1\n---\n", [{ op: "set_front_matter", key: "__proto__", value: 1 }]).message).toContain(
      "is not a front matter key"
    )
  })

  it("a byte order mark stays first", () => {
    expect(edited("\uFEFF---\na: 1\n---\n# H\n\nx\n", [
      { op: "set_front_matter", key: "a", value: 2 },
      { op: "replace_section", heading: "H", content: "y" }
    ])).toBe("\uFEFF---\na: 2\n---\n# H\n\ny\n")
  })
})

describe("what Pages.edit asks of the source", () => {
  it("the title a push without page_title would take: front matter title, else the first heading", () => {
    expect(markdownSourceTitle(guide)).toBe("Guide")
    expect(markdownSourceTitle("---\nsummary: s\n---\n\nText\n\n## First *one*\n")).toBe("First one")
    expect(markdownSourceTitle("no heading")).toBe(null)
  })

  it("whether a document has front matter", () => {
    expect(hasFrontMatter(guide)).toBe(true)
    expect(hasFrontMatter("# x")).toBe(false)
    expect(hasFrontMatter("---\nunclosed")).toBe(true)
  })
})
