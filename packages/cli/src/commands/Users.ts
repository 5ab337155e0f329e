/** `dock users`: create and list users (admin API). */
import type { User } from "@dock/domain/api"
import { Command, Options } from "@effect/cli"
import { adminCommand, present } from "../ApiCommand.ts"

const userLine = (user: User) =>
  `${user.username}  ${user.email ?? "-"}  ${user.kind}${
    user.confirmed ? "" : " (unconfirmed)"
  }  id ${user.id}  default Dock ${user.default_bucket_id ?? "-"}`

const create = adminCommand(
  "create",
  {
    email: Options.text("email").pipe(Options.withDescription("The person's email address")),
    username: Options.text("username").pipe(
      Options.withDescription("URL-safe name (default: derived from the email)"),
      Options.optional
    )
  },
  (options) => ({
    call: (client) =>
      client.adminUsers.create({ payload: { email: options.email, ...present("username", options.username) } }),
    human: (user) => `Created user ${userLine(user)}`
  })
).pipe(Command.withDescription("Create a confirmed user (with a default Dock)"))

const list = adminCommand("list", {}, () => ({
  call: (client) => client.adminUsers.list({ urlParams: {} }),
  human: (users) => users.length === 0 ? "No users" : users.map(userLine).join("\n")
})).pipe(Command.withDescription("List users"))

export const users = Command.make("users").pipe(
  Command.withDescription("Manage users (admin API)"),
  Command.withSubcommands([create, list])
)
