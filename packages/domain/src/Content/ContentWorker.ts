/**
 * The entry of one content worker thread (ContentWorkers.ts): runs the jobs it is sent, one at a time, and
 * answers each. It says `Ready` once its modules are loaded, so a job's deadline never counts the start-up.
 */
import { parentPort } from "node:worker_threads"
import { type ContentJobMessage, type ContentWorkerMessage, runContentJob } from "./ContentJobs.ts"

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
answer({ _tag: "Ready" })
