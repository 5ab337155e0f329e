/**
 * The `dock` command line. Operator commands talk to a running server through the admin API; `serve` and
 * `migrate` act on the configured database directly. `--json` prints exactly one JSON document on stdout;
 * every failure is one line on stderr and exit code 1. Each command group lives in its own file under commands/.
 */
import { Command } from "@effect/cli"
import { claim, register } from "./commands/Agents.ts"
import { members } from "./commands/Members.ts"
import { revert } from "./commands/Revert.ts"
import { sandboxes } from "./commands/Sandboxes.ts"
import { migrate, serve } from "./commands/Server.ts"
import { share } from "./commands/Share.ts"
import { sources } from "./commands/Sources.ts"
import { tokens } from "./commands/Tokens.ts"
import { users } from "./commands/Users.ts"

export { CliFailure } from "./CliFailure.ts"

const dock = Command.make("dock").pipe(
  Command.withDescription("Dock: an agent-first store for living artifacts"),
  Command.withSubcommands([serve, migrate, users, tokens, members, sources, share, sandboxes, revert, register, claim])
)

export const cli = Command.run(dock, { name: "dock", version: "0.0.0" })
