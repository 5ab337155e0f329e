// Stored rows decoded into row classes (Database/Rows.ts): the same checks as decoding through the class, the same
// instances, at a fraction of the cost.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, ParseResult, Schema } from "effect"
import { rowsOf } from "../src/Database/Rows.ts"
import { PartRow } from "../src/Parts/PartRow.ts"

const row = {
  id: "6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f",
  dock_id: "0e1d2c3b-4a59-4867-9564-738291a0b1c2",
  owner_id: "a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d",
  slug: "notes",
  public_slug: "notes-7xk2",
  title: "Notes",
  summary: "",
  content_type: "markdown",
  page_kind: "markdown_file",
  visibility: null,
  content: "# Notes",
  claim_count: 0,
  version: 2,
  size_bytes: 7,
  updated_at: new Date("2026-11-29T05:00:00.000Z")
}

describe("rowsOf", () => {
  it.effect("builds the class's instances from rows, with the class's fields only", () =>
    Effect.gen(function*() {
      const [decoded] = yield* rowsOf(PartRow)([{ ...row, list_key_a: "notes", rank: 0.5 }])
      expect(decoded).toBeInstanceOf(PartRow)
      expect({ ...decoded }).toEqual(row)
      // what decoding through the class itself gives
      expect(decoded).toEqual((yield* Schema.decodeUnknown(Schema.Array(PartRow))([row]))[0])
    }))

  it.effect("refuses a row that does not fit, naming the field", () =>
    Effect.gen(function*() {
      const bad = yield* Effect.either(rowsOf(PartRow)([row, { ...row, owner_id: "not-a-uuid" }]))
      expect(Either.isLeft(bad)).toBe(true)
      const message = Either.isLeft(bad) ? ParseResult.TreeFormatter.formatErrorSync(bad.left) : ""
      expect(message).toContain("owner_id")
      const badKind = yield* Effect.either(rowsOf(PartRow)([{ ...row, page_kind: "spreadsheet" }]))
      expect(Either.isLeft(badKind)).toBe(true)
    }))
})
