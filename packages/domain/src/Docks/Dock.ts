/** Docks: the containers artifacts live in (`bucket` in identifiers). Wire shape per architecture §14. */
import { Schema } from "effect"
import { DockId, UserId } from "../Ids.ts"

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
  url: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

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

/** How a caller names one Dock: its id, or its owner's username and its slug. */
export type DockRef =
  | { readonly _tag: "ById"; readonly id: string }
  | { readonly _tag: "ByPath"; readonly owner: string; readonly slug: string }
