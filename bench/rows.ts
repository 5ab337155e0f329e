/**
 * bench/rows: what decoding stored rows into a row class costs, in this process: a list's 50 page rows (PartRow,
 * with the two extra columns a list's rows carry) decoded by `rowsOf` (Database/Rows.ts: the class's fields as a
 * Struct, then the instances built unchecked), beside the reference measured in the same run, decoding through the
 * class itself (Schema.decodeUnknown(Schema.Array(PartRow))), which checks the same fields. Prints µs a row, the
 * median of BENCH_ROUNDS (7) rounds of BENCH_CALLS (2000) decodes each. Asserts nothing.
 */
import { Effect, Schema } from "effect"
import { rowsOf } from "../packages/domain/src/Database/Rows.ts"
import { PartRow } from "../packages/domain/src/Parts/PartRow.ts"
import { machine, number } from "./support/Bench.ts"

const rounds = number("BENCH_ROUNDS", 7)
const calls = number("BENCH_CALLS", 2000)
const ROWS = 50

const rows = Array.from({ length: ROWS }, (_, n) => ({
  id: crypto.randomUUID(),
  dock_id: crypto.randomUUID(),
  owner_id: crypto.randomUUID(),
  slug: `page-${n}`,
  public_slug: `page-${n}-x7k2`,
  title: `Page ${n}`,
  summary: "A page of the bench",
  content_type: "markdown",
  page_kind: "markdown_file",
  visibility: null,
  content: "",
  claim_count: 0,
  version: 3,
  size_bytes: 65_000,
  updated_at: new Date(),
  list_key_a: `page ${n}`,
  list_key_b: `page-${n}`
}))

const throughClass = Schema.decodeUnknown(Schema.Array(PartRow))
const byFields = rowsOf(PartRow)

/** The median µs a row of `decode` over the rounds (a first round unrecorded, to warm up). */
const measure = (decode: (rows: unknown) => Effect.Effect<ReadonlyArray<PartRow>, unknown>) => {
  const run = () => {
    const started = performance.now()
    for (let i = 0; i < calls; i++) Effect.runSync(decode(rows))
    return ((performance.now() - started) * 1000) / (calls * ROWS)
  }
  run()
  const figures = Array.from({ length: rounds }, run).sort((a, b) => a - b)
  return figures[Math.floor(figures.length / 2)]!
}

console.log(machine())
console.log(`decoding ${ROWS} page rows, ${calls} times a round, median of ${rounds} rounds:`)
const reference = measure(throughClass)
const measured = measure(byFields)
console.log(`  through the class (reference): ${reference.toFixed(2)} µs a row`)
console.log(
  `  rowsOf (the class's fields, then the instances): ${measured.toFixed(2)} µs a row (${
    (measured / reference).toFixed(2)
  }× the reference)`
)
