/**
 * The 47 spec tools keep their names, parameters and answers (issue 18: new tools and parameters are additions).
 * fixtures/spec-tools.json is what tools/list advertised for them before issue 18 (each tool's scope, its input
 * properties, which of them were required, and its answer's top-level properties), taken from the catalogue at
 * eae458d. Later work may add optional parameters and answer fields, never take one away or require a new one.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { catalogue } from "../src/Catalogue.ts"
import { mcpSchema } from "../src/JsonSchema.ts"
import type { AnyTool } from "../src/Tool.ts"

interface SpecTool {
  readonly name: string
  readonly scope: string
  readonly input: ReadonlyArray<string>
  readonly required: ReadonlyArray<string>
  readonly output: ReadonlyArray<string>
}

const spec: ReadonlyArray<SpecTool> = JSON.parse(
  readFileSync(new URL("fixtures/spec-tools.json", import.meta.url), "utf8")
)

const advertised = (entry: AnyTool) => {
  const input = mcpSchema(entry.input, { validate: false })["~standard"].jsonSchema.input({
    target: "draft-2020-12"
  }) as { properties?: Record<string, unknown>; required?: ReadonlyArray<string> }
  const output = mcpSchema(entry.output, { validate: false })["~standard"].jsonSchema.output({
    target: "draft-2020-12"
  }) as { properties?: Record<string, unknown> }
  return {
    input: Object.keys(input.properties ?? {}),
    required: input.required ?? [],
    output: Object.keys(output.properties ?? {})
  }
}

describe("the 47 spec tools", () => {
  it("come first in the catalogue, in the spec's order, with their scopes", () => {
    expect(spec).toHaveLength(47)
    expect(catalogue.slice(0, 47).map((entry) => [entry.name, entry.scope]))
      .toEqual(spec.map((tool) => [tool.name, tool.scope]))
  })

  it("keep every parameter and answer field, and require nothing new", () => {
    for (const tool of spec) {
      const entry = catalogue.find((candidate) => candidate.name === tool.name)!
      const now = advertised(entry)
      expect({ tool: tool.name, missing: tool.input.filter((name) => !now.input.includes(name)) })
        .toEqual({ tool: tool.name, missing: [] })
      expect({ tool: tool.name, newlyRequired: now.required.filter((name) => !tool.required.includes(name)) })
        .toEqual({ tool: tool.name, newlyRequired: [] })
      expect({ tool: tool.name, missingAnswer: tool.output.filter((name) => !now.output.includes(name)) })
        .toEqual({ tool: tool.name, missingAnswer: [] })
    }
  })

  it("issue 18's tools follow them, each once", () => {
    const added = catalogue.slice(47).map((entry) => entry.name)
    expect([...added].sort()).toEqual([
      "diff_markdown_file_versions",
      "diff_web_page_versions",
      "edit_markdown_file",
      "edit_web_page",
      "list_agent_changes",
      "revert_agent_changes"
    ])
    expect(new Set(catalogue.map((entry) => entry.name)).size).toBe(catalogue.length)
  })
})
