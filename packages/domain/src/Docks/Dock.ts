/** Docks: the containers artifacts live in (`bucket` in identifiers). Wire shape per architecture §14. */
import { Schema } from "effect"
import { DockId, isUuid, UserId } from "../Ids.ts"

export const Visibility = Schema.Literal("private", "public")

export class DockOwner extends Schema.Class<DockOwner>("DockOwner")({
  id: UserId,
  username: Schema.String
}) {}

export class Dock extends Schema.Class<Dock>("Dock")({
  id: DockId,
  slug: Schema.String,
  title: Schema.String,
  owner: DockOwner,
  visibility: Visibility,
  discoverable: Schema.Boolean,
  description: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  topics: Schema.Array(Schema.String),
  allow_forks: Schema.Boolean,
  /** the page shown first (set_cover_web_page), or null */
  cover_page_id: Schema.NullOr(Schema.UUID),
  /** for a fork: the upstream Dock's id (null once it is deleted) and its owner_username/dock_slug at fork time */
  forked_from: Schema.NullOr(Schema.Struct({ id: Schema.NullOr(DockId), path: Schema.String })),
  url: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

/** One entry of a Dock's recent activity; outsiders see who (username, agent label) but not which token. */
export class ActivityItem extends Schema.Class<ActivityItem>("ActivityItem")({
  action: Schema.String,
  subject_type: Schema.NullOr(Schema.String),
  subject_id: Schema.NullOr(Schema.String),
  actor: Schema.Struct({ username: Schema.NullOr(Schema.String), agent_label: Schema.NullOr(Schema.String) }),
  token_id: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  created_at: Schema.String
}) {}

export const Ranked = Schema.Struct({ name: Schema.String, count: Schema.Int })

/** How a fork relates to its upstream now. */
export const ForkTracking = Schema.Struct({
  upstream: Schema.NullOr(Schema.Struct({
    id: DockId,
    path: Schema.String,
    title: Schema.String,
    url: Schema.String
  })),
  upstream_path: Schema.String,
  forked_at: Schema.String,
  /** pages copied at fork time */
  pages_at_fork: Schema.Int,
  /** upstream pages with a newer version than the one copied */
  changed_since_fork: Schema.Int,
  /** upstream pages the fork has no copy of (added upstream since the fork) */
  added_since_fork: Schema.Int,
  /** copied pages whose upstream page is gone */
  removed_since_fork: Schema.Int
})

/** get_bucket: the Dock plus what is in it, as far as the caller may see. */
export class DockDetails extends Dock.extend<DockDetails>("DockDetails")({
  page_count: Schema.Int,
  source_count: Schema.Int,
  page_kind_breakdown: Schema.Struct({ web_page: Schema.Int, markdown_file: Schema.Int, micro_db: Schema.Int }),
  recent_activity: Schema.Array(ActivityItem),
  top_entities: Schema.Array(Ranked),
  top_concepts: Schema.Array(Ranked),
  cover_web_page: Schema.NullOr(
    Schema.Struct({ id: Schema.UUID, slug: Schema.NullOr(Schema.String), title: Schema.NullOr(Schema.String) })
  ),
  fork: Schema.NullOr(ForkTracking)
}) {}

/** A Dock as stored, with its owner's username (what the repo reads; presented by `toDock`). */
export class DockRow extends Schema.Class<DockRow>("DockRow")({
  id: DockId,
  owner_id: UserId,
  owner_username: Schema.String,
  slug: Schema.String,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  visibility: Schema.Literal("private", "public"),
  discoverable: Schema.Boolean,
  allow_forks: Schema.Boolean,
  tags: Schema.Array(Schema.String),
  topics: Schema.Array(Schema.String),
  /** the cover as anyone may see it (null when it is marked private) */
  cover_part_id: Schema.NullOr(Schema.UUID),
  /** the cover as members see it */
  member_cover_part_id: Schema.NullOr(Schema.UUID),
  forked_from_id: Schema.NullOr(DockId),
  forked_from_path: Schema.NullOr(Schema.String),
  forked_at: Schema.NullOr(Schema.DateFromSelf),
  forked_page_count: Schema.NullOr(Schema.Number),
  sandbox: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
}) {}

/**
 * A Dock's `url`: the spec's browser route `/b/<slug>`, with its owner named so the link is unambiguous across
 * owners (several users may have a Dock with the same slug); `/b/` carries the owner on to the web app.
 */
export const dockUrl = (baseUrl: string, ownerUsername: string, slug: string) =>
  `${baseUrl}/b/${encodeURIComponent(slug)}?owner=${encodeURIComponent(ownerUsername)}`

/**
 * The Dock object a stored row presents, its url under the service's public base URL. Built without validating
 * again (`true`): the row was decoded by its schema, and every answer is encoded by the tool's or route's schema.
 */
export const toDock = (row: DockRow, baseUrl: string): Dock =>
  new Dock({
    id: row.id,
    slug: row.slug,
    title: row.title,
    owner: new DockOwner({ id: row.owner_id, username: row.owner_username }, true),
    visibility: row.visibility,
    discoverable: row.discoverable,
    description: row.description,
    tags: row.tags,
    topics: row.topics,
    allow_forks: row.allow_forks,
    cover_page_id: row.cover_part_id,
    forked_from: row.forked_from_path === null ? null : { id: row.forked_from_id, path: row.forked_from_path },
    url: dockUrl(baseUrl, row.owner_username, row.slug),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  }, true)

export const TITLE_MAX = 200
export const DESCRIPTION_MAX = 5_000
export const TAG_MAX = 64
export const TAGS_MAX = 32

/** What a caller may give when creating a Dock (`title` or its alias `name`). */
export interface NewDock {
  readonly title?: string | undefined
  readonly name?: string | undefined
  readonly slug?: string | undefined
  readonly visibility?: "private" | "public" | undefined
  readonly discoverable?: boolean | undefined
  readonly description?: string | null | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly topics?: ReadonlyArray<string> | undefined
  readonly allowForks?: boolean | undefined
}

/** How a caller names one Dock: its id, its owner's username and its slug, or a bare slug. */
export type DockRef =
  | { readonly _tag: "ById"; readonly id: string }
  | { readonly _tag: "ByPath"; readonly owner: string; readonly slug: string }
  | { readonly _tag: "BySlug"; readonly slug: string }

/** A `bucket` value (architecture §14): a Dock UUID, `owner_username/dock_slug`, or a bare slug. */
export const dockRefOf = (value: string): DockRef => {
  const trimmed = value.trim()
  if (isUuid(trimmed)) return { _tag: "ById", id: trimmed.toLowerCase() }
  const slash = trimmed.indexOf("/")
  if (slash !== -1) {
    return { _tag: "ByPath", owner: trimmed.slice(0, slash).trim(), slug: trimmed.slice(slash + 1).trim() }
  }
  return { _tag: "BySlug", slug: trimmed }
}

/**
 * Every way a tool can name a Dock (architecture §9): `bucket`, the legacy `bucket_id` and `bucket_path`, and the
 * deprecated `bucket_slug` (with `owner_username`). The one resolver turns them into one Dock.
 */
export interface DockTarget {
  readonly bucket?: string | undefined
  readonly bucket_id?: string | undefined
  readonly bucket_path?: string | undefined
  readonly bucket_slug?: string | undefined
  readonly owner_username?: string | undefined
}

/** The Dock references a target names (empty: no Dock named). */
export const targetRefs = (target: DockTarget): ReadonlyArray<DockRef> => {
  const refs: Array<DockRef> = []
  if (target.bucket !== undefined) refs.push(dockRefOf(target.bucket))
  if (target.bucket_id !== undefined) refs.push({ _tag: "ById", id: target.bucket_id.trim() })
  if (target.bucket_path !== undefined) refs.push(dockRefOf(target.bucket_path))
  if (target.bucket_slug !== undefined) {
    refs.push(
      target.owner_username === undefined
        ? { _tag: "BySlug", slug: target.bucket_slug.trim() }
        : { _tag: "ByPath", owner: target.owner_username.trim(), slug: target.bucket_slug.trim() }
    )
  }
  return refs
}
