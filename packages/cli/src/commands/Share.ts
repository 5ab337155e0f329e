/**
 * `dock share`: share links to pages (issue 16, item 7) over the admin API: the operator acts for the Dock's owner.
 * `create` prints the link's url once (it holds the secret); `list` shows metadata only; `revoke` ends a link at once.
 */
import type { ShareLink } from "@dock/domain/api"
import { Args, Command, Options } from "@effect/cli"
import { adminCommand, present } from "../ApiCommand.ts"
import { dockOption } from "./Options.ts"

const linkLine = (link: ShareLink) =>
  `${link.id}  ${link.status}  page ${link.page_slug ?? link.page_id}  by ${link.created_by ?? "(deleted user)"}` +
  `  created ${link.created_at}  expires ${link.expires_at ?? "never"}` +
  (link.revoked_at === null ? "" : `  revoked ${link.revoked_at}`)

const pageOption = Options.text("page").pipe(Options.withDescription("The page: its UUID or its slug in the Dock"))

const create = adminCommand(
  "create",
  {
    dock: dockOption,
    page: pageOption,
    expiresIn: Options.text("expires-in").pipe(
      Options.withDescription("How long the link lives, e.g. \"7 days\" or \"12 hours\" (default: until revoked)"),
      Options.optional
    )
  },
  (options) => ({
    call: (client) =>
      client.adminShareLinks.create({
        payload: { dock: options.dock, page: options.page, ...present("expires_in", options.expiresIn) }
      }),
    human: (link) =>
      `Share link ${link.id} (shown once; anyone with it can read the page):\n${link.url}\nExpires: ${
        link.expires_at ?? "never (until revoked)"
      }`
  })
).pipe(Command.withDescription("Make a share link to a page (private pages too), for the Dock's owner"))

const list = adminCommand(
  "list",
  { dock: dockOption, page: pageOption.pipe(Options.optional) },
  (options) => ({
    call: (client) =>
      client.adminShareLinks.list({ urlParams: { dock: options.dock, ...present("page", options.page) } }),
    human: (links) => links.length === 0 ? "No share links" : links.map(linkLine).join("\n")
  })
).pipe(Command.withDescription("List a Dock's share links (or one page's), revoked and expired ones too"))

const revoke = adminCommand(
  "revoke",
  { id: Args.text({ name: "link-id" }).pipe(Args.withDescription("The share link's id")) },
  (options) => ({
    call: (client) => client.adminShareLinks.revoke({ path: { id: options.id } }),
    human: (link) => `Revoked ${linkLine(link)}`
  })
).pipe(Command.withDescription("Revoke a share link: it answers 404 from the next request on"))

export const share = Command.make("share").pipe(
  Command.withDescription("Share links to pages (admin API)"),
  Command.withSubcommands([create, list, revoke])
)
