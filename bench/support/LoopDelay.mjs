// Imported into the server by bench/pages (`--import`): once a second, the longest the event loop was held in that
// second (perf_hooks' event-loop delay, 10 ms resolution), as a line `loop-delay <epoch ms> <ms>` on stderr.
import { monitorEventLoopDelay } from "node:perf_hooks"

const histogram = monitorEventLoopDelay({ resolution: 10 })
histogram.enable()
setInterval(() => {
  process.stderr.write(`loop-delay ${Date.now()} ${(histogram.max / 1e6).toFixed(1)}\n`)
  histogram.reset()
}, 1000).unref()
