/** Real HTTP requests for tests: fetch for ordinary calls, node:http where a test must set the Host header. */
import { Effect } from "effect"
import * as Http from "node:http"

export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: any
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export const fetchReply = (url: string, init: RequestInit = {}) =>
  Effect.promise(async (): Promise<Reply> => {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(20_000) })
    const text = await response.text()
    return { status: response.status, headers: Object.fromEntries(response.headers), text, json: parse(text) }
  })

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** POST a JSON value (or, given a string, exactly that text) with a JSON content type. */
export const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetchReply(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

/** A request through node:http, which (unlike fetch) lets the caller choose the Host header. */
export const nodeRequest = (options: {
  readonly port: number
  readonly method?: string
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: string
}) =>
  Effect.async<Reply, Error>((resume) => {
    const request = Http.request(
      {
        host: "127.0.0.1",
        port: options.port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers ?? {},
        agent: false,
        timeout: 20_000
      },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () =>
          resume(Effect.succeed({
            status: response.statusCode ?? 0,
            headers: Object.fromEntries(
              Object.entries(response.headers).map((
                [name, value]
              ) => [name, Array.isArray(value) ? value.join(", ") : value ?? ""])
            ),
            text,
            json: parse(text)
          })))
      }
    )
    request.on("timeout", () => request.destroy(new Error(`No answer to ${options.path} within 20 seconds`)))
    request.on("error", (error) => resume(Effect.fail(error)))
    request.end(options.body)
    return Effect.sync(() => request.destroy())
  })

/** Lowercase letters and digits, unique per call: keeps data of tests sharing one database apart. */
export const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)

/** Headers of a raw MCP request: JSON in, JSON or SSE out, the 2025 era (stateless, no initialize needed). */
export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25"
}

/** The JSON-RPC answer of a single message, sent as JSON or as an SSE `data:` event. */
export const jsonRpcAnswer = (reply: Reply): any =>
  reply.json ??
    JSON.parse(reply.text.split("\n").find((line) => line.startsWith("data: "))?.slice(6) ?? "null")

/**
 * One raw tools/call (no client, no initialize: one HTTP request) to `path` of `url`, with `token` unless it is
 * undefined. Patient: the first push starts a content worker, which on a loaded machine has taken over 20 seconds.
 */
export const rawToolCall = (
  url: string,
  token: string | undefined,
  name: string,
  args: Record<string, unknown>,
  path = "/mcp"
) =>
  Effect.promise(async (): Promise<Reply> => {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { ...MCP_HEADERS, ...(token === undefined ? {} : bearer(token)) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
      signal: AbortSignal.timeout(120_000)
    })
    const text = await response.text()
    return { status: response.status, headers: Object.fromEntries(response.headers), text, json: parse(text) }
  })
