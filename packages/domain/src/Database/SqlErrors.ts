/** Reading PostgreSQL error codes out of an SqlError, for the few races a rule must turn into a domain error. */
import type { SqlError } from "@effect/sql/SqlError"

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
