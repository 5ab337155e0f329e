/** Reading PostgreSQL error codes out of an SqlError, for the few races a rule must turn into a domain error. */
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Chunk } from "effect"
import { Unavailable } from "../Errors.ts"

const pgCode = (error: SqlError): string | undefined => {
  const cause = error.cause as { code?: unknown } | undefined
  return typeof cause?.code === "string" ? cause.code : undefined
}

/** A unique constraint (optionally a named one) was violated. */
export const isUniqueViolation = (error: SqlError, constraint?: string): boolean => {
  if (pgCode(error) !== "23505") return false
  if (constraint === undefined) return true
  return (error.cause as { constraint?: unknown }).constraint === constraint
}

/** PostgreSQL cancelled the statement because it ran past statement_timeout (57014 also covers other cancels). */
export const isStatementTimeout = (error: unknown): boolean =>
  error instanceof SqlError && pgCode(error) === "57014" &&
  /statement timeout/.test(String((error.cause as { message?: unknown }).message))

/**
 * What a request that hit the statement timeout answers: a clear unavailable (503), not internal. The timeout
 * usually arrives as a defect (most SQL failures are), so both failures and defects are searched.
 */
export const statementTimeoutError = (cause: Cause.Cause<unknown>): Unavailable | undefined => {
  const errors = [...Chunk.toArray(Cause.failures(cause)), ...Chunk.toArray(Cause.defects(cause))]
  return errors.some(isStatementTimeout)
    ? new Unavailable({
      message: "The database took too long to answer this request (statement timeout); try a smaller one"
    })
    : undefined
}
