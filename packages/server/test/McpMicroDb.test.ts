/**
 * The 16 Micro DB tools of spec §4.3 ("Micro DBs") over the wire with real MCP clients, against the contract in
 * docs/micro-db.md: per tool, the success shape and its stored effect (read back through the read tools), and each
 * error its spec row lists that a caller can reach — not_found for an unknown Dock, table, column or row,
 * validation_error for bad input (unknown keys, wrong types, a missing required value, a unique value used twice, a
 * value outside the select options, with `details.errors` naming the column), permission_denied for viewers and
 * read-only tokens. The shell: push_micro_db creates it (page_kind "micro_db", content_type "json", listed by
 * list_web_pages), the first table creates it too, and the page tools cannot delete, restore or overwrite it.
 *
 * Bulk atomicity, concurrency, snapshot contents and retention, tenancy, limits and type conversions have their own
 * test files; typed filters, sorts and SQL metacharacters are in McpMicroDbQuery.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import { type AnyClient, type Era, ERAS } from "./support/McpClients.ts"
import {
  actor,
  call,
  cast as castOf,
  connect,
  createBucket,
  ok,
  outputShapes,
  ownInputSchema,
  PART_KEYS,
  pathOf,
  tokenFor,
  toolError as error
} from "./support/McpTools.ts"
import { TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const TABLE_KEYS = ["columns", "created_at", "description", "id", "name", "position", "row_count", "slug", "updated_at"]
const COLUMN_KEYS = ["default", "description", "name", "options", "position", "required", "slug", "type", "unique"]
const ROW_KEYS = ["created_at", "data", "id", "updated_at", "version"]
const SNAPSHOT_KEYS = ["created_at", "part_id", "rows", "tables", "version"]

interface Column {
  readonly name: string
  readonly slug: string
  readonly type: string
  readonly required: boolean
  readonly unique: boolean
  readonly default: unknown
  readonly options: Array<string>
  readonly description: string | null
  readonly position: number
}
interface Table {
  readonly id: string
  readonly name: string
  readonly slug: string
  readonly description: string | null
  readonly position: number
  readonly columns: Array<Column>
  readonly row_count: number
  readonly created_at: string
  readonly updated_at: string
}
interface Row {
  readonly id: string
  readonly data: Record<string, unknown>
  readonly created_at: string
  readonly updated_at: string
}
interface ValidationDetails {
  readonly errors: Array<{ readonly column: string; readonly message: string; readonly row?: number }>
}

/** An owner with a fresh private Dock, plus a viewer, an editor and an outsider, each with a modern client. */
const cast = castOf("Micro", MODERN)

const createTable = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(call(client, "create_micro_db_table", args), (result) => ok(result).table as Table)

const tablesOf = (client: AnyClient, bucket: string) =>
  Effect.map(call(client, "list_micro_db_tables", { bucket }), (result) => ok(result).tables as Array<Table>)

const schemaOf = (client: AnyClient, bucket: string, table: string) =>
  Effect.map(
    call(client, "get_micro_db_schema", { bucket, table }),
    (result) => ok(result) as { table: Table; columns: Array<Column> }
  )

const insert = (client: AnyClient, bucket: string, table: string, data: Record<string, unknown>) =>
  Effect.map(call(client, "insert_micro_db_row", { bucket, table, data }), (result) => ok(result).row as Row)

const query = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(
    call(client, "query_micro_db_rows", { limit: 500, ...args }),
    (result) => ok(result) as { rows: Array<Row>; total: number }
  )

const rowOf = (client: AnyClient, bucket: string, table: string, row_id: string) =>
  Effect.map(call(client, "get_micro_db_row", { bucket, table, row_id }), (result) => ok(result).row as Row)

const shellsIn = (client: AnyClient, bucket: string) =>
  Effect.map(
    call(client, "list_web_pages", { bucket, limit: 100 }),
    (result) => (ok(result).parts as Array<any>).filter((part) => part.page_kind === "micro_db")
  )

/** The `details.errors` of a validation_error. */
const invalid = (client: AnyClient, tool: string, args: Record<string, unknown>) =>
  Effect.map(error(client, tool, args), (body) => {
    expect(body, JSON.stringify(body)).toMatchObject({ code: "validation_error", status: 400 })
    return (body.details as ValidationDetails | undefined)?.errors ?? []
  })

/** The columns named in a validation_error's `details.errors`. */
const invalidColumns = (client: AnyClient, tool: string, args: Record<string, unknown>) =>
  Effect.map(invalid(client, tool, args), (errors) => {
    for (const entry of errors) expect(typeof entry.message).toBe("string")
    return [...new Set(errors.map((entry) => entry.column))].sort()
  })

/** A column as the tools answer it: every field filled in. */
const column = (fields: Partial<Column> & Pick<Column, "name" | "slug" | "type" | "position">): Column => ({
  required: false,
  unique: false,
  default: null,
  options: [],
  description: null,
  ...fields
})

/** One column of every type, as create_micro_db_table takes them. */
const TASK_COLUMNS = [
  { name: "Title", type: "text", required: true },
  { name: "Done", type: "boolean", default: false },
  { name: "Priority", type: "select", options: ["low", "medium", "high"] },
  { name: "Due date", type: "date" },
  { name: "Points", type: "integer", unique: true },
  { name: "Tags", type: "multi_select", options: ["home", "work", "urgent"] },
  { name: "Notes", type: "long_text", description: "Free text" },
  { name: "Price", type: "number" },
  { name: "Starts at", type: "datetime" },
  { name: "Site", type: "url" },
  { name: "Contact", type: "email" },
  { name: "Meta", type: "json" },
  { name: "Code", slug: "ref-code", type: "text", unique: true }
]

/** TASK_COLUMNS as the tools answer them. */
const TASK_SCHEMA: Array<Column> = [
  column({ name: "Title", slug: "title", type: "text", required: true, position: 0 }),
  column({ name: "Done", slug: "done", type: "boolean", default: false, position: 1 }),
  column({ name: "Priority", slug: "priority", type: "select", options: ["low", "medium", "high"], position: 2 }),
  column({ name: "Due date", slug: "due_date", type: "date", position: 3 }),
  column({ name: "Points", slug: "points", type: "integer", unique: true, position: 4 }),
  column({ name: "Tags", slug: "tags", type: "multi_select", options: ["home", "work", "urgent"], position: 5 }),
  column({ name: "Notes", slug: "notes", type: "long_text", description: "Free text", position: 6 }),
  column({ name: "Price", slug: "price", type: "number", position: 7 }),
  column({ name: "Starts at", slug: "starts_at", type: "datetime", position: 8 }),
  column({ name: "Site", slug: "site", type: "url", position: 9 }),
  column({ name: "Contact", slug: "contact", type: "email", position: 10 }),
  column({ name: "Meta", slug: "meta", type: "json", position: 11 }),
  column({ name: "Code", slug: "ref-code", type: "text", unique: true, position: 12 })
]

const tasksTable = (client: AnyClient, bucket: string, name = "Tasks") =>
  createTable(client, { bucket, name, description: "Things to do", columns: TASK_COLUMNS })

/** A full, valid task row. */
const FULL_TASK = {
  title: "Paint the fence",
  done: true,
  priority: "high",
  due_date: "2026-11-21",
  points: 5,
  tags: ["home", "urgent"],
  notes: "Two coats.\nWhite.",
  price: 12.5,
  starts_at: "2026-11-21T09:30:00.000Z",
  site: "https://example.com/fence",
  contact: "ada@example.com",
  meta: { nested: [1, { deep: true }], empty: null },
  "ref-code": "T-1"
}

const expectTableShape = (table: Table) => {
  expect(Object.keys(table).sort()).toEqual(TABLE_KEYS)
  expect(table.id).toMatch(UUID)
  expect(Number.isNaN(Date.parse(table.created_at))).toBe(false)
  expect(Number.isNaN(Date.parse(table.updated_at))).toBe(false)
  for (const entry of table.columns) expect(Object.keys(entry).sort()).toEqual(COLUMN_KEYS)
}

const expectRowShape = (row: Row) => {
  expect(Object.keys(row).sort()).toEqual(ROW_KEYS)
  expect(row.id).toMatch(UUID)
  expect(Number.isNaN(Date.parse(row.created_at))).toBe(false)
  expect(Number.isNaN(Date.parse(row.updated_at))).toBe(false)
}

const expectSnapshotShape = (snapshot: any, partId: string) => {
  expect(Object.keys(snapshot).sort()).toEqual(SNAPSHOT_KEYS)
  expect(snapshot.part_id).toBe(partId)
  expect(Number.isInteger(snapshot.version)).toBe(true)
  expect(snapshot.version).toBeGreaterThanOrEqual(2)
  expect(Number.isNaN(Date.parse(snapshot.created_at))).toBe(false)
}

/** Every Micro DB tool: required inputs, every input, read or write, and the success shape's keys. */
const MICRO_DB_TOOLS: ReadonlyArray<{
  readonly name: string
  readonly required: ReadonlyArray<string>
  readonly properties: ReadonlyArray<string>
  readonly read: boolean
  readonly output: ReadonlyArray<string>
}> = [
  {
    name: "push_micro_db",
    required: [],
    properties: ["bucket", "slug", "summary", "title", "visibility"],
    read: false,
    output: ["part"]
  },
  { name: "list_micro_db_tables", required: ["bucket"], properties: ["bucket"], read: true, output: ["tables"] },
  {
    name: "get_micro_db_schema",
    required: ["bucket", "table"],
    properties: ["bucket", "table"],
    read: true,
    output: ["columns", "table"]
  },
  {
    name: "query_micro_db_rows",
    required: ["bucket", "table"],
    properties: ["bucket", "filter", "limit", "offset", "sort", "table"],
    read: true,
    output: ["rows", "total"]
  },
  {
    name: "get_micro_db_row",
    required: ["bucket", "row_id", "table"],
    properties: ["bucket", "row_id", "table"],
    read: true,
    output: ["row"]
  },
  {
    name: "create_micro_db_table",
    required: ["bucket", "columns", "name"],
    properties: ["bucket", "columns", "description", "name", "slug"],
    read: false,
    output: ["table"]
  },
  {
    name: "update_micro_db_table",
    required: ["bucket", "table"],
    properties: ["bucket", "description", "name", "position", "table"],
    read: false,
    output: ["table"]
  },
  {
    name: "delete_micro_db_table",
    required: ["bucket", "table"],
    properties: ["bucket", "table"],
    read: false,
    output: ["ok", "snapshot"]
  },
  {
    name: "add_micro_db_column",
    required: ["bucket", "column_def", "table"],
    properties: ["bucket", "column_def", "table"],
    read: false,
    output: ["column"]
  },
  {
    name: "update_micro_db_column",
    required: ["bucket", "column", "patch", "table"],
    properties: ["bucket", "column", "patch", "table"],
    read: false,
    output: ["column", "warnings"]
  },
  {
    name: "delete_micro_db_column",
    required: ["bucket", "column", "table"],
    properties: ["bucket", "column", "table"],
    read: false,
    output: ["ok", "snapshot"]
  },
  {
    name: "insert_micro_db_row",
    required: ["bucket", "data", "table"],
    properties: ["bucket", "data", "table"],
    read: false,
    output: ["row"]
  },
  {
    name: "insert_micro_db_rows",
    required: ["bucket", "rows", "table"],
    properties: ["bucket", "rows", "table"],
    read: false,
    output: ["rows"]
  },
  {
    name: "update_micro_db_row",
    required: ["bucket", "data", "row_id", "table"],
    properties: ["base_version", "bucket", "data", "row_id", "table"],
    read: false,
    output: ["row"]
  },
  {
    name: "delete_micro_db_row",
    required: ["bucket", "row_id", "table"],
    properties: ["base_version", "bucket", "row_id", "table"],
    read: false,
    output: ["ok"]
  },
  { name: "snapshot_micro_db", required: ["bucket"], properties: ["bucket"], read: false, output: ["snapshot"] }
]

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("the MCP Micro DB tools", (it) => {
  // ---------------------------------------------------------------------------------------------------------
  // tools/list

  it.scoped("tools/list: all 16 Micro DB tools with their inputs, read/write annotations and success shapes", () =>
    Effect.gen(function*() {
      const { client } = yield* actor(MODERN)
      const { tools } = yield* Effect.promise(() => client.listTools())
      const byName = new Map(tools.map((entry) => [entry.name, entry as any]))
      expect(MICRO_DB_TOOLS).toHaveLength(16)
      for (const expected of MICRO_DB_TOOLS) {
        const tool = byName.get(expected.name)
        expect(tool, expected.name).toBeDefined()
        expect(typeof tool.description, expected.name).toBe("string")
        expect(tool.description.length, expected.name).toBeGreaterThan(20)
        expect([...(tool.inputSchema.required ?? [])].sort(), expected.name).toEqual(expected.required)
        // every input the spec row names; write tools may also take the legacy targeting fields of architecture §14
        const properties = Object.keys(ownInputSchema(tool.inputSchema).properties ?? {})
        expect(properties, expected.name).toEqual(expect.arrayContaining([...expected.properties]))
        const extras = properties.filter((name) => !expected.properties.includes(name))
        expect(extras, expected.name).toEqual(
          expected.read ? [] : extras.filter((name) => ["bucket_id", "bucket_path"].includes(name))
        )
        expect(tool.inputSchema, expected.name).toMatchObject({ type: "object", additionalProperties: false })
        expect(JSON.stringify(tool.inputSchema), expected.name).not.toContain("$ref")
        expect(tool.annotations, expected.name).toMatchObject({ readOnlyHint: expected.read })
        expect(outputShapes(tool), expected.name).toContainEqual(expected.output)
      }
      const queryTool = byName.get("query_micro_db_rows")
      expect(queryTool.inputSchema.properties).toMatchObject({
        limit: { type: "integer", maximum: 500 },
        offset: { type: "integer", minimum: 0 },
        filter: { type: "array" },
        sort: { type: "array" }
      })
      expect(byName.get("insert_micro_db_rows").inputSchema.properties.rows).toMatchObject({
        type: "array",
        maxItems: 500
      })
      expect(byName.get("push_micro_db").inputSchema.properties.visibility).toMatchObject({
        enum: ["private", "public"]
      })
    }))

  // ---------------------------------------------------------------------------------------------------------
  // push_micro_db and the shell

  it.scoped("push_micro_db creates the shell (micro_db, json, \"Micro DB\", micro-db, version 1), listed and readable as a page", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer } = yield* cast
      const created = ok(yield* call(owner.client, "push_micro_db", { bucket: dock.id }))
      expect(Object.keys(created)).toEqual(["part"])
      const part = created.part
      expect(Object.keys(part).sort()).toEqual(PART_KEYS)
      expect(part.id).toMatch(UUID)
      expect(part).toMatchObject({
        bucket_id: dock.id,
        page_kind: "micro_db",
        content_type: "json",
        title: "Micro DB",
        slug: "micro-db",
        version: 1
      })
      expect(part.url).toMatch(new RegExp(`/a/${part.public_slug}$`))

      // listed by list_web_pages, to members too
      expect(yield* shellsIn(owner.client, dock.id)).toEqual([part])
      expect(yield* shellsIn(viewer.client, dock.id)).toEqual([part])
      // readable with get_web_page: version 1 is the empty snapshot
      const read = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "micro-db" })).part
      expect(read).toMatchObject({ id: part.id, page_kind: "micro_db", content_type: "json", version: 1 })
      const document = JSON.parse(read.content)
      expect(document).toMatchObject({ format: "dock.micro_db.snapshot/1", bucket_id: dock.id, tables: [] })
      // an empty Micro DB has no tables
      expect(yield* tablesOf(owner.client, dock.id)).toEqual([])

      // pushing again updates the same shell: title, summary and slug
      const renamed = ok(
        yield* call(owner.client, "push_micro_db", {
          bucket: pathOf(owner.user, dock),
          title: "Inventory",
          slug: "inventory",
          summary: "What is in the shed"
        })
      ).part
      expect(renamed).toMatchObject({
        id: part.id,
        title: "Inventory",
        slug: "inventory",
        summary: "What is in the shed"
      })
      expect(yield* shellsIn(owner.client, dock.id)).toEqual([renamed])
      expect(ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: "inventory" })).part.id).toBe(
        part.id
      )
      // the bare slug of one's own Dock names it too; still one shell
      expect(ok(yield* call(owner.client, "push_micro_db", { bucket: dock.slug, summary: null })).part.id).toBe(part.id)
      expect((yield* shellsIn(owner.client, dock.id)).length).toBe(1)
    }))

  it.scoped("push_micro_db: the slug comes from the title; with no Dock named the shell goes to the default Dock", () =>
    Effect.gen(function*() {
      const owner = yield* actor(MODERN)
      const dock = yield* createBucket(owner.client, { title: "Titled", slug: `titled-${unique()}` })
      const part = ok(yield* call(owner.client, "push_micro_db", { bucket: dock.id, title: "Reading List" })).part
      expect(part).toMatchObject({ title: "Reading List", slug: "reading-list", page_kind: "micro_db" })

      const untargeted = ok(yield* call(owner.client, "push_micro_db", {})).part
      expect(untargeted).toMatchObject({
        bucket_id: owner.user.default_bucket_id,
        page_kind: "micro_db",
        slug: "micro-db"
      })
      expect((yield* shellsIn(owner.client, owner.user.default_bucket_id)).map((shell) => shell.id)).toEqual([
        untargeted.id
      ])
    }))

  it.scoped("push_micro_db: bad input is validation_error; viewers and read-only tokens permission_denied; outsiders not_found", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer, outsider } = yield* cast
      for (
        const args of [
          { bucket: dock.id, slug: "Bad Slug" },
          { bucket: dock.id, slug: "-lead" },
          { bucket: dock.id, slug: "x'; drop table parts; --" },
          { bucket: dock.id, visibility: "secret" },
          { bucket: dock.id, title: 5 },
          { bucket: dock.id, bogus: true }
        ]
      ) {
        expect(yield* error(owner.client, "push_micro_db", args), JSON.stringify(args)).toMatchObject({
          code: "validation_error",
          status: 400
        })
      }
      expect(yield* error(viewer.client, "push_micro_db", { bucket: dock.id })).toMatchObject({
        code: "permission_denied",
        status: 403
      })
      const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), MODERN)
      expect(yield* error(readOnly, "push_micro_db", { bucket: dock.id })).toMatchObject({
        code: "permission_denied",
        status: 403
      })
      expect(yield* error(outsider.client, "push_micro_db", { bucket: dock.id })).toMatchObject({
        code: "not_found",
        status: 404
      })
      expect(yield* error(owner.client, "push_micro_db", { bucket: crypto.randomUUID() })).toMatchObject({
        code: "not_found"
      })
      expect(yield* shellsIn(owner.client, dock.id)).toEqual([])
    }))

  it.scoped("row keys that could reach a prototype are validation_error naming the key, never dropped silently", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* createTable(owner.client, { bucket: dock.id, name: "Keys", columns: [{ name: "Name", type: "text" }] })
      const row = yield* insert(owner.client, dock.id, "keys", { name: "kept" })
      for (const key of ["__proto__", "constructor", "prototype"]) {
        // as JSON.parse makes it: an own key (a decoder's copy would drop an own __proto__ without a word)
        const data = JSON.parse(`{"name": "x", ${JSON.stringify(key)}: {"polluted": true}}`)
        expect(Object.keys(data)).toContain(key)
        for (
          const [tool, args] of [
            ["insert_micro_db_row", { data }],
            ["insert_micro_db_rows", { rows: [{ name: "fine" }, data] }],
            ["update_micro_db_row", { row_id: row.id, data }]
          ] as const
        ) {
          const body = yield* error(owner.client, tool, { bucket: dock.id, table: "keys", ...args })
          expect(body, `${tool} ${key}`).toMatchObject({ code: "validation_error", status: 400 })
          expect(body.message, `${tool} ${key}`).toContain(`"${key}"`)
        }
      }
      expect((yield* query(owner.client, { bucket: dock.id, table: "keys" })).rows.map((entry) => entry.data)).toEqual([
        { name: "kept" }
      ])
      // nor can a column take such a slug (a plain object inherits a `constructor`)
      for (const slug of ["constructor", "prototype"]) {
        expect(
          yield* invalidColumns(owner.client, "add_micro_db_column", {
            bucket: dock.id,
            table: "keys",
            column_def: { name: slug, type: "text" }
          })
        )
          .toEqual([slug])
      }
    }))

  it.scoped("creating the first table creates the shell; later tables reuse it", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      expect(yield* shellsIn(owner.client, dock.id)).toEqual([])
      yield* createTable(owner.client, { bucket: dock.id, name: "First", columns: [{ name: "Name", type: "text" }] })
      const shells = yield* shellsIn(owner.client, dock.id)
      expect(shells).toHaveLength(1)
      expect(shells[0]).toMatchObject({
        page_kind: "micro_db",
        content_type: "json",
        title: "Micro DB",
        slug: "micro-db"
      })
      yield* createTable(owner.client, { bucket: dock.id, name: "Second", columns: [{ name: "Name", type: "text" }] })
      expect((yield* shellsIn(owner.client, dock.id)).map((shell) => shell.id)).toEqual([shells[0].id])
    }))

  it.scoped("the shell cannot be deleted or restored with the page tools, nor overwritten by a page push with its slug", () =>
    Effect.gen(function*() {
      const { dock, owner, editor } = yield* cast
      const shell = ok(yield* call(owner.client, "push_micro_db", { bucket: dock.id })).part
      const table = yield* createTable(owner.client, {
        bucket: dock.id,
        name: "Kept",
        columns: [{ name: "Name", type: "text" }]
      })
      yield* insert(owner.client, dock.id, table.slug, { name: "still here" })

      for (const client of [owner.client, editor.client]) {
        expect(yield* error(client, "delete_web_page", { bucket: dock.id, web_page: shell.id })).toMatchObject({
          code: "validation_error",
          status: 400
        })
        expect(yield* error(client, "delete_web_page", { bucket: dock.id, web_page: "micro-db" })).toMatchObject({
          code: "validation_error"
        })
        expect(yield* error(client, "restore_web_page_version", { bucket: dock.id, web_page: shell.id, version: 1 }))
          .toMatchObject({
            code: "validation_error"
          })
        expect(
          yield* error(client, "push_web_page", {
            bucket: dock.id,
            page_slug: "micro-db",
            page_content: "<p>taken</p>"
          })
        ).toMatchObject({ code: "validation_error", status: 400 })
        expect(
          yield* error(client, "push_markdown_file", {
            bucket: dock.id,
            page_slug: "micro-db",
            page_content: "---\ntitle: T\n---\nx"
          })
        ).toMatchObject({ code: "validation_error" })
        expect(
          yield* error(client, "push_web_page", {
            bucket: dock.id,
            page_title: "Micro DB",
            page_content: "<p>taken</p>"
          })
        ).toMatchObject({ code: "validation_error" })
      }

      // the shell, its tables and rows are untouched
      expect(yield* shellsIn(owner.client, dock.id)).toMatchObject([{ id: shell.id, slug: "micro-db", version: 1 }])
      const read = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: shell.id })).part
      expect(read).toMatchObject({ page_kind: "micro_db", content_type: "json", version: 1 })
      expect(yield* tablesOf(owner.client, dock.id)).toMatchObject([{ id: table.id, row_count: 1 }])
      expect((yield* query(owner.client, { bucket: dock.id, table: table.id })).rows.map((row) => row.data)).toEqual([
        { name: "still here" }
      ])
    }))

  // ---------------------------------------------------------------------------------------------------------
  // tables

  it.scoped("create_micro_db_table answers the table with every column field filled in; list and get_micro_db_schema read it back", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer } = yield* cast
      const result = ok(
        yield* call(owner.client, "create_micro_db_table", {
          bucket: dock.id,
          name: "Tasks",
          description: "Things to do",
          columns: TASK_COLUMNS
        })
      )
      expect(Object.keys(result)).toEqual(["table"])
      const table = result.table as Table
      expectTableShape(table)
      expect(table).toMatchObject({
        name: "Tasks",
        slug: "tasks",
        description: "Things to do",
        position: 0,
        row_count: 0
      })
      expect(table.columns).toEqual(TASK_SCHEMA)

      // a second table goes last; its slug comes from the name, or is given
      const second = yield* createTable(owner.client, {
        bucket: dock.id,
        name: "Reading List",
        columns: [{ name: "First name", type: "text" }]
      })
      expect(second).toMatchObject({ slug: "reading-list", position: 1, description: null, row_count: 0 })
      expect(second.columns).toEqual([column({ name: "First name", slug: "first_name", type: "text", position: 0 })])
      const third = yield* createTable(owner.client, {
        bucket: pathOf(owner.user, dock),
        name: "Whatever",
        slug: "chosen-slug",
        columns: [{ name: "Note", type: "long_text" }]
      })
      expect(third).toMatchObject({ slug: "chosen-slug", position: 2, row_count: 0 })

      const listed = ok(yield* call(owner.client, "list_micro_db_tables", { bucket: dock.id }))
      expect(Object.keys(listed)).toEqual(["tables"])
      expect(listed.tables).toEqual([table, second, third])
      expect(yield* tablesOf(viewer.client, dock.id)).toEqual([table, second, third])

      for (const ref of [table.id, "tasks"]) {
        const schema = ok(yield* call(viewer.client, "get_micro_db_schema", { bucket: dock.id, table: ref }))
        expect(Object.keys(schema).sort()).toEqual(["columns", "table"])
        expect(schema.table).toMatchObject({ id: table.id, name: "Tasks", slug: "tasks" })
        expect(schema.columns).toEqual(TASK_SCHEMA)
      }
    }))

  it.scoped("create_micro_db_table refuses bad tables and bad column definitions with validation_error and stores nothing", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const existing = yield* createTable(owner.client, {
        bucket: dock.id,
        name: "Taken",
        columns: [{ name: "A", type: "text" }]
      })
      const text = { name: "A", type: "text" }
      const cases: ReadonlyArray<Record<string, unknown>> = [
        { name: "", columns: [text] },
        { name: "x".repeat(201), columns: [text] },
        { name: "Taken", columns: [text] }, // the slug "taken" is used
        { name: "Other", slug: "taken", columns: [text] },
        { name: "Other", slug: "Bad Slug", columns: [text] },
        { name: "Other", slug: "double--hyphen", columns: [text] },
        { name: "Other", description: "d".repeat(2001), columns: [text] },
        { name: "Other" }, // columns missing
        { name: "Other", columns: [text], bogus: 1 },
        { name: "Other", columns: [{ name: "A", type: "decimal" }] },
        { name: "Other", columns: [{ name: "", type: "text" }] },
        { name: "Other", columns: [{ name: "x".repeat(101), type: "text" }] },
        { name: "Other", columns: [{ type: "text" }] },
        { name: "Other", columns: [{ name: "A", type: "text", color: "red" }] },
        { name: "Other", columns: [{ name: "A", type: "select" }] }, // options required
        { name: "Other", columns: [{ name: "A", type: "select", options: [] }] },
        { name: "Other", columns: [{ name: "A", type: "select", options: ["x", "x"] }] },
        { name: "Other", columns: [{ name: "A", type: "select", options: [""] }] },
        { name: "Other", columns: [{ name: "A", type: "text", options: ["x"] }] },
        { name: "Other", columns: [{ name: "A", type: "boolean", unique: true }] },
        { name: "Other", columns: [{ name: "A", type: "json", unique: true }] },
        { name: "Other", columns: [{ name: "A", type: "multi_select", options: ["x"], unique: true }] },
        { name: "Other", columns: [{ name: "A", type: "integer", default: "5" }] },
        { name: "Other", columns: [{ name: "A", type: "select", options: ["x"], default: "y" }] },
        { name: "Other", columns: [{ name: "A", type: "text", required: "yes" }] },
        { name: "Other", columns: [{ name: "A", type: "text", description: "d".repeat(1001) }] },
        { name: "Other", columns: [{ name: "A", type: "text" }, { name: "a", type: "number" }] }, // both slug "a"
        { name: "Other", columns: [{ name: "Id", type: "text" }] }, // reserved slug
        { name: "Other", columns: [{ name: "A", slug: "created_at", type: "text" }] },
        { name: "Other", columns: [{ name: "A", slug: "Upper", type: "text" }] },
        { name: "Other", columns: [{ name: "A", slug: "a".repeat(65), type: "text" }] },
        { name: "Other", columns: "name text" }
      ]
      for (const args of cases) {
        expect(
          yield* error(owner.client, "create_micro_db_table", { bucket: dock.id, ...args }),
          JSON.stringify(args).slice(0, 200)
        )
          .toMatchObject({ code: "validation_error", status: 400 })
      }
      expect((yield* tablesOf(owner.client, dock.id)).map((table) => table.id)).toEqual([existing.id])
      // a 64-character slug and a 200-character name are fine
      const long = yield* createTable(owner.client, {
        bucket: dock.id,
        name: "n".repeat(200),
        columns: [{ name: "A", slug: `a${"b".repeat(63)}`, type: "text" }]
      })
      expect(long.columns[0]!.slug).toHaveLength(64)
    }))

  it.scoped("update_micro_db_table changes name, description and position (others renumbered); the slug stays", () =>
    Effect.gen(function*() {
      const { dock, owner, editor } = yield* cast
      const columns = [{ name: "Name", type: "text" }]
      const a = yield* createTable(owner.client, { bucket: dock.id, name: "Alpha", description: "first", columns })
      const b = yield* createTable(owner.client, { bucket: dock.id, name: "Bravo", columns })
      const c = yield* createTable(owner.client, { bucket: dock.id, name: "Charlie", columns })

      const renamed = ok(
        yield* call(owner.client, "update_micro_db_table", {
          bucket: dock.id,
          table: "alpha",
          name: "Aardvark",
          description: null
        })
      )
      expect(Object.keys(renamed)).toEqual(["table"])
      expectTableShape(renamed.table)
      expect(renamed.table).toMatchObject({ id: a.id, name: "Aardvark", slug: "alpha", description: null, position: 0 })
      expect(Date.parse(renamed.table.updated_at)).toBeGreaterThanOrEqual(Date.parse(a.updated_at))

      const moved =
        ok(yield* call(editor.client, "update_micro_db_table", { bucket: dock.id, table: c.id, position: 0 })).table
      expect(moved).toMatchObject({ id: c.id, slug: "charlie", position: 0 })
      const listed = yield* tablesOf(owner.client, dock.id)
      expect(listed.map((table) => [table.slug, table.position])).toEqual([["charlie", 0], ["alpha", 1], ["bravo", 2]])
      expect(listed[1]).toMatchObject({ name: "Aardvark", description: null })

      const described = ok(
        yield* call(owner.client, "update_micro_db_table", { bucket: dock.id, table: "bravo", description: "second" })
      )
      expect(described.table).toMatchObject({ id: b.id, name: "Bravo", description: "second", position: 2 })
      expect((yield* schemaOf(owner.client, dock.id, "bravo")).table).toMatchObject({ description: "second" })

      // refused
      expect(yield* error(owner.client, "update_micro_db_table", { bucket: dock.id, table: "nope", name: "X" }))
        .toMatchObject({
          code: "not_found",
          status: 404
        })
      expect(
        yield* error(owner.client, "update_micro_db_table", { bucket: dock.id, table: crypto.randomUUID(), name: "X" })
      )
        .toMatchObject({ code: "not_found" })
      for (
        const args of [
          { name: "" },
          { name: "x".repeat(201) },
          { description: "d".repeat(2001) },
          { position: -1 },
          { position: 1.5 },
          { position: "first" },
          { slug: "renamed" },
          { columns: [] }
        ]
      ) {
        expect(
          yield* error(owner.client, "update_micro_db_table", { bucket: dock.id, table: "bravo", ...args }),
          JSON.stringify(args)
        )
          .toMatchObject({ code: "validation_error", status: 400 })
      }
      expect((yield* tablesOf(owner.client, dock.id)).map((table) => [table.slug, table.name, table.position])).toEqual(
        [
          ["charlie", "Charlie", 0],
          ["alpha", "Aardvark", 1],
          ["bravo", "Bravo", 2]
        ]
      )
    }))

  it.scoped("delete_micro_db_table snapshots first, answers { ok: true, snapshot } and takes the table and its rows away", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const shell = ok(yield* call(owner.client, "push_micro_db", { bucket: dock.id })).part
      const gone = yield* createTable(owner.client, {
        bucket: dock.id,
        name: "Gone",
        columns: [{ name: "N", type: "integer" }]
      })
      const kept = yield* createTable(owner.client, {
        bucket: dock.id,
        name: "Kept",
        columns: [{ name: "N", type: "integer" }]
      })
      const row = yield* insert(owner.client, dock.id, "gone", { n: 1 })
      yield* insert(owner.client, dock.id, "gone", { n: 2 })
      yield* insert(owner.client, dock.id, "kept", { n: 3 })

      const result = ok(yield* call(owner.client, "delete_micro_db_table", { bucket: dock.id, table: "gone" }))
      expect(Object.keys(result).sort()).toEqual(["ok", "snapshot"])
      expect(result.ok).toBe(true)
      expectSnapshotShape(result.snapshot, shell.id)
      // taken before the delete: both tables and all three rows
      expect(result.snapshot).toMatchObject({ tables: 2, rows: 3 })

      expect(yield* error(owner.client, "get_micro_db_schema", { bucket: dock.id, table: "gone" })).toMatchObject({
        code: "not_found"
      })
      expect(yield* error(owner.client, "get_micro_db_schema", { bucket: dock.id, table: gone.id })).toMatchObject({
        code: "not_found"
      })
      expect(yield* error(owner.client, "query_micro_db_rows", { bucket: dock.id, table: gone.id })).toMatchObject({
        code: "not_found"
      })
      expect(yield* error(owner.client, "get_micro_db_row", { bucket: dock.id, table: gone.id, row_id: row.id }))
        .toMatchObject({
          code: "not_found"
        })
      expect(yield* error(owner.client, "insert_micro_db_row", { bucket: dock.id, table: gone.id, data: { n: 4 } }))
        .toMatchObject({
          code: "not_found"
        })
      expect((yield* tablesOf(owner.client, dock.id)).map((table) => [table.id, table.row_count])).toEqual([[
        kept.id,
        1
      ]])
      // deleting again: not_found
      expect(yield* error(owner.client, "delete_micro_db_table", { bucket: dock.id, table: "gone" })).toMatchObject({
        code: "not_found",
        status: 404
      })
      // the slug is free again
      expect(
        (yield* createTable(owner.client, { bucket: dock.id, name: "Gone", columns: [{ name: "N", type: "text" }] }))
          .slug
      )
        .toBe("gone")
    }))

  // ---------------------------------------------------------------------------------------------------------
  // columns

  it.scoped("add_micro_db_column appends a column; its default goes into existing rows; bad definitions are validation_error", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* createTable(owner.client, { bucket: dock.id, name: "Items", columns: [{ name: "Name", type: "text" }] })
      const first = yield* insert(owner.client, dock.id, "items", { name: "one" })
      const second = yield* insert(owner.client, dock.id, "items", { name: "two" })

      const added = ok(
        yield* call(owner.client, "add_micro_db_column", {
          bucket: dock.id,
          table: "items",
          column_def: { name: "In stock", type: "integer", default: 0, description: "How many" }
        })
      )
      expect(Object.keys(added)).toEqual(["column"])
      expect(added.column).toEqual(
        column({
          name: "In stock",
          slug: "in_stock",
          type: "integer",
          default: 0,
          description: "How many",
          position: 1
        })
      )
      const plain = ok(
        yield* call(owner.client, "add_micro_db_column", {
          bucket: dock.id,
          table: "items",
          column_def: { name: "Colour", slug: "colour", type: "select", options: ["red", "blue"] }
        })
      ).column
      expect(plain).toEqual(
        column({ name: "Colour", slug: "colour", type: "select", options: ["red", "blue"], position: 2 })
      )

      expect((yield* schemaOf(owner.client, dock.id, "items")).columns.map((entry) => entry.slug)).toEqual([
        "name",
        "in_stock",
        "colour"
      ])
      expect((yield* rowOf(owner.client, dock.id, "items", first.id)).data).toEqual({ name: "one", in_stock: 0 })
      expect((yield* rowOf(owner.client, dock.id, "items", second.id)).data).toEqual({ name: "two", in_stock: 0 })
      // new rows get the default too
      expect((yield* insert(owner.client, dock.id, "items", { name: "three" })).data).toEqual({
        name: "three",
        in_stock: 0
      })

      for (
        const column_def of [
          { name: "Name", type: "text" }, // slug "name" is taken
          { name: "Again", slug: "in_stock", type: "text" },
          { name: "Needed", type: "text", required: true }, // required without a default on a table with rows
          { name: "Bad", type: "date", default: "2026-02-30" },
          { name: "Bad", type: "uuid" },
          { name: "Bad", type: "text", extra: true },
          { name: "Bad", slug: "updated_at", type: "text" },
          { name: "Bad", slug: "9lives", type: "text" },
          { name: "Bad", type: "multi_select", options: ["a"], default: ["b"] }
        ]
      ) {
        expect(
          yield* error(owner.client, "add_micro_db_column", { bucket: dock.id, table: "items", column_def }),
          JSON.stringify(column_def)
        )
          .toMatchObject({ code: "validation_error", status: 400 })
      }
      expect(yield* error(owner.client, "add_micro_db_column", { bucket: dock.id, table: "items" })).toMatchObject({
        code: "validation_error"
      })
      expect(
        yield* error(owner.client, "add_micro_db_column", {
          bucket: dock.id,
          table: "nope",
          column_def: { name: "X", type: "text" }
        })
      ).toMatchObject({ code: "not_found", status: 404 })
      expect((yield* schemaOf(owner.client, dock.id, "items")).columns.map((entry) => entry.slug)).toEqual([
        "name",
        "in_stock",
        "colour"
      ])
      // required with a default on a table with rows is fine: the rows get the default
      const needed = ok(
        yield* call(owner.client, "add_micro_db_column", {
          bucket: dock.id,
          table: "items",
          column_def: { name: "Needed", type: "text", required: true, default: "tbd" }
        })
      ).column
      expect(needed).toMatchObject({ slug: "needed", required: true, default: "tbd", position: 3 })
      expect((yield* rowOf(owner.client, dock.id, "items", first.id)).data).toEqual({
        name: "one",
        in_stock: 0,
        needed: "tbd"
      })
    }))

  it.scoped("update_micro_db_column patches name, slug and description; a new slug moves every row's value", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* createTable(owner.client, {
        bucket: dock.id,
        name: "People",
        columns: [{ name: "Name", type: "text" }, { name: "Mail", type: "email" }]
      })
      const ada = yield* insert(owner.client, dock.id, "people", { name: "Ada", mail: "ada@example.com" })
      const bob = yield* insert(owner.client, dock.id, "people", { name: "Bob" })

      const result = ok(
        yield* call(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: "people",
          column: "mail",
          patch: { name: "E-mail address", slug: "email", description: "Where to write" }
        })
      )
      expect(Object.keys(result)).toEqual(["column", "warnings"])
      expect(result.warnings).toEqual([])
      expect(result.column).toEqual(
        column({ name: "E-mail address", slug: "email", type: "email", description: "Where to write", position: 1 })
      )
      expect((yield* schemaOf(owner.client, dock.id, "people")).columns.map((entry) => entry.slug)).toEqual([
        "name",
        "email"
      ])
      expect((yield* rowOf(owner.client, dock.id, "people", ada.id)).data).toEqual({
        name: "Ada",
        email: "ada@example.com"
      })
      expect((yield* rowOf(owner.client, dock.id, "people", bob.id)).data).toEqual({ name: "Bob" })
      // the rows answer to the new slug only
      expect((yield* query(owner.client, {
        bucket: dock.id,
        table: "people",
        filter: [{ column: "email", op: "eq", value: "ada@example.com" }]
      })).rows.map((row) => row.id)).toEqual([ada.id])
      expect(
        yield* error(owner.client, "query_micro_db_rows", {
          bucket: dock.id,
          table: "people",
          filter: [{ column: "mail", op: "is_null" }]
        })
      ).toMatchObject({ code: "validation_error" })

      // a name alone keeps the slug; description null clears it
      const renamed = ok(
        yield* call(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: "people",
          column: "email",
          patch: { name: "Mail", description: null }
        })
      ).column
      expect(renamed).toMatchObject({ name: "Mail", slug: "email", description: null })

      // refused
      expect(
        yield* error(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: "people",
          column: "nope",
          patch: { name: "X" }
        })
      )
        .toMatchObject({ code: "not_found", status: 404 })
      expect(
        yield* error(owner.client, "update_micro_db_column", {
          bucket: dock.id,
          table: "nope",
          column: "email",
          patch: { name: "X" }
        })
      )
        .toMatchObject({ code: "not_found" })
      for (
        const patch of [
          { slug: "name" }, // taken by the other column
          { slug: "id" },
          { slug: "Bad Slug" },
          { name: "" },
          { type: "currency" },
          { required: "yes" },
          { colour: "red" }
        ]
      ) {
        expect(
          yield* error(owner.client, "update_micro_db_column", {
            bucket: dock.id,
            table: "people",
            column: "email",
            patch
          }),
          JSON.stringify(patch)
        )
          .toMatchObject({ code: "validation_error", status: 400 })
      }
      expect((yield* schemaOf(owner.client, dock.id, "people")).columns).toEqual([
        column({ name: "Name", slug: "name", type: "text", position: 0 }),
        column({ name: "Mail", slug: "email", type: "email", position: 1 })
      ])
    }))

  it.scoped("delete_micro_db_column snapshots first, answers { ok: true, snapshot } and takes the values out of every row", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      const shell = ok(yield* call(owner.client, "push_micro_db", { bucket: dock.id })).part
      yield* createTable(owner.client, {
        bucket: dock.id,
        name: "Notes",
        columns: [{ name: "Title", type: "text" }, { name: "Secret", type: "text" }, { name: "Rank", type: "integer" }]
      })
      const one = yield* insert(owner.client, dock.id, "notes", { title: "one", secret: "s1", rank: 1 })
      const two = yield* insert(owner.client, dock.id, "notes", { title: "two", secret: "s2" })

      const result = ok(
        yield* call(owner.client, "delete_micro_db_column", { bucket: dock.id, table: "notes", column: "secret" })
      )
      expect(Object.keys(result).sort()).toEqual(["ok", "snapshot"])
      expect(result.ok).toBe(true)
      expectSnapshotShape(result.snapshot, shell.id)
      expect(result.snapshot).toMatchObject({ tables: 1, rows: 2 })

      const schema = yield* schemaOf(owner.client, dock.id, "notes")
      expect(schema.columns).toEqual([
        column({ name: "Title", slug: "title", type: "text", position: 0 }),
        column({ name: "Rank", slug: "rank", type: "integer", position: 1 })
      ])
      expect((yield* rowOf(owner.client, dock.id, "notes", one.id)).data).toEqual({ title: "one", rank: 1 })
      expect((yield* rowOf(owner.client, dock.id, "notes", two.id)).data).toEqual({ title: "two" })
      expect(
        yield* invalidColumns(owner.client, "insert_micro_db_row", {
          bucket: dock.id,
          table: "notes",
          data: { secret: "s3" }
        })
      )
        .toEqual(["secret"])
      expect(
        yield* error(owner.client, "query_micro_db_rows", {
          bucket: dock.id,
          table: "notes",
          filter: [{ column: "secret", op: "is_not_null" }]
        })
      ).toMatchObject({ code: "validation_error" })

      expect(
        yield* error(owner.client, "delete_micro_db_column", { bucket: dock.id, table: "notes", column: "secret" })
      ).toMatchObject({
        code: "not_found",
        status: 404
      })
      expect(yield* error(owner.client, "delete_micro_db_column", { bucket: dock.id, table: "nope", column: "title" }))
        .toMatchObject({
          code: "not_found"
        })
      // a re-added column of the same slug starts empty
      yield* call(owner.client, "add_micro_db_column", {
        bucket: dock.id,
        table: "notes",
        column_def: { name: "Secret", type: "text" }
      })
      expect((yield* rowOf(owner.client, dock.id, "notes", one.id)).data).toEqual({ title: "one", rank: 1 })
    }))

  // ---------------------------------------------------------------------------------------------------------
  // rows

  it.scoped("insert_micro_db_row stores a row of every type (defaults filled in) and get_micro_db_row reads it back", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer } = yield* cast
      const table = yield* tasksTable(owner.client, dock.id)
      const result = ok(
        yield* call(owner.client, "insert_micro_db_row", { bucket: dock.id, table: "tasks", data: FULL_TASK })
      )
      expect(Object.keys(result)).toEqual(["row"])
      const row = result.row as Row
      expectRowShape(row)
      expect(row.data).toEqual(FULL_TASK)
      expect(row.updated_at).toBe(row.created_at)

      // the fewest fields: the default is filled in, columns without a value are absent
      const small = yield* insert(owner.client, dock.id, table.id, { title: "Small" })
      expect(small.data).toEqual({ title: "Small", done: false })
      // null means no value
      const cleared = yield* insert(owner.client, dock.id, "tasks", { title: "Cleared", notes: null, done: true })
      expect(cleared.data).toEqual({ title: "Cleared", done: true })

      const read = ok(
        yield* call(viewer.client, "get_micro_db_row", { bucket: dock.id, table: "tasks", row_id: row.id })
      )
      expect(Object.keys(read)).toEqual(["row"])
      expect(read.row).toEqual(row)
      expect(yield* rowOf(owner.client, dock.id, table.id, small.id)).toEqual(small)
      expect((yield* tablesOf(owner.client, dock.id))[0]!.row_count).toBe(3)
      const all = yield* query(owner.client, { bucket: dock.id, table: "tasks" })
      expect(all.total).toBe(3)
      expect(all.rows).toEqual([row, small, cleared])

      // not_found: an unknown row, a row of another table, an unknown table or Dock
      const other = yield* createTable(owner.client, {
        bucket: dock.id,
        name: "Other",
        columns: [{ name: "Title", type: "text" }]
      })
      const elsewhere = yield* insert(owner.client, dock.id, other.id, { title: "elsewhere" })
      expect(
        yield* error(owner.client, "get_micro_db_row", { bucket: dock.id, table: "tasks", row_id: crypto.randomUUID() })
      )
        .toMatchObject({ code: "not_found", status: 404 })
      expect(yield* error(owner.client, "get_micro_db_row", { bucket: dock.id, table: "tasks", row_id: elsewhere.id }))
        .toMatchObject({
          code: "not_found"
        })
      expect(yield* error(owner.client, "get_micro_db_row", { bucket: dock.id, table: "nope", row_id: row.id }))
        .toMatchObject({
          code: "not_found"
        })
      expect(
        yield* error(owner.client, "get_micro_db_row", { bucket: crypto.randomUUID(), table: "tasks", row_id: row.id })
      )
        .toMatchObject({ code: "not_found" })
      // row_id is a UUID
      expect(yield* error(owner.client, "get_micro_db_row", { bucket: dock.id, table: "tasks", row_id: "not-a-uuid" }))
        .toMatchObject({
          code: "validation_error",
          status: 400
        })
      expect(
        yield* error(owner.client, "insert_micro_db_row", { bucket: dock.id, table: "nope", data: { title: "x" } })
      ).toMatchObject({
        code: "not_found",
        status: 404
      })
    }))

  it.scoped("insert_micro_db_row: validation_error names every offending column in details.errors; nothing is stored", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* tasksTable(owner.client, dock.id)
      yield* insert(owner.client, dock.id, "tasks", { title: "Existing", points: 7, "ref-code": "R-1" })
      const refusedWith = (data: Record<string, unknown>) =>
        invalidColumns(owner.client, "insert_micro_db_row", { bucket: dock.id, table: "tasks", data })
      const t = { title: "T" }

      // unknown keys
      expect(yield* refusedWith({ ...t, bogus: 1 })).toEqual(["bogus"])
      expect(yield* refusedWith({ ...t, id: crypto.randomUUID() })).toEqual(["id"])
      // a required column missing, or set to null
      expect(yield* refusedWith({ notes: "no title" })).toEqual(["title"])
      expect(yield* refusedWith({ title: null })).toEqual(["title"])
      // wrong types: nothing is coerced
      const wrong: ReadonlyArray<readonly [string, unknown]> = [
        ["title", 5],
        ["title", "x".repeat(10_001)],
        ["done", 1],
        ["done", "true"],
        ["points", "5"],
        ["points", 1.5],
        ["points", 9_007_199_254_740_992],
        ["price", "12.5"],
        ["price", true],
        ["due_date", "2026-02-30"],
        ["due_date", "21/11/2026"],
        ["due_date", "2026-11-21T10:00:00Z"],
        ["starts_at", "tomorrow"],
        ["starts_at", "2026-11-21"],
        ["starts_at", "2026-11-31T10:00:00Z"],
        ["site", "ftp://example.com/file"],
        ["site", "example.com"],
        ["site", "/relative/path"],
        ["contact", "not-an-email"],
        ["contact", "a b@example.com"],
        ["contact", "ada@example"],
        ["tags", "home"],
        ["tags", ["home", "home"]],
        ["tags", ["garden"]],
        ["notes", { text: "x" }],
        ["ref-code", ["T"]]
      ]
      for (const [slug, value] of wrong) {
        expect(yield* refusedWith({ ...t, [slug]: value }), `${slug}: ${JSON.stringify(value).slice(0, 40)}`).toEqual([
          slug
        ])
      }
      // select: exactly one of the options
      expect(yield* refusedWith({ ...t, priority: "urgent" })).toEqual(["priority"])
      expect(yield* refusedWith({ ...t, priority: "HIGH" })).toEqual(["priority"])
      // unique values already used by another row
      expect(yield* refusedWith({ ...t, points: 7 })).toEqual(["points"])
      expect(yield* refusedWith({ ...t, "ref-code": "R-1" })).toEqual(["ref-code"])
      // one entry per field
      const errors = yield* invalid(owner.client, "insert_micro_db_row", {
        bucket: dock.id,
        table: "tasks",
        data: { bogus: 1, points: "x", priority: "urgent" }
      })
      expect([...new Set(errors.map((entry) => entry.column))].sort()).toEqual(["bogus", "points", "priority", "title"])
      // not an object
      for (const data of [[{ title: "T" }], "title", null]) {
        expect(yield* error(owner.client, "insert_micro_db_row", { bucket: dock.id, table: "tasks", data }))
          .toMatchObject({
            code: "validation_error"
          })
      }
      expect(yield* error(owner.client, "insert_micro_db_row", { bucket: dock.id, table: "tasks" })).toMatchObject({
        code: "validation_error"
      })

      const stored = yield* query(owner.client, { bucket: dock.id, table: "tasks" })
      expect(stored.total).toBe(1)
      expect(stored.rows.map((row) => row.data)).toEqual([{
        title: "Existing",
        points: 7,
        "ref-code": "R-1",
        done: false
      }])
      // values that are fine next to the existing row: unique counts only values that are there
      expect(
        (yield* insert(owner.client, dock.id, "tasks", {
          title: "T",
          points: 8,
          priority: "low",
          tags: ["urgent", "home"]
        })).data
      )
        .toEqual({ title: "T", points: 8, priority: "low", tags: ["home", "urgent"], done: false })
    }))

  it.scoped("insert_micro_db_rows stores every row in order; refusals carry row and column in details.errors", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* createTable(owner.client, {
        bucket: dock.id,
        name: "Stock",
        columns: [
          { name: "Sku", type: "text", required: true, unique: true },
          { name: "Count", type: "integer", default: 0 },
          { name: "Kind", type: "select", options: ["tool", "part"] }
        ]
      })
      const result = ok(
        yield* call(owner.client, "insert_micro_db_rows", {
          bucket: dock.id,
          table: "stock",
          rows: [{ sku: "A-1", count: 3, kind: "tool" }, { sku: "A-2" }, { sku: "A-3", kind: "part" }]
        })
      )
      expect(Object.keys(result)).toEqual(["rows"])
      const rows = result.rows as Array<Row>
      expect(rows).toHaveLength(3)
      for (const row of rows) expectRowShape(row)
      expect(rows.map((row) => row.data)).toEqual([
        { sku: "A-1", count: 3, kind: "tool" },
        { sku: "A-2", count: 0 },
        { sku: "A-3", kind: "part", count: 0 }
      ])
      expect(new Set(rows.map((row) => row.id)).size).toBe(3)
      for (const row of rows) expect(yield* rowOf(owner.client, dock.id, "stock", row.id)).toEqual(row)
      expect((yield* tablesOf(owner.client, dock.id))[0]!.row_count).toBe(3)

      const batch = (rows: unknown) => ({ bucket: dock.id, table: "stock", rows })
      const errors = yield* invalid(
        owner.client,
        "insert_micro_db_rows",
        batch([
          { sku: "B-1" },
          { sku: "B-2", kind: "gadget" },
          { count: 1 },
          { sku: "A-1" }
        ])
      )
      const where = errors.map((entry) => [entry.row, entry.column])
      expect(where).toEqual(expect.arrayContaining([[1, "kind"], [2, "sku"], [3, "sku"]]))
      expect(where.some(([row]) => row === 0)).toBe(false)
      // the same unique value twice in one batch
      const twice = yield* invalid(owner.client, "insert_micro_db_rows", batch([{ sku: "C-1" }, { sku: "C-1" }]))
      expect(twice.map((entry) => entry.column)).toContain("sku")
      expect(twice.some((entry) => entry.row === 1)).toBe(true)
      // bounds and shapes
      for (const rows of [[], "rows", [{ sku: "D-1" }, 5]]) {
        expect(yield* error(owner.client, "insert_micro_db_rows", batch(rows)), JSON.stringify(rows)).toMatchObject({
          code: "validation_error"
        })
      }
      expect(
        yield* error(owner.client, "insert_micro_db_rows", { bucket: dock.id, table: "nope", rows: [{ sku: "E-1" }] })
      )
        .toMatchObject({ code: "not_found", status: 404 })
      expect((yield* query(owner.client, { bucket: dock.id, table: "stock" })).total).toBe(3)
    }))

  it.scoped("update_micro_db_row merges keys into the row (null clears one), checks the whole row, and moves updated_at", () =>
    Effect.gen(function*() {
      const { dock, owner, editor } = yield* cast
      yield* tasksTable(owner.client, dock.id)
      const row = yield* insert(owner.client, dock.id, "tasks", {
        title: "Paint",
        points: 3,
        notes: "white",
        priority: "low"
      })
      const other = yield* insert(owner.client, dock.id, "tasks", { title: "Sand", points: 4 })

      const result = ok(
        yield* call(editor.client, "update_micro_db_row", {
          bucket: dock.id,
          table: "tasks",
          row_id: row.id,
          data: { notes: null, priority: "high", tags: ["work"] }
        })
      )
      expect(Object.keys(result)).toEqual(["row"])
      const updated = result.row as Row
      expectRowShape(updated)
      expect(updated).toMatchObject({ id: row.id, created_at: row.created_at })
      expect(updated.data).toEqual({ title: "Paint", points: 3, priority: "high", tags: ["work"], done: false })
      expect(Date.parse(updated.updated_at)).toBeGreaterThanOrEqual(Date.parse(row.updated_at))
      expect(yield* rowOf(owner.client, dock.id, "tasks", row.id)).toEqual(updated)
      // keeping one's own unique value is no conflict
      expect(
        (yield* Effect.map(
          call(owner.client, "update_micro_db_row", {
            bucket: dock.id,
            table: "tasks",
            row_id: row.id,
            data: { points: 3, title: "Paint!" }
          }),
          (answer) => ok(answer).row as Row
        )).data
      ).toMatchObject({ points: 3, title: "Paint!" })

      const refusedWith = (data: Record<string, unknown>) =>
        invalidColumns(owner.client, "update_micro_db_row", { bucket: dock.id, table: "tasks", row_id: row.id, data })
      expect(yield* refusedWith({ title: null })).toEqual(["title"])
      expect(yield* refusedWith({ points: 4 })).toEqual(["points"])
      expect(yield* refusedWith({ priority: "urgent" })).toEqual(["priority"])
      expect(yield* refusedWith({ done: "no" })).toEqual(["done"])
      expect(yield* refusedWith({ bogus: true })).toEqual(["bogus"])
      expect(yield* refusedWith({ created_at: "2020-01-01T00:00:00Z" })).toEqual(["created_at"])
      expect((yield* rowOf(owner.client, dock.id, "tasks", row.id)).data).toEqual({
        title: "Paint!",
        points: 3,
        priority: "high",
        tags: ["work"],
        done: false
      })
      expect((yield* rowOf(owner.client, dock.id, "tasks", other.id)).data).toEqual({
        title: "Sand",
        points: 4,
        done: false
      })

      expect(
        yield* error(owner.client, "update_micro_db_row", {
          bucket: dock.id,
          table: "tasks",
          row_id: crypto.randomUUID(),
          data: { title: "x" }
        })
      ).toMatchObject({ code: "not_found", status: 404 })
      expect(
        yield* error(owner.client, "update_micro_db_row", {
          bucket: dock.id,
          table: "nope",
          row_id: row.id,
          data: { title: "x" }
        })
      )
        .toMatchObject({ code: "not_found" })
      expect(
        yield* error(owner.client, "update_micro_db_row", { bucket: dock.id, table: "tasks", row_id: "nope", data: {} })
      ).toMatchObject({
        code: "validation_error"
      })
      expect(yield* error(owner.client, "delete_micro_db_row", { bucket: dock.id, table: "tasks", row_id: "nope" }))
        .toMatchObject({
          code: "validation_error"
        })
    }))

  it.scoped("delete_micro_db_row answers { ok: true }; the row is gone and the count drops", () =>
    Effect.gen(function*() {
      const { dock, owner } = yield* cast
      yield* createTable(owner.client, { bucket: dock.id, name: "Log", columns: [{ name: "Line", type: "text" }] })
      const one = yield* insert(owner.client, dock.id, "log", { line: "one" })
      const two = yield* insert(owner.client, dock.id, "log", { line: "two" })

      expect(ok(yield* call(owner.client, "delete_micro_db_row", { bucket: dock.id, table: "log", row_id: one.id })))
        .toEqual({ ok: true })
      expect(yield* error(owner.client, "get_micro_db_row", { bucket: dock.id, table: "log", row_id: one.id }))
        .toMatchObject({
          code: "not_found"
        })
      const left = yield* query(owner.client, { bucket: dock.id, table: "log" })
      expect(left).toEqual({ rows: [two], total: 1 })
      expect((yield* tablesOf(owner.client, dock.id))[0]!.row_count).toBe(1)

      expect(yield* error(owner.client, "delete_micro_db_row", { bucket: dock.id, table: "log", row_id: one.id }))
        .toMatchObject({
          code: "not_found",
          status: 404
        })
      expect(yield* error(owner.client, "delete_micro_db_row", { bucket: dock.id, table: "nope", row_id: two.id }))
        .toMatchObject({
          code: "not_found"
        })
      expect(
        yield* error(owner.client, "update_micro_db_row", {
          bucket: dock.id,
          table: "log",
          row_id: one.id,
          data: { line: "x" }
        })
      )
        .toMatchObject({ code: "not_found" })
      expect((yield* query(owner.client, { bucket: dock.id, table: "log" })).total).toBe(1)
    }))

  // ---------------------------------------------------------------------------------------------------------
  // snapshot_micro_db

  it.scoped("snapshot_micro_db answers { snapshot } with the shell's new version and what it holds", () =>
    Effect.gen(function*() {
      const { dock, owner, editor } = yield* cast
      yield* createTable(owner.client, { bucket: dock.id, name: "A", columns: [{ name: "N", type: "integer" }] })
      yield* createTable(owner.client, { bucket: dock.id, name: "B", columns: [{ name: "N", type: "integer" }] })
      yield* call(owner.client, "insert_micro_db_rows", {
        bucket: dock.id,
        table: "a",
        rows: [{ n: 1 }, { n: 2 }, { n: 3 }]
      })
      yield* insert(owner.client, dock.id, "b", { n: 4 })
      const shell = (yield* shellsIn(owner.client, dock.id))[0]

      const result = ok(yield* call(owner.client, "snapshot_micro_db", { bucket: dock.id }))
      expect(Object.keys(result)).toEqual(["snapshot"])
      expectSnapshotShape(result.snapshot, shell.id)
      expect(result.snapshot).toMatchObject({ version: 2, tables: 2, rows: 4 })
      const next = ok(yield* call(editor.client, "snapshot_micro_db", { bucket: pathOf(owner.user, dock) })).snapshot
      expect(next).toMatchObject({ part_id: shell.id, version: 3, tables: 2, rows: 4 })

      // the version reads back as the snapshot document
      const version = ok(
        yield* call(owner.client, "get_web_page_version", { bucket: dock.id, web_page: shell.id, version: 2 })
      )
      const document = JSON.parse(version.content)
      expect(document).toMatchObject({ format: "dock.micro_db.snapshot/1", bucket_id: dock.id })
      expect(document.tables.map((table: any) => [table.slug, table.rows.length])).toEqual([["a", 3], ["b", 1]])

      expect(yield* error(owner.client, "snapshot_micro_db", { bucket: crypto.randomUUID() })).toMatchObject({
        code: "not_found",
        status: 404
      })
      expect(yield* error(owner.client, "snapshot_micro_db", {})).toMatchObject({ code: "validation_error" })
    }))

  // ---------------------------------------------------------------------------------------------------------
  // who may do what

  it.scoped("members read; viewers and read-only tokens get permission_denied on every write, outsiders not_found; nothing changes", () =>
    Effect.gen(function*() {
      const { dock, owner, viewer, editor, outsider } = yield* cast
      const table = yield* tasksTable(owner.client, dock.id)
      const row = yield* insert(owner.client, dock.id, "tasks", { title: "Paint", points: 1 })
      const readOnly = yield* connect(yield* tokenFor(owner.user, { scopes: ["mcp:read"] }), MODERN)
      const b = dock.id

      const reads: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
        ["list_micro_db_tables", { bucket: b }],
        ["get_micro_db_schema", { bucket: b, table: "tasks" }],
        ["query_micro_db_rows", { bucket: b, table: "tasks" }],
        ["get_micro_db_row", { bucket: b, table: "tasks", row_id: row.id }]
      ]
      for (const [tool, args] of reads) {
        const asOwner = ok(yield* call(owner.client, tool, args))
        expect(ok(yield* call(viewer.client, tool, args)), tool).toEqual(asOwner)
        expect(ok(yield* call(editor.client, tool, args)), tool).toEqual(asOwner)
        expect(ok(yield* call(readOnly, tool, args)), tool).toEqual(asOwner)
        expect(yield* error(outsider.client, tool, args), tool).toMatchObject({ code: "not_found", status: 404 })
        expect(yield* error(owner.client, tool, { ...args, bucket: crypto.randomUUID() }), tool).toMatchObject({
          code: "not_found"
        })
      }

      const writes: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
        ["push_micro_db", { bucket: b, title: "Taken over" }],
        ["create_micro_db_table", { bucket: b, name: "Intruder", columns: [{ name: "Note", type: "text" }] }],
        ["update_micro_db_table", { bucket: b, table: "tasks", name: "Renamed" }],
        ["delete_micro_db_table", { bucket: b, table: "tasks" }],
        ["add_micro_db_column", { bucket: b, table: "tasks", column_def: { name: "Extra", type: "text" } }],
        ["update_micro_db_column", { bucket: b, table: "tasks", column: "notes", patch: { name: "Renamed" } }],
        ["delete_micro_db_column", { bucket: b, table: "tasks", column: "notes" }],
        ["insert_micro_db_row", { bucket: b, table: "tasks", data: { title: "Intruder" } }],
        ["insert_micro_db_rows", { bucket: b, table: "tasks", rows: [{ title: "Intruder" }] }],
        ["update_micro_db_row", { bucket: b, table: "tasks", row_id: row.id, data: { title: "Changed" } }],
        ["delete_micro_db_row", { bucket: b, table: "tasks", row_id: row.id }],
        ["snapshot_micro_db", { bucket: b }]
      ]
      const shell = (yield* shellsIn(owner.client, b))[0]
      for (const [tool, args] of writes) {
        expect(yield* error(viewer.client, tool, args), tool).toMatchObject({ code: "permission_denied", status: 403 })
        expect(yield* error(readOnly, tool, args), tool).toMatchObject({ code: "permission_denied", status: 403 })
        expect(yield* error(outsider.client, tool, args), tool).toMatchObject({ code: "not_found", status: 404 })
      }
      // nothing changed
      expect(yield* tablesOf(owner.client, b)).toEqual(
        [table].map((entry) => ({ ...entry, row_count: 1, updated_at: expect.any(String) }))
      )
      expect(yield* rowOf(owner.client, b, "tasks", row.id)).toEqual(row)
      expect(yield* shellsIn(owner.client, b)).toEqual([shell])

      // the editor may do every write
      for (const [tool, args] of writes) {
        if (tool === "delete_micro_db_table" || tool === "delete_micro_db_row") continue
        ok(yield* call(editor.client, tool, args))
      }
      ok(yield* call(editor.client, "delete_micro_db_row", { bucket: b, table: "tasks", row_id: row.id }))
      ok(yield* call(editor.client, "delete_micro_db_table", { bucket: b, table: "tasks" }))
      expect((yield* tablesOf(owner.client, b)).map((entry) => entry.name)).toEqual(["Intruder"])
    }))

  // ---------------------------------------------------------------------------------------------------------
  // every era: a smoke subset

  for (const era of ERAS) {
    it.scoped(`${era}: create a table, insert, query, read, update and delete a row, snapshot`, () =>
      Effect.gen(function*() {
        const owner = yield* actor(era)
        const dock = yield* createBucket(owner.client, { title: "Smoke", slug: `smoke-${unique()}` })
        const table = yield* createTable(owner.client, {
          bucket: dock.id,
          name: "Birds",
          columns: [{ name: "Name", type: "text", required: true }, { name: "Seen", type: "integer" }]
        })
        expect(table.columns.map((entry) => entry.slug)).toEqual(["name", "seen"])
        const robin = yield* insert(owner.client, dock.id, "birds", { name: "Robin", seen: 9 })
        yield* insert(owner.client, dock.id, "birds", { name: "Wren", seen: 10 })
        const found = yield* query(owner.client, {
          bucket: dock.id,
          table: "birds",
          filter: [{ column: "seen", op: "lt", value: 10 }],
          sort: [{ column: "name", direction: "desc" }]
        })
        expect(found).toEqual({ rows: [robin], total: 1 })
        const updated = ok(
          yield* call(owner.client, "update_micro_db_row", {
            bucket: dock.id,
            table: "birds",
            row_id: robin.id,
            data: { seen: 11 }
          })
        ).row
        expect(updated.data).toEqual({ name: "Robin", seen: 11 })
        expect(yield* rowOf(owner.client, dock.id, "birds", robin.id)).toEqual(updated)
        expect(
          yield* invalidColumns(owner.client, "insert_micro_db_row", {
            bucket: dock.id,
            table: "birds",
            data: { seen: 1 }
          })
        )
          .toEqual(["name"])
        expect(
          ok(yield* call(owner.client, "delete_micro_db_row", { bucket: dock.id, table: "birds", row_id: robin.id }))
        ).toEqual({
          ok: true
        })
        expect(ok(yield* call(owner.client, "snapshot_micro_db", { bucket: dock.id })).snapshot).toMatchObject({
          tables: 1,
          rows: 1
        })
      }))
  }
})
