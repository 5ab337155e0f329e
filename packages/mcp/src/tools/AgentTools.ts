/**
 * Undo an agent (issue 18, docs/undo.md): list_agent_changes and revert_agent_changes, for Dock owners. One
 * domain call each (AgentChanges).
 */
import { AgentChangeList, AgentChanges, type DockTarget, RevertResult } from "@dock/domain"
import { Effect, Schema } from "effect"
import { DESTRUCTIVE, READ, tool } from "../Tool.ts"
import { optional, Text, WriteTarget } from "./Params.ts"

const TokenIdParam = Text(100).pipe(
  Schema.annotations({
    description: "The agent's token id (a UUID): get_bucket's recent_activity shows the token_id of each write " +
      "to Dock members"
  })
)
const SinceParam = Text(64).pipe(
  Schema.annotations({
    description: "An ISO 8601 time, such as 2026-05-01T12:00:00Z: the changes made at or after it count"
  })
)

const AgentFields = { ...WriteTarget, token_id: TokenIdParam, since: SinceParam }

const targetOf = (target: DockTarget): DockTarget | undefined =>
  target.bucket === undefined && target.bucket_id === undefined && target.bucket_path === undefined
    ? undefined
    : target

export const listAgentChanges = tool({
  name: "list_agent_changes",
  description: "List what one agent (a token) changed since a time, in a Dock you own (`bucket`) or, with no Dock " +
    "named, in every Dock you own. Only a Dock's owner may look. Returns `{ token_id, since, buckets: [{ bucket_id, " +
    "bucket_path, pages: [{ page_id, slug, title, version, versions: [{ version, reason, created_at }], created }], " +
    "deleted_pages: [{ page_id, slug, title, version, deleted_at }], row_changes: [{ table_id, table, row_id, op, " +
    "at }], schema_changes: [{ action, subject_id, details, at }], truncated }] }`; each list holds at most 500 " +
    "entries (`truncated` says when there were more). Errors: validation_error (token_id not a UUID, since not an " +
    "ISO 8601 time or in the future), permission_denied (not the Dock's owner), not_found (no such Dock).",
  input: Schema.Struct(AgentFields),
  output: AgentChangeList,
  annotations: READ,
  scope: "mcp:read",
  run: ({ since, token_id, ...target }) =>
    Effect.flatMap(AgentChanges, (changes) => changes.list(targetOf(target), { tokenId: token_id, since }))
})

export const revertAgentChanges = tool({
  name: "revert_agent_changes",
  description: "Undo what one agent (a token) changed since a time, in a Dock you own (`bucket`) or, with no Dock " +
    "named, in every Dock you own; only a Dock's owner may. Run it with `dry_run: true` first: that returns the " +
    "plan and changes nothing. Each page the agent changed returns to the last version someone else left it in, as " +
    "a new version (reason \"reverted\"; history is never rewritten); pages it created are deleted; pages it deleted " +
    "come back with their history (for 30 days after the delete); rows it inserted are deleted, rows it changed or " +
    "deleted get their data back. What someone else changed after the agent is left alone (a `skip` step says so), " +
    "and table or column changes are listed as `not_reverted`. One transaction per Dock. Returns `{ dry_run, " +
    "token_id, since, buckets: [{ bucket_id, bucket_path, steps: [{ subject, action, page_id, slug, table, row_id, " +
    "from_version, to_version, new_version, change, note }], counts, truncated }] }`. Errors: validation_error " +
    "(token_id not a UUID, since not an ISO 8601 time or in the future), permission_denied (not the Dock's owner, " +
    "or a read-only token), not_found (no such Dock), tier_limit_exceeded (what comes back does not fit the caps: " +
    "nothing changes).",
  input: Schema.Struct({
    ...AgentFields,
    dry_run: optional(Schema.Boolean.pipe(
      Schema.annotations({ description: "true: return the plan and change nothing (default false)" })
    ))
  }),
  output: RevertResult,
  annotations: DESTRUCTIVE,
  scope: "mcp:write",
  run: ({ dry_run, since, token_id, ...target }) =>
    Effect.flatMap(
      AgentChanges,
      (changes) => changes.revert(targetOf(target), { tokenId: token_id, since, dryRun: dry_run ?? false })
    )
})
