/**
 * `@dock/domain/testing`: every domain service on a fresh, migrated in-memory database (or a fresh database on
 * DOCK_TEST_DATABASE_URL), with default limits, both registration flows on, a random HMAC key and mail captured
 * in memory. One layer per test file:
 *
 *   layer(DomainTest)("my feature", (it) => { it.effect("…", () => Effect.gen(function*() { … })) })
 */
import { Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { TestDatabaseLive } from "./Database/TestDatabase.ts"
import { DomainLive } from "./DomainLive.ts"
import { Limits } from "./Limits.ts"
import { capturingMailer } from "./Mail/Mailer.ts"
import { Features, HmacKey, PublicBaseUrl } from "./Settings.ts"

export { scopedPostgresDatabase, TestDatabaseLive, testServerUrl } from "./Database/TestDatabase.ts"

export const TEST_BASE_URL = "http://dock.test"

/**
 * DomainTest with some limits or features changed, for testing caps without creating thousands of rows
 * (both registration flows are on unless `features` says otherwise).
 */
export const domainTestWith = (
  limits: Partial<typeof Limits.defaults>,
  features: Partial<typeof Features.defaults> = {}
) =>
  DomainLive.pipe(
    Layer.provideMerge(Layer.mergeAll(
      TestDatabaseLive,
      Layer.succeed(Limits, { ...Limits.defaults, ...limits }),
      Layer.succeed(Features, { anonymousRegistration: true, verifiedEmailRegistration: true, ...features }),
      Layer.succeed(HmacKey, Redacted.make(randomBytes(32).toString("hex"))),
      Layer.succeed(PublicBaseUrl, TEST_BASE_URL),
      capturingMailer
    ))
  )

/** Every domain service, Limits, PublicBaseUrl, a capturing Mailer and the SqlClient, on a fresh database. */
export const DomainTest = domainTestWith({})

/** Ordinary Markdown of a given size, the same every run (the render-limit tests and benches use it). */
export { ordinary, slowToRead } from "./Content/MarkdownSamples.ts"
