// Module hooks of ImportTrace.mjs: each resolved URL is appended to DOCK_IMPORT_TRACE.
import { appendFileSync } from "node:fs"

export const resolve = async (specifier, context, next) => {
  const resolved = await next(specifier, context)
  appendFileSync(process.env.DOCK_IMPORT_TRACE, `${resolved.url}\n`)
  return resolved
}
