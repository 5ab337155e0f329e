/**
 * Every domain service over an SqlClient, ready to provide. Infrastructure (the database, Limits, Features,
 * HmacKey, PublicBaseUrl, a Mailer) comes from outside: the server's main or the testing layer.
 */
import { Layer } from "effect"
import { AccountsLive } from "./Accounts/AccountsLive.ts"
import { ActivityLive } from "./Activity/ActivityLive.ts"
import { AgentChangesLive } from "./AgentChanges/AgentChangesLive.ts"
import { PostgresObjectStore } from "./Blobs/ObjectStore.ts"
import { ContentWorkersLive } from "./Content/ContentWorkers.ts"
import { DocksLive } from "./Docks/DocksLive.ts"
import { IdempotencyLive } from "./Idempotency/IdempotencyLive.ts"
import { ImageProcessorLive } from "./Images/ImageProcessor.ts"
import { ImagesLive } from "./Images/ImagesLive.ts"
import { MembersLive } from "./Members/MembersLive.ts"
import { MicroDbLive } from "./MicroDb/MicroDbLive.ts"
import { OAuthLive } from "./OAuth/OAuthLive.ts"
import { PagesLive } from "./Pages/PagesLive.ts"
import { PartsLive } from "./Parts/PartsLive.ts"
import { RateLimitsLive } from "./RateLimits/RateLimitsLive.ts"
import { RegistrationsLive } from "./Registrations/RegistrationsLive.ts"
import { SessionsLive } from "./Sessions/SessionsLive.ts"
import { ShareLinksLive } from "./ShareLinks/ShareLinksLive.ts"
import { SourcesLive } from "./Sources/SourcesLive.ts"
import { TokensLive } from "./Tokens/TokensLive.ts"
import { WriteRulesLive } from "./WriteRules.ts"

const Base = Layer.mergeAll(ActivityLive, RateLimitsLive, TokensLive, ContentWorkersLive)
const Rules = Layer.mergeAll(WriteRulesLive, PartsLive).pipe(Layer.provideMerge(Base))
// Accounts create each new user's default Dock through the Docks port.
const Services = AccountsLive.pipe(Layer.provideMerge(DocksLive), Layer.provideMerge(Rules))
/** Images over their two ports: the decoder (sharp) and the object store (PostgreSQL `blobs` by default). */
const ImagesWithPorts = ImagesLive.pipe(Layer.provideMerge(Layer.mergeAll(ImageProcessorLive, PostgresObjectStore)))

export const DomainLive = Layer.mergeAll(
  RegistrationsLive,
  SessionsLive,
  MembersLive,
  // Share links render their page through Pages.view.
  ShareLinksLive.pipe(Layer.provideMerge(PagesLive)),
  MicroDbLive,
  ImagesWithPorts,
  SourcesLive,
  IdempotencyLive,
  AgentChangesLive,
  OAuthLive
).pipe(Layer.provideMerge(Services))
