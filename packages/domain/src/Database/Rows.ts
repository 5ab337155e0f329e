/**
 * Stored rows decoded into a row class (PartRow, DockRow, …): each row is checked against the class's fields as a
 * plain Struct, and the instance is then built from the checked fields without checking them again. Decoding through
 * the class itself checks the same fields and then transforms them into an instance, which costs about half as much
 * again: a page's row took 11.5 µs that way against 7.9 µs this way (`npm run bench:rows`), and a list of 50 pages
 * decodes 50 of them.
 */
import { Effect, type ParseResult, Schema } from "effect"

/** What `rowsOf` needs of a row class: its fields, and its constructor (`true`: the fields are checked already). */
export interface RowClass<Self, Fields extends Schema.Struct.Fields> {
  readonly fields: Fields
  new(props: Schema.Schema.Type<Schema.Struct<Fields>>, options: true): Self
}

/** A decoder of rows from the database into instances of `Class`; a row that does not fit fails with its ParseError. */
export const rowsOf = <Self, Fields extends Schema.Struct.Fields>(Class: RowClass<Self, Fields>) => {
  const decode = Schema.decodeUnknown(Schema.Array(Schema.Struct(Class.fields)))
  return (rows: unknown): Effect.Effect<Array<Self>, ParseResult.ParseError, Schema.Struct.Context<Fields>> =>
    Effect.map(decode(rows), (checked) => checked.map((row) => new Class(row, true)))
}
