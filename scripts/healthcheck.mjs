// The container's health check (Dockerfile HEALTHCHECK, compose.yaml): GET /healthz on this container's own
// listener, naming DOCK_BASE_URL's host in the Host header, since the Host guard refuses other hosts in
// production (a probe to 127.0.0.1 would be answered 403). Exit 0 on 200, 1 otherwise. No curl in the image.
import * as Http from "node:http"

const port = Number(process.env.PORT ?? 8787)
const base = process.env.DOCK_BASE_URL?.trim() || `http://localhost:${port}`
let host
try {
  host = new URL(base).host
} catch {
  host = `localhost:${port}`
}

const request = Http.get(
  { host: "127.0.0.1", port, path: "/healthz", headers: { host }, timeout: 4000 },
  (response) => {
    response.resume()
    process.exit(response.statusCode === 200 ? 0 : 1)
  }
)
request.on("timeout", () => request.destroy(new Error("timed out")))
request.on("error", (error) => {
  console.error(`healthcheck: ${error.message}`)
  process.exit(1)
})
