/**
 * A header-injecting reverse proxy for the MCP conformance run. The conformance CLI (`conformance server
 * --url …`) has no option for request headers, and Dock's `/mcp` needs `Authorization: Bearer <token>`. This
 * proxy listens on a free loopback port and forwards every request unchanged (method, path, Host, Origin, body,
 * streamed answers including SSE) to the Dock server, adding only the Authorization header.
 *
 *   node auth-proxy.mjs <upstream origin, e.g. http://127.0.0.1:8787> <file to write the proxy's port into>
 *
 * The token is read from the environment (DOCK_CONFORMANCE_TOKEN) so that it never shows in `ps`.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"

const [upstreamOrigin, portFile] = process.argv.slice(2)
const token = process.env.DOCK_CONFORMANCE_TOKEN
if (upstreamOrigin === undefined || portFile === undefined || !token) {
  console.error("usage: DOCK_CONFORMANCE_TOKEN=… node auth-proxy.mjs <upstream origin> <port file>")
  process.exit(2)
}
const upstream = new URL(upstreamOrigin)
const agent = new Http.Agent({ keepAlive: true })

const server = Http.createServer((request, response) => {
  const forwarded = Http.request(
    {
      agent,
      host: upstream.hostname,
      port: upstream.port,
      method: request.method,
      path: request.url,
      headers: { ...request.headers, authorization: `Bearer ${token}` }
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders)
      answer.pipe(response)
    }
  )
  forwarded.on("error", (error) => {
    if (response.headersSent) return response.destroy(error)
    response.writeHead(502, { "content-type": "text/plain" }).end(`auth-proxy: ${error.message}`)
  })
  // A client that goes away (e.g. closes an SSE stream) closes the upstream request too.
  response.on("close", () => forwarded.destroy())
  request.pipe(forwarded)
})

server.listen(0, "127.0.0.1", () => {
  Fs.writeFileSync(portFile, String(server.address().port))
})
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    server.closeAllConnections()
    server.close(() => process.exit(0))
  })
}
