/** `dock sandboxes`: list anonymous sandboxes and sweep expired ones (admin API). */
import type { SandboxSummary } from "@dock/domain/api"
import { Command, Options } from "@effect/cli"
import { adminCommand, present } from "../ApiCommand.ts"

const sandboxLine = (sandbox: SandboxSummary) =>
  `${
    sandbox.bucket_slug ?? "(deleted)"
  }  ${sandbox.status}  created ${sandbox.created_at}  window ends ${sandbox.expires_at}`

const list = adminCommand(
  "list",
  {
    status: Options.choice("status", ["unclaimed", "claimed", "expired"]).pipe(
      Options.withDescription("Only sandboxes in this state"),
      Options.optional
    )
  },
  (options) => ({
    call: (client) => client.adminSandboxes.list({ urlParams: present("status", options.status) }),
    human: (sandboxes) => sandboxes.length === 0 ? "No sandboxes" : sandboxes.map(sandboxLine).join("\n")
  })
).pipe(Command.withDescription("List anonymous sandboxes"))

const sweep = adminCommand("sweep", {}, () => ({
  call: (client) => client.adminSandboxes.sweep(),
  human: (result) => `Expired ${result.expired} sandboxes, purged ${result.purged}`
})).pipe(Command.withDescription("Expire and purge sandboxes now (runs to completion)"))

export const sandboxes = Command.make("sandboxes").pipe(
  Command.withDescription("Anonymous sandboxes (admin API)"),
  Command.withSubcommands([list, sweep])
)
