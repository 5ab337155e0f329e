/** `dock members`: grant, list and remove collaborators on a Dock (admin API). */
import type { Member } from "@dock/domain/api"
import { Command, Options } from "@effect/cli"
import { adminCommand } from "../ApiCommand.ts"
import { dockOption, userOption } from "./Options.ts"

const memberLine = (member: Member) =>
  `${member.username}  ${member.role}  (user ${member.user_id}, Dock ${member.bucket_id})`

const add = adminCommand(
  "add",
  {
    dock: dockOption,
    user: userOption,
    role: Options.choice("role", ["editor", "viewer"]).pipe(
      Options.withDescription(
        "editor (default) can write; viewer can read a private Dock; only the owner is ever owner"
      ),
      Options.withDefault("editor" as const)
    )
  },
  (options) => ({
    call: (client) =>
      client.adminMembers.add({ payload: { dock: options.dock, user: options.user, role: options.role } }),
    human: (member) => `Granted ${memberLine(member)}`
  })
).pipe(Command.withDescription("Grant a user a role on a Dock (or change it)"))

const list = adminCommand("list", { dock: dockOption }, (options) => ({
  call: (client) => client.adminMembers.list({ urlParams: { dock: options.dock } }),
  human: (members) => members.length === 0 ? "No collaborators" : members.map(memberLine).join("\n")
})).pipe(Command.withDescription("List a Dock's collaborators"))

const remove = adminCommand("remove", { dock: dockOption, user: userOption }, (options) => ({
  call: (client) => client.adminMembers.remove({ payload: { dock: options.dock, user: options.user } }),
  human: (member) => `Removed ${memberLine(member)}`
})).pipe(Command.withDescription("Remove a user's grant on a Dock"))

export const members = Command.make("members").pipe(
  Command.withDescription("Collaborators on Docks (admin API)"),
  Command.withSubcommands([add, list, remove])
)
