/** Every tool this server offers, in one list: `tools/list` order. Read tools are also served on /mcp/public. */
import { createBucket } from "./tools/DockTools.ts"

export const catalogue = [createBucket] as const

export const publicCatalogue = catalogue.filter((entry) => entry.annotations.readOnlyHint)
