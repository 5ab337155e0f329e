/** The Dock tools of spec §4.3: catalogue entries, one domain call each. */
import { BadRequest, Dock, type DockRef, Docks } from "@dock/domain"
import { Effect, Option, Schema } from "effect"
import { DESTRUCTIVE, READ, tool, WRITE } from "../Tool.ts"

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

/** The one resolver for a tool's `bucket`: the Dock it names, as a reference by id. */
const resolveBucket = (bucket: string) =>
  Effect.flatMap(Docks, (docks) => docks.resolve({ bucket })).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new BadRequest({ message: "Name the Dock with `bucket`" })),
      onSome: ({ dock }): Effect.Effect<DockRef> => Effect.succeed({ _tag: "ById", id: dock.id })
    }))
  )

const Bucket = Text(200).pipe(
  Schema.annotations({ description: "The Dock: its UUID, owner_username/dock_slug, or a slug of yours" })
)

export const listMyBuckets = tool({
  name: "list_my_buckets",
  description:
    "List the Docks you can push to: the ones you own and, with `include_collaborations`, those where you are an " +
    "editor. Filter by `visibility` or by a `tag`. Returns `{ buckets }`.",
  input: Schema.Struct({
    include_collaborations: optional(Schema.Boolean),
    visibility: optional(Schema.Literal("private", "public")),
    tag: optional(Text(64))
  }),
  output: Schema.Struct({ buckets: Schema.Array(Dock) }),
  annotations: READ,
  scope: "mcp:write",
  run: (input) =>
    Effect.flatMap(Docks, (docks) =>
      docks.listWritable({
        includeCollaborations: input.include_collaborations,
        visibility: input.visibility,
        tag: input.tag
      })).pipe(Effect.map((buckets) => ({ buckets })))
})

export const updateBucket = tool({
  name: "update_bucket",
  description:
    "Change a Dock you own: its `title`, `description` (null clears it), `visibility` (\"private\" or \"public\") " +
    "or `tags` (replaces them). Returns the updated Dock as `{ bucket }`. Sandbox tokens cannot make a Dock public.",
  input: Schema.Struct({
    bucket: Bucket,
    title: optional(Text(200)),
    description: optional(Schema.NullOr(Text(5_000))),
    visibility: optional(Schema.Literal("private", "public")),
    tags: optional(Schema.Array(Text(64)).pipe(Schema.maxItems(32)))
  }),
  output: Schema.Struct({ bucket: Dock }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  scope: "mcp:write",
  run: (input) =>
    Effect.gen(function*() {
      const docks = yield* Docks
      const ref = yield* resolveBucket(input.bucket)
      const bucket = yield* docks.update(ref, {
        title: input.title,
        description: input.description,
        visibility: input.visibility,
        tags: input.tags
      })
      return { bucket }
    })
})

export const deleteBucket = tool({
  name: "delete_bucket",
  description:
    "Delete a Dock you own, with everything in it. This cannot be undone. Returns `{ ok: true }`.",
  input: Schema.Struct({ bucket: Bucket }),
  output: Schema.Struct({ ok: Schema.Literal(true) }),
  annotations: DESTRUCTIVE,
  scope: "mcp:write",
  run: (input) =>
    Effect.gen(function*() {
      const docks = yield* Docks
      yield* docks.remove(yield* resolveBucket(input.bucket))
      return { ok: true as const }
    })
})
