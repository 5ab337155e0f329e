/** Options shared by the commands that act on one Dock's collaborators or sources. */
import { Options } from "@effect/cli"

export const dockOption = Options.text("dock").pipe(Options.withDescription("The Dock: its id or owner/slug"))
export const userOption = Options.text("user").pipe(Options.withDescription("The user: email, username or id"))
