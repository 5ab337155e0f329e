/**
 * A stored page (`parts` row) and what a write of one carries: the fields of a version, who made it and why,
 * and the change it makes in its Dock's content (the sandbox and plan caps).
 */
import type { PgClient } from "@effect/sql-pg"
import { Schema } from "effect"
import { utf8Bytes } from "../Content/Text.ts"
import { DockId, PageId, type TokenId, type UserId } from "../Ids.ts"
import { ContentType, type PageContent, PageKind } from "../Pages/Part.ts"
import type { Principal } from "../Principal.ts"

export class PartRow extends Schema.Class<PartRow>("PartRow")({
  id: PageId,
  dock_id: Schema.NullOr(DockId),
  owner_id: Schema.UUID,
  slug: Schema.NullOr(Schema.String),
  public_slug: Schema.String,
  title: Schema.NullOr(Schema.String),
  summary: Schema.String,
  content_type: ContentType,
  page_kind: PageKind,
  visibility: Schema.NullOr(Schema.Literal("private", "public")),
  content: Schema.String,
  claim_count: Schema.Number,
  version: Schema.Number,
  size_bytes: Schema.Number,
  updated_at: Schema.DateFromSelf
}) {}

/**
 * The columns of `parts` that PartRow decodes, named by its fields. Without `content`, '' stands in for it: for answers
 * that never carry the content (lists, search hits), which would otherwise take up to 1 MiB a page from TOAST and over
 * the wire (a list of 101 pages of 64 KiB: 22 ms and 14 ms of the server's CPU, against 2 ms and 0.6 ms without).
 */
export const partColumns = (sql: PgClient.PgClient, { content }: { readonly content: boolean }) =>
  sql.literal(
    Object.keys(PartRow.fields).map((name) => (name === "content" && !content ? "'' as content" : name)).join(", ")
  )

/** Who made a version: the user, the token and the agent's label. */
export interface Author {
  readonly userId: UserId | null
  readonly tokenId: TokenId | null
  readonly agentLabel: string | null
}

/**
 * The lines a version added and removed relative to the version before it (version 1: all its lines added),
 * stored with the version (part_versions.lines_added / lines_removed; null when not recorded).
 */
export interface VersionLines {
  readonly added: number
  readonly removed: number
}

/** Why a version was made (part_versions.reason); "reverted": revert_agent_changes (docs/undo.md). */
export type VersionReason = "created" | "updated" | "restored" | "forked" | "snapshot" | "reverted"

export interface PartFields {
  readonly slug: string
  readonly title: string | null
  readonly summary: string
  readonly contentType: ContentType
  readonly pageKind: PageKind
  readonly content: string
  readonly bodyText: string
  readonly frontMatter: Record<string, unknown>
  readonly tags: ReadonlyArray<string>
  readonly entities: ReadonlyArray<string>
  readonly concepts: ReadonlyArray<string>
  readonly sourceIds: ReadonlyArray<string>
  readonly links: ReadonlyArray<string>
  readonly claimCount: number
  readonly sizeBytes: number
}

/** The Dock a content write lands in, as its resolver found it: the caps depend on whether it is a sandbox. */
export interface ContentDock {
  readonly id: DockId
  readonly sandbox: boolean
}

/** The content side of a resolved Dock (the resolver's answer: its access and sandbox state). */
export const contentDock = (resolved: {
  readonly access: { readonly dockId: DockId }
  readonly sandbox: boolean
}): ContentDock => ({ id: resolved.access.dockId, sandbox: resolved.sandbox })

/** Change in a Dock's content: +1 artifact and its bytes for a new page, 0 and the size difference for an edit. */
export interface ContentChange {
  readonly artifacts: number
  readonly bytes: number
}

/** Who makes a version: the caller's user, token and agent label. */
export const authorOf = (principal: Principal): Author => ({
  userId: principal.userId,
  tokenId: principal.tokenId,
  agentLabel: principal.agentLabel
})

/** The stored fields of prepared page content under its slug. */
export const partFields = (content: PageContent, slug: string): PartFields => ({
  slug,
  title: content.title?.trim() || null,
  summary: content.summary,
  contentType: content.contentType,
  pageKind: content.pageKind,
  content: content.content,
  bodyText: content.bodyText,
  frontMatter: content.frontMatter ?? {},
  tags: content.tags ?? [],
  entities: content.entities ?? [],
  concepts: content.concepts ?? [],
  sourceIds: content.sourceIds ?? [],
  links: content.links ?? [],
  claimCount: content.claimCount ?? 0,
  sizeBytes: utf8Bytes(content.content)
})

/** The Micro DB shell's own fields: they change in place (its versions are snapshots). */
export interface ShellFields {
  readonly title: string | null
  readonly slug: string
  readonly summary: string
  readonly visibility: string | null
}
