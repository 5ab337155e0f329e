/**
 * Share links (issue 16, item 7): a Dock owner's revocable, optionally expiring link that shows one page (private
 * ones too) read-only without sign-in at `/s/<secret>`. The secret exists only in `CreatedShareLink.url`, shown
 * once; the database keeps its SHA-256. Everything else shows metadata.
 */
import { Schema } from "effect"
import { DockId, PageId } from "../Ids.ts"

export const ShareLinkId = Schema.UUID.pipe(Schema.brand("ShareLinkId"))
export type ShareLinkId = typeof ShareLinkId.Type

export const ShareLinkStatus = Schema.Literal("active", "expired", "revoked")

/** A link as its owner lists it: which page, who made it and when, when it expires or was revoked. */
export class ShareLink extends Schema.Class<ShareLink>("ShareLink")({
  id: ShareLinkId,
  bucket_id: DockId,
  page_id: PageId,
  page_slug: Schema.NullOr(Schema.String),
  page_title: Schema.NullOr(Schema.String),
  /** the username of who made it (null once that account is deleted) */
  created_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  expires_at: Schema.NullOr(Schema.String),
  revoked_at: Schema.NullOr(Schema.String),
  status: ShareLinkStatus
}) {}

/** A new link: its `url` holds the secret and is shown this once. */
export class CreatedShareLink extends Schema.Class<CreatedShareLink>("CreatedShareLink")({
  id: ShareLinkId,
  url: Schema.String,
  bucket_id: DockId,
  page_id: PageId,
  expires_at: Schema.NullOr(Schema.String)
}) {}

/** Operator input (admin API, `dock share create`): the Dock by id or `owner/slug`, the page by UUID or slug. */
export class CreateShareLinkRequest extends Schema.Class<CreateShareLinkRequest>("CreateShareLinkRequest")({
  dock: Schema.String,
  page: Schema.String,
  /** how long the link lives, as a duration such as `7 days` or `2 hours`; absent: until revoked */
  expires_in: Schema.optional(Schema.String)
}) {}
