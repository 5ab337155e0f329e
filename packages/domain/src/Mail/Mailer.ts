/**
 * The Mailer port: how domain rules send mail (claim codes). The server provides SMTP or the on-disk outbox;
 * tests use `capturingMailer`, which keeps every message in memory for assertions.
 */
import { Context, Data, Effect, Layer, Ref } from "effect"

export interface OutgoingMail {
  readonly to: string
  readonly subject: string
  readonly text: string
}

export class MailError extends Data.TaggedError("MailError")<{ readonly message: string; readonly cause?: unknown }> {}

export class Mailer extends Context.Tag("@dock/domain/Mailer")<Mailer, {
  readonly send: (mail: OutgoingMail) => Effect.Effect<void, MailError>
}>() {}

/** The mail a capturing Mailer has accepted, oldest first. */
export class CapturedMail extends Context.Tag("@dock/domain/CapturedMail")<CapturedMail, {
  readonly all: Effect.Effect<ReadonlyArray<OutgoingMail>>
  readonly to: (address: string) => Effect.Effect<ReadonlyArray<OutgoingMail>>
}>() {}

export const capturingMailer: Layer.Layer<Mailer | CapturedMail> = Layer.effectContext(
  Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<OutgoingMail>>([])
    return Context.make(Mailer, { send: (mail) => Ref.update(sent, (all) => [...all, mail]) }).pipe(
      Context.add(CapturedMail, {
        all: Ref.get(sent),
        to: (address) =>
          Effect.map(Ref.get(sent), (all) => all.filter((mail) => mail.to.toLowerCase() === address.toLowerCase()))
      })
    )
  })
)
