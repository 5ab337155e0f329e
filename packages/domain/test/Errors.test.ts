// The one error table: each code's class, its HTTP status, the body every edge renders, and the wire schema
// that turns a body back into the class.
import { HttpApiSchema } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import {
  type DockError,
  errorBody,
  ErrorClasses,
  type ErrorCode,
  ErrorStatus,
  Internal,
  isDockError,
  NotFound,
  RateLimited,
  SpecErrorCodes,
  wire
} from "../src/Errors.ts"

const codes = Object.keys(ErrorClasses) as ReadonlyArray<ErrorCode>

/** An instance of the class for `code`, with the fields its constructor requires. */
const instance = (code: ErrorCode, props: { message: string; details?: unknown } = { message: `a ${code}` }) =>
  code === "rate_limited"
    ? new RateLimited({ ...props, retry_after_seconds: 7 })
    : new (ErrorClasses[code] as unknown as new(props: { message: string; details?: unknown }) => DockError)(props)

describe("the error table", () => {
  it("has a class for every spec error code", () => {
    for (const code of SpecErrorCodes) expect(ErrorClasses).toHaveProperty(code)
    expect(codes).toEqual(expect.arrayContaining([...SpecErrorCodes, "conflict", "payload_too_large", "unavailable"]))
    expect(codes).toHaveLength(SpecErrorCodes.length + 3)
  })

  it("has a status for every class, and no status without a class", () => {
    expect(Object.keys(ErrorStatus).sort()).toEqual([...codes].sort())
  })

  it.each(codes)("%s: the class carries its own code and status", (code) => {
    const error = instance(code)
    expect(error.code).toBe(code)
    expect(error.status).toBe(ErrorStatus[code])
    expect(error).toBeInstanceOf(ErrorClasses[code])
    expect(error).toBeInstanceOf(Error)
    expect(isDockError(error)).toBe(true)
  })

  it("gives the statuses of architecture §6", () => {
    expect(ErrorStatus).toEqual({
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
    })
  })

  it("does not take look-alikes for domain errors", () => {
    expect(isDockError({ _tag: "NotFound", code: "not_found", status: 404, message: "x" })).toBe(false)
    expect(isDockError(new Error("x"))).toBe(false)
    expect(isDockError(null)).toBe(false)
    expect(isDockError("not_found")).toBe(false)
  })
})

describe("errorBody", () => {
  it.each(codes.filter((code) => code !== "rate_limited"))("%s: code, status and message, nothing else", (code) => {
    expect(errorBody(instance(code))).toStrictEqual({
      error: { code, status: ErrorStatus[code], message: `a ${code}` }
    })
  })

  it("adds details only when they are set, even when they are falsy", () => {
    expect(errorBody(new NotFound({ message: "m", details: { field: "id" } })).error.details).toEqual({ field: "id" })
    expect(errorBody(new NotFound({ message: "m", details: 0 })).error).toHaveProperty("details", 0)
    expect(errorBody(new NotFound({ message: "m", details: null })).error).toHaveProperty("details", null)
    expect(errorBody(new NotFound({ message: "m" })).error).not.toHaveProperty("details")
  })

  it("rate_limited always carries retry_after_seconds", () => {
    expect(errorBody(new RateLimited({ message: "slow down", retry_after_seconds: 12 }))).toStrictEqual({
      error: { code: "rate_limited", status: 429, message: "slow down", retry_after_seconds: 12 }
    })
  })

  it("internal carries request_id only when set", () => {
    expect(errorBody(new Internal({ message: "boom", request_id: "req-1" }))).toStrictEqual({
      error: { code: "internal", status: 500, message: "boom", request_id: "req-1" }
    })
    expect(errorBody(new Internal({ message: "boom" })).error).not.toHaveProperty("request_id")
  })

  it("is plain JSON", () => {
    const body = errorBody(new RateLimited({ message: "m", details: { limit: 60 }, retry_after_seconds: 3 }))
    expect(JSON.parse(JSON.stringify(body))).toStrictEqual(body)
  })
})

describe("wire", () => {
  it.each(codes)("%s: encodes an instance to its body and decodes the body to the same class", (code) => {
    const schema = wire(code) as unknown as Schema.Schema<DockError, unknown>
    const error = instance(code, { message: `a ${code}`, details: { field: "x" } })
    const body = Schema.encodeSync(schema)(error)
    expect(body).toStrictEqual(errorBody(error))
    const decoded = Schema.decodeUnknownSync(schema)(JSON.parse(JSON.stringify(body)))
    expect(decoded).toBeInstanceOf(ErrorClasses[code])
    expect(decoded.code).toBe(code)
    expect(decoded.status).toBe(ErrorStatus[code])
    expect(decoded.message).toBe(`a ${code}`)
    expect(decoded.details).toEqual({ field: "x" })
    expect(errorBody(decoded)).toStrictEqual(body)
  })

  it("keeps retry_after_seconds and request_id across the wire", () => {
    const rateLimited = Schema.decodeUnknownSync(wire("rate_limited"))(
      Schema.encodeSync(wire("rate_limited"))(new RateLimited({ message: "m", retry_after_seconds: 30 }))
    )
    expect(rateLimited.retry_after_seconds).toBe(30)
    const internal = Schema.decodeUnknownSync(wire("internal"))({
      error: { code: "internal", status: 500, message: "m", request_id: "req-9" }
    })
    expect(internal).toBeInstanceOf(Internal)
    expect(internal.request_id).toBe("req-9")
  })

  it("refuses a body of another code or status", () => {
    const decode = Schema.decodeUnknownEither(wire("not_found"))
    expect(decode({ error: { code: "conflict", status: 409, message: "m" } })._tag).toBe("Left")
    expect(decode({ error: { code: "not_found", status: 400, message: "m" } })._tag).toBe("Left")
    expect(decode({ error: { code: "not_found", status: 404 } })._tag).toBe("Left")
    expect(decode({ code: "not_found", status: 404, message: "m" })._tag).toBe("Left")
  })

  it("refuses to encode an instance of another class", () => {
    const encode = Schema.encodeEither(wire("not_found") as unknown as Schema.Schema<DockError, unknown>)
    expect(encode(new Internal({ message: "m" }))._tag).toBe("Left")
  })

  it("annotates each schema with its HTTP status", () => {
    for (const code of codes) expect(HttpApiSchema.getStatusError(wire(code))).toBe(ErrorStatus[code])
  })
})

describe("wire decoding of incomplete bodies", () => {
  it("fails to decode (never throws) a rate_limited body without retry_after_seconds", () => {
    const decoded = Schema.decodeUnknownEither(wire("rate_limited"))({
      error: { code: "rate_limited", status: 429, message: "slow down" }
    })
    expect(decoded._tag).toBe("Left")
  })
})
