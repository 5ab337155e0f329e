/**
 * A tool is data: its name, a description written for an LLM, input and output Schemas, annotations, the scope
 * it needs and one Effect that calls a domain service as the caller. The dispatcher does the rest.
 */
import type { CurrentPrincipal, DockError, Scope } from "@dock/domain"
import type { Effect, Schema } from "effect"

export interface ToolAnnotations {
  readonly readOnlyHint: boolean
  readonly destructiveHint: boolean
  readonly idempotentHint: boolean
}

export interface Tool<A, I, O, OI, R> {
  readonly name: string
  readonly description: string
  readonly input: Schema.Schema<A, I, never>
  readonly output: Schema.Schema<O, OI, never>
  readonly annotations: ToolAnnotations
  readonly scope: Scope
  readonly run: (input: A) => Effect.Effect<O, DockError, R | CurrentPrincipal>
}

// The catalogue holds tools of many shapes; the dispatcher only needs them generically.

export type AnyTool<R = any> = Tool<any, any, any, any, R>

export const tool = <A, I, O, OI, R>(definition: Tool<A, I, O, OI, R>): Tool<A, I, O, OI, R> => definition

export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true }
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false }
export const DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true }
