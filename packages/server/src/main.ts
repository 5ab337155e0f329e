/** Entry point of `npm start` and `npm run start:deno`: the Dock server. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { program } from "./Program.ts"

// Our logger (logfmt or JSON, with secrets redacted) replaces the pretty one.
NodeRuntime.runMain(program, { disablePrettyLogger: true })
