/**
 * The JSON-Schema adapter: what `tools/list` advertises for the schema shapes the tools use, and how it validates
 * when the SDK is the one to validate (output schemas).
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { ErrorBodySchema } from "../src/Dispatcher.ts"
import { mcpSchema } from "../src/JsonSchema.ts"

const jsonOf = <A, I>(schema: Schema.Schema<A, I, never>) =>
  mcpSchema(schema)["~standard"].jsonSchema.input({ target: "draft-2020-12" })

const text = (max: number) => ({ type: "string", maxLength: max })

describe("mcpSchema: the advertised JSON Schema", () => {
  it("an input struct: required and optional fields, no excess properties, our descriptions kept", () => {
    const Input = Schema.Struct({
      bucket: Schema.String.pipe(Schema.maxLength(200)).annotations({ description: "The Dock: its id or its slug." }),
      slug: Schema.optional(Schema.String.pipe(Schema.maxLength(120)))
    })
    expect(jsonOf(Input)).toEqual({
      type: "object",
      required: ["bucket"],
      properties: {
        bucket: { type: "string", description: "The Dock: its id or its slug.", maxLength: 200 },
        slug: text(120)
      },
      additionalProperties: false
    })
  })

  it("nullable is anyOf with null; literals are an enum; a single literal an enum of one", () => {
    const Input = Schema.Struct({
      title: Schema.NullOr(Schema.String.pipe(Schema.maxLength(300))),
      visibility: Schema.Literal("private", "public"),
      kind: Schema.Literal("page")
    })
    expect(jsonOf(Input).properties).toEqual({
      title: { anyOf: [text(300), { type: "null" }] },
      visibility: { type: "string", enum: ["private", "public"] },
      kind: { type: "string", enum: ["page"] }
    })
  })

  it("arrays keep maxItems and their items' refinements; integers keep their bounds", () => {
    const Input = Schema.Struct({
      tags: Schema.Array(Schema.String.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(32)),
      limit: Schema.Int.pipe(Schema.between(1, 50)),
      count: Schema.Int
    })
    expect(jsonOf(Input).properties).toEqual({
      tags: { type: "array", items: text(64), maxItems: 32 },
      limit: { type: "integer", minimum: 1, maximum: 50 },
      count: { type: "integer" }
    })
  })

  it("a record is an object of additionalProperties; a nested struct is closed too", () => {
    const Input = Schema.Struct({
      values: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Null) }),
      note: Schema.Struct({ text: Schema.String })
    })
    expect(jsonOf(Input).properties).toEqual({
      values: {
        type: "object",
        properties: {},
        additionalProperties: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] }
      },
      note: {
        type: "object",
        required: ["text"],
        properties: { text: { type: "string" } },
        additionalProperties: false
      }
    })
  })

  it("named schemas are inlined: no $ref, $defs, titles or $schema", () => {
    const Column = Schema.Struct({ name: Schema.String.pipe(Schema.maxLength(63)) }).annotations({
      identifier: "Column",
      title: "Column"
    })
    const Input = Schema.Struct({ first: Column, more: Schema.Array(Column) })
    const json = jsonOf(Input)
    const column = { type: "object", required: ["name"], properties: { name: text(63) }, additionalProperties: false }
    expect(json).toEqual({
      type: "object",
      required: ["first", "more"],
      properties: { first: column, more: { type: "array", items: column } },
      additionalProperties: false
    })
    expect(JSON.stringify(json)).not.toMatch(/\$ref|\$defs|\$schema|"title"/)
  })

  it("a union root (a tool's output or the error body) gets an object root around its anyOf", () => {
    const Output = Schema.Struct({ deleted: Schema.Boolean })
    const json = jsonOf(Schema.Union(Output, ErrorBodySchema))
    expect(json["type"]).toBe("object")
    expect(json["properties"]).toEqual({})
    expect(json["anyOf"]).toEqual([
      {
        type: "object",
        required: ["deleted"],
        properties: { deleted: { type: "boolean" } },
        additionalProperties: false
      },
      {
        type: "object",
        required: ["error"],
        properties: {
          error: {
            type: "object",
            required: ["code", "status", "message"],
            properties: {
              code: { type: "string" },
              status: { type: "integer" },
              message: { type: "string" },
              details: {},
              retry_after_seconds: { type: "number" },
              request_id: { type: "string" }
            },
            additionalProperties: false
          }
        },
        additionalProperties: false
      }
    ])
  })

  it("input and output advertise the same schema", () => {
    const standard = mcpSchema(Schema.Struct({ a: Schema.String }))["~standard"]
    expect(standard.jsonSchema.output({ target: "draft-2020-12" })).toEqual(
      standard.jsonSchema.input({ target: "draft-2020-12" })
    )
  })
})

describe("mcpSchema: validation", () => {
  const Input = Schema.Struct({ a: Schema.Number })

  it("validates through Effect: excess properties are issues, and every issue is listed", async () => {
    const standard = mcpSchema(Input)["~standard"]
    expect(await standard.validate({ a: 1 })).toEqual({ value: { a: 1 } })
    const failed = await standard.validate({ a: "x", b: 2 })
    // Effect reports the unexpected key before the wrong value.
    expect("issues" in failed && failed.issues?.map((issue) => issue.path)).toEqual([["b"], ["a"]])
  })

  it("with validate: false every value passes (the dispatcher validates and answers validation_error)", async () => {
    const standard = mcpSchema(Input, { validate: false })["~standard"]
    expect(await standard.validate({ a: "x", b: 2 })).toEqual({ value: { a: "x", b: 2 } })
  })
})
