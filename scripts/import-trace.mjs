// `node --import ./scripts/import-trace.mjs …` records every module the process loads, one URL a line, in the file
// DOCK_IMPORT_TRACE names (the hooks run on their own thread, hence a file). The start-up tests use it to check
// what `dock --help` and the server load; it also answers "why is this module loaded?" while working on start-up.
import { register } from "node:module"

register("./import-trace-hooks.mjs", import.meta.url)
