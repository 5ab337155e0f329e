/**
 * The AgentChanges port: what one token changed since a time, and its revert (docs/undo.md). Owners list and
 * revert in their Docks (MCP); the operator in any Dock (admin API). Pages are written through Parts and rows
 * through the Micro DB's repo; reading what changed is this capability's own SQL (AgentChangesRepo).
 */
import { Context, type Effect } from "effect"
import type { DockTarget } from "../Docks/Dock.ts"
import type {
  BadRequest,
  NotFound,
  PermissionDenied,
  TierLimitExceeded,
  Unauthorized,
  Unavailable,
  ValidationError
} from "../Errors.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { AgentChangeList, RevertResult } from "./AgentChange.ts"

export interface AgentQuery {
  /** the token's id (a UUID) */
  readonly tokenId: string
  /** an ISO 8601 time */
  readonly since: string
}

export type AgentChangesError = ValidationError | NotFound | BadRequest | PermissionDenied | Unauthorized
export type RevertError = AgentChangesError | TierLimitExceeded | Unavailable

export class AgentChanges extends Context.Tag("@dock/domain/AgentChanges")<AgentChanges, {
  /** The token's changes in the named Dock, or with none in every Dock the caller owns; owners only. */
  readonly list: (
    target: DockTarget | undefined,
    query: AgentQuery
  ) => Effect.Effect<AgentChangeList, AgentChangesError, CurrentPrincipal>
  /** Reverts them (or with dryRun shows the plan): one transaction per Dock under its lock; owners only. */
  readonly revert: (
    target: DockTarget | undefined,
    query: AgentQuery & { readonly dryRun: boolean }
  ) => Effect.Effect<RevertResult, RevertError, CurrentPrincipal>
  /** The operator's revert: any Dock (named by id or owner/slug), or every Dock the token changed. */
  readonly revertAsOperator: (
    dock: string | undefined,
    query: AgentQuery & { readonly dryRun: boolean }
  ) => Effect.Effect<RevertResult, ValidationError | NotFound | TierLimitExceeded | Unavailable>
  /** Purges trashed pages and row change log entries older than the retention period; answers how many. */
  readonly sweep: Effect.Effect<{ readonly pages: number; readonly rowChanges: number }>
}>() {}
