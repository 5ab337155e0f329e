/**
 * The database migrations, in the order they are applied. Each is plain SQL that runs on PostgreSQL 15+
 * and on PGlite. Never edit a migration that has landed: add a new file and a new entry here.
 */
import foundation from "./0001_foundation.ts"
import identity from "./0002_identity.ts"
import pages from "./0003_pages.ts"
import links from "./0004_links.ts"
import searchRank from "./0005_search_rank.ts"
import microDb from "./0006_micro_db.ts"
import images from "./0007_images.ts"
import historyUsage from "./0008_history_usage.ts"
import searchRecent from "./0009_search_recent.ts"
import microDbCells from "./0010_micro_db_cells.ts"
import requestCounters from "./0011_request_counters.ts"
import versionLines from "./0012_version_lines.ts"
import idempotencyKeys from "./0013_idempotency_keys.ts"
import agentChanges from "./0014_agent_changes.ts"
import sessions from "./0015_sessions.ts"
import shareLinks from "./0016_share_links.ts"
import oauth from "./0017_oauth.ts"
import dockPagesOrder from "./0018_dock_pages_order.ts"
import dockPagesAlphabetical from "./0019_dock_pages_alphabetical.ts"
import textCompression from "./0020_text_compression.ts"

export interface Migration {
  readonly id: number
  readonly name: string
  readonly sql: string
}

export const migrations: ReadonlyArray<Migration> = [
  { id: 1, name: "foundation", sql: foundation },
  { id: 2, name: "identity", sql: identity },
  { id: 3, name: "pages", sql: pages },
  { id: 4, name: "links", sql: links },
  { id: 5, name: "search_rank", sql: searchRank },
  { id: 6, name: "micro_db", sql: microDb },
  { id: 7, name: "images", sql: images },
  { id: 8, name: "history_usage", sql: historyUsage },
  { id: 9, name: "search_recent", sql: searchRecent },
  { id: 10, name: "micro_db_cells", sql: microDbCells },
  { id: 11, name: "request_counters", sql: requestCounters },
  { id: 12, name: "version_lines", sql: versionLines },
  { id: 13, name: "idempotency_keys", sql: idempotencyKeys },
  { id: 14, name: "agent_changes", sql: agentChanges },
  { id: 15, name: "sessions", sql: sessions },
  { id: 16, name: "share_links", sql: shareLinks },
  { id: 17, name: "oauth", sql: oauth },
  { id: 18, name: "dock_pages_order", sql: dockPagesOrder },
  { id: 19, name: "dock_pages_alphabetical", sql: dockPagesAlphabetical },
  { id: 20, name: "text_compression", sql: textCompression }
]
