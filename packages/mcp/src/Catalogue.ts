/** Every tool this server offers, in one list: `tools/list` order. Tools needing only mcp:read are also served on /mcp/public. */
import { createBucket, deleteBucket, listMyBuckets, updateBucket } from "./tools/DockTools.ts"

export const catalogue = [listMyBuckets, createBucket, updateBucket, deleteBucket] as const

export const publicCatalogue = catalogue.filter((entry) => entry.scope === "mcp:read")
