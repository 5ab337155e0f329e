/**
 * The entry of one content worker thread (ContentWorkers.ts): runs the jobs it is sent, one at a time, and
 * answers each. It says `Ready` once its modules are loaded and each kind of page job has run once on a small
 * document, so a job's deadline never counts the start-up: not the loading, and not the first run of the parsers,
 * which compiles them (tens of milliseconds, far more on a loaded machine).
 */
import { parentPort } from "node:worker_threads"
import { type ContentJobMessage, contentJobs, type ContentWorkerMessage, runContentJob } from "./ContentJobs.ts"

const port = parentPort!
const answer = (message: ContentWorkerMessage) => port.postMessage(message)

port.on("message", (job: ContentJobMessage) => {
  let output: unknown
  try {
    output = runContentJob(job)
  } catch (error) {
    const name = error instanceof Error ? error.name : "Error"
    return answer({ _tag: "Threw", id: job.id, name, message: error instanceof Error ? error.message : String(error) })
  }
  answer({ _tag: "Done", id: job.id, output })
})
const warmUp =
  "---\ntitle: Warm\ntags: [a]\n---\n# Warm\n\nA *short* [[page]] with a [link](/x), `code` and a list:\n\n- one\n"
contentJobs.markdownPage({ content: warmUp, frontMatterRequired: false })
contentJobs.renderMarkdown({ content: warmUp, links: [] })
contentJobs.htmlPage({ html: "<h1>Warm</h1><p>A <b>short</b> <a href=\"/x\">page</a>.</p>" })
answer({ _tag: "Ready" })
