/** `POST /agent/auth` and `POST /agent/auth/claim`: one domain call each. */
import { DockApi, Registrations } from "@dock/domain"
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { clientAddress } from "./ClientAddress.ts"

export const agentAuthHttp = (trustProxy: boolean) =>
  HttpApiBuilder.group(DockApi, "agentAuth", (handlers) =>
    Effect.gen(function*() {
      const registrations = yield* Registrations
      return handlers
        .handle(
          "register",
          ({ payload, request }) => registrations.register(payload, clientAddress(request, trustProxy))
        )
        .handle("claim", ({ payload }) => registrations.claim(payload))
    }))
