/**
 * Property-based fuzzing of the MCP tools over the wire (issue 19, item 5): a world of real ids (a public Dock
 * with pages, versions, a Micro DB table with rows, an image and a source, beside a stranger's Dock), argument
 * generators derived from each tool's published JSON input schema (valid, near-valid, hostile), five ways of
 * calling (the owner's v2 client in the 2026 era, v1 client in the 2025 era, or a raw JSON-RPC POST whose body is
 * exactly the generated JSON; raw as a viewer; raw with a read-only token), and the invariants every call must
 * keep: never `internal`, never an HTTP 5xx, every refusal one of the error table's codes with a message, nothing
 * logged as an error, and no stored row changed by a refused call.
 *
 * Reproduce a run: a failure names `DOCK_FUZZ_SEED` and `DOCK_FUZZ_RUNS` (runs per tool, default 4); set both. */
import { SpecErrorCodes } from "@dock/domain"
import { catalogue } from "@dock/mcp"
import type { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { bearer, fetchReply, unique } from "./Http.ts"
import { base64, solid } from "./Images.ts"
import type { AnyClient, ToolInfo } from "./McpClients.ts"
import { actor, call, connect, createBucket, grant, newUser, ok, tokenFor, type ToolResult } from "./McpTools.ts"
import { addSource } from "./Sources.ts"
import { type RunningServer, TestServer } from "./TestServer.ts"

/** What the fuzzed server is started with: rate and plan limits out of the way, no background job mid-run. */
export const FUZZ_SERVER_ENV = {
  DOCK_TOKEN_REQUESTS_PER_MINUTE: "1000000",
  DOCK_TOKEN_WRITES_PER_MINUTE: "1000000",
  DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE: "1000000",
  DOCK_PLAN_MAX_DOCKS: "100000",
  DOCK_JOB_INTERVAL: "1 days"
}

/** The seed of every property in this run: DOCK_FUZZ_SEED, or a random one (printed by fast-check on failure). */
export const FUZZ_SEED = process.env.DOCK_FUZZ_SEED === undefined || process.env.DOCK_FUZZ_SEED === ""
  ? (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0
  : Number(process.env.DOCK_FUZZ_SEED)
/** Runs per tool and kind of argument. */
export const FUZZ_RUNS = Number(process.env.DOCK_FUZZ_RUNS ?? "4")

/** Codes a refusal may carry: the spec's (§7) without `internal`, plus the error table's 409 and 413. */
export const REFUSAL_CODES: ReadonlyArray<string> = [
  ...SpecErrorCodes.filter((code) => code !== "internal"),
  "conflict",
  "payload_too_large"
]

// ------------------------------------------------------------------------------------------------ the world

export interface World {
  readonly owner: { readonly username: string; readonly token: string }
  /** A viewer of the Dock, and the owner's mcp:read token. */
  readonly viewerToken: string
  readonly readOnlyToken: string
  /** The owner's clients, by era. */
  readonly modern: AnyClient
  readonly legacy: AnyClient
  readonly dock: { readonly id: string; readonly slug: string; readonly path: string }
  readonly stranger: { readonly username: string; readonly dock: { id: string; slug: string; path: string } }
  readonly pages: ReadonlyArray<{ readonly id: string; readonly slug: string }>
  readonly markdown: ReadonlyArray<{ readonly id: string; readonly slug: string }>
  readonly table: { readonly id: string; readonly slug: string }
  readonly columns: ReadonlyArray<{ readonly slug: string; readonly type: string; readonly options: Array<string> }>
  readonly rows: ReadonlyArray<string>
  readonly image: { readonly id: string }
  readonly source: { readonly id: string }
  readonly pngBase64: string
  /** Every UUID of the world (all kinds, both owners): the "UUID of something else" pool. */
  readonly uuids: ReadonlyArray<string>
}

const COLUMNS = [
  { name: "Title", slug: "title", type: "text", required: true },
  { name: "Count", slug: "count", type: "integer" },
  { name: "Score", slug: "score", type: "number" },
  { name: "Done", slug: "done", type: "boolean" },
  { name: "Day", slug: "day", type: "date" },
  { name: "At", slug: "at", type: "datetime" },
  { name: "Colour", slug: "colour", type: "select", options: ["red", "green"] },
  { name: "Labels", slug: "labels", type: "multi_select", options: ["a", "b", "c"] },
  { name: "Link", slug: "link", type: "url" },
  { name: "Mail", slug: "mail", type: "email" },
  { name: "Notes", slug: "notes", type: "long_text" },
  { name: "Meta", slug: "meta", type: "json" }
]

const must = (client: AnyClient, name: string, args: Record<string, unknown>) =>
  Effect.map(call(client, name, args), (result) => ok(result))

/**
 * The world every property's arguments are drawn from, made through the tools themselves (and the admin API for
 * the source): built afresh for each kind of argument, since valid calls change and delete it.
 */
export const makeWorld = Effect.gen(function*() {
  const owner = yield* actor("v2 modern")
  const legacy = yield* connect(owner.token, "v1")
  const slug = `fuzz-${unique()}`
  const dock = yield* createBucket(owner.client, { title: "Fuzz", slug, visibility: "public" })
  const path = `${owner.user.username}/${dock.slug}`
  yield* must(owner.client, "update_bucket_metadata", { bucket_path: path, allow_forks: true })
  const pages: Array<{ id: string; slug: string }> = []
  for (const page of ["home", "about"]) {
    for (const version of [1, 2]) {
      const body = yield* must(owner.client, "push_web_page", {
        bucket: dock.id,
        content_type: "html",
        page_title: `${page} ${version}`,
        page_slug: page,
        page_content: `<h1>${page}</h1><p>version ${version} [[about]]</p>`
      })
      if (version === 1) pages.push({ id: body.part.id, slug: page })
    }
  }
  const markdown: Array<{ id: string; slug: string }> = []
  for (const version of [1, 2]) {
    const body = yield* must(owner.client, "push_markdown_file", {
      bucket: dock.id,
      page_slug: "notes",
      page_content: `---\ntitle: Notes ${version}\n---\n# Notes\n\nSee [[home]], version ${version}.\n`
    })
    if (version === 1) markdown.push({ id: body.part.id, slug: "notes" })
  }
  const table = (yield* must(owner.client, "create_micro_db_table", {
    bucket: dock.id,
    name: "Items",
    slug: "items",
    columns: COLUMNS
  })).table as { id: string; slug: string }
  const inserted = (yield* must(owner.client, "insert_micro_db_rows", {
    bucket: dock.id,
    table: table.slug,
    rows: [
      { title: "one", count: 1, score: 1.5, done: true, day: "2026-01-02", colour: "red", labels: ["a"] },
      { title: "two", count: 2, link: "https://example.com/x", mail: "a@example.com", meta: { k: [1, 2] } },
      { title: "three", notes: "long text", at: "2026-03-04T05:06:07Z" }
    ]
  })).rows as Array<{ id: string }>
  const png = base64(yield* solid("png", 4, 3))
  const image = yield* must(owner.client, "push_image", {
    bucket: dock.id,
    image_base64: png,
    filename: "fuzz.png",
    alt_text: "A red block"
  })
  const source = yield* addSource(dock.id, { content: "Reference text for the fuzzer." })

  const viewer = yield* newUser
  yield* grant(dock.id, viewer, "viewer")
  const viewerToken = yield* tokenFor(viewer)
  const readOnlyToken = yield* tokenFor(owner.user, { scopes: ["mcp:read"] })

  const stranger = yield* actor("v2 modern")
  const strangerDock = yield* createBucket(stranger.client, { title: "Theirs", slug: `theirs-${unique()}` })
  const theirPage = (yield* must(stranger.client, "push_web_page", {
    bucket: strangerDock.id,
    page_slug: "home",
    page_content: "<p>theirs</p>"
  })).part.id as string
  const theirTable = (yield* must(stranger.client, "create_micro_db_table", {
    bucket: strangerDock.id,
    name: "Items",
    columns: [{ name: "Title", type: "text" }]
  })).table.id as string
  const theirRow = (yield* must(stranger.client, "insert_micro_db_row", {
    bucket: strangerDock.id,
    table: theirTable,
    data: { title: "theirs" }
  })).row.id as string

  return {
    owner: { username: owner.user.username, token: owner.token },
    viewerToken,
    readOnlyToken,
    modern: owner.client,
    legacy,
    dock: { id: dock.id, slug: dock.slug, path },
    stranger: {
      username: stranger.user.username,
      dock: { ...strangerDock, path: `${stranger.user.username}/${strangerDock.slug}` }
    },
    pages,
    markdown,
    table,
    columns: COLUMNS.map((column) => ({ slug: column.slug, type: column.type, options: column.options ?? [] })),
    rows: inserted.map((row) => row.id),
    image: { id: image.image_id },
    source: { id: source.source_id },
    pngBase64: png,
    uuids: [
      dock.id,
      strangerDock.id,
      ...pages.map((page) => page.id),
      ...markdown.map((page) => page.id),
      table.id,
      ...inserted.map((row) => row.id),
      image.image_id,
      source.source_id,
      theirPage,
      theirTable,
      theirRow,
      owner.user.id,
      "00000000-0000-0000-0000-000000000000"
    ]
  } satisfies World
})

/** The tools as the owner's modern client lists them (name, published input schema). */
export const listedTools = (world: World) =>
  Effect.promise(() => world.modern.listTools()).pipe(
    Effect.map(({ tools }) => tools)
  )

// ------------------------------------------------------------------------------------------- JSON Schema

interface JsonSchema {
  readonly type?: string
  readonly enum?: ReadonlyArray<unknown>
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly properties?: Record<string, JsonSchema>
  readonly required?: ReadonlyArray<string>
  readonly items?: JsonSchema
  readonly maxItems?: number
  readonly minItems?: number
  readonly maxLength?: number
  readonly minLength?: number
  readonly minimum?: number
  readonly maximum?: number
  readonly format?: string
}

const TEXT = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,4})?$/),
  fc.string({ maxLength: 20 }),
  fc.constantFrom("Hello world", "Zürich ☃ 日本語", "fuzz")
)

/** A value the schema accepts (shapes only: ids come from the world through `byName`). */
const fromSchema = (schema: JsonSchema, world: World, name: string): fc.Arbitrary<unknown> => {
  const named = byName(name, world)
  const plain = plainFromSchema(schema, world, name)
  return named === undefined ? plain : fc.oneof({ weight: 9, arbitrary: named }, { weight: 1, arbitrary: plain })
}

const plainFromSchema = (schema: JsonSchema, world: World, name: string): fc.Arbitrary<unknown> => {
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum)
  if (schema.anyOf !== undefined) return fc.oneof(...schema.anyOf.map((option) => fromSchema(option, world, name)))
  switch (schema.type) {
    case "string": {
      if (schema.format === "uuid") return fc.uuid()
      const max = Math.min(schema.maxLength ?? 40, 40)
      const min = schema.minLength ?? 0
      return TEXT.filter((text) => text.length >= min && text.length <= max)
    }
    case "integer": {
      const small = fc.integer({ min: schema.minimum ?? -5, max: Math.min(schema.maximum ?? 1000, 1000) })
      // No maximum published: any safe integer is valid, so the edges of the database's integer types too.
      return schema.maximum !== undefined ? small : fc.oneof(
        small,
        fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1)
      )
    }
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array":
      return fc.array(fromSchema(schema.items ?? {}, world, `${name}[]`), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 3, 3)
      })
    case "object":
      return objectFrom(schema, world)
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** An object with every required property and any subset of the optional ones. */
const objectFrom = (schema: JsonSchema, world: World): fc.Arbitrary<Record<string, unknown>> => {
  const properties = schema.properties ?? {}
  const required = new Set(schema.required ?? [])
  const record: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [key, property] of Object.entries(properties)) record[key] = fromSchema(property, world, key)
  return fc.record(record, { requiredKeys: [...required] }) as fc.Arbitrary<Record<string, unknown>>
}

// --------------------------------------------------------------------------------------- values by name

const rowValue = (column: World["columns"][number]): fc.Arbitrary<unknown> => {
  switch (column.type) {
    case "integer":
      return fc.integer({ min: -1000, max: 1000 })
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 })
    case "boolean":
      return fc.boolean()
    case "date":
      return fc.date({ min: new Date("1900-01-01"), max: new Date("2199-12-31"), noInvalidDate: true }).map((d) =>
        d.toISOString().slice(0, 10)
      )
    case "datetime":
      return fc.date({ min: new Date("1900-01-01"), max: new Date("2199-12-31"), noInvalidDate: true }).map((d) =>
        d.toISOString()
      )
    case "select":
      return fc.constantFrom(...column.options)
    case "multi_select":
      return fc.subarray(column.options)
    case "url":
      return fc.webUrl()
    case "email":
      return fc.emailAddress()
    case "json":
      return fc.jsonValue({ maxDepth: 3 })
    default:
      return fc.string({ maxLength: 30 })
  }
}

/** Row data keyed by the fixture table's column slugs (the title, which is required, always). */
const rowData = (world: World, partial: boolean) =>
  fc.record(
    Object.fromEntries(world.columns.map((column) => [column.slug, rowValue(column)])),
    { requiredKeys: partial ? [] : ["title"] }
  )

const columnDef = fc.record({
  name: fc.stringMatching(/^[A-Z][a-z]{1,8}( [a-z]{1,5})?$/),
  type: fc.constantFrom("text", "integer", "number", "boolean", "date", "select", "json", "email", "url"),
  required: fc.boolean(),
  unique: fc.boolean(),
  options: fc.constant(["x", "y"]),
  description: fc.option(fc.string({ maxLength: 20 }))
}, { requiredKeys: ["name", "type"] })

const filter = (world: World) =>
  fc.oneof(
    ...world.columns.map((column) =>
      fc.record({
        column: fc.constant(column.slug),
        op: fc.constantFrom("eq", "neq", "gt", "gte", "lt", "lte", "contains", "starts_with", "is_null", "is_not_null"),
        value: rowValue(column)
      }, { requiredKeys: ["column", "op"] })
    ),
    fc.record({ column: fc.constantFrom(...world.columns.map((column) => column.slug)), op: fc.constant("in") })
      .chain((base) =>
        fc.array(rowValue(world.columns.find((c) => c.slug === base.column)!), { maxLength: 3 }).map(
          (value) => ({ ...base, value })
        )
      )
  )

/** Values for a property that names something of the world (a Dock, a page, a table, a row, ...). */
const byName = (name: string, world: World): fc.Arbitrary<unknown> | undefined => {
  const pageRefs = [...world.pages.flatMap((page) => [page.id, page.slug])]
  switch (name) {
    case "bucket":
      return fc.constantFrom(world.dock.id, world.dock.slug, world.dock.path)
    case "bucket_path":
      return fc.constant(world.dock.path)
    case "bucket_id":
      return fc.constant(world.dock.id)
    case "bucket_slug":
      return fc.constant(world.dock.slug)
    case "owner_username":
      return fc.constant(world.owner.username)
    case "web_page":
      return fc.constantFrom(...pageRefs, ...world.markdown.map((page) => page.slug))
    case "page_slug":
      return fc.constantFrom(...world.pages.map((page) => page.slug), "notes", "new-page", `p-${unique()}`)
    case "markdown_file":
      return fc.constantFrom(...world.markdown.flatMap((page) => [page.id, page.slug]))
    case "table":
      return fc.constantFrom(world.table.id, world.table.slug)
    case "column":
      return fc.constantFrom(...world.columns.map((column) => column.slug))
    case "row_id":
      return fc.constantFrom(...world.rows)
    case "source_id":
      return fc.constant(world.source.id)
    case "version":
    case "from_version":
    case "to_version":
    case "base_version":
      return fc.integer({ min: 1, max: 4 })
    case "query":
      return fc.constantFrom("home", "version", "notes", "fuzz", "about page")
    case "data":
      return rowData(world, true)
    case "rows[]":
      return rowData(world, false)
    case "column_def":
    case "columns[]":
      return columnDef
    case "patch":
      return columnDef.map(({ name: _name, type: _type, ...rest }) => rest)
    case "filter[]":
      return filter(world)
    case "image_base64":
      return fc.constant(world.pngBase64)
    case "filename":
      return fc.constantFrom("a.png", "image.PNG", "photo")
    case "page_content":
      // A Markdown document with front matter: what all three push tools accept (HTML keeps it as text).
      return fc.oneof(
        fc.string({ maxLength: 200 }).map((text) => `---\ntitle: T\n---\n# Head\n\n${text}\n`),
        fc.string({ maxLength: 200 }).map((text) => `---\ntitle: T\n---\n<p>${text.replace(/[<&]/g, "")}</p>`)
      )
    case "slug":
    case "tags[]":
    case "topic_tag_slugs[]":
    case "add_topics[]":
    case "remove_topics[]":
    case "tag":
      return fc.stringMatching(/^[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,4})?$/)
    default:
      return undefined
  }
}

// ------------------------------------------------------------------------------------ the three kinds

export type Args = Record<string, unknown>

/** Valid arguments: from the tool's published input schema, ids from the world. */
export const validArgs = (tool: ToolInfo, world: World): fc.Arbitrary<Args> =>
  objectFrom(tool.inputSchema as JsonSchema, world)

export const propertiesOf = (tool: ToolInfo) => (tool.inputSchema as JsonSchema).properties ?? {}

/** A value of another JSON type than the schema's. */
const wrongType = (schema: JsonSchema): fc.Arbitrary<unknown> => {
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.constantFrom("7", "true", ""),
    integer: fc.constantFrom(7, -1, 3.5),
    boolean: fc.boolean(),
    null: fc.constant(null),
    array: fc.constant([1, "two"]),
    object: fc.constant({ nested: true })
  }
  const types = new Set([schema.type, ...(schema.anyOf ?? []).map((option) => option.type)])
  if (types.has("integer")) types.add("number")
  return fc.oneof(...Object.entries(all).filter(([type]) => !types.has(type)).map(([, arbitrary]) => arbitrary))
}

/** Values just outside the schema's bounds. */
const outOfRange = (schema: JsonSchema): fc.Arbitrary<unknown> | undefined => {
  const options: Array<unknown> = []
  const target = schema.anyOf?.find((option) => option.type !== "null") ?? schema
  if (target.type === "integer") {
    if (target.minimum !== undefined) options.push(target.minimum - 1)
    if (target.maximum !== undefined) options.push(target.maximum + 1)
    options.push(1.5, 2 ** 53, -(2 ** 31) - 1, 2 ** 31, 2 ** 63)
  }
  if (target.type === "string") {
    if (target.maxLength !== undefined) options.push("x".repeat(target.maxLength + 1))
    if (target.minLength !== undefined && target.minLength > 0) options.push("")
    if (target.enum !== undefined) options.push("not-one-of-them", String(target.enum[0]).toUpperCase())
    if (target.format === "uuid") options.push("not-a-uuid", "00000000-0000-0000-0000-00000000000g")
  }
  if (target.type === "array") {
    if (target.maxItems !== undefined) options.push(Array.from({ length: target.maxItems + 1 }, () => "x"))
    if (target.minItems !== undefined && target.minItems > 0) options.push([])
  }
  return options.length === 0 ? undefined : fc.constantFrom(...options)
}

const withKey = (args: Args, key: string, value: unknown): Args => ({ ...args, [key]: value })

const without = (args: Args, key: string): Args => {
  const { [key]: _dropped, ...rest } = args
  return rest
}

/** Near-valid: valid arguments with exactly one thing wrong. */
export const nearValidArgs = (tool: ToolInfo, world: World): fc.Arbitrary<Args> => {
  const properties = Object.entries(propertiesOf(tool))
  const required = (tool.inputSchema as JsonSchema).required ?? []
  const uuidKeys = properties.filter(([key, schema]) =>
    schema.format === "uuid" || ["bucket", "web_page", "table", "row_id", "source_id", "markdown_file"].includes(key)
  ).map(([key]) => key)
  const dockKeys = properties.map(([key]) => key).filter((key) => key.startsWith("bucket"))
  const mutations: Array<fc.Arbitrary<(args: Args) => Args>> = [
    fc.stringMatching(/^[a-z_]{1,12}$/).filter((key) => !(key in propertiesOf(tool))).map((key) => (args: Args) =>
      withKey(args, key, "surprise")
    )
  ]
  if (properties.length > 0) {
    mutations.push(
      fc.constantFrom(...properties).chain(([key, schema]) =>
        wrongType(schema).map((value) => (args: Args) => withKey(args, key, value))
      )
    )
    const ranged = properties.flatMap(([key, schema]) => {
      const arbitrary = outOfRange(schema)
      return arbitrary === undefined ? [] : [arbitrary.map((value) => (args: Args) => withKey(args, key, value))]
    })
    if (ranged.length > 0) mutations.push(fc.oneof(...ranged))
  }
  if (required.length > 0) mutations.push(fc.constantFrom(...required).map((key) => (args: Args) => without(args, key)))
  if (uuidKeys.length > 0) {
    mutations.push(
      fc.tuple(fc.constantFrom(...uuidKeys), fc.oneof(fc.constantFrom(...world.uuids), fc.uuid())).map(
        ([key, uuid]) => (args: Args) =>
          withKey(args, key, key === "bucket_path" ? `${world.owner.username}/${uuid}` : uuid)
      )
    )
  }
  if (dockKeys.length > 0) {
    const theirs = world.stranger.dock
    mutations.push(
      fc.constantFrom(...dockKeys).map((key) => (args: Args) =>
        withKey(args, key, key === "bucket_id" ? theirs.id : key === "bucket_slug" ? theirs.slug : theirs.path)
      )
    )
  }
  return fc.tuple(validArgs(tool, world), fc.oneof(...mutations)).map(([args, mutate]) => mutate(args))
}

/** Nested `depth` times: arrays, objects, or both alternating. */
export const nested = (depth: number, kind: "array" | "object" | "mixed") => {
  let value: unknown = "bottom"
  for (let level = 0; level < depth; level++) {
    const asArray = kind === "array" || (kind === "mixed" && level % 2 === 0)
    value = asArray ? [value] : { deeper: value }
  }
  return value
}

/** The JSON text of `nested(depth, kind)`, built without recursion. */
export const nestedText = (depth: number, kind: "array" | "object" | "mixed") => {
  const opens: Array<string> = []
  for (let level = depth - 1; level >= 0; level--) {
    opens.push(kind === "array" || (kind === "mixed" && level % 2 === 0) ? "[" : "{\"deeper\":")
  }
  const closes = opens.map((open) => open === "[" ? "]" : "}").reverse()
  return `${opens.join("")}"bottom"${closes.join("")}`
}

/** JSON-parsed, so that `__proto__` is an own key (as it is when the server parses a request). */
const PROTO_VALUES: ReadonlyArray<unknown> = [
  JSON.parse("{\"__proto__\":{\"polluted\":true,\"isAdmin\":true}}"),
  JSON.parse("{\"constructor\":{\"prototype\":{\"polluted\":true}}}"),
  JSON.parse("{\"title\":\"x\",\"__proto__\":{\"title\":\"y\"},\"toString\":\"no\",\"valueOf\":1,\"hasOwnProperty\":2}")
]

/** Strings that have broken services before. */
export const HOSTILE_STRINGS: ReadonlyArray<string> = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\uD800",
  "x\uDFFFy",
  "\uDBFF\uDBFF",
  "\u0001\u0002\u001b[31mred\u001b[0m\u007f",
  "\u2028\u2029\uFEFF\u200B",
  "../../../../etc/passwd",
  "..",
  ".",
  "/",
  "a/../../b",
  "%2e%2e%2fetc%2fpasswd",
  "owner/../x",
  "\\..\\..\\windows",
  "a/b/c/d",
  "' OR 1=1 --",
  "'; drop table parts; --",
  "\"; select pg_sleep(10); --",
  "%",
  "_",
  "\\",
  "$1",
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  "\"><svg/onload=alert(1)>",
  "[x](javascript:alert(1))",
  "![x](data:text/html,<script>alert(1)</script>)",
  "---\n__proto__: {polluted: true}\n---\n",
  "---\na: &a [*a, *a]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\n---\n",
  "---\n: : :\n---",
  "[[",
  "[[../../x]]",
  "NaN",
  "Infinity",
  "-0",
  "1e308",
  "-1e309",
  "0x10",
  "null",
  "undefined",
  "true",
  "{}",
  "[]",
  "__proto__",
  "constructor",
  "prototype",
  "𝕏".repeat(70),
  "é".repeat(201),
  "a".repeat(65)
]

const HOSTILE_NUMBERS: ReadonlyArray<unknown> = [
  1e308,
  -1e308,
  -0,
  0,
  2 ** 31,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53 + 1,
  -(2 ** 63),
  5e-324,
  0.1,
  1e21
]

/** Huge values, below the 22 MiB body limit of /mcp. */
const HUGE: ReadonlyArray<() => unknown> = [
  () => "A".repeat(1_048_577),
  () => "😀".repeat(300_000),
  () => "<p>" + "<b>".repeat(50_000) + "</p>",
  () => "[[x]] ".repeat(100_000),
  () => Array.from({ length: 20_000 }, (_, index) => index),
  () => Object.fromEntries(Array.from({ length: 5_000 }, (_, index) => [`k${index}`, index])),
  () => "QUJD".repeat(700_000),
  () => `data:image/png;base64,${"iVBORw0KGgo".repeat(100_000)}`
]

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) },
  { weight: 2, arbitrary: fc.constantFrom(...PROTO_VALUES) },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constantFrom(10, 40, 60, 65, 5_000, 100_000),
      fc.constantFrom("array", "object", "mixed") as fc.Arbitrary<
        "array" | "object" | "mixed"
      >
    ).map(([depth, kind]) =>
      new Lazy(`Nested(${depth}, ${kind})`, () => nested(depth, kind), () => nestedText(depth, kind))
    )
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...HUGE.map((_, index) => index)).map((index) =>
      new Lazy(`Huge(${index})`, HUGE[index]!)
    )
  },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) }
)

/**
 * A huge or deeply nested value, made only when sent (JSON.stringify calls toJSON): a failing run prints its
 * label, not megabytes or thousands of levels (which fast-check's printer cannot recurse through).
 */
export class Lazy {
  /** `text`: the value's JSON, for values too deep for JSON.stringify (those go over the raw transport only). */
  constructor(readonly label: string, readonly make: () => unknown, readonly text?: () => string) {}
  toJSON() {
    return this.make()
  }
  [fc.toStringMethod]() {
    return this.label
  }
}

/** The JSON text of a request, with each Lazy value's own text spliced in where it has one. */
const requestText = (request: unknown) => {
  const texts: Array<string> = []
  // The holder's own value: JSON.stringify hands the replacer what toJSON made of it.
  const json = JSON.stringify(request, function(this: Record<string, unknown>, key, value) {
    const original = this[key]
    if (!(original instanceof Lazy) || original.text === undefined) return value
    texts.push(original.text())
    return `\u0000lazy:${texts.length - 1}`
  })
  return {
    text: json.replace(/"\\u0000lazy:(\d+)"/g, (_match, index: string) => texts[Number(index)]!),
    rawOnly: texts.length > 0
  }
}

/** Hostile: valid arguments with one value (or key) replaced by something nasty, or nasty arguments outright. */
export const hostileArgs = (tool: ToolInfo, world: World): fc.Arbitrary<Args> => {
  const keys = Object.keys(propertiesOf(tool))
  const options: Array<fc.Arbitrary<Args>> = [
    fc.tuple(validArgs(tool, world), fc.constantFrom(...PROTO_VALUES)).map(([args, proto]) => ({
      ...(proto as Args),
      ...args
    })),
    fc.tuple(
      validArgs(tool, world),
      fc.constantFrom("__proto__", "constructor", "prototype", "\u0000", "a.b", "$where")
    )
      .map(([args, key]) =>
        JSON.parse(`{${JSON.stringify(key)}:{"x":1}${JSON.stringify(args).replace(/^\{\}?/, ",").replace(/^,$/, "}")}`)
      )
  ]
  if (keys.length > 0) {
    options.push(
      fc.tuple(validArgs(tool, world), fc.constantFrom(...keys), hostileValue).map(([args, key, value]) =>
        withKey(args, key, value)
      ),
      // Hostile text inside a nested value (row data, filters, column definitions, tag lists).
      fc.tuple(validArgs(tool, world), fc.constantFrom(...keys), fc.constantFrom(...HOSTILE_STRINGS)).map(
        ([args, key, text]) => withKey(args, key, deepReplaceStrings(args[key], text))
      )
    )
  }
  const textKeys = Object.entries(propertiesOf(tool)).filter(([, schema]) =>
    schema.type === "string" && schema.enum === undefined && schema.format === undefined ||
    schema.anyOf?.some((option) => option.type === "string" && option.enum === undefined) === true
  )
  if (textKeys.length > 0) {
    // Hostile text where the schema takes any text (titles, content, descriptions, queries, names), within its
    // length: the value reaches the tool's own rules and the database.
    options.push(
      fc.tuple(validArgs(tool, world), fc.constantFrom(...textKeys), fc.constantFrom(...HOSTILE_STRINGS)).map(
        ([args, [key, schema], text]) => {
          const max = schema.maxLength ?? schema.anyOf?.find((option) => option.type === "string")?.maxLength
          return withKey(args, key, max === undefined ? text : text.slice(0, max))
        }
      )
    )
  }
  const nestedKeys = keys.filter((key) => ["data", "rows", "filter", "columns", "column_def", "patch"].includes(key))
  if (nestedKeys.length > 0) {
    // Hostile text as the values inside row data, filters and column definitions (their keys and column names
    // kept, so the value gets past the lookup).
    options.push(
      fc.tuple(validArgs(tool, world), fc.constantFrom(...nestedKeys), fc.constantFrom(...HOSTILE_STRINGS)).map(
        ([args, key, text]) => withKey(args, key, replaceLeaves(args[key], text))
      )
    )
  }
  return fc.oneof(...options)
}

/** Every string value inside `value` replaced by `text`, but column names, operators and types. */
export const replaceLeaves = (value: unknown, text: string, key = ""): unknown => {
  if (typeof value === "string") return ["column", "op", "type", "direction"].includes(key) ? value : text
  if (Array.isArray(value)) return value.map((item) => replaceLeaves(item, text))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, replaceLeaves(item, text, name)]))
  }
  return value
}

/** Every string inside `value` (values and keys) replaced by `text`. */
const deepReplaceStrings = (value: unknown, text: string): unknown => {
  if (typeof value === "string") return text
  if (Array.isArray(value)) return value.map((item) => deepReplaceStrings(item, text))
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = deepReplaceStrings(item, text)
    // defineProperty: an own key even when the text is `__proto__` (plain assignment would set the prototype).
    if (Object.keys(out).length > 0) Object.defineProperty(out, text, { value: "x", enumerable: true })
    return out
  }
  return text
}

// ------------------------------------------------------------------------------------------ snapshots

/**
 * Every table a tool can write, each as (row count, highest xmin): any insert or update stamps its row with a new
 * transaction id above every existing one, and a delete lowers the count, so the pair changes with any write.
 * Left out: what every request may write (token last use, per-minute counters) and the schema's bookkeeping.
 */
export const SNAPSHOT_TABLES = [
  "users",
  "docks",
  "dock_members",
  "activity",
  "registrations",
  "otp_codes",
  "parts",
  "part_versions",
  "sources",
  "grounding",
  "micro_db_tables",
  "micro_db_rows",
  "micro_db_cells",
  "blobs",
  "images",
  "dock_usage"
] as const

const snapshotQuery = SNAPSHOT_TABLES.map((table) =>
  `select '${table}' as name, count(*)::int as rows, coalesce(max(xmin::text::bigint), 0)::text as xmin from ${table}`
).join(" union all ")

export const snapshot = (sql: SqlClient.SqlClient) =>
  sql.unsafe<{ name: string; rows: number; xmin: string }>(snapshotQuery).pipe(
    Effect.map((rows) => Object.fromEntries(rows.map((row) => [row.name, `${row.rows}/${row.xmin}`]))),
    Effect.orDie
  )

// -------------------------------------------------------------------------------------------- calling

/**
 * How a call is made: the owner's v2 client (2026 era), v1 client (2025 era) or raw POST, or a raw POST as a
 * viewer of the Dock or with the owner's read-only token (whose writes must all be refused without a trace).
 */
export type Transport = "v2 modern" | "v1" | "raw" | "raw as viewer" | "raw read-only"
export const TRANSPORTS: ReadonlyArray<Transport> = ["v2 modern", "v1", "raw", "raw as viewer", "raw read-only"]

/** What came back from one call. */
export type Outcome =
  | { readonly kind: "result"; readonly result: ToolResult }
  | { readonly kind: "http"; readonly status: number; readonly text: string }
  | { readonly kind: "thrown"; readonly error: string }

const rpcAnswer = (text: string): any => {
  const data = text.split("\n").find((line) => line.startsWith("data: "))
  return JSON.parse(data === undefined ? text : data.slice(6))
}

export const callTool = (server: RunningServer, world: World, transport: Transport, name: string, args: Args) =>
  Effect.gen(function*() {
    const request = requestText({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })
    // A value too deep for a client's JSON.stringify goes as raw text: what is fuzzed is the server, not the client.
    if (transport.startsWith("raw") || request.rawOnly) {
      const token = transport === "raw as viewer"
        ? world.viewerToken
        : transport === "raw read-only"
        ? world.readOnlyToken
        : world.owner.token
      const reply = yield* fetchReply(`${server.url}/mcp`, {
        method: "POST",
        headers: {
          ...bearer(token),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25"
        },
        body: request.text
      })
      if (reply.status !== 200) {
        return { kind: "http", status: reply.status, text: reply.text.slice(0, 2000) } as Outcome
      }
      const answer = rpcAnswer(reply.text)
      if (answer.result === undefined) return { kind: "thrown", error: JSON.stringify(answer).slice(0, 500) } as Outcome
      return { kind: "result", result: answer.result } as Outcome
    }
    const client = transport === "v1" ? world.legacy : world.modern
    return yield* Effect.promise(() =>
      client.callTool({ name, arguments: args }).then(
        (result): Outcome => ({ kind: "result", result: result as ToolResult }),
        (error: unknown): Outcome => ({ kind: "thrown", error: String(error).slice(0, 2000) })
      )
    )
  })

/** The error table's body quoted by a reply or by a client's HTTP error, if there is one. */
const httpErrorBody = (text: string): { code: string; status: number; message: string } | undefined => {
  const start = text.indexOf("{\"error\"")
  if (start < 0) return undefined
  try {
    const body = JSON.parse(text.slice(start)).error
    return typeof body?.code === "string" && typeof body.status === "number" && typeof body.message === "string"
      ? body
      : undefined
  } catch {
    return undefined
  }
}

/** Tallies of one property, for the report and the "valid calls do succeed" check. */
export interface Tally {
  readonly ok: Map<string, number>
  readonly refused: Map<string, Map<string, number>>
}
export const newTally = (): Tally => ({ ok: new Map(), refused: new Map() })

const bump = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1)

/**
 * One call with every invariant checked: a result (never a transport failure or a 5xx), a refusal only with one
 * of REFUSAL_CODES, a status below 500 and a message, nothing logged as an error, and, for a refusal, the same
 * snapshot after as before.
 */
export const checkedCall = (
  server: RunningServer,
  world: World,
  tally: Tally,
  transport: Transport,
  name: string,
  args: Args
) =>
  Effect.gen(function*() {
    const before = yield* snapshot(server.sql)
    const errorsBefore = server.logs().filter((entry) => entry.level === "ERROR").length
    const outcome = yield* callTool(server, world, transport, name, args)
    const context = `${name} via ${transport}`
    if (outcome.kind !== "result") {
      // Refused at the HTTP level (a body past the JSON limits): a 4xx with the error table's body, which the
      // clients surface as a thrown error quoting it.
      const text = outcome.kind === "http" ? outcome.text : outcome.error
      const body = httpErrorBody(text)
      expect(body, `${context}: ${text}`).toBeDefined()
      expect(REFUSAL_CODES, `${context}: ${text}`).toContain(body!.code)
      expect(body!.status, `${context}: ${text}`).toBeGreaterThanOrEqual(400)
      expect(body!.status, `${context}: ${text}`).toBeLessThan(500)
      if (outcome.kind === "http") expect(outcome.status, `${context}: ${text}`).toBe(body!.status)
      expect(body!.message.length, `${context}: ${text}`).toBeGreaterThan(0)
    }
    const logged = server.logs().filter((entry) => entry.level === "ERROR").slice(errorsBefore)
    expect(
      logged.length,
      `${context}: logged\n${logged.map((entry) => `${entry.message}\n${entry.cause ?? ""}`.slice(0, 2000)).join("\n")}`
    ).toBe(0)
    if (outcome.kind === "result" && outcome.result.isError !== true) {
      bump(tally.ok, name)
      return
    }
    if (outcome.kind !== "result") {
      bump(tally.refused.get(name) ?? tally.refused.set(name, new Map()).get(name)!, "http")
    }
    if (outcome.kind === "result") {
      const error = (outcome.result.structuredContent as { error?: any } | undefined)?.error
      const text = JSON.stringify(outcome.result.structuredContent).slice(0, 1000)
      expect(error, `${context}: ${text}`).toBeDefined()
      expect(REFUSAL_CODES, `${context}: ${text}`).toContain(error.code)
      expect(error.status, `${context}: ${text}`).toBeLessThan(500)
      expect(typeof error.message === "string" && error.message.length > 0, `${context}: ${text}`).toBe(true)
      bump(tally.refused.get(name) ?? tally.refused.set(name, new Map()).get(name)!, error.code)
    }
    const after = yield* snapshot(server.sql)
    expect(after, `${context}: a refused call changed stored rows`).toEqual(before)
  })

/** Deletions last (delete_bucket very last), so the world stays whole for the other tools of a kind. */
export const fuzzOrder = (tools: ReadonlyArray<ToolInfo>) => {
  const ranks: Record<string, number> = {
    delete_micro_db_row: 1,
    delete_micro_db_column: 2,
    delete_micro_db_table: 3,
    delete_web_page: 3,
    delete_markdown_file: 3,
    revert_agent_changes: 3,
    delete_bucket: 4
  }
  const rank = (name: string) => ranks[name] ?? 0
  return [...tools].sort((a, b) => rank(a.name) - rank(b.name))
}

/** fast-check's parameters for one tool's property. */
export const fuzzParameters = (index: number): fc.Parameters<unknown> => ({
  seed: FUZZ_SEED + index,
  numRuns: FUZZ_RUNS,
  endOnFailure: true
})

/** The kinds of argument, by name. */
export const KINDS = {
  valid: validArgs,
  "near-valid": nearValidArgs,
  hostile: hostileArgs
} as const

/**
 * One kind of argument against every tool: a fresh world, then one fast-check property per tool (deletions
 * last), each run drawing a transport and arguments and checking every invariant (`checkedCall`). Prints the
 * seed and, at the end, how many calls each tool answered and refused with which codes.
 */
export const fuzzEveryTool = (kind: keyof typeof KINDS) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const world = yield* makeWorld
    const tools = fuzzOrder(yield* listedTools(world))
    // Every tool of the catalogue is listed, so every one is fuzzed (the 47 spec tools and issue 18's).
    expect(tools).toHaveLength(catalogue.length)
    const tally = newTally()
    console.log(`fuzz ${kind}: seed ${FUZZ_SEED}, ${FUZZ_RUNS} runs per tool`)
    for (const [index, tool] of tools.entries()) {
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.constantFrom(...TRANSPORTS),
            KINDS[kind](tool, world),
            (transport, args) => Effect.runPromise(checkedCall(server, world, tally, transport, tool.name, args))
          ),
          fuzzParameters(index)
        ).catch((error: Error) => {
          throw new Error(
            `${kind} ${tool.name}: replay with DOCK_FUZZ_SEED=${FUZZ_SEED} DOCK_FUZZ_RUNS=${FUZZ_RUNS}\n${error.message}`
          )
        })
      )
    }
    const refused = [...tally.refused].map(([name, codes]) => `${name} ${JSON.stringify(Object.fromEntries(codes))}`)
    console.log(`fuzz ${kind}: ok ${JSON.stringify(Object.fromEntries(tally.ok))}\nrefused:\n${refused.join("\n")}`)
    return tally
  })

/** A test's time: generous for the default runs, growing with DOCK_FUZZ_RUNS. */
export const FUZZ_TIMEOUT = Math.max(180_000, FUZZ_RUNS * catalogue.length * 1_500)
