/** Parameter schemas the tools share: one definition of each targeting field (architecture §9) and of text bounds. */
import { Schema } from "effect"

export const optional = <A, I>(schema: Schema.Schema<A, I, never>) => Schema.optionalWith(schema, { exact: true })
export const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max))
export const Visibility = Schema.Literal("private", "public")

export const Bucket = Text(200).pipe(
  Schema.annotations({ description: "The Dock: its UUID, owner_username/dock_slug, or a slug of yours" })
)
/** Legacy targeting fields. */
export const BucketId = Schema.UUID.pipe(Schema.annotations({ description: "Legacy: the Dock's UUID" }))
export const BucketPath = Text(200).pipe(Schema.annotations({ description: "The Dock as owner_username/dock_slug" }))
export const BucketSlug = Text(64).pipe(
  Schema.annotations({ description: "Deprecated alias: the Dock's slug (with owner_username for someone else's)" })
)
export const OwnerUsername = Text(64).pipe(Schema.annotations({ description: "Whose Dock bucket_slug names" }))

/** Write tools' Dock: `bucket` and the legacy id/path fields (architecture §14); none named means the default Dock. */
export const WriteTarget = {
  bucket: optional(Bucket),
  bucket_id: optional(BucketId),
  bucket_path: optional(BucketPath)
}

/**
 * Tools whose spec row names the legacy path (fork_bucket, update_bucket_metadata, set_grounding_bucket): any one
 * of `bucket_path`, `bucket` or `bucket_id` names the Dock (the resolver refuses none); several must agree.
 */
export const PathTarget = {
  bucket_path: optional(BucketPath),
  bucket: optional(Bucket),
  bucket_id: optional(BucketId)
}

/** How a tool description says which fields name the Dock of a PathTarget tool. */
export const PATH_TARGET_TEXT =
  "Name the Dock with `bucket` (its UUID, owner_username/dock_slug or a slug of yours), " +
  "`bucket_id` (its UUID) or `bucket_path` (owner_username/dock_slug); one is required, and several must name the " +
  "same Dock"
