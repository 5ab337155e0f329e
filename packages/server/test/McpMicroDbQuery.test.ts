/**
 * query_micro_db_rows (spec §4.3 "Micro DBs", docs/micro-db.md "Queries") over the wire: every filter op on every
 * column type the contract gives it, and validation_error for an op a type lacks or a value that is not a value of
 * the column's type; comparisons that only pass when they are typed (9 < 10 < 100 as numbers, datetimes with
 * different offsets in time order, text by code point, booleans false before true); sorts on one and several keys
 * with rows without a value last; `limit`, `offset` and `total`; the `id`, `created_at` and `updated_at` columns.
 * Then SQL metacharacters — quotes, `'; drop table micro_db_rows; --`, `%`, `_`, backslashes, `$1`, `")`, unicode —
 * in table and column names and slugs, values, filter values, filter and sort columns, table and Dock references:
 * each is data or a refusal, and afterwards every row is still there, unchanged.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { unique } from "./support/Http.ts"
import { type AnyClient, type Era } from "./support/McpClients.ts"
import { actor, call, createBucket, ok, toolError as error } from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"

interface Row {
  readonly id: string
  readonly data: Record<string, any>
  readonly created_at: string
  readonly updated_at: string
}
interface Table {
  readonly id: string
  readonly name: string
  readonly slug: string
  readonly columns: Array<{ readonly name: string; readonly slug: string; readonly type: string }>
  readonly row_count: number
}

const OPS = [
  "eq",
  "neq",
  "gt",
  "gte",
  "lt",
  "lte",
  "contains",
  "starts_with",
  "in",
  "not_in",
  "is_null",
  "is_not_null"
] as const
type Op = (typeof OPS)[number]

/** No `value` key at all in the filter. */
const NONE = Symbol("no value")
type Value = unknown

const filterOf = (column: string, op: string, value: Value) => value === NONE ? { column, op } : { column, op, value }

/** An owner and a fresh Dock. */
const owned = Effect.gen(function*() {
  const owner = yield* actor(MODERN)
  const dock = yield* createBucket(owner.client, { title: "Queries", slug: `queries-${unique()}` })
  return { owner, client: owner.client, bucket: dock.id }
})

const createTable = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(call(client, "create_micro_db_table", args), (result) => ok(result).table as Table)

const insert = (client: AnyClient, bucket: string, table: string, data: Record<string, unknown>) =>
  Effect.map(call(client, "insert_micro_db_row", { bucket, table, data }), (result) => ok(result).row as Row)

const query = (client: AnyClient, args: Record<string, unknown>) =>
  Effect.map(call(client, "query_micro_db_rows", args), (result) => {
    const body = ok(result)
    // `total` is left out of a full page of filtered rows
    expect(Object.keys(body).sort()).toEqual("total" in body ? ["rows", "total"] : ["rows"])
    return body as { rows: Array<Row>; total?: number }
  })

/** The `k` of each row, in order. */
const keysOf = (rows: ReadonlyArray<Row>) => rows.map((row) => row.data.k as string)

/** Keys written as one string ("a c d"; "" for none). */
const keys = (expected: string) => expected === "" ? [] : expected.split(" ")

const refusedAsInvalid = (client: AnyClient, args: Record<string, unknown>, label: string) =>
  Effect.map(error(client, "query_micro_db_rows", args), (body) => {
    expect(body, `${label}: ${JSON.stringify(body)}`).toMatchObject({ code: "validation_error", status: 400 })
  })

/** How many rows all Micro DBs hold (the table is still there and nothing was lost). */
const allRows = Effect.flatMap(
  TestServer,
  (server) =>
    server.sql<{ n: number }>`select count(*)::int as n from micro_db_rows`.pipe(Effect.map((rows) => rows[0]!.n))
)

/**
 * One column type: rows keyed `a`, `b`, … (inserted one by one in that order, NONE = no value), the filters that
 * match (op, value, the keys they match), the filters refused with validation_error, the stored value where it
 * differs from the one written, and the key order of an ascending and a descending sort.
 */
interface TypeCase {
  readonly type: string
  readonly def?: Record<string, unknown>
  readonly rows: ReadonlyArray<readonly [string, Value]>
  readonly matches: ReadonlyArray<readonly [Op, Value, string]>
  readonly refused: ReadonlyArray<readonly [string, Value]>
  readonly stored?: Record<string, unknown>
  readonly asc?: string
  readonly desc?: string
}

const MAX_SAFE = 9_007_199_254_740_991

const TYPE_CASES: ReadonlyArray<TypeCase> = [
  {
    type: "text",
    rows: [["a", "apple"], ["b", "Banana"], ["c", "cherry"], ["d", "apple pie"], ["e", NONE], ["f", "Äpfel"], [
      "g",
      "\uFF5E"
    ], [
      "h",
      "😀"
    ]],
    matches: [
      ["eq", "apple", "a"],
      ["eq", "Apple", ""],
      ["neq", "apple", "b c d e f g h"],
      // by code point: "B" < "a" < "apple pie" < "cherry" < "Ä" < U+FF5E < U+1F600 (UTF-16 order would put the emoji first)
      ["gt", "apple", "c d f g h"],
      ["gte", "apple", "a c d f g h"],
      ["lt", "apple", "b"],
      ["lte", "apple pie", "a b d"],
      ["gt", "\uFF5E", "h"],
      ["lt", "😀", "a b c d f g"],
      ["contains", "APP", "a d"],
      ["contains", "pie", "d"],
      ["contains", "Äpf", "f"],
      ["contains", "äPF", "f"],
      ["starts_with", "AP", "a d"],
      ["starts_with", "ban", "b"],
      ["starts_with", "pie", ""],
      ["in", ["apple", "cherry", "nope"], "a c"],
      ["not_in", ["apple", "cherry"], "b d e f g h"],
      ["is_null", NONE, "e"],
      ["is_null", null, "e"],
      ["is_not_null", NONE, "a b c d f g h"],
      ["is_not_null", null, "a b c d f g h"]
    ],
    refused: [
      ["eq", 5],
      ["eq", true],
      ["eq", null],
      ["eq", NONE],
      ["eq", "x".repeat(10_001)],
      ["gt", 5],
      ["contains", 5],
      ["starts_with", ["a"]],
      ["in", []],
      ["in", "apple"],
      ["in", ["apple", 1]],
      ["not_in", [5]],
      ["is_null", "x"],
      ["is_not_null", "x"]
    ],
    asc: "b a d c f g h e",
    desc: "h g f c d a b e"
  },
  {
    type: "long_text",
    rows: [["a", "Line one\nline two"], ["b", "zeta"], ["c", "Alpha"], ["d", NONE]],
    matches: [
      ["eq", "zeta", "b"],
      ["neq", "zeta", "a c d"],
      ["gt", "Line", "a b"],
      ["gte", "zeta", "b"],
      ["lt", "Line one", "c"],
      ["lte", "Alpha", "c"],
      ["contains", "LINE TWO", "a"],
      ["contains", "\n", "a"],
      ["starts_with", "al", "c"],
      ["in", ["zeta", "Alpha"], "b c"],
      ["not_in", ["zeta"], "a c d"],
      ["is_null", NONE, "d"],
      ["is_not_null", NONE, "a b c"]
    ],
    refused: [["contains", 1], ["eq", ["zeta"]], ["in", [null]], ["gt", {}]],
    asc: "c a b d",
    desc: "b a c d"
  },
  {
    type: "number",
    rows: [["a", 9], ["b", 10], ["c", 100], ["d", -2.5], ["e", NONE], ["f", 0], ["g", 10.5]],
    matches: [
      ["eq", 10, "b"],
      ["eq", -2.5, "d"],
      ["neq", 10, "a c d e f g"],
      // numerically: as text "9" > "10" > "100"
      ["gt", 9, "b c g"],
      ["gte", 10, "b c g"],
      ["lt", 10, "a d f"],
      ["lte", 9, "a d f"],
      ["lt", 0, "d"],
      ["gt", -3, "a b c d f g"],
      ["in", [9, 100], "a c"],
      ["not_in", [9, 100], "b d e f g"],
      ["is_null", NONE, "e"],
      ["is_not_null", NONE, "a b c d f g"]
    ],
    refused: [
      ["contains", 9],
      ["starts_with", "9"],
      ["eq", "10"],
      ["gt", "9"],
      ["lte", null],
      ["in", ["9"]],
      ["in", []],
      ["eq", true],
      ["not_in", 9]
    ],
    asc: "d f a b g c e",
    desc: "c g b a f d e"
  },
  {
    type: "integer",
    rows: [["a", 9], ["b", 10], ["c", 100], ["d", -3], ["e", NONE], ["f", MAX_SAFE]],
    matches: [
      ["eq", 10, "b"],
      ["neq", 100, "a b d e f"],
      ["gt", 10, "c f"],
      ["gte", 100, "c f"],
      ["lt", 10, "a d"],
      ["lte", 9, "a d"],
      ["gt", MAX_SAFE - 1, "f"],
      ["in", [9, MAX_SAFE], "a f"],
      ["not_in", [9], "b c d e f"],
      ["is_null", NONE, "e"],
      ["is_not_null", NONE, "a b c d f"]
    ],
    refused: [
      ["eq", 1.5],
      ["gt", "10"],
      ["contains", 1],
      ["starts_with", "1"],
      ["in", [1.5]],
      ["eq", MAX_SAFE + 1],
      ["lt", -(MAX_SAFE + 1)]
    ],
    asc: "d a b c f e",
    desc: "f c b a d e"
  },
  {
    type: "boolean",
    rows: [["a", true], ["b", false], ["c", NONE], ["d", true]],
    matches: [
      ["eq", true, "a d"],
      ["eq", false, "b"],
      ["neq", true, "b c"],
      ["neq", false, "a c d"],
      ["in", [false], "b"],
      ["in", [true, false], "a b d"],
      ["not_in", [true], "b c"],
      ["is_null", NONE, "c"],
      ["is_not_null", NONE, "a b d"]
    ],
    refused: [
      ["gt", true],
      ["gte", false],
      ["lt", true],
      ["lte", true],
      ["contains", true],
      ["starts_with", "t"],
      ["eq", 1],
      ["eq", "true"],
      ["in", [1]],
      ["eq", null]
    ],
    // false before true, rows without a value last
    asc: "b a d c",
    desc: "a d b c"
  },
  {
    type: "date",
    rows: [["a", "2026-01-09"], ["b", "2026-01-10"], ["c", "2025-12-31"], ["d", "2026-10-01"], ["e", NONE], [
      "f",
      "0001-01-01"
    ], [
      "g",
      "9999-12-31"
    ]],
    matches: [
      ["eq", "2026-01-10", "b"],
      ["neq", "2026-01-10", "a c d e f g"],
      ["gt", "2026-01-09", "b d g"],
      ["gte", "2026-01-09", "a b d g"],
      ["lt", "2026-01-01", "c f"],
      ["lte", "2026-01-09", "a c f"],
      ["in", ["2026-01-09", "2025-12-31"], "a c"],
      ["not_in", ["2026-01-09"], "b c d e f g"],
      ["is_null", NONE, "e"],
      ["is_not_null", NONE, "a b c d f g"]
    ],
    refused: [
      ["eq", "2026-02-30"],
      ["eq", "2026-1-9"],
      ["eq", "2026-01-09T00:00:00Z"],
      ["eq", "0000-12-31"],
      ["gt", 20260101],
      ["contains", "2026"],
      ["starts_with", "2026"],
      ["in", ["2026-13-01"]]
    ],
    asc: "f c a b d g e",
    desc: "g d b a c f e"
  },
  {
    type: "datetime",
    // in UTC: a 07:30, b 08:00, c 08:00, d 09:00, f 09:30 — f's text sorts first, in time it is last
    rows: [
      ["a", "2026-11-21T09:30:00+02:00"],
      ["b", "2026-11-21T08:00:00Z"],
      ["c", "2026-11-21T03:00:00-05:00"],
      ["d", "2026-11-21T09:00:00"],
      ["e", NONE],
      ["f", "2026-11-20T23:30:00-10:00"]
    ],
    stored: {
      a: "2026-11-21T07:30:00.000Z",
      b: "2026-11-21T08:00:00.000Z",
      c: "2026-11-21T08:00:00.000Z",
      d: "2026-11-21T09:00:00.000Z",
      f: "2026-11-21T09:30:00.000Z"
    },
    matches: [
      ["eq", "2026-11-21T09:00:00+01:00", "b c"],
      ["neq", "2026-11-21T08:00:00Z", "a d e f"],
      ["gt", "2026-11-21T08:00:00Z", "d f"],
      ["gte", "2026-11-21T10:00:00+02:00", "b c d f"],
      ["lt", "2026-11-21T08:00:00.000Z", "a"],
      ["lte", "2026-11-21T09:00:00Z", "a b c d"],
      ["gt", "2026-11-21T00:00:00+14:00", "a b c d f"],
      ["lt", "2026-11-21T09:15:00", "a b c d"],
      ["in", ["2026-11-21T07:30:00Z", "2026-11-21T09:30:00.000Z"], "a f"],
      ["not_in", ["2026-11-21T08:00:00Z"], "a d e f"],
      ["is_null", NONE, "e"],
      ["is_not_null", NONE, "a b c d f"]
    ],
    refused: [
      ["eq", "2026-11-21"],
      ["eq", "yesterday"],
      ["eq", "2026-11-31T00:00:00Z"],
      ["contains", "2026"],
      ["starts_with", "2026"],
      ["gt", 1_700_000_000],
      ["in", ["nope"]]
    ],
    // b and c are the same instant: insertion order in either direction
    asc: "a b c d f e",
    desc: "f d b c a e"
  },
  {
    type: "select",
    def: { options: ["low", "medium", "high"] },
    rows: [["a", "low"], ["b", "high"], ["c", "medium"], ["d", NONE], ["e", "low"]],
    matches: [
      ["eq", "low", "a e"],
      ["neq", "low", "b c d"],
      // the option text by code point: "high" < "low" < "medium"
      ["gt", "low", "c"],
      ["gte", "low", "a c e"],
      ["lt", "medium", "a b e"],
      ["lte", "high", "b"],
      ["contains", "I", "b c"],
      ["contains", "ow", "a e"],
      ["starts_with", "H", "b"],
      ["in", ["low", "high"], "a b e"],
      ["not_in", ["low"], "b c d"],
      ["is_null", NONE, "d"],
      ["is_not_null", NONE, "a b c e"]
    ],
    refused: [["eq", "urgent"], ["eq", "LOW"], ["gt", "m"], ["in", ["low", "urgent"]], ["contains", 1], ["eq", [
      "low"
    ]]],
    asc: "b a e c d",
    desc: "c a e b d"
  },
  {
    type: "multi_select",
    def: { options: ["red", "green", "blue"] },
    rows: [["a", ["red"]], ["b", ["blue", "red"]], ["c", ["green"]], ["d", NONE], ["e", ["green", "blue", "red"]]],
    stored: { a: ["red"], b: ["red", "blue"], c: ["green"], e: ["red", "green", "blue"] },
    matches: [
      // equal, not contained: ["red"] is not ["red", "blue"]
      ["eq", ["red"], "a"],
      ["eq", ["red", "blue"], "b"],
      ["eq", ["blue", "red"], "b"],
      ["neq", ["red"], "b c d e"],
      ["contains", "red", "a b e"],
      ["contains", "green", "c e"],
      ["in", ["green", "blue"], "b c e"],
      ["not_in", ["green", "blue"], "a d"],
      ["is_null", NONE, "d"],
      ["is_not_null", NONE, "a b c e"]
    ],
    refused: [
      ["gt", ["red"]],
      ["gte", ["red"]],
      ["lt", ["red"]],
      ["lte", ["red"]],
      ["starts_with", "r"],
      ["contains", "purple"],
      ["contains", ["red"]],
      ["eq", "red"],
      ["eq", ["purple"]],
      ["eq", ["red", "red"]],
      ["in", ["purple"]]
    ]
  },
  {
    type: "url",
    rows: [
      ["a", "https://example.com/a"],
      ["b", "http://example.org/B"],
      ["c", "https://example.com/path?q=1"],
      ["d", NONE],
      ["e", "https://EXAMPLE.net/x_y%20z"]
    ],
    matches: [
      ["eq", "https://example.com/a", "a"],
      ["neq", "https://example.com/a", "b c d e"],
      ["gt", "https://example.com/a", "c"],
      ["gte", "https://example.com/a", "a c"],
      ["lt", "https://example.com/a", "b e"],
      ["lte", "http://example.org/B", "b"],
      ["contains", "example.COM", "a c"],
      ["contains", "%20", "e"],
      ["contains", "x_y", "e"],
      ["starts_with", "HTTP://", "b"],
      ["starts_with", "https://example.", "a c e"],
      ["in", ["http://example.org/B", "https://nowhere.test/"], "b"],
      ["not_in", ["http://example.org/B"], "a c d e"],
      ["is_null", NONE, "d"],
      ["is_not_null", NONE, "a b c e"]
    ],
    refused: [
      ["eq", "ftp://example.com/"],
      ["eq", "example.com"],
      ["gt", "not a url"],
      ["in", ["mailto:x@example.com"]],
      ["contains", 3]
    ],
    asc: "b e a c d",
    desc: "c a e b d"
  },
  {
    type: "email",
    rows: [["a", "ada@example.com"], ["b", "Bob@Example.org"], ["c", "carol@sub.example.com"], ["d", NONE]],
    matches: [
      ["eq", "Bob@Example.org", "b"],
      ["neq", "Bob@Example.org", "a c d"],
      ["gt", "bob@example.org", "c"],
      ["gte", "carol@sub.example.com", "c"],
      ["lt", "bob@example.org", "a b"],
      ["lte", "ada@example.com", "a b"],
      ["contains", "EXAMPLE.ORG", "b"],
      ["contains", "example.com", "a c"],
      ["starts_with", "BOB", "b"],
      ["in", ["ada@example.com", "carol@sub.example.com"], "a c"],
      ["not_in", ["ada@example.com"], "b c d"],
      ["is_null", NONE, "d"],
      ["is_not_null", NONE, "a b c"]
    ],
    refused: [["eq", "not-an-email"], ["eq", "a b@example.com"], ["eq", "ada@example"], ["in", ["x"]], ["contains", 1]],
    asc: "b a c d",
    desc: "c a b d"
  },
  {
    type: "json",
    rows: [
      ["a", { tags: ["x", "y"], n: 1 }],
      ["b", { tags: ["y"] }],
      ["c", [1, 2, 3]],
      ["d", "plain"],
      ["e", NONE],
      ["f", 42],
      ["g", false]
    ],
    matches: [
      // equal, not contained: b's object is contained in a's
      ["eq", { tags: ["y"] }, "b"],
      ["eq", { n: 1, tags: ["x", "y"] }, "a"],
      ["eq", 42, "f"],
      ["eq", "plain", "d"],
      ["eq", [1, 2, 3], "c"],
      ["eq", false, "g"],
      ["neq", 42, "a b c d e g"],
      ["contains", { tags: ["y"] }, "a b"],
      ["contains", { n: 1 }, "a"],
      ["contains", [2], "c"],
      ["is_null", NONE, "e"],
      ["is_not_null", NONE, "a b c d f g"]
    ],
    refused: [["gt", 1], ["gte", 1], ["lt", 1], ["lte", 1], ["starts_with", "p"], ["in", [42]], ["not_in", [42]]]
  }
]

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })("query_micro_db_rows", (it) => {
  // ---------------------------------------------------------------------------------------------------------
  // every type, every op

  for (const typeCase of TYPE_CASES) {
    it.scoped(`${typeCase.type}: every op it has matches typed values; the ops it lacks and wrong-typed values are validation_error`, () =>
      Effect.gen(function*() {
        // every op is either checked or refused for this type
        expect(new Set([...typeCase.matches.map(([op]) => op), ...typeCase.refused.map(([op]) => op)])).toEqual(
          new Set(OPS)
        )

        const { bucket, client } = yield* owned
        yield* createTable(client, {
          bucket,
          name: "Values",
          columns: [{ name: "K", type: "text", required: true, unique: true }, {
            name: "V",
            type: typeCase.type,
            ...typeCase.def
          }]
        })
        const written = new Map<string, Row>()
        for (const [k, v] of typeCase.rows) {
          written.set(k, yield* insert(client, bucket, "values", v === NONE ? { k } : { k, v }))
        }
        // stored as given, or normalized
        for (const [k, v] of typeCase.rows) {
          const expected = v === NONE ? { k } : { k, v: typeCase.stored?.[k] ?? v }
          expect(written.get(k)!.data, k).toEqual(expected)
        }

        for (const [op, value, expected] of typeCase.matches) {
          const label = `${typeCase.type} ${op} ${value === NONE ? "(no value)" : JSON.stringify(value)}`
          const found = yield* query(client, {
            bucket,
            table: "values",
            filter: [filterOf("v", op, value)],
            limit: 500
          })
          expect([...keysOf(found.rows)].sort(), label).toEqual(keys(expected))
          expect(found.total, label).toBe(keys(expected).length)
        }
        for (const [op, value] of typeCase.refused) {
          const label = `${typeCase.type} ${op} ${value === NONE ? "(no value)" : JSON.stringify(value).slice(0, 40)}`
          yield* refusedAsInvalid(client, { bucket, table: "values", filter: [filterOf("v", op, value)] }, label)
        }

        if (typeCase.asc !== undefined) {
          const asc = yield* query(client, { bucket, table: "values", sort: [{ column: "v", direction: "asc" }] })
          expect(keysOf(asc.rows), `${typeCase.type} asc`).toEqual(keys(typeCase.asc))
          const desc = yield* query(client, { bucket, table: "values", sort: [{ column: "v", direction: "desc" }] })
          expect(keysOf(desc.rows), `${typeCase.type} desc`).toEqual(keys(typeCase.desc!))
        }
        // nothing was changed by any of it
        expect((yield* query(client, { bucket, table: "values" })).rows).toEqual([...written.values()])
      }))
  }

  it.scoped("filters are combined with AND; `in` takes 1-500 values", () =>
    Effect.gen(function*() {
      const { bucket, client } = yield* owned
      yield* createTable(client, {
        bucket,
        name: "Scores",
        columns: [{ name: "K", type: "text" }, { name: "Group", type: "text" }, { name: "Score", type: "number" }]
      })
      yield* call(client, "insert_micro_db_rows", {
        bucket,
        table: "scores",
        rows: [
          { k: "a", group: "x", score: 9 },
          { k: "b", group: "x", score: 10 },
          { k: "c", group: "y", score: 100 },
          { k: "d" }
        ]
      })
      const keysWhere = (filter: Array<Record<string, unknown>>) =>
        Effect.map(query(client, { bucket, table: "scores", filter }), (found) => [...keysOf(found.rows)].sort())
      expect(yield* keysWhere([{ column: "group", op: "eq", value: "x" }, { column: "score", op: "gt", value: 9 }]))
        .toEqual(["b"])
      expect(yield* keysWhere([{ column: "score", op: "gte", value: 9 }, { column: "score", op: "lte", value: 10 }]))
        .toEqual(["a", "b"])
      expect(yield* keysWhere([{ column: "group", op: "neq", value: "x" }, { column: "score", op: "is_null" }]))
        .toEqual(["d"])
      expect(yield* keysWhere([])).toEqual(["a", "b", "c", "d"])

      const many = Array.from({ length: 499 }, (_, i) => i + 1000)
      expect(yield* keysWhere([{ column: "score", op: "in", value: [...many, 10] }])).toEqual(["b"])
      expect(yield* keysWhere([{ column: "score", op: "not_in", value: [...many, 10] }])).toEqual(["a", "c", "d"])
      for (const op of ["in", "not_in"]) {
        yield* refusedAsInvalid(client, {
          bucket,
          table: "scores",
          filter: [{ column: "score", op, value: [...many, 10, 11] }]
        }, `${op} 501`)
      }
    }))

  it.scoped("bad filters are validation_error: unknown columns and ops, missing ops, extra keys, not a list", () =>
    Effect.gen(function*() {
      const { bucket, client } = yield* owned
      yield* createTable(client, { bucket, name: "Plain", columns: [{ name: "Name", type: "text" }] })
      yield* insert(client, bucket, "plain", { name: "one" })
      const bad: ReadonlyArray<unknown> = [
        [{ column: "nope", op: "eq", value: "one" }],
        [{ column: "Name", op: "eq", value: "one" }],
        [{ column: "data", op: "is_null" }],
        [{ column: "name", op: "like", value: "one" }],
        [{ column: "name", op: "EQ", value: "one" }],
        [{ column: "name", op: "between", value: ["a", "z"] }],
        [{ column: "name", value: "one" }],
        [{ op: "eq", value: "one" }],
        [{ column: "name", op: "eq", value: "one", and: "more" }],
        ["name = 'one'"],
        { column: "name", op: "eq", value: "one" },
        "name = 'one'"
      ]
      for (const filter of bad) {
        yield* refusedAsInvalid(client, { bucket, table: "plain", filter }, JSON.stringify(filter))
      }
      expect(yield* error(client, "query_micro_db_rows", { bucket, table: "nope" })).toMatchObject({
        code: "not_found",
        status: 404
      })
      expect(yield* error(client, "query_micro_db_rows", { bucket: crypto.randomUUID(), table: "plain" }))
        .toMatchObject({
          code: "not_found"
        })
    }))

  // ---------------------------------------------------------------------------------------------------------
  // id, created_at, updated_at

  it.scoped("id, created_at and updated_at filter and sort like columns", () =>
    Effect.gen(function*() {
      const { bucket, client } = yield* owned
      yield* createTable(client, { bucket, name: "Log", columns: [{ name: "K", type: "text" }] })
      const r1 = yield* insert(client, bucket, "log", { k: "r1" })
      const r2 = yield* insert(client, bucket, "log", { k: "r2" })
      const r3 = yield* insert(client, bucket, "log", { k: "r3" })
      const r4 = yield* insert(client, bucket, "log", { k: "r4" })
      const touched = ok(
        yield* call(client, "update_micro_db_row", { bucket, table: "log", row_id: r1.id, data: { k: "r1!" } })
      ).row as Row
      const where = (column: string, op: string, value: Value) =>
        Effect.map(query(client, { bucket, table: "log", filter: [filterOf(column, op, value)] }), (found) =>
          found.rows.map((row) => row.id))

      expect(yield* where("id", "eq", r2.id)).toEqual([r2.id])
      expect(yield* where("id", "neq", r2.id)).toEqual([r1.id, r3.id, r4.id])
      expect(yield* where("id", "in", [r1.id, r3.id])).toEqual([r1.id, r3.id])
      expect(yield* where("id", "not_in", [r1.id, r3.id])).toEqual([r2.id, r4.id])
      expect(yield* where("created_at", "gte", r2.created_at)).toEqual([r2.id, r3.id, r4.id])
      expect(yield* where("created_at", "gt", r2.created_at)).toEqual([r3.id, r4.id])
      expect(yield* where("created_at", "lt", r3.created_at)).toEqual([r1.id, r2.id])
      expect(yield* where("created_at", "lte", r2.created_at)).toEqual([r1.id, r2.id])
      expect(yield* where("created_at", "eq", r3.created_at)).toEqual([r3.id])
      expect(yield* where("updated_at", "gt", r4.updated_at)).toEqual([r1.id])
      expect(yield* where("updated_at", "eq", touched.updated_at)).toEqual([r1.id])
      expect(yield* where("created_at", "is_null", NONE)).toEqual([])
      expect(yield* where("updated_at", "is_not_null", NONE)).toEqual([r1.id, r2.id, r3.id, r4.id])

      const sorted = (column: string, direction: string) =>
        Effect.map(query(client, { bucket, table: "log", sort: [{ column, direction }] }), (found) =>
          found.rows.map((row) =>
            row.id
          ))
      expect(yield* sorted("created_at", "desc")).toEqual([r4.id, r3.id, r2.id, r1.id])
      expect(yield* sorted("updated_at", "desc")).toEqual([r1.id, r4.id, r3.id, r2.id])
      expect(yield* sorted("id", "asc")).toEqual([r1.id, r2.id, r3.id, r4.id].sort())

      yield* refusedAsInvalid(client, {
        bucket,
        table: "log",
        filter: [{ column: "id", op: "eq", value: "not-a-uuid" }]
      }, "id")
      yield* refusedAsInvalid(client, {
        bucket,
        table: "log",
        filter: [{ column: "created_at", op: "gt", value: "garbage" }]
      }, "created_at")
      yield* refusedAsInvalid(
        client,
        { bucket, table: "log", filter: [{ column: "updated_at", op: "gt", value: 5 }] },
        "updated_at"
      )
    }))

  // ---------------------------------------------------------------------------------------------------------
  // sorts

  it.scoped("sorts: up to 5 keys applied in order, typed, rows without a value last in either direction, ties in insertion order", () =>
    Effect.gen(function*() {
      const { bucket, client } = yield* owned
      yield* createTable(client, {
        bucket,
        name: "Ranked",
        columns: [{ name: "K", type: "text" }, { name: "Group", type: "text" }, { name: "Score", type: "number" }]
      })
      // one by one: distinct creation times
      for (
        const data of [
          { k: "r1", group: "b", score: 10 },
          { k: "r2", group: "a", score: 9 },
          { k: "r3", group: "a", score: 100 },
          { k: "r4", group: "b" },
          { k: "r5", score: 5 },
          { k: "r6", group: "a", score: 10 },
          { k: "r7", group: "b", score: 10 }
        ]
      ) yield* insert(client, bucket, "ranked", data)
      const order = (sort: unknown, extra: Record<string, unknown> = {}) =>
        Effect.map(query(client, { bucket, table: "ranked", sort, ...extra }), (found) => keysOf(found.rows).join(" "))

      expect(yield* order(undefined)).toBe("r1 r2 r3 r4 r5 r6 r7")
      expect(yield* order([])).toBe("r1 r2 r3 r4 r5 r6 r7")
      expect(yield* order([{ column: "score", direction: "asc" }])).toBe("r5 r2 r1 r6 r7 r3 r4")
      expect(yield* order([{ column: "score", direction: "desc" }])).toBe("r3 r1 r6 r7 r2 r5 r4")
      // no direction means asc
      expect(yield* order([{ column: "score" }])).toBe("r5 r2 r1 r6 r7 r3 r4")
      expect(yield* order([{ column: "group", direction: "asc" }, { column: "score", direction: "desc" }])).toBe(
        "r3 r6 r2 r1 r7 r4 r5"
      )
      expect(yield* order([{ column: "group", direction: "desc" }, { column: "score", direction: "asc" }])).toBe(
        "r1 r7 r4 r2 r6 r3 r5"
      )
      expect(yield* order([{ column: "score", direction: "asc" }, { column: "group", direction: "desc" }])).toBe(
        "r5 r2 r1 r7 r6 r3 r4"
      )
      expect(
        yield* order([
          { column: "group", direction: "asc" },
          { column: "score", direction: "asc" },
          { column: "k", direction: "desc" },
          { column: "created_at", direction: "desc" },
          { column: "id", direction: "asc" }
        ])
      ).toBe("r2 r6 r3 r7 r1 r4 r5")
      // sorted and filtered, then paged
      expect(
        yield* order([{ column: "score", direction: "asc" }], { filter: [{ column: "group", op: "eq", value: "b" }] })
      ).toBe("r1 r7 r4")
      expect(yield* order([{ column: "score", direction: "asc" }], { limit: 2, offset: 2 })).toBe("r1 r6")
      expect(
        yield* order([{ column: "score", direction: "asc" }, { column: "group", direction: "asc" }], {
          limit: 3,
          offset: 2
        })
      )
        .toBe("r6 r1 r7")
      const paged = yield* query(client, {
        bucket,
        table: "ranked",
        sort: [{ column: "score", direction: "desc" }],
        limit: 3,
        offset: 5
      })
      expect(keysOf(paged.rows)).toEqual(["r5", "r4"])
      expect(paged.total).toBe(7)
      // Found by the fuzzer (issue 19): a sorted page whose end (offset + limit) passed 2^31 - 1 failed the
      // statement (`internal`); any safe integer is a valid offset, and past the rows the page is empty.
      for (const offset of [2 ** 31 - 1, 2 ** 31, Number.MAX_SAFE_INTEGER - 500]) {
        for (const filter of [undefined, [{ column: "group", op: "eq", value: "b" }]]) {
          const far = yield* query(client, {
            bucket,
            table: "ranked",
            sort: [{ column: "score", direction: "desc" }],
            limit: 500,
            offset,
            ...(filter === undefined ? {} : { filter })
          })
          expect(far.rows).toEqual([])
          expect(far.total).toBe(filter === undefined ? 7 : 3)
        }
      }

      const bad: ReadonlyArray<unknown> = [
        Array.from({ length: 6 }, () => ({ column: "score", direction: "asc" })),
        [{ column: "nope", direction: "asc" }],
        [{ column: "Score", direction: "asc" }],
        [{ column: "score", direction: "up" }],
        [{ column: "score", direction: "ASC" }],
        [{ column: "score", direction: "asc", nulls: "first" }],
        [{ direction: "asc" }],
        { column: "score", direction: "asc" },
        "score desc"
      ]
      for (const sort of bad) {
        yield* refusedAsInvalid(client, { bucket, table: "ranked", sort }, JSON.stringify(sort).slice(0, 60))
      }
    }))

  // ---------------------------------------------------------------------------------------------------------
  // limit, offset, total

  it.scoped("limit (1-500, default 100), offset (>= 0) and total; paging with offset is stable", () =>
    Effect.gen(function*() {
      const { bucket, client } = yield* owned
      yield* createTable(client, { bucket, name: "Many", columns: [{ name: "N", type: "integer" }] })
      // one batch: it keeps its order
      ok(
        yield* call(client, "insert_micro_db_rows", {
          bucket,
          table: "many",
          rows: Array.from({ length: 150 }, (_, n) => ({ n }))
        })
      )

      const byDefault = yield* query(client, { bucket, table: "many" })
      expect(byDefault.rows).toHaveLength(100)
      expect(byDefault.total).toBe(150)
      const all = yield* query(client, { bucket, table: "many", limit: 500 })
      expect(all.rows).toHaveLength(150)
      expect(all.total).toBe(150)
      expect(all.rows.map((row) => row.data.n)).toEqual(Array.from({ length: 150 }, (_, n) => n))
      expect(byDefault.rows).toEqual(all.rows.slice(0, 100))
      const ids = all.rows.map((row) => row.id)
      // insertion order is also oldest first; ties of a sort keep it
      expect(
        (yield* query(client, {
          bucket,
          table: "many",
          limit: 500,
          sort: [{ column: "created_at", direction: "asc" }]
        })).rows
      )
        .toEqual(all.rows)
      const times = all.rows.map((row) => Date.parse(row.created_at))
      expect(times).toEqual([...times].sort((x, y) => x - y))

      const pages: Array<string> = []
      for (let offset = 0; offset < 150; offset += 40) {
        const page = yield* query(client, { bucket, table: "many", limit: 40, offset })
        expect(page.total).toBe(150)
        pages.push(...page.rows.map((row) => row.id))
      }
      expect(pages).toEqual(ids)
      expect(yield* query(client, { bucket, table: "many", limit: 1 })).toEqual({ rows: [all.rows[0]], total: 150 })
      expect(yield* query(client, { bucket, table: "many", offset: 150 })).toEqual({ rows: [], total: 150 })
      expect(yield* query(client, { bucket, table: "many", offset: 10_000 })).toEqual({ rows: [], total: 150 })

      // with a filter, a full page leaves the total out (the matches past it are not counted); a short one, or a
      // page past the end, counts every match
      const filtered = (limit: number, offset = 0) =>
        query(client, {
          bucket,
          table: "many",
          filter: [{ column: "n", op: "gte", value: 100 }],
          sort: [{ column: "n", direction: "desc" }],
          limit,
          offset
        })
      const top = yield* filtered(10)
      expect(top.rows.map((row) => row.data.n)).toEqual([149, 148, 147, 146, 145, 144, 143, 142, 141, 140])
      expect("total" in top).toBe(false)
      expect((yield* filtered(50)).total).toBe(undefined)
      expect((yield* filtered(51)).total).toBe(50)
      expect((yield* filtered(10, 45)).total).toBe(50)
      expect(yield* filtered(10, 60)).toEqual({ rows: [], total: 50 })
      const none = yield* query(client, { bucket, table: "many", filter: [{ column: "n", op: "lt", value: 0 }] })
      expect(none).toEqual({ rows: [], total: 0 })

      for (const limit of [0, 501, 1_000, -1, 1.5, "10"]) {
        yield* refusedAsInvalid(client, { bucket, table: "many", limit }, `limit ${limit}`)
      }
      for (const offset of [-1, 1.5, "0"]) {
        yield* refusedAsInvalid(client, { bucket, table: "many", offset }, `offset ${offset}`)
      }
    }))

  // ---------------------------------------------------------------------------------------------------------
  // SQL metacharacters

  const EVIL = [
    "'; drop table micro_db_rows; --",
    "100% sure",
    "snake_case",
    "back\\slash",
    "$1",
    "\")",
    "O'Brien",
    "naïve 日本語 🚀",
    "' or '1'='1",
    "%",
    "_",
    "\\",
    "a%b_c\\d",
    "$$ dollar $$",
    "null",
    "{\"json\": true}",
    "*/ select 1; /*"
  ]

  it.scoped("metacharacters in values and filter values are data: eq, neq, contains, starts_with and in match literally", () =>
    Effect.gen(function*() {
      const { bucket, client } = yield* owned
      yield* createTable(client, {
        bucket,
        name: "Evil values",
        columns: [{ name: "K", type: "text", unique: true }, { name: "Body", type: "text" }, {
          name: "Tag",
          type: "select",
          options: EVIL
        }]
      })
      const before = yield* allRows
      const rows = EVIL.map((body, i) => ({ k: `r${i}`, body, tag: body }))
      ok(yield* call(client, "insert_micro_db_rows", { bucket, table: "evil-values", rows }))
      expect(yield* allRows).toBe(before + EVIL.length)

      const keysWhere = (filter: Record<string, unknown>) =>
        Effect.map(
          query(client, { bucket, table: "evil-values", filter: [filter], limit: 500 }),
          (found) => [...keysOf(found.rows)].sort()
        )
      const expectedWhere = (test: (body: string) => boolean) =>
        rows.filter((row) => test(row.body)).map((row) => row.k).sort()

      for (const [i, value] of EVIL.entries()) {
        for (const column of ["body", "tag"]) {
          expect(yield* keysWhere({ column, op: "eq", value }), `${column} eq ${value}`).toEqual([`r${i}`])
          expect(yield* keysWhere({ column, op: "neq", value }), `${column} neq ${value}`).toEqual(
            expectedWhere((body) => body !== value)
          )
          expect(yield* keysWhere({ column, op: "in", value: [value] }), `${column} in ${value}`).toEqual([`r${i}`])
          expect(yield* keysWhere({ column, op: "contains", value }), `${column} contains ${value}`).toEqual(
            expectedWhere((body) => body.toLowerCase().includes(value.toLowerCase()))
          )
          expect(yield* keysWhere({ column, op: "starts_with", value }), `${column} starts_with ${value}`).toEqual(
            expectedWhere((body) => body.toLowerCase().startsWith(value.toLowerCase()))
          )
        }
        expect(yield* keysWhere({ column: "body", op: "gt", value }), `gt ${value}`).toEqual(
          expectedWhere((body) => codePointCompare(body, value) > 0)
        )
      }
      // a sort over them is a sort, by code point
      const sorted = yield* query(client, {
        bucket,
        table: "evil-values",
        sort: [{ column: "body", direction: "asc" }],
        limit: 500
      })
      expect(sorted.rows.map((row) => row.data.body)).toEqual([...EVIL].sort(codePointCompare))

      // everything is still there, unchanged
      const after = yield* query(client, { bucket, table: "evil-values", limit: 500 })
      expect(after.total).toBe(EVIL.length)
      expect([...after.rows.map((row) => row.data)].sort((x, y) => codePointCompare(x.k, y.k))).toEqual(
        [...rows].sort((x, y) => codePointCompare(x.k, y.k))
      )
      expect(yield* allRows).toBe(before + EVIL.length)
    }))

  it.scoped("metacharacters in table and column names are data; bad slugs are validation_error and every table survives", () =>
    Effect.gen(function*() {
      const { bucket, client } = yield* owned
      const evilName = "Robert'); DROP TABLE micro_db_rows; --"
      const priceName = `Price ("$1") 100% _x_ \\ '; --`
      const table = yield* createTable(client, {
        bucket,
        name: evilName,
        columns: [
          { name: "K", type: "text", unique: true },
          { name: priceName, slug: "price", type: "number" },
          { name: "'; DROP TABLE micro_db_rows; --", type: "text" }
        ]
      })
      expect(table.name).toBe(evilName)
      expect(table.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/)
      expect(table.slug.length).toBeLessThanOrEqual(64)
      expect(table.columns.map((entry) => entry.name)).toEqual(["K", priceName, "'; DROP TABLE micro_db_rows; --"])
      const derived = table.columns[2]!.slug
      expect(derived).toMatch(/^[a-z][a-z0-9_-]{0,63}$/)
      expect(["id", "created_at", "updated_at", "k", "price"]).not.toContain(derived)

      const first = yield* insert(client, bucket, table.id, { k: "one", price: 9, [derived]: "'; --" })
      const second = yield* insert(client, bucket, table.slug, { k: "two", price: 10, [derived]: "%" })
      const third = yield* insert(client, bucket, table.slug, { k: "three", price: 100 })
      const rowsBefore = [first, second, third]
      const countBefore = yield* allRows
      const listed = ok(yield* call(client, "list_micro_db_tables", { bucket })).tables
      expect(listed.map((entry: any) => entry.name)).toEqual([evilName])

      // the columns work like any other
      expect(keysOf(
        (yield* query(client, {
          bucket,
          table: table.id,
          filter: [{ column: derived, op: "eq", value: "'; --" }]
        })).rows
      )).toEqual(["one"])
      expect(keysOf(
        (yield* query(client, {
          bucket,
          table: table.id,
          filter: [{ column: "price", op: "gt", value: 9 }],
          sort: [{ column: "price", direction: "desc" }]
        })).rows
      )).toEqual(["three", "two"])
      expect(
        keysOf((yield* query(client, { bucket, table: table.id, sort: [{ column: derived, direction: "asc" }] })).rows)
      )
        .toEqual(["two", "one", "three"])

      // bad table slugs
      for (
        const slug of [
          "x'; drop table micro_db_rows; --",
          "a\"b",
          "a%b",
          "a_b",
          "$1",
          "UPPER",
          "ünï",
          "a b",
          "../etc",
          "a\\b",
          "-a",
          "x".repeat(65)
        ]
      ) {
        expect(
          yield* error(client, "create_micro_db_table", {
            bucket,
            name: "Other",
            slug,
            columns: [{ name: "A", type: "text" }]
          }),
          slug
        )
          .toMatchObject({ code: "validation_error", status: 400 })
      }
      // bad column slugs, on a new table and on this one
      const badColumnSlugs = [
        "a'b",
        "a\"b",
        "a;b",
        "drop table",
        "A",
        "1a",
        "_a",
        "-a",
        "a%",
        "a\\b",
        "$1",
        "ä",
        "x".repeat(65),
        "id",
        "created_at",
        "updated_at",
        "a.b",
        "a)b",
        "a->b",
        "a'); drop table micro_db_rows; --"
      ]
      for (const slug of badColumnSlugs) {
        expect(
          yield* error(client, "create_micro_db_table", {
            bucket,
            name: "Other",
            columns: [{ name: "A", slug, type: "text" }]
          }),
          slug
        )
          .toMatchObject({ code: "validation_error", status: 400 })
        expect(
          yield* error(client, "add_micro_db_column", {
            bucket,
            table: table.id,
            column_def: { name: "A", slug, type: "text" }
          }),
          slug
        )
          .toMatchObject({ code: "validation_error", status: 400 })
        expect(
          yield* error(client, "update_micro_db_column", { bucket, table: table.id, column: "price", patch: { slug } }),
          slug
        ).toMatchObject({ code: "validation_error", status: 400 })
      }

      // filter and sort columns, data keys
      const badColumns = [
        "price'; drop table micro_db_rows; --",
        "price\") or 1=1 --",
        "data->>'price'",
        "k' OR '1'='1",
        "Price",
        "price ",
        "%",
        "_",
        "$1",
        "*",
        priceName
      ]
      for (const column of badColumns) {
        yield* refusedAsInvalid(
          client,
          { bucket, table: table.id, filter: [{ column, op: "eq", value: 1 }] },
          `filter ${column}`
        )
        yield* refusedAsInvalid(
          client,
          { bucket, table: table.id, filter: [{ column, op: "is_null" }] },
          `filter ${column}`
        )
        yield* refusedAsInvalid(
          client,
          { bucket, table: table.id, sort: [{ column, direction: "asc" }] },
          `sort ${column}`
        )
        const refused = yield* error(client, "insert_micro_db_row", {
          bucket,
          table: table.id,
          data: { k: "four", [column]: 1 }
        })
        expect(refused, column).toMatchObject({ code: "validation_error", status: 400 })
        expect((refused.details as any)?.errors?.map((entry: any) => entry.column), column).toContain(column)
      }

      // table, column, Dock and row references: not found
      for (const ref of ["x'; drop table micro_db_rows; --", "%", "_", "' or '1'='1", `${table.slug}%`, "*"]) {
        expect(yield* error(client, "get_micro_db_schema", { bucket, table: ref }), ref).toMatchObject({
          code: "not_found"
        })
        expect(yield* error(client, "query_micro_db_rows", { bucket, table: ref }), ref).toMatchObject({
          code: "not_found"
        })
        expect(yield* error(client, "delete_micro_db_column", { bucket, table: table.id, column: ref }), ref)
          .toMatchObject({
            code: "not_found"
          })
        expect(yield* error(client, "list_micro_db_tables", { bucket: ref }), ref).toMatchObject({ code: "not_found" })
        // row_id is a UUID
        expect(yield* error(client, "get_micro_db_row", { bucket, table: table.id, row_id: ref }), ref).toMatchObject({
          code: "validation_error"
        })
      }

      // everything survived
      expect(yield* allRows).toBe(countBefore)
      expect(ok(yield* call(client, "list_micro_db_tables", { bucket })).tables).toEqual(listed)
      expect((yield* query(client, { bucket, table: table.id })).rows).toEqual(rowsBefore)
    }))

  it.scoped("a NUL character (which PostgreSQL cannot store) anywhere in the arguments is validation_error naming where, never internal", () =>
    Effect.gen(function*() {
      const { bucket, client } = yield* owned
      yield* createTable(client, {
        bucket,
        name: "Nul",
        columns: [{ name: "Body", type: "text" }, { name: "Doc", type: "json" }, { name: "Long", type: "long_text" }]
      })
      const refusedAt = (tool: string, args: Record<string, unknown>, path: ReadonlyArray<string>) =>
        Effect.map(error(client, tool, args), (body) =>
          expect(body, JSON.stringify(args)).toMatchObject({
            code: "validation_error",
            details: { issues: [{ path, message: expect.stringContaining("U+0000") }] }
          }))
      yield* refusedAt("insert_micro_db_row", { bucket, table: "nul", data: { body: "a\u0000b" } }, ["data", "body"])
      yield* refusedAt("insert_micro_db_row", { bucket, table: "nul", data: { long: "\u0000" } }, ["data", "long"])
      yield* refusedAt("insert_micro_db_row", { bucket, table: "nul", data: { doc: { text: "a\u0000b" } } }, [
        "data",
        "doc",
        "text"
      ])
      yield* refusedAt("insert_micro_db_row", { bucket, table: "nul", data: { doc: { "key\u0000": 1 } } }, [
        "data",
        "doc"
      ])
      for (const op of ["eq", "contains", "starts_with"]) {
        yield* refusedAt("query_micro_db_rows", {
          bucket,
          table: "nul",
          filter: [{ column: "body", op, value: "a\u0000" }]
        }, [
          "filter",
          "0",
          "value"
        ])
      }
      yield* refusedAt("create_micro_db_table", { bucket, name: "T\u0000", columns: [{ name: "A", type: "text" }] }, [
        "name"
      ])
      yield* refusedAt("create_micro_db_table", { bucket, name: "D", description: "\u0000", columns: [] }, [
        "description"
      ])
      yield* refusedAt("create_micro_db_table", { bucket, name: "C", columns: [{ name: "A\u0000", type: "text" }] }, [
        "columns",
        "0",
        "name"
      ])
      yield* refusedAt("create_micro_db_table", {
        bucket,
        name: "O",
        columns: [{ name: "A", type: "select", options: ["x\u0000"] }]
      }, [
        "columns",
        "0",
        "options",
        "0"
      ])
      yield* refusedAt("push_micro_db", { bucket, title: "Micro\u0000DB" }, ["title"])
      yield* refusedAt("get_micro_db_schema", { bucket, table: "nul\u0000" }, ["table"])
      // Nothing was written: the table is as it was made, with no rows, and no other table exists.
      expect((yield* query(client, { bucket, table: "nul" })).total).toBe(0)
      expect(
        ok(yield* call(client, "list_micro_db_tables", { bucket })).tables.map((table: { slug: string }) => table.slug)
      ).toEqual(["nul"])
    }))
})

/** Strings by code point (what text comparison means here), not by UTF-16 unit. */
function codePointCompare(x: string, y: string) {
  const a = [...x].map((c) => c.codePointAt(0)!)
  const b = [...y].map((c) => c.codePointAt(0)!)
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return a.length - b.length
}
