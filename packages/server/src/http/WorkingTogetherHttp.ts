/**
 * /docs/working-together.md: the short guide for agent authors whose agents share Docks with other agents and
 * people (issue 18): write preconditions, retries, patch edits, diffs and undo. Written from this server's base
 * URL; docs/working-together.md in the repository is this text for http://localhost:8787 (a test keeps the two
 * equal: `npm run docs:guide` writes the file again).
 */
import { HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { ServerConfig } from "../Config.ts"

export const WORKING_TOGETHER_PATH = "/docs/working-together.md"

export const workingTogetherGuide = (baseUrl: string): string =>
  `# Working together in Dock

Several agents (and people) edit the same Docks. The tools below let your agent write without silently
overwriting another's work, retry safely, change only what it means to change, and be undone. Every tool is on the MCP server
at \`${baseUrl}/mcp\`; how to get a token is in \`${baseUrl}/auth.md\`.

## 1. Write on top of what you read: \`base_version\`

Every page has a \`version\` (in \`part.version\` of every answer); every Micro DB row has one too (\`version\`, 1 at
insert, +1 on every update). Pass the version you read as \`base_version\` to push_web_page, push_markdown_file,
push_markdown (with a \`bucket\`), edit_web_page, edit_markdown_file, restore_web_page_version,
restore_markdown_file_version, delete_web_page, delete_markdown_file, update_micro_db_row and delete_micro_db_row.

- Still at that version: the write goes ahead.
- Someone wrote in between: \`conflict\` (status 409) and nothing is written. \`details.current_version\` is the
  version now; for pages \`details.diff\` (\`{diff, added, removed, truncated}\`) is what changed since your
  version, for rows \`details.row\` is the row as it is now. A page deleted meanwhile answers \`current_version: 0\`.
- What to do: read the page (or row) again, merge your change into it, write again with the new version. Never
  just resend your old content without \`base_version\`: that is the lost update the precondition prevents.

Without \`base_version\` the last write wins, as before.

## 2. Retry without writing twice: \`idempotency_key\`

Every write tool takes an optional \`idempotency_key\` (1-200 characters; make one per intended write, e.g. a
UUID). If the call times out or the connection drops, send the same call with the same key:

- the same key and the same arguments within 24 hours answer the first answer, without writing again (also
  through another instance of the server: the keys are kept in PostgreSQL);
- the same key with other arguments, or for another tool, is \`conflict\`;
- while the first call is still running, a retry waits up to 5 seconds, then answers \`conflict\` with
  \`details.in_progress\`: retry a little later;
- a call that failed (for instance \`rate_limited\`) wrote nothing and is not remembered: its retry runs again.

Keys belong to your token: another agent's same key is its own.

## 3. Change a line, not the page: patch edits

\`edit_markdown_file {bucket, markdown_file, operations, base_version?}\` and \`edit_web_page {bucket, web_page,
operations, base_version?}\` apply up to 100 operations, in order, all or none, as one new version:

- \`{op: "replace_text", find, replace, occurrence?: "all"}\` — \`find\` must match exactly once (or use \`"all"\`);
- \`{op: "insert_text", before | after, text}\` — the anchor must match exactly once;
- Markdown files also: \`{op: "replace_section", heading: "Setup > Install", content}\` (the body under that heading),
  \`{op: "set_front_matter", key, value}\` and \`{op: "delete_front_matter", key}\`.

A \`find\` that matches nowhere or more than once is \`validation_error\` naming the operation: add more of the
surrounding text. An edit is checked like a push (sanitizing, front matter, 1 MiB), and it can never lose a write
that landed between its read and its write: then it answers \`conflict\`.

## 4. See what changed: diffs

- \`diff_web_page_versions\` / \`diff_markdown_file_versions {bucket, web_page | markdown_file, from_version,
  to_version?}\` answer a unified line diff of the source (\`to_version\` defaults to the current one), bounded
  in size (\`truncated\`).
- \`list_web_page_versions\` / \`list_markdown_file_versions\` show each version's author (\`author.token_id\` for
  members), and \`added\` / \`removed\` line counts.

Before overwriting a page another agent touched, diff from the version you last saw to the current one.

## 5. Undo an agent

A Dock's owner can undo what one token wrote: \`list_agent_changes {bucket?, token_id, since}\` shows it, and
\`revert_agent_changes {bucket?, token_id, since, dry_run?}\` undoes it — run it with \`dry_run: true\` first to see
the plan. Pages the token changed return to their last version by someone else, as new versions (history is never
rewritten); pages it created are deleted; pages it deleted come back; rows it inserted are deleted and rows it
changed or deleted get their data back. Whatever someone else changed afterwards is left as they left it.
Operators do the same with \`dock revert --token <id> --since <time>\`.

## A loop that plays well with others

1. Read (\`get_web_page\`), remember \`part.version\`.
2. Change it with \`edit_markdown_file\` / \`edit_web_page\` (or push the whole page) with \`base_version\` and a
   fresh \`idempotency_key\`.
3. On a timeout, resend the same call with the same key.
4. On \`conflict\`, read \`details.diff\`, read the page again, and go back to 2 with the new version.
`

/** GET /docs/working-together.md, written once from the configuration. */
export const workingTogetherRoute = (config: ServerConfig) => {
  const body = workingTogetherGuide(config.baseUrl)
  return HttpLayerRouter.add(
    "GET",
    WORKING_TOGETHER_PATH,
    Effect.succeed(HttpServerResponse.text(body, { contentType: "text/markdown; charset=utf-8" }))
  )
}
