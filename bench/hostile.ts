/**
 * bench/hostile: the hostile-input families of issue 13, each at 16 KiB, 128 KiB and 1 MiB, sent to the real
 * server (a child process on a fresh PostgreSQL database) the way an attacker would: an anonymous sandbox token
 * for Markdown, no token at all for /mcp/public. For every case it prints how long the answer took, what the
 * answer was (a result, an error code, an HTTP status) and the worst /healthz latency seen by a poller that asks
 * every 10 ms while the case runs — the event loop's stall. The reference in the same run is the /healthz
 * latency of the idle server. Asserts nothing; targets (issue 13): answered or refused ≤ 2 s, /healthz never
 * waits > 100 ms.
 *
 * BENCH_SIZES (comma-separated KiB, default "16,128,1024"), BENCH_FAMILIES (comma-separated name prefixes, default all).
 */
import { KiB, loadAverage, machine, percentile, withFreshServer } from "./support/Bench.ts"

const SIZES = (process.env.BENCH_SIZES ?? "16,128,1024").split(",").map((s) => Number(s.trim()) * KiB)
const ONLY = process.env.BENCH_FAMILIES?.split(",").map((s) => s.trim())
const ANSWER_TIMEOUT_MS = 120_000

/** `unit` repeated to about `bytes` characters. */
const repeat = (unit: string, bytes: number) => unit.repeat(Math.max(1, Math.floor(bytes / unit.length)))

interface Answer {
  readonly ms: number
  /** "ok", an error code, or "HTTP <status>" */
  readonly outcome: string
  readonly bytes: number
}

/** What a JSON-RPC answer (JSON, a batch, or SSE events) says: "ok", the tool error's code, or "×N" counts. */
const summarize = (text: string) => {
  const messages: Array<any> = text.startsWith("event:") || text.startsWith("data:")
    ? [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!))
    : [JSON.parse(text)].flat()
  const outcomes = messages.flat().map((m) =>
    m.error !== undefined
      ? `rpc ${m.error.code}`
      : m.result?.isError === true
      ? String(m.result.structuredContent?.error?.code ?? "error")
      : "ok"
  )
  const counts = new Map<string, number>()
  for (const outcome of outcomes) counts.set(outcome, (counts.get(outcome) ?? 0) + 1)
  return [...counts].map(([outcome, n]) => (outcomes.length === 1 ? outcome : `${outcome} ×${n}`)).join(", ")
}

/** A JSON-RPC POST (one message or a batch) to `url`; the outcome of the first tools/call answer. */
const rpc = async (url: string, body: string, token?: string): Promise<Answer> => {
  // JSON-RPC batches exist up to the 2025-03-26 protocol; later versions refuse them.
  const version = body.startsWith("[") ? "2025-03-26" : "2025-11-25"
  const started = performance.now()
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": version,
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
      },
      body,
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS)
    })
    const text = await response.text()
    const ms = performance.now() - started
    if (!response.ok) {
      const code = /"code":"([a-z_]+)"/.exec(text)?.[1]
      return { ms, outcome: `HTTP ${response.status} ${code ?? text.slice(0, 100)}`, bytes: text.length }
    }
    let outcome: string
    try {
      outcome = summarize(text)
    } catch {
      outcome = `unreadable answer: ${JSON.stringify(text.slice(0, 80))}`
    }
    return { ms, outcome, bytes: text.length }
  } catch (error) {
    return { ms: performance.now() - started, outcome: `failed: ${(error as Error).name}`, bytes: 0 }
  }
}

/** A JSON-RPC answer's JSON, whether it came as JSON or as one SSE event. */
const rpcBody = (text: string) =>
  JSON.parse(text.startsWith("event:") || text.startsWith("data:") ? /^data: (.*)$/m.exec(text)![1]! : text)

const toolCall = (name: string, args: unknown, id = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args }
})

/** Polls /healthz every 10 ms until stopped; the worst latency seen. */
const healthPoller = (baseUrl: string) => {
  let running = true
  const latencies: Array<number> = []
  const done = (async () => {
    while (running) {
      const started = performance.now()
      await fetch(`${baseUrl}/healthz`).then((r) => r.arrayBuffer()).catch(() => undefined)
      latencies.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()
  return async () => {
    running = false
    await done
    const sorted = latencies.sort((a, b) => a - b)
    return { worst: sorted.at(-1) ?? NaN, p50: percentile(sorted, 0.5), samples: sorted.length }
  }
}

const main = () =>
  withFreshServer("hostile", {
    // The public per-address limit as shipped (300 messages a minute), so the last family shows it at work.
    env: {
      DOCK_SANDBOX_WRITES_PER_MINUTE: "0",
      DOCK_REGISTRATIONS_PER_IP_PER_DAY: "100",
      DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE: "300"
    }
  }, async ({ dock, summary, admin }) => {
    const { baseUrl } = dock
    const user = await admin("/admin/users", { email: "hostile@example.com" })
    const token = String((await admin("/admin/tokens", { user: user.email, scopes: ["mcp:write"] })).token)
    const registration = await fetch(`${baseUrl}/agent/auth`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        type: "anonymous",
        requested_credential_type: "mcp_write_token",
        agent_label: "hostile-bench"
      })
    }).then((r) => r.json() as Promise<Record<string, unknown>>)
    const sandboxToken = String(registration.credential)

    // A public Dock for the link families, read anonymously through /mcp/public and /a/.
    const created = rpcBody(
      await fetch(`${baseUrl}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
          authorization: `Bearer ${token}`
        },
        body: JSON.stringify(toolCall("create_bucket", { title: "Hostile links", visibility: "public" }))
      }).then((r) => r.text())
    )
    const dockSlug = String(created.result.structuredContent.bucket.slug)

    console.log(machine())
    console.log(summary)
    console.log(`load average before: ${loadAverage({ all: true })}\n`)

    // The content workers start with the first job that needs them (about a second): one ordinary push first.
    const warm = await rpc(
      `${baseUrl}/mcp`,
      JSON.stringify(toolCall("push_markdown", { page_content: "# Warm-up\n\nThe content workers start." })),
      sandboxToken
    )
    console.log(`warm-up push (starts the content workers): ${warm.ms.toFixed(0)} ms, ${warm.outcome}`)

    const idle = healthPoller(baseUrl)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const reference = await idle()
    console.log(
      `reference: /healthz on the idle server, ${reference.samples} polls: p50 ${reference.p50.toFixed(1)} ms, worst ${
        reference.worst.toFixed(1)
      } ms\n`
    )

    // Under the 1 MiB page_content limit with the markers around the words.
    const words = (bytes: number) => repeat("a ", bytes - 64)
    const markdown = (name: string, build: (bytes: number) => string) => ({
      name: `markdown: ${name}`,
      run: (bytes: number) =>
        rpc(
          `${baseUrl}/mcp`,
          JSON.stringify(toolCall("push_markdown", { page_content: build(bytes) })),
          sandboxToken
        )
    })
    let linkPage = 0
    const links = (name: string, target: (i: number) => string) => ({
      name: `links: ${name}`,
      run: async (bytes: number) => {
        const slug = `links-${++linkPage}`
        let body = ""
        for (let i = 0; body.length < bytes - 64; i++) body += `[[${target(i)}]]\n\n`
        const push = await rpc(
          `${baseUrl}/mcp`,
          JSON.stringify(toolCall("push_markdown", { bucket: dockSlug, page_slug: slug, page_content: body })),
          token
        )
        if (push.outcome !== "ok") return push
        const started = performance.now()
        const batch = Array.from({ length: 10 }, (_, i) =>
          toolCall("get_web_page_links", { bucket: `${String(user.username)}/${dockSlug}`, page_slug: slug }, i + 1))
        const read = await rpc(`${baseUrl}/mcp/public`, JSON.stringify(batch))
        return {
          ms: performance.now() - started,
          outcome: `push ${push.ms.toFixed(0)} ms; 10 reads ${read.outcome}`,
          bytes: read.bytes
        }
      }
    })
    const publicArgs = (name: string, build: (bytes: number) => unknown) => ({
      name: `arguments: ${name}`,
      run: (bytes: number) =>
        rpc(`${baseUrl}/mcp/public`, JSON.stringify(toolCall("search_buckets", build(bytes))))
    })

    const families = [
      markdown("[[a a a … ]] one wikilink label", (n) =>
        `[[${words(n)}]]`),
      markdown("[a a a …](x) link text", (n) => `[${words(n)}](x)`),
      markdown("[a a a …][r] reference", (n) => `[${words(n)}][r]\n\n[r]: https://example.com`),
      markdown("[^a a a …] footnote", (n) => `[^${words(n)}]`),
      markdown("a <![CDATA[ a a a … unterminated", (n) => `a <![CDATA[ ${words(n)}`),
      publicArgs("unknown keys", (n) => {
        const args: Record<string, string> = { query: "x" }
        for (let i = 0; i * 12 < n; i++) args[`k${i}`] = "v"
        return args
      }),
      publicArgs("one huge array", (n) => ({ query: "x", limit: Array.from({ length: Math.floor(n / 2) }, () => 1) })),
      publicArgs("deep array of strings (NUL walk)", (n) => {
        let value: unknown = Array.from({ length: Math.floor(n / 4) }, () => "s")
        for (let depth = 0; depth < 30; depth++) value = [value]
        return { query: "x", extra: value }
      }),
      links("distinct missing pages in this Dock", (i) => `page-${i}`),
      links("distinct missing remote Docks", (i) => `nobody${i}/dock/page`),
      {
        // The SDK takes at most 100 messages in a batch: 1, 8 and 64 batches of 100 calls for the three sizes.
        name: "limits: /mcp/public batches of 100 calls",
        run: async (bytes: number) => {
          const batches = Math.max(1, Math.round(bytes / (16 * KiB)))
          const batch = JSON.stringify(
            Array.from({ length: 100 }, (_, i) => toolCall("search_buckets", { query: "hostile" }, i + 1))
          )
          const started = performance.now()
          const answers = await Promise.all(Array.from({ length: batches }, () => rpc(`${baseUrl}/mcp/public`, batch)))
          const outcomes = new Map<string, number>()
          for (const answer of answers) {
            for (const part of answer.outcome.split(", ")) {
              const [outcome, n] = part.split(" ×")
              outcomes.set(outcome!, (outcomes.get(outcome!) ?? 0) + Number(n ?? 1))
            }
          }
          return {
            ms: performance.now() - started,
            outcome: `${batches * 100} calls: ${[...outcomes].map(([o, n]) => `${o} ×${n}`).join(", ")}`,
            bytes: answers.reduce((sum, answer) => sum + answer.bytes, 0)
          }
        }
      }
    ].filter((family) => ONLY === undefined || ONLY.some((prefix) => family.name.startsWith(prefix)))

    const row = (cells: ReadonlyArray<string>) =>
      console.log(
        cells.map((cell, i) => (i === 0 ? cell.padEnd(46) : i === 4 ? `  ${cell}` : cell.padStart(10))).join(" ")
      )
    row(["family", "size", "answer ms", "/healthz", "answer"])
    let worstAnswer = 0
    let worstStall = 0
    for (const family of families) {
      for (const bytes of SIZES) {
        const stop = healthPoller(baseUrl)
        const answer = await family.run(bytes)
        const health = await stop()
        worstAnswer = Math.max(worstAnswer, answer.ms)
        worstStall = Math.max(worstStall, health.worst)
        row([
          family.name,
          `${bytes / KiB} KiB`,
          answer.ms.toFixed(0),
          `${health.worst.toFixed(0)} ms`,
          `${answer.outcome} (${answer.bytes} B)`
        ])
      }
    }
    console.log(
      `\nworst answer ${worstAnswer.toFixed(0)} ms (target ≤ 2000), worst /healthz ${worstStall.toFixed(0)} ms ` +
        `(target ≤ 100; idle reference worst ${reference.worst.toFixed(1)} ms); load average after: ${
          loadAverage({ all: true })
        }`
    )
  })

await main()
