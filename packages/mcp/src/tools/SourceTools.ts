/** The source tools of spec §4.3 ("Sources"): catalogue entries, one domain call each. */
import { Dock, Source, Sources, SourceWithText } from "@dock/domain"
import { Effect, Schema } from "effect"
import { READ, tool } from "../Tool.ts"
import { Bucket, BucketSlug, optional, OwnerUsername, Text } from "./Params.ts"

/** Where a source tool looks: `bucket` (an extra, as on the other reads) or the deprecated `bucket_slug`. */
const ReadTarget = {
  bucket: optional(Bucket),
  bucket_slug: optional(BucketSlug),
  owner_username: optional(OwnerUsername)
}

const withSources = <A, E, R>(f: (sources: Sources["Type"]) => Effect.Effect<A, E, R>) => Effect.flatMap(Sources, f)

export const listSources = tool({
  name: "list_sources",
  description:
    "List a Dock's sources: the reference texts (files or web pages added by the operator) that pages cite in their " +
    "front matter as `sources: [source_id, …]`. Archived sources are not listed. The Dock with `bucket` (or the " +
    "deprecated `bucket_slug` + `owner_username`), else the Dock set by set_grounding_bucket, else your default " +
    "Dock. Returns `{ bucket, sources }`: each source `{ source_id, bucket_id, title, origin, media_type, " +
    "size_bytes, archived, created_at }`, oldest first; read one's text with read_source.",
  input: Schema.Struct(ReadTarget),
  output: Schema.Struct({ bucket: Dock, sources: Schema.Array(Source) }),
  annotations: READ,
  scope: "mcp:read",
  run: (target) =>
    withSources((sources) => sources.list(target)).pipe(Effect.map(({ dock, sources }) => ({ bucket: dock, sources })))
})

export const readSource = tool({
  name: "read_source",
  description:
    "Read one source of a Dock with its full extracted text (`text`: plain text, Markdown without its front " +
    "matter, or the text of an HTML page with its blocks on separate lines). `source_id` is its UUID, as " +
    "list_sources and pages' `grounding.sources` give it. The Dock as in list_sources. An archived or unknown " +
    "source is not_found. Returns `{ bucket, source }`.",
  input: Schema.Struct({
    ...ReadTarget,
    source_id: Text(200).pipe(Schema.annotations({ description: "The source's id (a UUID)" }))
  }),
  output: Schema.Struct({ bucket: Dock, source: SourceWithText }),
  annotations: READ,
  scope: "mcp:read",
  run: ({ source_id, ...target }) =>
    withSources((sources) => sources.read(target, source_id)).pipe(
      Effect.map(({ dock, source }) => ({ bucket: dock, source }))
    )
})
