/** Branded ids: a Dock id can never be passed where a user id is expected. */
import { Schema } from "effect"

export const UserId = Schema.UUID.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

export const DockId = Schema.UUID.pipe(Schema.brand("DockId"))
export type DockId = typeof DockId.Type

export const TokenId = Schema.UUID.pipe(Schema.brand("TokenId"))
export type TokenId = typeof TokenId.Type

/** A registration's row id (its public `registration_id` is the claim token, a secret: never this). */
export const RegistrationId = Schema.UUID.pipe(Schema.brand("RegistrationId"))
export type RegistrationId = typeof RegistrationId.Type

export const ImageId = Schema.UUID.pipe(Schema.brand("ImageId"))
export type ImageId = typeof ImageId.Type

export const SourceId = Schema.UUID.pipe(Schema.brand("SourceId"))
export type SourceId = typeof SourceId.Type

/** A UUID in any letter case: how targeting tells an id from a slug. */
export const isUuid = (value: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)

/** A page (a row of `parts`): web page, Markdown file or the Micro DB shell. */
export const PageId = Schema.UUID.pipe(Schema.brand("PageId"))
export type PageId = typeof PageId.Type

/** A Micro DB table. */
export const TableId = Schema.UUID.pipe(Schema.brand("TableId"))
export type TableId = typeof TableId.Type

/** A Micro DB row. */
export const RowId = Schema.UUID.pipe(Schema.brand("RowId"))
export type RowId = typeof RowId.Type
