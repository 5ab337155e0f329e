// The content worker's entry when Node runs Dock from its TypeScript sources (npm start, vitest): Node 20 does
// not apply `--import tsx` to a worker thread's own modules, so the worker registers tsx itself first.
// Compiled code (dist/) and Deno load ContentWorker.js / ContentWorker.ts directly.
import { register } from "tsx/esm/api"

register()
await import("./ContentWorker.ts")
