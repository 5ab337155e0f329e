/**
 * `idempotency_key` on every write tool (issue 18, item 2), added by the dispatcher to each catalogue entry of
 * scope `mcp:write`, so that a tool added to the catalogue takes it without a line of its own: its advertised
 * input schema gains the property, and the key is taken out of the arguments before the tool's own Schema decodes
 * them. The rules (claim, answer kept, conflict) are the domain's `Idempotency`.
 */
import { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_TTL } from "@dock/domain"
import { Duration, Schema } from "effect"

export const IDEMPOTENCY_KEY = "idempotency_key"

const KEY_DESCRIPTION = `Optional: a unique string (1 to ${IDEMPOTENCY_KEY_MAX} characters, e.g. a UUID) naming this ` +
  `write, so that it can be retried safely. A retry with the same key and the same arguments within ` +
  `${Duration.toHours(IDEMPOTENCY_TTL)} hours answers the first call's answer without writing again (also on ` +
  `another server instance); the same key with other arguments, or for another tool, is a conflict error, and so ` +
  `is a retry while the first call is still running (retry later). Keys are per token. A failed call keeps ` +
  `nothing: retrying it with its key runs it again.`

/** The key's Schema: what the dispatcher decodes it with. */
export const IdempotencyKey = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(IDEMPOTENCY_KEY_MAX),
  Schema.annotations({ description: KEY_DESCRIPTION })
)

/** The key as decoded by itself: an error path names `idempotency_key`. */
export const decodeKeyArgument = Schema.decodeUnknown(Schema.Struct({ [IDEMPOTENCY_KEY]: IdempotencyKey }), {
  errors: "all"
})

const KEY_JSON = {
  type: "string",
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX,
  description: KEY_DESCRIPTION
}

type Json = Record<string, unknown>

/**
 * A write tool's advertised input schema with `idempotency_key` among its properties (in each branch, for a
 * union of objects).
 */
export const withIdempotencyKey = (json: Json): Json => {
  const branches = json["anyOf"] ?? json["oneOf"]
  if (Array.isArray(branches) && json["properties"] === undefined) {
    const key = json["anyOf"] === undefined ? "oneOf" : "anyOf"
    return { ...json, [key]: branches.map((branch) => withIdempotencyKey(branch as Json)) }
  }
  return { ...json, properties: { ...(json["properties"] as Json | undefined), [IDEMPOTENCY_KEY]: KEY_JSON } }
}

/**
 * The arguments split into the key (absent when not sent) and the rest, which the tool decodes. Arguments that
 * are not an object are left to the tool's Schema to refuse.
 */
export const splitIdempotencyKey = (args: unknown): { readonly key: unknown; readonly rest: unknown } => {
  if (typeof args !== "object" || args === null || Array.isArray(args) || !Object.hasOwn(args, IDEMPOTENCY_KEY)) {
    return { key: undefined, rest: args }
  }
  const { [IDEMPOTENCY_KEY]: key, ...rest } = args as Json
  return { key, rest }
}
