/**
 * The one adapter from Effect Schema to what the MCP SDK accepts (Standard Schema with JSON Schema): validation
 * through Effect (excess properties are errors, as `additionalProperties: false` says) and a clean JSON Schema
 * 2020-12 for `tools/list` — references inlined, no generated titles, no `$schema` noise.
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server"
import { JSONSchema, Schema } from "effect"

type Json = Record<string, unknown>

/** Keywords whose value is one schema, a list of schemas, or a map of schemas: where `tidy` recurses. */
const ONE = ["items", "additionalProperties", "not", "propertyNames", "contains"]
const MANY = ["anyOf", "oneOf", "allOf", "prefixItems"]
const MAP = ["properties", "$defs", "patternProperties"]

/** Inlines `$ref`s to `$defs`, drops auto titles and `$id`s, flattens single-element `allOf`. */
const tidy = (root: Json): Json => {
  const defs = (root["$defs"] ?? {}) as Record<string, Json>
  const visit = (node: Json): Json => {
    if (typeof node["$ref"] === "string" && node["$ref"].startsWith("#/$defs/")) {
      const target = defs[node["$ref"].slice("#/$defs/".length)]
      const { $ref: _ref, ...rest } = node
      return visit({ ...(target ?? {}), ...rest })
    }
    const out: Json = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === "$schema" || key === "$defs" || key === "$id" || key === "title") continue
      // Effect's generated descriptions ("an integer", "a string at most 500 character(s) long") only repeat what
      // the keywords say; ours are sentences that start with a capital letter.
      if (key === "description" && typeof value === "string" && /^an? [a-z]/.test(value)) continue
      if (key === "required" && Array.isArray(value) && value.length === 0) continue
      if (ONE.includes(key) && typeof value === "object" && value !== null && !Array.isArray(value)) {
        out[key] = visit(value as Json)
      } else if (MANY.includes(key) && Array.isArray(value)) {
        out[key] = value.map((item) => visit(item as Json))
      } else if (MAP.includes(key) && typeof value === "object" && value !== null) {
        out[key] = Object.fromEntries(
          Object.entries(value as Json).map(([name, schema]) => [name, visit(schema as Json)])
        )
      } else {
        out[key] = value
      }
    }
    const allOf = out["allOf"]
    if (Array.isArray(allOf) && allOf.length === 1) {
      const { allOf: _allOf, ...rest } = out
      return { ...(allOf[0] as Json), ...rest }
    }
    return out
  }
  return visit(root)
}

/**
 * An Effect Schema as a tool's input or output schema. The JSON Schema always has an object root. With
 * `validate: false` the SDK accepts any value and the dispatcher validates, so that a bad argument is answered
 * with the one error body (validation_error) rather than the SDK's plain text.
 */
export const mcpSchema = <A, I>(
  schema: Schema.Schema<A, I, never>,
  options: { readonly validate: boolean } = { validate: true }
): StandardSchemaWithJSON<I, A> => {
  const standard = options.validate
    ? Schema.standardSchemaV1(schema, { onExcessProperty: "error", errors: "all" })["~standard"]
    : { validate: (value: unknown) => ({ value: value as A }) }
  let json: Json | undefined
  const toJson = () => {
    if (json === undefined) {
      const made = tidy(JSONSchema.make(schema, { target: "jsonSchema2020-12" }) as unknown as Json)
      json = made["type"] === "object" ? made : { type: "object", properties: {}, ...made }
    }
    return json
  }
  return {
    "~standard": {
      version: 1,
      vendor: "effect",
      validate: standard.validate as StandardSchemaWithJSON<I, A>["~standard"]["validate"],
      jsonSchema: { input: toJson, output: toJson }
    }
  }
}
