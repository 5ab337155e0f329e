/** `dock register` and `dock claim`: an agent's anonymous registration and a person's claim of it (public API). */
import type { AnonymousRegistration } from "@dock/domain/api"
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { present, publicCommand } from "../ApiCommand.ts"
import { CliFailure } from "../CliFailure.ts"
import { saveRegistration } from "../Credentials.ts"

export const register = publicCommand(
  "register",
  { label: Options.text("label").pipe(Options.withDescription("The agent's visible name"), Options.optional) },
  (options, { json }) => ({
    call: (client, baseUrl) =>
      client.agentAuth.register({
        payload: {
          type: "anonymous",
          requested_credential_type: "mcp_write_token",
          ...present("agent_label", options.label)
        }
      }).pipe(
        Effect.filterOrFail(
          (registration): registration is AnonymousRegistration => registration.registration_type === "anonymous",
          () => new CliFailure({ message: "The server answered with another kind of registration" })
        ),
        Effect.tap((registration) =>
          saveRegistration(baseUrl, registration).pipe(
            Effect.tap((file) => json ? Effect.void : Console.log(`Saved to ${file} (mode 0600).`)),
            Effect.mapError((error) =>
              new CliFailure({ message: `Registered, but could not save the credentials: ${error.message}` })
            )
          )
        )
      ),
    human: (registration) =>
      [
        `Registered an anonymous sandbox: ${registration.sandbox_bucket.slug} (${registration.sandbox_bucket.id})`,
        `Token (shown once):`,
        `  ${registration.credential}`,
        `Claim token: ${registration.registration_id}`,
        `Claim window ends: ${registration.expires_at}`,
        "",
        registration.claim_instructions
      ].join("\n")
  })
).pipe(
  Command.withDescription("Register an anonymous agent: a sandbox Dock and a write token (saved locally, mode 0600)")
)

const registrationOption = Options.text("registration").pipe(
  Options.withDescription("The registration id (claim token)")
)

const start = publicCommand(
  "start",
  {
    registration: registrationOption,
    email: Options.text("email").pipe(Options.withDescription("The person's email; a six-digit code is mailed there"))
  },
  (options) => ({
    call: (client) => client.agentAuth.claim({ payload: { claim_token: options.registration, email: options.email } }),
    human: (answer) =>
      `A code was mailed to ${options.email}. Claim token valid until ${
        "claim_token_expires" in answer ? answer.claim_token_expires : "-"
      }.`
  })
).pipe(Command.withDescription("Start claiming a registration: mail a six-digit code"))

const complete = publicCommand(
  "complete",
  {
    registration: registrationOption,
    otp: Options.text("otp").pipe(Options.withDescription("The six-digit code from the mail"))
  },
  (options) => ({
    call: (client) => client.agentAuth.claim({ payload: { claim_token: options.registration, otp: options.otp } }),
    human: (answer) =>
      "bucket" in answer
        ? `Claimed: ${answer.bucket.slug} now belongs to ${answer.account.username} (${answer.account.email}); the token works until ${answer.token.expires_at}.`
        : "credential" in answer
        ? `Confirmed ${answer.account.email}. Token (shown once):\n  ${answer.credential}`
        : `Status: ${answer.status}`
  })
).pipe(Command.withDescription("Complete a claim with the mailed code"))

export const claim = Command.make("claim").pipe(
  Command.withDescription("Claim an anonymous sandbox for a person"),
  Command.withSubcommands([start, complete])
)
