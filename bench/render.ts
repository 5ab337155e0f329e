/**
 * bench/render: what the content workers cost and what they bound, over the wire. The server (this checkout's
 * sources, as `npm start` runs them) on a fresh PostgreSQL database; one user's MCP client pushes 1 MiB of
 * ordinary Markdown and HTML (the workers' overhead on a normal push), reads the Markdown page once at /a/
 * (render on read), then pushes hostile Markdown of issue 13 (one long bracket label) at the sizes of
 * BENCH_HOSTILE_KIB (default 96,1024). While each request runs, /healthz is asked again and again: the worst
 * /healthz answer is how long the event loop was held. Prints one line per request; asserts nothing.
 * DOCK_RENDER_DEADLINE and DOCK_RENDER_WORKERS pass through to the server.
 */
import { ordinary } from "../packages/domain/src/Content/MarkdownSamples.ts"
import { connectMcp, fill, KiB, loadAverage, machine, median, MiB, withFreshServer } from "./support/Bench.ts"
import { ordinaryHtml } from "./support/HtmlSamples.ts"

const RUNS = 3
const hostileKiB = (process.env.BENCH_HOSTILE_KIB ?? "96,1024").split(",").map(Number)

const passThrough = Object.fromEntries(
  ["DOCK_RENDER_DEADLINE", "DOCK_RENDER_WORKERS"].flatMap((name) =>
    process.env[name] === undefined ? [] : [[name, process.env[name]!]]
  )
)

await withFreshServer("render", { env: passThrough }, async (server) => {
  const baseUrl = server.dock.baseUrl
  console.log(`${machine()}; ${server.summary}; load ${loadAverage()}`)
  const user = await server.admin("/admin/users", { email: `render-${Date.now()}@example.com` })
  const token = await server.admin("/admin/tokens", { user: user.email, scopes: ["mcp:write"] })
  const client = await connectMcp({
    name: "bench-render",
    url: `${baseUrl}/mcp`,
    era: "legacy",
    token: token.token as string
  })
  server.defer(() => client.close())

  /** Runs `request`, asking /healthz meanwhile; its time, the worst /healthz answer, and what it gave. */
  const measured = async <A>(request: () => Promise<A>) => {
    let done = false
    let worstHealth = 0
    const probe = (async () => {
      while (!done) {
        const started = performance.now()
        // A connection reset counts too (a blocked server can drop the probe): as long as it took to fail.
        await fetch(`${baseUrl}/healthz`).then((reply) => reply.arrayBuffer(), () => undefined)
        worstHealth = Math.max(worstHealth, performance.now() - started)
      }
    })()
    const started = performance.now()
    const result = await request()
    const ms = performance.now() - started
    done = true
    await probe
    return { ms, worstHealth, result }
  }

  const push = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }) as Promise<{ isError?: boolean; structuredContent: any }>
  const outcome = (result: { isError?: boolean; structuredContent: any }) =>
    result.isError === true
      ? `${result.structuredContent.error.code} (${JSON.stringify(result.structuredContent.error.details ?? {})})`
      : `ok, ${result.structuredContent.warnings?.length ?? 0} warnings`
  const line = (label: string, figures: ReadonlyArray<{ ms: number; worstHealth: number }>, what: string) =>
    console.log(
      `${label.padEnd(44)} median ${median(figures.map((f) => f.ms)).toFixed(0).padStart(6)} ms  ` +
        `worst ${Math.max(...figures.map((f) => f.ms)).toFixed(0).padStart(6)} ms  ` +
        `worst /healthz ${Math.max(...figures.map((f) => f.worstHealth)).toFixed(0).padStart(6)} ms  ${what}`
    )

  // The first push starts a worker (not counted).
  await push("push_markdown", { page_content: "# Warm" })

  // (a little under 1 MiB of UTF-8: each run puts its number in front)
  const markdown = ordinary(MiB - 4 * KiB)
  const markdownRuns = []
  let url = ""
  for (let run = 0; run < RUNS; run++) {
    const figure = await measured(() => push("push_markdown", { page_content: markdown.replace("#", `# Run ${run}`) }))
    markdownRuns.push(figure)
    url = figure.result.structuredContent?.part?.url ?? url
  }
  line("push_markdown, ordinary 1 MiB", markdownRuns, outcome(markdownRuns[0]!.result))

  const html = ordinaryHtml(MiB - 4 * KiB)
  const htmlRuns = []
  for (let run = 0; run < RUNS; run++) {
    htmlRuns.push(
      await measured(() => push("push_web_page", { page_slug: `html-${run}`, page_content: `<p>${run}</p>${html}` }))
    )
  }
  line("push_web_page, ordinary 1 MiB HTML", htmlRuns, outcome(htmlRuns[0]!.result))

  if (url !== "") {
    const path = new URL(url).pathname
    const first = await measured(() =>
      fetch(`${baseUrl}${path}`).then(async (reply) => ({ status: reply.status, text: await reply.text() }))
    )
    const again = await measured(() => fetch(`${baseUrl}${path}`).then((reply) => reply.text()))
    const shown = first.result.text.includes("too complex to render") ? "shown as text" : "rendered"
    line("GET /a/ of it, first read (render on read)", [first], `${first.result.status}, ${shown}`)
    line("GET /a/ of it, again (cached)", [again], "")
  }

  for (const kib of hostileKiB) {
    const families: Record<string, string> = {
      "[[a a a … ]]": "[[" + fill("a ", kib * KiB - 8) + "]]",
      "[words words … ](x)": "[" + fill("words ", kib * KiB - 8) + "](x)"
    }
    for (const [family, content] of Object.entries(families)) {
      const figure = await measured(() => push("push_markdown", { page_content: content }))
      line(`hostile ${family}, ${kib} KiB`, [figure], outcome(figure.result))
    }
  }
})
