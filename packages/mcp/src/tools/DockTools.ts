/** The Dock tools of spec §4.3: catalogue entries, one domain call each. */
import { Dock, Docks } from "@dock/domain"
import { Effect, Schema } from "effect"
import { tool, WRITE } from "../Tool.ts"

const optional = <A, I>(schema: Schema.Schema<A, I, never>) => Schema.optionalWith(schema, { exact: true })
const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max))

export const createBucket = tool({
  name: "create_bucket",
  description:
    "Create a new Dock (a container for pages, Markdown files and Micro DB tables) owned by the token's user. " +
    "Give a `title` (or `name`); `slug` is derived from it when omitted (lowercase letters, digits, hyphens). " +
    "Docks are private unless `visibility` is \"public\"; `discoverable` lets others find a public Dock. " +
    "Returns the new Dock as `{ bucket }`. Sandbox and Dock-restricted tokens cannot create Docks.",
  input: Schema.Struct({
    title: optional(Text(200)),
    name: optional(Text(200)),
    slug: optional(Text(64)),
    visibility: optional(Schema.Literal("private", "public")),
    discoverable: optional(Schema.Boolean),
    description: optional(Text(5_000)),
    tags: optional(Schema.Array(Text(64)).pipe(Schema.maxItems(32))),
    topic_tag_slugs: optional(Schema.Array(Text(64)).pipe(Schema.maxItems(32)))
  }),
  output: Schema.Struct({ bucket: Dock }),
  annotations: WRITE,
  scope: "mcp:write",
  run: (input) =>
    Effect.flatMap(Docks, (docks) =>
      docks.create({
        title: input.title,
        name: input.name,
        slug: input.slug,
        visibility: input.visibility,
        discoverable: input.discoverable,
        description: input.description,
        tags: input.tags,
        topics: input.topic_tag_slugs
      })).pipe(Effect.map((bucket) => ({ bucket })))
})
