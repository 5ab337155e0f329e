/**
 * `@dock/domain/api`: the wire contract alone (the HttpApi, its error table and the shapes it carries), for
 * clients such as the CLI. It loads nothing of the database, content processing or rules, so that `dock --help`
 * and the admin commands start in a fraction of the time the whole domain takes.
 */
export type { User } from "./Accounts/User.ts"
export { type DockRevert, type RevertResult, type RevertStep, StepAction } from "./AgentChanges/AgentChange.ts"
export * from "./Api/DockApi.ts"
export { isDockError } from "./Errors.ts"
export type { Member } from "./Members/Member.ts"
export type { AnonymousRegistration, SandboxSummary, VerifiedEmailRegistration } from "./Registrations/Registration.ts"
export type { CreatedShareLink, ShareLink } from "./ShareLinks/ShareLink.ts"
export { type Source, SOURCE_CONTENT_MAX_BYTES } from "./Sources/Source.ts"
export { mediaTypeForFileName } from "./Sources/SourceFields.ts"
export type { TokenInfo } from "./Tokens/Token.ts"
