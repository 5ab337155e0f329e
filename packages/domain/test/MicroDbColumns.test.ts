// The Micro DB's column rules, pure: what a value of each type is and how it is stored, column definitions,
// row checks and the conversions a type change makes.
import { describe, expect, it } from "@effect/vitest"
import { checkRow, checkValue, columnSlugOf, convertValue, defineColumn, MicroDbColumn } from "../src/index.ts"

const column = (type: MicroDbColumn["type"], options: ReadonlyArray<string> = []) => ({ type, options })
const stored = (type: MicroDbColumn["type"], value: unknown, options: ReadonlyArray<string> = []) => {
  const checked = checkValue(column(type, options), value)
  return checked.ok ? checked.value : `invalid: ${checked.message}`
}

describe("Micro DB column values", () => {
  it("datetimes are normalized to UTC with milliseconds; offsets, fractions and a missing zone are understood", () => {
    expect(stored("datetime", "2026-11-21T09:30:00Z")).toBe("2026-11-21T09:30:00.000Z")
    expect(stored("datetime", "2026-11-21T11:30:00+02:00")).toBe("2026-11-21T09:30:00.000Z")
    expect(stored("datetime", "2026-11-21T00:30:00.5-0930")).toBe("2026-11-21T10:00:00.500Z")
    expect(stored("datetime", "2026-11-21T09:30")).toBe("2026-11-21T09:30:00.000Z")
    expect(stored("datetime", "0001-01-01T00:00:00Z")).toBe("0001-01-01T00:00:00.000Z")
    for (
      const bad of [
        "2026-02-30T00:00:00Z",
        "2026-11-21",
        "2026-11-21T24:00:00Z",
        "9999-12-31T23:00:00-02:00",
        "yesterday",
        1
      ]
    ) {
      expect(String(stored("datetime", bad)), String(bad)).toMatch(/^invalid/)
    }
  })

  it("dates are real calendar days; nothing is coerced", () => {
    expect(stored("date", "2024-02-29")).toBe("2024-02-29")
    for (const bad of ["2023-02-29", "2026-13-01", "0000-01-01", "2026-1-1", 20260101]) {
      expect(String(stored("date", bad)), String(bad)).toMatch(/^invalid/)
    }
    expect(String(stored("number", "5"))).toMatch(/^invalid/)
    expect(String(stored("boolean", 1))).toMatch(/^invalid/)
    expect(String(stored("number", Number.POSITIVE_INFINITY))).toMatch(/^invalid/)
    expect(stored("integer", 2 ** 53 - 1)).toBe(2 ** 53 - 1)
    expect(String(stored("integer", 2 ** 53))).toMatch(/^invalid/)
    expect(String(stored("integer", 1.5))).toMatch(/^invalid/)
  })

  it("urls are absolute http(s); emails have a dotted domain; select values are options; multi_select follows option order", () => {
    expect(stored("url", "https://example.com/a?b=c")).toBe("https://example.com/a?b=c")
    for (const bad of ["javascript:alert(1)", "example.com", "https://exa mple.com", "ftp://example.com/"]) {
      expect(String(stored("url", bad)), bad).toMatch(/^invalid/)
    }
    expect(stored("email", "ada@example.org")).toBe("ada@example.org")
    for (const bad of ["ada@example", "ada example@x.org", "@x.org"]) {
      expect(String(stored("email", bad)), bad).toMatch(/^invalid/)
    }
    expect(stored("select", "b", ["a", "b"])).toBe("b")
    expect(String(stored("select", "B", ["a", "b"]))).toMatch(/^invalid/)
    expect(stored("multi_select", ["c", "a"], ["a", "b", "c"])).toEqual(["a", "c"])
    expect(String(stored("multi_select", ["a", "a"], ["a"]))).toMatch(/^invalid/)
    expect(String(stored("text", "x".repeat(10_001)))).toMatch(/^invalid/)
    expect(stored("long_text", "x".repeat(10_001))).toHaveLength(10_001)
  })

  it("conversions: text to numbers, dates to datetimes and back, select to multi_select, anything to text", () => {
    const to = (type: MicroDbColumn["type"], value: unknown, options: ReadonlyArray<string> = []) => {
      const converted = convertValue(value, column(type, options))
      return converted.ok ? converted.value : "refused"
    }
    expect(to("number", " 12.5 ")).toBe(12.5)
    expect(to("integer", "12")).toBe(12)
    expect(to("integer", 12.5)).toBe("refused")
    expect(to("number", "twelve")).toBe("refused")
    expect(to("text", 12.5)).toBe("12.5")
    expect(to("text", true)).toBe("true")
    expect(to("text", { a: [1] })).toBe("{\"a\":[1]}")
    expect(to("boolean", "false")).toBe(false)
    expect(to("datetime", "2026-11-21")).toBe("2026-11-21T00:00:00.000Z")
    expect(to("date", "2026-11-21T23:30:00-02:00")).toBe("2026-11-22")
    expect(to("multi_select", "a", ["a", "b"])).toEqual(["a"])
    expect(to("select", ["b"], ["a", "b"])).toBe("b")
    expect(to("select", ["a", "b"], ["a", "b"])).toBe("refused")
    expect(to("json", [1, "x"])).toEqual([1, "x"])
  })
})

describe("Micro DB columns and rows", () => {
  it("slugs come from names; reserved and malformed slugs, options on other types and bad defaults are refused", () => {
    expect(columnSlugOf("First name")).toBe("first_name")
    expect(columnSlugOf("Übergröße (cm)")).toBe("ubergro_e_cm")
    expect(columnSlugOf("42 answers")).toBe("answers")
    expect(columnSlugOf("!!!")).toBe("column")
    const errors = (def: Parameters<typeof defineColumn>[0]) => {
      const defined = defineColumn(def, 0, ["taken"])
      return "errors" in defined ? defined.errors.map((error) => error.message).join("; ") : ""
    }
    expect(errors({ name: "Id", type: "text" })).toMatch(/reserved/)
    expect(errors({ name: "X", slug: "Bad Slug", type: "text" })).toMatch(/slug must be/)
    expect(errors({ name: "Taken", type: "text" })).toMatch(/already has a column/)
    expect(errors({ name: "T", type: "text", options: ["a"] })).toMatch(/only select and multi_select/)
    expect(errors({ name: "S", type: "select" })).toMatch(/needs 1-200 options/)
    expect(errors({ name: "S", type: "select", options: ["a", "a"] })).toMatch(/distinct/)
    expect(errors({ name: "B", type: "boolean", unique: true })).toMatch(/cannot be unique/)
    expect(errors({ name: "N", type: "number", default: "5" })).toMatch(/default: expected a number/)
    const defined = defineColumn({ name: "When", type: "datetime", default: "2026-01-01T01:00:00+01:00" }, 3, [])
    expect(defined).toEqual({
      column: new MicroDbColumn({
        name: "When",
        slug: "when",
        type: "datetime",
        required: false,
        unique: false,
        default: "2026-01-01T00:00:00.000Z",
        options: [],
        description: null,
        position: 3
      })
    })
  })

  it("a row: unknown keys, wrong types and missing required values are each reported; defaults fill new rows; null clears on update", () => {
    const columns = [
      new MicroDbColumn({
        name: "A",
        slug: "a",
        type: "text",
        required: true,
        unique: false,
        default: null,
        options: [],
        description: null,
        position: 0
      }),
      new MicroDbColumn({
        name: "N",
        slug: "n",
        type: "number",
        required: false,
        unique: false,
        default: 7,
        options: [],
        description: null,
        position: 1
      })
    ]
    expect(checkRow(columns, { b: 1, n: "x" })).toEqual({
      errors: [
        { column: "b", message: "unknown column; the columns are: a, n" },
        { column: "n", message: "expected a number, got a string" },
        { column: "a", message: "a value is required" }
      ]
    })
    expect(checkRow(columns, { a: "x" })).toMatchObject({ data: { a: "x", n: 7 } })
    expect(checkRow(columns, { a: "x", n: null })).toMatchObject({ data: { a: "x" } })
    expect(checkRow(columns, { n: null }, { a: "x", n: 3 })).toMatchObject({ data: { a: "x" } })
    expect(checkRow(columns, { a: null }, { a: "x" })).toEqual({
      errors: [{ column: "a", message: "a value is required" }]
    })
    const long = [new MicroDbColumn({ ...columns[0]!, type: "long_text" })]
    expect(checkRow(long, { a: "x".repeat(256 * 1024 - 8) })).toMatchObject({ bytes: 256 * 1024 })
    expect(checkRow(long, { a: "x".repeat(256 * 1024 - 7) })).toEqual({
      errors: [{
        column: "data",
        message: `a row is at most ${256 * 1024} bytes of JSON; this one is ${256 * 1024 + 1}`
      }]
    })
  })
})
