/** The Dock tools of spec §4.3: catalogue entries, one domain call each. */
import { Dock, DockDetails, Docks, type DockTarget } from "@dock/domain"
import { Effect, Schema } from "effect"
import { DESTRUCTIVE, READ, tool, WRITE } from "../Tool.ts"
import {
  Bucket,
  BucketSlug,
  optional,
  OwnerUsername,
  PATH_TARGET_TEXT,
  PathTarget,
  Text,
  Visibility
} from "./Params.ts"

const Tags = Schema.Array(Text(64)).pipe(Schema.maxItems(32))

const withDocks = <A, E, R>(f: (docks: Docks["Type"]) => Effect.Effect<A, E, R>) => Effect.flatMap(Docks, f)

/** The one resolver, for tools that act on one named Dock. */
const namedDock = (target: DockTarget) => withDocks((docks) => docks.named(target))

const OneDock = Schema.Struct({ bucket: Dock })
const DockList = Schema.Struct({ buckets: Schema.Array(Dock) })

export const searchBuckets = tool({
  name: "search_buckets",
  description:
    "Find Docks by words in their title, description, slug, tags or topics. Without a token you see public, " +
    "discoverable Docks; with one you also see your own and your collaborations (private included). Best matches " +
    "first; `limit` 1-50 (default 20). Returns `{ buckets }`.",
  input: Schema.Struct({
    query: Text(500),
    limit: optional(Schema.Int.pipe(Schema.between(1, 50)))
  }),
  output: DockList,
  annotations: READ,
  scope: "mcp:read",
  run: (input) =>
    withDocks((docks) => docks.search(input.query, input.limit ?? 20)).pipe(Effect.map((buckets) => ({ buckets })))
})

export const listBuckets = tool({
  name: "list_buckets",
  description:
    "List Docks you can read, most recently updated first (at most 200). `visibility`: \"public\" (public Docks you " +
    "can find), \"private\" (your own private Docks; needs a token) or \"all\" (default: everything readable that you " +
    "can find — your own, collaborations, and discoverable public Docks). `owned_by_me` keeps only yours. " +
    "Returns `{ buckets }`.",
  input: Schema.Struct({
    visibility: optional(Schema.Literal("public", "private", "all")),
    owned_by_me: optional(Schema.Boolean)
  }),
  output: DockList,
  annotations: READ,
  scope: "mcp:read",
  run: (input) =>
    withDocks((docks) => docks.list({ visibility: input.visibility, ownedByMe: input.owned_by_me })).pipe(
      Effect.map((buckets) => ({ buckets }))
    )
})

export const getBucket = tool({
  name: "get_bucket",
  description:
    "Read one Dock's metadata: owner, page and source counts, page_kind_breakdown, recent activity, top entities " +
    "and concepts, cover page, and for a fork its upstream and how many upstream pages changed since. Name it " +
    "with `bucket` (or the deprecated `bucket_slug` plus `owner_username`); without one, the Dock set by " +
    "set_grounding_bucket, else your default Dock. Returns `{ bucket }`.",
  input: Schema.Struct({
    bucket: optional(Bucket),
    bucket_slug: optional(BucketSlug),
    owner_username: optional(OwnerUsername)
  }),
  output: Schema.Struct({ bucket: DockDetails }),
  annotations: READ,
  scope: "mcp:read",
  run: (input) => withDocks((docks) => docks.details(input)).pipe(Effect.map((bucket) => ({ bucket })))
})

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
    visibility: optional(Visibility),
    discoverable: optional(Schema.Boolean),
    description: optional(Text(5_000)),
    tags: optional(Tags),
    topic_tag_slugs: optional(Tags)
  }),
  output: OneDock,
  annotations: WRITE,
  scope: "mcp:write",
  run: (input) =>
    withDocks((docks) =>
      docks.create({
        title: input.title,
        name: input.name,
        slug: input.slug,
        visibility: input.visibility,
        discoverable: input.discoverable,
        description: input.description,
        tags: input.tags,
        topics: input.topic_tag_slugs
      })
    ).pipe(Effect.map((bucket) => ({ bucket })))
})

export const forkBucket = tool({
  name: "fork_bucket",
  description:
    "Copy a public Dock whose owner allows forks into a new Dock of yours, with all its pages. The fork keeps " +
    "attribution to its upstream, and get_bucket on it shows how many upstream pages changed since. " +
    PATH_TARGET_TEXT + " (the upstream). `new_name` titles the fork (default: the upstream's " +
    "title); it is private unless `visibility` is \"public\". Returns `{ bucket }`.",
  input: Schema.Struct({
    ...PathTarget,
    new_name: optional(Schema.NullOr(Text(200))),
    visibility: optional(Visibility)
  }),
  output: OneDock,
  annotations: WRITE,
  scope: "mcp:write",
  run: ({ new_name, visibility, ...upstream }) =>
    withDocks((docks) => docks.fork(upstream, { newName: new_name, visibility })).pipe(
      Effect.map((bucket) => ({ bucket }))
    )
})

export const updateBucketMetadata = tool({
  name: "update_bucket_metadata",
  description: "Change a Dock you own. " + PATH_TARGET_TEXT + ". Fields: `name` (its title), `description` " +
    "(null clears it), `visibility`, `discoverable` (whether others can find it when public), `allow_forks` " +
    "(whether others may fork it when public), and topics with `add_topics` / `remove_topics` (topic slugs). " +
    "Owner only; sandbox tokens cannot make a Dock public or discoverable. Returns `{ bucket }`.",
  input: Schema.Struct({
    ...PathTarget,
    name: optional(Text(200)),
    description: optional(Schema.NullOr(Text(5_000))),
    visibility: optional(Visibility),
    discoverable: optional(Schema.Boolean),
    allow_forks: optional(Schema.Boolean),
    add_topics: optional(Tags),
    remove_topics: optional(Tags)
  }),
  output: OneDock,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  scope: "mcp:write",
  run: ({ add_topics, allow_forks, description, discoverable, name, remove_topics, visibility, ...target }) =>
    Effect.gen(function*() {
      const docks = yield* Docks
      const bucket = yield* docks.updateMetadata(yield* namedDock(target), {
        name,
        description,
        visibility,
        discoverable,
        allowForks: allow_forks,
        addTopics: add_topics,
        removeTopics: remove_topics
      })
      return { bucket }
    })
})

export const listMyBuckets = tool({
  name: "list_my_buckets",
  description:
    "List the Docks you can push to: the ones you own and, with `include_collaborations`, those where you are an " +
    "editor. Filter by `visibility` or by a `tag`. Returns `{ buckets }`.",
  input: Schema.Struct({
    include_collaborations: optional(Schema.Boolean),
    visibility: optional(Visibility),
    tag: optional(Text(64))
  }),
  output: DockList,
  annotations: READ,
  scope: "mcp:write",
  run: (input) =>
    withDocks((docks) =>
      docks.listWritable({
        includeCollaborations: input.include_collaborations,
        visibility: input.visibility,
        tag: input.tag
      })
    ).pipe(Effect.map((buckets) => ({ buckets })))
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
    visibility: optional(Visibility),
    tags: optional(Tags)
  }),
  output: OneDock,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  scope: "mcp:write",
  run: ({ bucket, ...patch }) =>
    Effect.gen(function*() {
      const docks = yield* Docks
      return { bucket: yield* docks.update(yield* namedDock({ bucket }), patch) }
    })
})

export const deleteBucket = tool({
  name: "delete_bucket",
  description: "Delete a Dock you own, with everything in it. This cannot be undone. Returns `{ ok: true }`.",
  input: Schema.Struct({ bucket: Bucket }),
  output: Schema.Struct({ ok: Schema.Literal(true) }),
  annotations: DESTRUCTIVE,
  scope: "mcp:write",
  run: (input) =>
    Effect.gen(function*() {
      const docks = yield* Docks
      yield* docks.remove(yield* namedDock(input))
      return { ok: true as const }
    })
})

export const setCoverWebPage = tool({
  name: "set_cover_web_page",
  description:
    "Make one page of a Dock you own its cover (shown first). `web_page` is the page's UUID or slug in that Dock. " +
    "Returns `{ bucket }` with `cover_page_id` set.",
  input: Schema.Struct({ bucket: Bucket, web_page: Text(200) }),
  output: OneDock,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  scope: "mcp:write",
  run: (input) =>
    Effect.gen(function*() {
      const docks = yield* Docks
      return { bucket: yield* docks.setCover(yield* namedDock({ bucket: input.bucket }), input.web_page) }
    })
})

export const setGroundingBucket = tool({
  name: "set_grounding_bucket",
  description:
    "Choose the Dock that later get_bucket, list_web_pages and get_web_page calls use when they name no Dock. " +
    "The choice belongs to this token and lasts 24 hours from the last time it was set. " + PATH_TARGET_TEXT +
    "; you must be able to read it. Returns `{ activeWorkspacePath }`.",
  input: Schema.Struct(PathTarget),
  output: Schema.Struct({ activeWorkspacePath: Schema.String }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  scope: "mcp:write",
  run: (target) =>
    Effect.gen(function*() {
      const docks = yield* Docks
      return { activeWorkspacePath: yield* docks.setGrounding(yield* namedDock(target)) }
    })
})
