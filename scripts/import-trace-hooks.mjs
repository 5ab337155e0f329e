// The module hooks of import-trace.mjs: each resolved URL is appended to DOCK_IMPORT_TRACE, with the importer.
import { appendFileSync } from "node:fs"

export const resolve = async (specifier, context, next) => {
  const resolved = await next(specifier, context)
  appendFileSync(process.env.DOCK_IMPORT_TRACE, `${resolved.url} ${context.parentURL ?? ""}\n`)
  return resolved
}
