/**
 * bench/images: push_image over MCP and GET /images/ on the real server (a child process on a fresh PostgreSQL
 * database, dropped at the end). Times BENCH_PUSHES pushes (default 10) of each of: a 4 MP photo-like JPEG, a 1 MP
 * PNG and a noisy PNG of about 14 MB (the worst the 15 MB bound lets through in bytes); then fetches a public
 * 4 MP JPEG and a small PNG from /images/ with BENCH_CLIENTS concurrent fetchers (default 10) for BENCH_SECONDS
 * each (default 5), and prints requests per second, MB/s and p50/p99 latency. Asserts nothing.
 */
import type { Client } from "@modelcontextprotocol/client"
import sharp from "sharp"
import { connectMcp, loadAverage, machine, mcpEra, number, percentile, withFreshServer } from "./support/Bench.ts"

const photo = (width: number, height: number) =>
  sharp({
    create: { width, height, channels: 3, background: "#7a8", noise: { type: "gaussian", mean: 120, sigma: 30 } }
  })
    .blur(1.2)
    .jpeg({ quality: 88 })
    .toBuffer()

const noisyPng = (width: number, height: number) =>
  sharp({
    create: { width, height, channels: 3, background: "#888", noise: { type: "gaussian", mean: 128, sigma: 60 } }
  })
    .png()
    .toBuffer()

const figures = (millis: ReadonlyArray<number>) => {
  const sorted = [...millis].sort((a, b) => a - b)
  return `p50 ${percentile(sorted, 0.5).toFixed(0)} ms, p95 ${percentile(sorted, 0.95).toFixed(0)} ms, max ${
    sorted.at(-1)!.toFixed(0)
  } ms`
}

const main = async () => {
  const pushes = number("BENCH_PUSHES", 10)
  const clients = number("BENCH_CLIENTS", 10)
  const seconds = number("BENCH_SECONDS", 5)
  const era = mcpEra()

  await withFreshServer("images", { env: { DOCK_PLAN_MAX_DOCK_BYTES: "4000000000" } }, async (server) => {
    console.log(machine())
    console.log(server.summary)
    console.log(
      `server ready in ${(server.dock.readyMs / 1000).toFixed(1)} s; MCP era ${era}; load ${
        loadAverage({ all: true })
      }\n`
    )
    const user = await server.admin("/admin/users", { email: "images@example.com", username: "bench-images" })
    const token = String((await server.admin("/admin/tokens", { user: user.email, scopes: ["mcp:write"] })).token)
    const client: Client = await connectMcp({
      name: "dock-bench-images",
      url: `${server.dock.baseUrl}/mcp`,
      era,
      token,
      retry: true
    })
    server.defer(() => client.close())
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args })
      if (result.isError === true) {
        throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent).slice(0, 500)}`)
      }
      return result.structuredContent as Record<string, any>
    }
    const dock = (await call("create_bucket", { title: "Bench images", slug: "gallery", visibility: "public" })).bucket

    const samples = [
      ["4 MP JPEG (2448 × 1632, photo-like)", await photo(2448, 1632)],
      ["1 MP PNG (1000 × 1000, noise)", await noisyPng(1000, 1000)],
      ["~14 MB PNG (2160 × 2160, noise)", await noisyPng(2160, 2160)]
    ] as const
    const pushed: Record<string, { id: string; path: string }> = {}
    for (const [label, bytes] of samples) {
      const image_base64 = bytes.toString("base64")
      await call("push_image", { bucket: dock.id, image_base64, filename: "warmup", alt_text: "warm-up" })
      const millis: Array<number> = []
      for (let n = 0; n < pushes; n++) {
        const started = performance.now()
        const result = await call("push_image", {
          bucket: dock.id,
          image_base64,
          filename: `bench-${n}`,
          alt_text: label
        })
        millis.push(performance.now() - started)
        pushed[label] = { id: result.image_id, path: new URL(result.public_url).pathname }
      }
      console.log(`push_image ${label}: ${(bytes.length / 1e6).toFixed(2)} MB in, ${pushes} pushes: ${figures(millis)}`)
    }

    const small = await call("push_image", {
      bucket: dock.id,
      image_base64:
        (await sharp({ create: { width: 64, height: 64, channels: 3, background: "#246" } }).png().toBuffer()).toString(
          "base64"
        ),
      filename: "small.png",
      alt_text: "small"
    })
    console.log("")
    for (
      const [label, path] of [["4 MP JPEG", pushed[samples[0][0]]!.path], [
        "64 × 64 PNG",
        new URL(small.public_url).pathname
      ]] as const
    ) {
      const url = `${server.dock.baseUrl}${path}`
      const millis: Array<number> = []
      let bytes = 0
      const until = performance.now() + seconds * 1000
      await Promise.all(Array.from({ length: clients }, async () => {
        while (performance.now() < until) {
          const started = performance.now()
          const response = await fetch(url)
          const body = await response.arrayBuffer()
          if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`)
          bytes += body.byteLength
          millis.push(performance.now() - started)
        }
      }))
      const elapsed = seconds
      console.log(
        `GET /images/ ${label}: ${clients} fetchers, ${(millis.length / elapsed).toFixed(0)} requests/s, ` +
          `${(bytes / 1e6 / elapsed).toFixed(0)} MB/s, ${figures(millis).replace(/, max.*/, "")}, p99 ${
            percentile([...millis].sort((a, b) => a - b), 0.99).toFixed(0)
          } ms`
      )
    }
    console.log(`\nload after: ${loadAverage({ all: true })}`)
  })
}

await main()
