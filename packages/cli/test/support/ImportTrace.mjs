// Loaded with `--import` before the CLI: records every module the process loads, one URL a line, in the file
// DOCK_IMPORT_TRACE names (the hooks run on their own thread, hence the file rather than memory).
import { register } from "node:module"

register("./ImportTraceHooks.mjs", import.meta.url)
