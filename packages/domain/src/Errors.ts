/**
 * The one error table. Each spec error code (plus `conflict` and `unavailable`) is one tagged error class
 * carrying its code and HTTP status; every edge (HTTP, MCP, CLI) renders the same body from it:
 * `{"error":{"code","status","message","details"?,"retry_after_seconds"?,"request_id"?}}`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/** The error codes of spec §7. */
export const SpecErrorCodes = [
  "unauthorized",
  "permission_denied",
  "forbidden",
  "not_found",
  "bad_request",
  "validation_error",
  "tier_limit_exceeded",
  "rate_limited",
  "internal",
  "invalid_front_matter",
  "invalid_slug"
] as const
export type SpecErrorCode = (typeof SpecErrorCodes)[number]

/** Spec codes plus what this service adds: write preconditions (409), oversized bodies (413), "not ready" (503). */
export type ErrorCode = SpecErrorCode | "conflict" | "payload_too_large" | "unavailable"

/** HTTP status of each code (architecture §6). */
export const ErrorStatus = {
  unauthorized: 401,
  permission_denied: 403,
  forbidden: 403,
  not_found: 404,
  bad_request: 400,
  validation_error: 400,
  invalid_front_matter: 400,
  invalid_slug: 400,
  conflict: 409,
  payload_too_large: 413,
  tier_limit_exceeded: 403,
  rate_limited: 429,
  internal: 500,
  unavailable: 503
} as const satisfies Record<ErrorCode, number>

const fields = {
  message: Schema.String,
  details: Schema.optional(Schema.Unknown)
}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields) {
  readonly code = "unauthorized"
  readonly status = ErrorStatus.unauthorized
}
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", fields) {
  readonly code = "permission_denied"
  readonly status = ErrorStatus.permission_denied
}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields) {
  readonly code = "forbidden"
  readonly status = ErrorStatus.forbidden
}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {
  readonly code = "not_found"
  readonly status = ErrorStatus.not_found
}
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fields) {
  readonly code = "bad_request"
  readonly status = ErrorStatus.bad_request
}
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", fields) {
  readonly code = "validation_error"
  readonly status = ErrorStatus.validation_error
}
export class InvalidFrontMatter extends Schema.TaggedError<InvalidFrontMatter>()("InvalidFrontMatter", fields) {
  readonly code = "invalid_front_matter"
  readonly status = ErrorStatus.invalid_front_matter
}
export class InvalidSlug extends Schema.TaggedError<InvalidSlug>()("InvalidSlug", fields) {
  readonly code = "invalid_slug"
  readonly status = ErrorStatus.invalid_slug
}
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields) {
  readonly code = "conflict"
  readonly status = ErrorStatus.conflict
}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields) {
  readonly code = "payload_too_large"
  readonly status = ErrorStatus.payload_too_large
}
export class TierLimitExceeded extends Schema.TaggedError<TierLimitExceeded>()("TierLimitExceeded", fields) {
  readonly code = "tier_limit_exceeded"
  readonly status = ErrorStatus.tier_limit_exceeded
}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...fields,
  retry_after_seconds: Schema.Number
}) {
  readonly code = "rate_limited"
  readonly status = ErrorStatus.rate_limited
}
export class Internal extends Schema.TaggedError<Internal>()("Internal", {
  ...fields,
  request_id: Schema.optional(Schema.String)
}) {
  readonly code = "internal"
  readonly status = ErrorStatus.internal
}
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", fields) {
  readonly code = "unavailable"
  readonly status = ErrorStatus.unavailable
}

/**
 * Every error class by its code. The `satisfies` clause is the compile-time check: a spec code without a
 * class, or a class whose `code` is not its key, fails `tsc`.
 */
export const ErrorClasses = {
  unauthorized: Unauthorized,
  permission_denied: PermissionDenied,
  forbidden: Forbidden,
  not_found: NotFound,
  bad_request: BadRequest,
  validation_error: ValidationError,
  invalid_front_matter: InvalidFrontMatter,
  invalid_slug: InvalidSlug,
  conflict: Conflict,
  payload_too_large: PayloadTooLarge,
  tier_limit_exceeded: TierLimitExceeded,
  rate_limited: RateLimited,
  internal: Internal,
  unavailable: Unavailable
} as const satisfies { readonly [K in ErrorCode]: new(...args: any) => { readonly code: K; readonly status: number } }

export type DockError = InstanceType<(typeof ErrorClasses)[ErrorCode]>

export const isDockError = (u: unknown): u is DockError =>
  typeof u === "object" && u !== null && "_tag" in u && "code" in u &&
  Object.values(ErrorClasses).some((Class) => u instanceof Class)

/** The body every error response carries, over HTTP and inside MCP tool results. */
export interface ErrorBody {
  readonly error: {
    readonly code: ErrorCode
    readonly status: number
    readonly message: string
    readonly details?: unknown
    readonly retry_after_seconds?: number
    readonly request_id?: string
  }
}

export const errorBody = (error: DockError): ErrorBody => ({
  error: {
    code: error.code,
    status: error.status,
    message: error.message,
    ...(error.details === undefined ? {} : { details: error.details }),
    ...("retry_after_seconds" in error ? { retry_after_seconds: error.retry_after_seconds } : {}),
    ...("request_id" in error && error.request_id !== undefined ? { request_id: error.request_id } : {})
  }
})

/**
 * The wire form of an error class for an HttpApi contract: the class on the Type side, the error body on the
 * Encoded side, annotated with the class's HTTP status. HttpApiClient decodes it back into the class.
 */
export const wire = <K extends ErrorCode>(code: K) => {
  const Class = ErrorClasses[code] as unknown as Schema.Schema<DockErrorOf<K>, any, never> & {
    new(props: any): DockErrorOf<K>
    readonly fields: Schema.Struct.Fields
  }
  const status = ErrorStatus[code]
  // The body carries exactly the class's own fields (so a decoded body always constructs the class).
  const { _tag: _omitTag, ...fields } = Class.fields
  const Body = Schema.Struct({
    error: Schema.Struct({ code: Schema.Literal(code), status: Schema.Literal(status), ...fields })
  })
  return Schema.transform(Body, Schema.typeSchema(Class), {
    strict: false,
    decode: ({ error }) => {
      const { code: _code, status: _status, ...props } = error as Record<string, unknown>
      return new Class(props)
    },
    encode: (error) => errorBody(error as DockError)
  }).annotations(HttpApiSchema.annotations({ status }))
}
type DockErrorOf<K extends ErrorCode> = InstanceType<(typeof ErrorClasses)[K]>
