// Where a search snippet is cut from (Pages/Snippets.ts): the positive terms of a query as
// websearch_to_tsquery writes it (these texts are PostgreSQL's own, for the websearch queries beside them), the
// regular expressions that find them in text, and the query that marks them.
import { describe, expect, it } from "@effect/vitest"
import { highlightQuery, snippetLocators, termsOf } from "../src/Pages/Snippets.ts"

describe("Snippets", () => {
  it("termsOf: words, phrases with their gaps; negated words and groups left out", () => {
    // data
    expect(termsOf("'data'")).toEqual([{ lexemes: ["data"], gaps: [] }])
    // budget deadline
    expect(termsOf("'budget' & 'deadlin'")).toEqual([
      { lexemes: ["budget"], gaps: [] },
      { lexemes: ["deadlin"], gaps: [] }
    ])
    // "release schedule"
    expect(termsOf("'releas' <-> 'schedul'")).toEqual([{ lexemes: ["releas", "schedul"], gaps: [1] }])
    // "release the schedule" -team
    expect(termsOf("'releas' <2> 'schedul' & !'team'")).toEqual([{ lexemes: ["releas", "schedul"], gaps: [2] }])
    // x -"release schedule"
    expect(termsOf("'x' & !( 'releas' <-> 'schedul' )")).toEqual([{ lexemes: ["x"], gaps: [] }])
    // x -"a b c" y
    expect(termsOf("'x' & !( 'b' <-> 'c' ) & 'y'")).toEqual([
      { lexemes: ["x"], gaps: [] },
      { lexemes: ["y"], gaps: [] }
    ])
    // "a b c" OR "d e"
    expect(termsOf("'b' <-> 'c' | 'd' <-> 'e'")).toEqual([
      { lexemes: ["b", "c"], gaps: [1] },
      { lexemes: ["d", "e"], gaps: [1] }
    ])
    // quotes doubled inside a lexeme, a prefix flag and weights after one
    expect(termsOf("'o''neil' & 'dat':* & 'x':AB")).toEqual([
      { lexemes: ["o'neil"], gaps: [] },
      { lexemes: ["dat"], gaps: [] },
      { lexemes: ["x"], gaps: [] }
    ])
    // only stop words, or only an exclusion
    expect(termsOf("")).toEqual([])
    expect(termsOf("!'team'")).toEqual([])
  })

  it("snippetLocators: phrases with room for the words the gaps allow; words as prefixes, y for a final i", () => {
    expect(snippetLocators("'releas' <-> 'schedul' & !'team'")).toEqual({
      phrases: "releas\\w*\\W+schedul\\w*",
      words: "releas\\w*|schedul\\w*"
    })
    expect(snippetLocators("'releas' <3> 'schedul'").phrases).toBe("releas\\w*\\W+(?:\\w+\\W+){0,2}schedul\\w*")
    expect(snippetLocators("'studi' & 'happi'")).toEqual({ phrases: "", words: "stud[iy]\\w*|happ[iy]\\w*" })
    // characters special to a regular expression are escaped
    expect(snippetLocators("'user@example.com' & '3.14' & 'bar-baz'").words).toBe(
      "user@example\\.com\\w*|3\\.14\\w*|bar\\-baz\\w*"
    )
    expect(snippetLocators("")).toEqual({ phrases: "", words: "" })
  })

  it("highlightQuery: every positive word, any of them, quoted for tsquery", () => {
    expect(highlightQuery("'releas' <-> 'schedul' & !'team'")).toBe("'releas' | 'schedul'")
    expect(highlightQuery("'o''neil' & 'data' & 'data'")).toBe("'o''neil' | 'data'")
    expect(highlightQuery("!'team'")).toBe("")
  })
})
