/**
 * The Sources port: list_sources and read_source for agents (through the one resolver, so a source is exactly as
 * visible as its Dock), and adding and archiving for the operator (admin API, `dock sources`).
 */
import { Context, type Effect } from "effect"
import type { Dock, DockTarget } from "../Docks/Dock.ts"
import type {
  BadRequest,
  InvalidFrontMatter,
  NotFound,
  TierLimitExceeded,
  Unavailable,
  ValidationError
} from "../Errors.ts"
import type { CurrentPrincipal } from "../Principal.ts"
import type { AddSourceRequest, Source, SourceWithText } from "./Source.ts"

export class Sources extends Context.Tag("@dock/domain/Sources")<Sources, {
  /** list_sources: the Dock named (else the grounding or default Dock) and its sources that are not archived. */
  readonly list: (
    target: DockTarget
  ) => Effect.Effect<
    { readonly dock: Dock; readonly sources: ReadonlyArray<Source> },
    NotFound | BadRequest,
    CurrentPrincipal
  >
  /** read_source: one source of that Dock, not archived, with its text; anything else is not_found. */
  readonly read: (
    target: DockTarget,
    sourceId: string
  ) => Effect.Effect<{ readonly dock: Dock; readonly source: SourceWithText }, NotFound | BadRequest, CurrentPrincipal>
  /** The operator adds a source to a Dock named by id or `owner/slug`. */
  readonly add: (
    input: AddSourceRequest
  ) => Effect.Effect<Source, NotFound | ValidationError | InvalidFrontMatter | TierLimitExceeded | Unavailable>
  /** The operator archives a source: it is listed and read no more. Archiving an archived source changes nothing. */
  readonly archive: (sourceId: string) => Effect.Effect<Source, NotFound>
  /** Every source of a Dock, archived ones too, for the operator. */
  readonly listAll: (dock: string) => Effect.Effect<ReadonlyArray<Source>, NotFound | ValidationError>
}>() {}
