/**
 * Deno smoke check: the same server source, unchanged, runs under Deno 2 on the embedded database, answers
 * /healthz, renders the web app's sign-in page, creates and lists a user through the admin API, registers an anonymous agent, makes real MCP calls
 * with its token, then shuts down cleanly on SIGTERM. With `--bundle` (`npm run smoke:bundle`), the same checks on
 * the bundle `npm start` runs (scripts/bundle.mjs, built first): the content workers, sharp and the sanitizer
 * loaded from it, which no test running the sources covers. Both read GET /metrics, then start the server a second
 * time with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP receiver started here: a tool call's span must
 * arrive, at the latest with the flush at shutdown. (A separate start: the content-worker checks above hold small
 * documents against a 50 ms deadline, which a loaded machine plus span export can overrun.)
 */
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { slowToRead } from "../packages/domain/src/Content/MarkdownSamples.ts"
import { startServer, stopServer } from "./support.ts"

const root = Path.resolve(import.meta.dirname, "..")
const deno = Path.join(root, "node_modules", ".bin", "deno")
const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "dock-deno-smoke-"))
const adminToken = "dock_admin_deno-smoke-token"

const checks: Array<[string, boolean, string]> = []
const check = (name: string, ok: boolean, detail = "") => {
  checks.push([name, ok, detail])
  console.log(`${ok ? "ok" : "FAILED"} - ${name}${detail && !ok ? `: ${detail}` : ""}`)
}

// A minimal OTLP/HTTP receiver (JSON bodies): the names of the spans it was sent.
const spanNames: Array<string> = []
const receiver = Http.createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    if (request.method === "POST" && request.url === "/v1/traces") {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        for (const resource of body.resourceSpans ?? []) {
          for (const scope of resource.scopeSpans ?? []) for (const span of scope.spans ?? []) spanNames.push(span.name)
        }
      } catch {
        spanNames.push("<unparsable body>")
      }
    }
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverPort = (receiver.address() as { port: number }).port

const bundle = process.argv.includes("--bundle")
const runtime = bundle ? "bundled" : "Deno"
const server = await startServer(
  bundle ? process.execPath : deno,
  bundle ? [Path.join(root, "bundle/main.js")] : ["run", "-A", Path.join(root, "packages/server/src/main.ts")],
  {
    DOCK_DATA_DIR: dataDir,
    DOCK_ADMIN_TOKEN: adminToken,
    // Short, so that a long page outlasts it (no Markdown we know of runs away from markdown-it): ~0.7 s or more
    // to read 1 MB of slowToRead on a push. The small documents below take a millisecond or two.
    DOCK_RENDER_DEADLINE: "100 millis"
  },
  90_000
)
try {
  console.log(`${runtime} server ready in ${Math.round(server.readyMs)} ms`)
  const health = await fetch(`${server.baseUrl}/healthz`)
  check("GET /healthz answers 200 {status:ok}", health.status === 200 && (await health.json()).status === "ok")

  // The web app's TSX pages (Preact, rendered on the server) under this runtime.
  const login = await fetch(`${server.baseUrl}/login`)
  const loginHtml = await login.text()
  check(
    "GET /login renders the sign-in page (TSX)",
    login.status === 200 && loginHtml.startsWith("<!doctype html>") && loginHtml.includes(`name="email"`),
    `${login.status} ${loginHtml.slice(0, 200)}`
  )

  const headers = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }
  const created = await fetch(`${server.baseUrl}/admin/users`, {
    method: "POST",
    headers,
    body: JSON.stringify({ email: "deno-smoke@example.com" })
  })
  const user = await created.json()
  check(
    "POST /admin/users creates a user",
    created.status === 201 && user.email === "deno-smoke@example.com",
    JSON.stringify(user)
  )
  check("the user has a default Dock", typeof user.default_bucket_id === "string")

  const listed = await fetch(`${server.baseUrl}/admin/users`, { headers })
  const users = await listed.json()
  check("GET /admin/users lists the user", listed.status === 200 && users.some((u: { id: string }) => u.id === user.id))

  const registered = await fetch(`${server.baseUrl}/agent/auth`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "anonymous", requested_credential_type: "mcp_write_token", agent_label: "deno-smoke" })
  })
  const registration = await registered.json()
  check(
    "POST /agent/auth registers an anonymous sandbox",
    registered.status === 201 && registration.status === "unclaimed" &&
      registration.credential?.startsWith("dock_mcp_"),
    JSON.stringify(registration)
  )

  // Real MCP calls (2025 era, answered as SSE) with the sandbox token.
  const mcp = async (id: number, method: string, params: unknown) => {
    const reply = await fetch(`${server.baseUrl}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${registration.credential}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params })
    })
    const text = await reply.text()
    const data = text.split("\n").find((line) => line.startsWith("data: "))
    return { status: reply.status, message: data === undefined ? JSON.parse(text) : JSON.parse(data.slice(6)) }
  }
  const tools = await mcp(1, "tools/list", {})
  check(
    "MCP tools/list over /mcp lists create_bucket",
    tools.status === 200 &&
      tools.message.result?.tools?.some((tool: { name: string }) => tool.name === "create_bucket"),
    JSON.stringify(tools)
  )
  const refused = await mcp(2, "tools/call", { name: "create_bucket", arguments: { title: "Escape" } })
  check(
    "MCP create_bucket with a sandbox token is a permission_denied tool result",
    refused.message.result?.isError === true &&
      refused.message.result?.structuredContent?.error?.code === "permission_denied",
    JSON.stringify(refused)
  )

  const sandbox = await mcp(3, "tools/call", { name: "get_bucket", arguments: {} })
  check(
    "MCP get_bucket with no target answers the sandbox Dock with its counts",
    sandbox.message.result?.structuredContent?.bucket?.id === registration.sandbox_bucket.id &&
      sandbox.message.result?.structuredContent?.bucket?.page_count === 0,
    JSON.stringify(sandbox)
  )

  // The content workers (node:worker_threads running the TypeScript sources) under Deno: a Markdown push, an HTML
  // push read back sanitized, and a document that outlasts its deadline stopped while /healthz answers.
  const markdown = await mcp(6, "tools/call", {
    name: "push_markdown",
    arguments: { page_content: "---\ntitle: Tides\n---\n# High water\n\nSee [[Low water]].", page_slug: "tides" }
  })
  const markdownPart = markdown.message.result?.structuredContent?.part
  check(
    "MCP push_markdown renders in a content worker",
    markdownPart?.title === "Tides" && markdownPart?.content_type === "markdown",
    JSON.stringify(markdown)
  )
  await mcp(7, "tools/call", {
    name: "push_web_page",
    arguments: { page_content: "<p>Ebb<script>x()</script></p>", page_slug: "ebb" }
  })
  const html = await mcp(8, "tools/call", { name: "get_web_page", arguments: { web_page: "ebb" } })
  check(
    "MCP push_web_page sanitizes in a content worker; get_web_page reads it back",
    html.message.result?.structuredContent?.part?.content === "<p>Ebb</p>",
    JSON.stringify(html)
  )
  let pushAnswered = false
  const tooLong = mcp(9, "tools/call", {
    name: "push_markdown",
    arguments: { page_content: slowToRead(1_000_000) }
  }).then((answer) => {
    pushAnswered = true
    return answer
  })
  const healthDuring = await fetch(`${server.baseUrl}/healthz`)
  const healthBeforePush = healthDuring.status === 200 && !pushAnswered
  const stopped = await tooLong
  check(
    "a Markdown push that outlasts its deadline is validation_error (too complex to render), and /healthz answers meanwhile",
    healthBeforePush && stopped.message.result?.structuredContent?.error?.code === "validation_error" &&
      stopped.message.result?.structuredContent?.error?.details?.reason === "deadline",
    JSON.stringify({ healthBeforePush, stopped: stopped.message })
  )

  // sharp (loaded on first use) under Deno: a 1×1 PNG pushed, re-encoded, and served back.
  const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
  const image = await mcp(4, "tools/call", {
    name: "push_image",
    arguments: { image_base64: `data:image/png;base64,${pixel}`, filename: "pixel.png", alt_text: "One pixel" }
  })
  const pushed = image.message.result?.structuredContent
  check(
    "MCP push_image stores a PNG in the sandbox",
    pushed?.format === "png" && pushed?.width === 1,
    JSON.stringify(image)
  )
  const served = pushed?.image_id === undefined ?
    undefined :
    await fetch(`${server.baseUrl}/images/${pushed.image_id}.png`, {
      headers: { authorization: `Bearer ${registration.credential}` }
    })
  check(
    "GET /images/ serves it as image/png to its token",
    served?.status === 200 && served.headers.get("content-type") === "image/png"
  )

  // The sanitizer (htmlparser2 through createRequire) under Deno: an HTML source added, then read as text over MCP.
  const addedSource = await fetch(`${server.baseUrl}/admin/sources`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({
      dock: registration.sandbox_bucket.id,
      origin: "tides.html",
      media_type: "text/html",
      content: "<h1>Tides</h1><script>x()</script><p>High water</p>"
    })
  })
  const source = await addedSource.json()
  const readSource = await mcp(5, "tools/call", { name: "read_source", arguments: { source_id: source.source_id } })
  check(
    "POST /admin/sources adds an HTML source; MCP read_source returns its text",
    addedSource.status === 201 && readSource.message.result?.structuredContent?.source?.text === "Tides\n\nHigh water",
    JSON.stringify({ source, read: readSource.message })
  )

  const rejected = await fetch(`${server.baseUrl}/admin/users`, { headers: { authorization: "Bearer wrong" } })
  check(
    "a wrong admin token gets 401 unauthorized",
    rejected.status === 401 && (await rejected.json()).error.code === "unauthorized"
  )

  const metrics = await fetch(`${server.baseUrl}/metrics`, {
    headers: { authorization: `Bearer ${adminToken}`, "x-request-id": "deno-smoke-metrics" }
  })
  const metricsText = await metrics.text()
  check(
    "GET /metrics (admin token) counts the MCP calls by tool and outcome, with the request id echoed",
    metrics.status === 200 && metrics.headers.get("x-request-id") === "deno-smoke-metrics" &&
      metricsText.includes(`dock_mcp_tool_calls_total{tool="get_bucket",outcome="ok"} 1`) &&
      metricsText.includes(`dock_mcp_tool_calls_total{tool="create_bucket",outcome="permission_denied"} 1`) &&
      /dock_render_jobs_stopped_total\{reason="deadline"\} [1-9]/.test(metricsText),
    metricsText
  )
} finally {
  const code = await stopServer(server.child)
  check(`SIGTERM stops the ${runtime} server with exit code 0`, code === 0, `exit ${code}\n${server.output()}`)
  await Fs.rm(dataDir, { recursive: true, force: true })
}

// The second start: traces exported to the receiver.
const tracedDataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "dock-deno-smoke-traced-"))
const traced = await startServer(
  bundle ? process.execPath : deno,
  bundle ? [Path.join(root, "bundle/main.js")] : ["run", "-A", Path.join(root, "packages/server/src/main.ts")],
  {
    DOCK_DATA_DIR: tracedDataDir,
    DOCK_ADMIN_TOKEN: adminToken,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
    OTEL_SERVICE_NAME: "dock-smoke",
    OTEL_BSP_SCHEDULE_DELAY: "200"
  },
  90_000
)
try {
  const agent = await fetch(`${traced.baseUrl}/agent/auth`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "anonymous", requested_credential_type: "mcp_write_token", agent_label: "traced" })
  }).then((reply) => reply.json())
  const reply = await fetch(`${traced.baseUrl}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${agent.credential}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25"
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_bucket", arguments: {} } })
  })
  check("MCP get_bucket answers with traces exported", reply.status === 200 && (await reply.text()).includes("bucket"))
} finally {
  const code = await stopServer(traced.child)
  check(`SIGTERM stops the traced ${runtime} server with exit code 0`, code === 0, `exit ${code}\n${traced.output()}`)
  await Fs.rm(tracedDataDir, { recursive: true, force: true })
  // Spans are sent every 200 ms and flushed at shutdown: by now the receiver has them all.
  check(
    "the tool call's span reached the OTLP receiver (mcp.get_bucket, under an http.server POST span)",
    spanNames.includes("mcp.get_bucket") && spanNames.includes("http.server POST"),
    [...new Set(spanNames)].join(", ")
  )
  receiver.close()
}

const failed = checks.filter(([, ok]) => !ok).length
console.log(`${bundle ? "bundle" : "deno"}-smoke: ${checks.length - failed} passed, ${failed} failed`)
process.exitCode = failed === 0 ? 0 : 1
