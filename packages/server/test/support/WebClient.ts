/**
 * A cookie-keeping HTTP client for the web app's tests: node:http (so a test may choose the Host header, as a
 * production-mode server needs), redirects not followed, every Set-Cookie kept raw (flags are asserted) and
 * applied to the jar, forms posted as application/x-www-form-urlencoded with an Origin.
 */
import { Effect } from "effect"
import * as Http from "node:http"

export interface WebReply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly setCookies: ReadonlyArray<string>
  readonly text: string
}

export interface WebClient {
  readonly jar: Map<string, string>
  readonly get: (path: string, headers?: Record<string, string>) => Effect.Effect<WebReply>
  readonly post: (
    path: string,
    form: Record<string, string>,
    headers?: Record<string, string>
  ) => Effect.Effect<WebReply>
  /** A form POST of an already encoded body (repeated fields, e.g. checkboxes). */
  readonly postRaw: (path: string, body: string, headers?: Record<string, string>) => Effect.Effect<WebReply>
}

/** The hidden `csrf` field of the (first) form on a page. */
export const csrfIn = (html: string): string => {
  const match = /name="csrf" value="([^"]+)"/.exec(html)
  if (match === null) throw new Error(`No csrf field in:\n${html}`)
  return match[1]!
}

/** The value a Set-Cookie line sets, or undefined when it sets another cookie. */
export const cookieValue = (line: string, name: string) =>
  line.startsWith(`${name}=`) ? line.slice(name.length + 1).split(";")[0] : undefined

/** `port` of the server; `host` its Host header (and `origin` the Origin forms are posted from). */
export const webClient = (options: { readonly port: number; readonly host: string; readonly origin: string }) => {
  const jar = new Map<string, string>()
  const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    Effect.async<WebReply>((resume) => {
      const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ")
      const request = Http.request(
        {
          host: "127.0.0.1",
          port: options.port,
          method,
          path,
          agent: false,
          headers: { host: options.host, ...(cookie === "" ? {} : { cookie }), ...headers }
        },
        (response) => {
          let text = ""
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => (text += chunk))
          response.on("end", () => {
            const setCookies = response.headers["set-cookie"] ?? []
            for (const line of setCookies) {
              const [pair] = line.split(";")
              const at = pair!.indexOf("=")
              const name = pair!.slice(0, at)
              const value = pair!.slice(at + 1)
              if (value === "" || /max-age=0\b/i.test(line)) jar.delete(name)
              else jar.set(name, value)
            }
            const flat: Record<string, string> = {}
            for (const [name, value] of Object.entries(response.headers)) {
              flat[name] = Array.isArray(value) ? value.join("\n") : value ?? ""
            }
            resume(Effect.succeed({ status: response.statusCode ?? 0, headers: flat, setCookies, text }))
          })
        }
      )
      request.on("error", (error) => resume(Effect.die(error)))
      request.end(body)
    })
  const client: WebClient = {
    jar,
    get: (path, headers = {}) => send("GET", path, headers),
    post: (path, form, headers = {}) =>
      send("POST", path, {
        "content-type": "application/x-www-form-urlencoded",
        origin: options.origin,
        ...headers
      }, new URLSearchParams(form).toString()),
    postRaw: (path, body, headers = {}) =>
      send("POST", path, {
        "content-type": "application/x-www-form-urlencoded",
        origin: options.origin,
        ...headers
      }, body)
  }
  return client
}
