import { describe, expect, it } from "@effect/vitest"
import {
  ARGUMENT_ENTRIES_MAX,
  ARGUMENT_VALUES_MAX,
  BODY_VALUES_MAX,
  inspectArguments,
  JSON_DEPTH_MAX,
  jsonTextBounds
} from "../src/Arguments.ts"

const list = (count: number, item = "1") => `[${new Array(count).fill(item).join(",")}]`

describe("jsonTextBounds (the body, before parsing)", () => {
  it("passes ordinary bodies, batches and strings full of brackets and commas", () => {
    expect(jsonTextBounds(`{"a":[1,2,{"b":"[[,,,{{"}],"c":"\\"[,"}`)).toBeUndefined()
    expect(jsonTextBounds(list(100, `{"jsonrpc":"2.0","id":1}`))).toBeUndefined()
    expect(jsonTextBounds(`{"s":"${",".repeat(50_000)}"}`)).toBeUndefined()
  })

  it("ends a string at a quote after an even run of backslashes, and only there", () => {
    const deep = "[".repeat(JSON_DEPTH_MAX + 1)
    // The string ends at its quote after an escaped backslash: the brackets after it are counted.
    expect(jsonTextBounds(`["a\\\\",${deep}`)).toEqual({ _tag: "TooDeep" })
    expect(jsonTextBounds(`["\\\\\\\\",${deep}`)).toEqual({ _tag: "TooDeep" })
    // Quotes after an odd run are escaped: the brackets between them are text.
    expect(jsonTextBounds(`["a\\"${deep}\\\\\\"${deep}"]`)).toBeUndefined()
    // An unterminated string ends the scan (JSON.parse refuses the body).
    expect(jsonTextBounds(`["${deep}`)).toBeUndefined()
  })

  it("refuses nesting past the depth bound", () => {
    expect(jsonTextBounds("[".repeat(JSON_DEPTH_MAX) + "]".repeat(JSON_DEPTH_MAX))).toBeUndefined()
    expect(jsonTextBounds("[".repeat(JSON_DEPTH_MAX + 1))).toEqual({ _tag: "TooDeep" })
  })

  it("refuses one container with more entries than any argument may hold, at any depth", () => {
    expect(jsonTextBounds(list(ARGUMENT_ENTRIES_MAX))).toBeUndefined()
    expect(jsonTextBounds(list(ARGUMENT_ENTRIES_MAX + 1))).toEqual({ _tag: "TooManyEntries" })
    const keys = Array.from({ length: ARGUMENT_ENTRIES_MAX + 1 }, (_, i) => `"k${i}":1`).join(",")
    expect(jsonTextBounds(`{"params":{"arguments":{${keys}}}}`)).toEqual({ _tag: "TooManyEntries" })
    // Many containers, each within the bound: counted per container, not added up.
    expect(jsonTextBounds(`[${new Array(5).fill(list(ARGUMENT_ENTRIES_MAX)).join(",")}]`)).toBeUndefined()
  })

  it("refuses a body with more values than the bound", () => {
    const rows = new Array(Math.ceil(BODY_VALUES_MAX / 5_000) + 1).fill(list(5_000)).join(",")
    expect(jsonTextBounds(`[${rows}]`)).toEqual({ _tag: "TooManyValues" })
  })
})

describe("inspectArguments (one call's parsed arguments)", () => {
  it("counts the values of acceptable arguments", () => {
    expect(inspectArguments({ a: ["x", "y"], b: { c: 1 } })).toEqual({ values: 6 })
  })

  it("refuses an oversized array or object naming its path", () => {
    const error = inspectArguments({ rows: [{ tags: new Array(ARGUMENT_ENTRIES_MAX + 1).fill("x") }] })
    expect(error).toMatchObject({
      _tag: "ValidationError",
      details: { issues: [{ path: ["rows", "0", "tags"], message: `more than ${ARGUMENT_ENTRIES_MAX} items` }] }
    })
  })

  it("refuses more values than one call may hold", () => {
    const args = Object.fromEntries(
      Array.from({ length: 11 }, (_, i) => [`a${i}`, new Array(ARGUMENT_VALUES_MAX / 10).fill(1)])
    )
    expect(inspectArguments(args)).toMatchObject({
      _tag: "ValidationError",
      details: { issues: [{ path: [], message: `more than ${ARGUMENT_VALUES_MAX} values in one call` }] }
    })
  })

  it("names NUL and lone surrogates in text and keys, and accepts a surrogate pair", () => {
    expect(inspectArguments({ ok: "emoji \ud83d\ude00" })).toEqual({ values: 2 })
    const error = inspectArguments({ deep: [[{ v: "a\u0000b" }]], ["k\ud800"]: 1, text: "x\udc00" })
    expect(error).toMatchObject({ _tag: "ValidationError" })
    const issues = (error as { details: { issues: Array<{ path: Array<string>; message: string }> } }).details.issues
    expect(issues).toEqual(expect.arrayContaining([
      { path: ["deep", "0", "0", "v"], message: expect.stringMatching(/NUL/) },
      { path: [], message: expect.stringMatching(/a key cannot contain a lone UTF-16 surrogate/) },
      { path: ["text"], message: expect.stringMatching(/lone UTF-16 surrogate/) }
    ]))
  })
})
