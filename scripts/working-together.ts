/**
 * Writes docs/working-together.md: the guide the server serves at /docs/working-together.md, for the default
 * base URL (Discovery.test.ts checks the file is this text).
 */
import { writeFileSync } from "node:fs"
import { workingTogetherGuide } from "../packages/server/src/http/WorkingTogetherHttp.ts"

writeFileSync(new URL("../docs/working-together.md", import.meta.url), workingTogetherGuide("http://localhost:8787"))
