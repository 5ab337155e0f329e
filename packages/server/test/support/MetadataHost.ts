/**
 * A loopback HTTP server that hosts Client ID Metadata Documents for the OAuth tests: a good one, one whose
 * client_id is another URL, an oversized one, one that never answers, and redirects (to a private address, and
 * in a loop, and to a Location that is no URL). Closed with the scope.
 */
import { Effect } from "effect"
import * as Http from "node:http"

export interface MetadataHost {
  readonly url: string
  /** Set the redirect URIs the good documents name. */
  readonly documents: Map<string, unknown>
}

export const metadataHost = Effect.acquireRelease(
  Effect.async<{ host: MetadataHost; server: Http.Server; held: Array<Http.ServerResponse> }>((resume) => {
    const documents = new Map<string, unknown>()
    const held: Array<Http.ServerResponse> = []
    const server = Http.createServer((request, response) => {
      const path = (request.url ?? "/").split("?")[0]!
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
      if (documents.has(path)) {
        response.writeHead(200, { "content-type": "application/json" })
        return response.end(JSON.stringify(documents.get(path)))
      }
      switch (path) {
        case "/big.json":
          response.writeHead(200, { "content-type": "application/json" })
          return response.end(JSON.stringify({ client_id: `${url}/big.json`, padding: "x".repeat(100 * 1024) }))
        case "/slow.json":
          held.push(response)
          return
        case "/to-private":
          response.writeHead(302, { location: "http://10.1.2.3/client.json" })
          return response.end()
        case "/loop":
          response.writeHead(302, { location: "/loop" })
          return response.end()
        case "/bad-location":
          // A hostile server: `new URL` throws on this.
          response.writeHead(302, { location: "https://a b/" })
          return response.end()
        default:
          response.writeHead(404)
          return response.end()
      }
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      resume(Effect.succeed({ host: { url: `http://127.0.0.1:${port}`, documents }, server, held }))
    })
  }),
  ({ held, server }) =>
    Effect.async<void>((resume) => {
      for (const response of held) response.destroy()
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ host }) => host))
