/** `dock revert`: undo one agent's (token's) changes since a time, in one Dock or every Dock it changed (admin API). */
import { type RevertResult, type RevertStep, StepAction } from "@dock/domain/api"
import { Command, Options } from "@effect/cli"
import { adminCommand, present } from "../ApiCommand.ts"

const stepLine = (step: RevertStep) => {
  const what = step.subject === "page"
    ? `page ${step.slug ?? step.page_id}`
    : step.subject === "row"
    ? `row ${step.row_id} of ${step.table ?? "a deleted table"}`
    : `schema ${step.change ?? ""}`
  const versions = step.to_version !== undefined
    ? ` v${step.from_version} -> v${step.to_version}${
      step.new_version === undefined ? "" : ` (now v${step.new_version})`
    }`
    : ""
  return `  ${step.action}  ${what}${versions}${step.note === undefined ? "" : `: ${step.note}`}`
}

/** The order the counts are printed in. */
const ACTIONS = StepAction.literals

const human = (result: RevertResult) => {
  const head = result.dry_run
    ? `Plan to revert token ${result.token_id} since ${result.since} (dry run: nothing changed)`
    : `Reverted token ${result.token_id} since ${result.since}`
  if (result.buckets.length === 0) return `${head}\nThe token changed nothing since then`
  return [
    head,
    ...result.buckets.flatMap((bucket) => [
      `${bucket.bucket_path} (${bucket.bucket_id}): ${
        ACTIONS.filter((action) => bucket.counts[action] !== undefined)
          .map((action) => `${bucket.counts[action]} ${action}`)
          .join(", ") || "nothing to do"
      }`,
      ...bucket.steps.map(stepLine),
      ...(bucket.truncated ? ["  … (more steps than shown)"] : [])
    ])
  ].join("\n")
}

export const revert = adminCommand(
  "revert",
  {
    token: Options.text("token").pipe(Options.withDescription("The agent's token id (a UUID)")),
    since: Options.text("since").pipe(
      Options.withDescription("An ISO 8601 time (2026-05-01T12:00:00Z): changes made at or after it are reverted")
    ),
    dock: Options.text("bucket").pipe(
      Options.withAlias("dock"),
      Options.withDescription("Only this Dock (its id or owner/slug); default: every Dock the token changed"),
      Options.optional
    ),
    dryRun: Options.boolean("dry-run").pipe(Options.withDescription("Print the plan and change nothing"))
  },
  (options) => ({
    call: (client) =>
      client.adminRevert.revert({
        payload: {
          token: options.token,
          since: options.since,
          ...present("dock", options.dock),
          dry_run: options.dryRun
        }
      }),
    human
  })
).pipe(Command.withDescription("Undo what one agent (token) changed since a time: pages, deleted pages and rows"))
