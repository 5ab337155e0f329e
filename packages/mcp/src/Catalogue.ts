/** Every tool this server offers, in one list: `tools/list` order. Tools needing only mcp:read are also served on /mcp/public. */
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
import {
  deleteMarkdownFile,
  deleteWebPage,
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
  restoreMarkdownFileVersion
] as const

export const publicCatalogue = catalogue.filter((entry) => entry.scope === "mcp:read")
