/** Every tool this server offers, in one list: `tools/list` order. Tools needing only mcp:read are also served on /mcp/public. */
import type { CurrentPrincipal } from "@dock/domain"
import type { Effect } from "effect"
import { listAgentChanges, revertAgentChanges } from "./tools/AgentTools.ts"
import {
  createBucket,
  deleteBucket,
  forkBucket,
  getBucket,
  listBuckets,
  listMyBuckets,
  searchBuckets,
  setCoverWebPage,
  setGroundingBucket,
  updateBucket,
  updateBucketMetadata
} from "./tools/DockTools.ts"
import { editMarkdownFile, editWebPage } from "./tools/EditTools.ts"
import { pushImage } from "./tools/ImageTools.ts"
import {
  addMicroDbColumn,
  createMicroDbTable,
  deleteMicroDbColumn,
  deleteMicroDbRow,
  deleteMicroDbTable,
  getMicroDbRow,
  getMicroDbSchema,
  insertMicroDbRow,
  insertMicroDbRows,
  listMicroDbTables,
  pushMicroDb,
  queryMicroDbRows,
  snapshotMicroDb,
  updateMicroDbColumn,
  updateMicroDbRow,
  updateMicroDbTable
} from "./tools/MicroDbTools.ts"
import {
  deleteMarkdownFile,
  deleteWebPage,
  diffMarkdownFileVersions,
  diffWebPageVersions,
  getMarkdownFile,
  getMarkdownFileVersion,
  getWebPage,
  getWebPageLinks,
  getWebPageVersion,
  listMarkdownFiles,
  listMarkdownFileVersions,
  listWebPages,
  listWebPageVersions,
  pushMarkdown,
  pushMarkdownFile,
  pushWebPage,
  restoreMarkdownFileVersion,
  restoreWebPageVersion,
  searchWebPages
} from "./tools/PageTools.ts"
import { listSources, readSource } from "./tools/SourceTools.ts"

export const catalogue = [
  searchBuckets,
  listBuckets,
  getBucket,
  createBucket,
  forkBucket,
  updateBucketMetadata,
  listMyBuckets,
  updateBucket,
  deleteBucket,
  setCoverWebPage,
  setGroundingBucket,
  listWebPages,
  getWebPage,
  searchWebPages,
  getWebPageLinks,
  pushWebPage,
  deleteWebPage,
  listWebPageVersions,
  getWebPageVersion,
  restoreWebPageVersion,
  pushMarkdownFile,
  pushMarkdown,
  getMarkdownFile,
  listMarkdownFiles,
  deleteMarkdownFile,
  listMarkdownFileVersions,
  getMarkdownFileVersion,
  restoreMarkdownFileVersion,
  pushMicroDb,
  listMicroDbTables,
  getMicroDbSchema,
  queryMicroDbRows,
  getMicroDbRow,
  createMicroDbTable,
  updateMicroDbTable,
  deleteMicroDbTable,
  addMicroDbColumn,
  updateMicroDbColumn,
  deleteMicroDbColumn,
  insertMicroDbRow,
  insertMicroDbRows,
  updateMicroDbRow,
  deleteMicroDbRow,
  snapshotMicroDb,
  pushImage,
  listSources,
  readSource,
  // Issue 18's additions (the 47 spec tools above keep their order).
  editWebPage,
  editMarkdownFile,
  diffWebPageVersions,
  diffMarkdownFileVersions,
  listAgentChanges,
  revertAgentChanges
] as const

export const publicCatalogue = catalogue.filter((entry) => entry.scope === "mcp:read")

/**
 * The services the catalogue's tools need from the application's runtime: everything their Effects require but
 * the caller (CurrentPrincipal), which the dispatcher provides per call.
 */
export type CatalogueServices = Exclude<
  Effect.Effect.Context<ReturnType<(typeof catalogue)[number]["run"]>>,
  CurrentPrincipal
>
