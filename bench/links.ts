/**
 * bench/links: what wikilinks cost a read, on the real server (a child process on a fresh PostgreSQL database on
 * DOCK_TEST_DATABASE_URL's server or postgres://postgres@127.0.0.1:5432, dropped at the end). Issue 13, finding 3.
 *
 * In one public Dock: a page with 1,000 links (the cap: half to pages that exist, a quarter to 250 other public
 * Docks, a quarter to missing ones), pushed with push_web_page; and, written straight into the database as
 * pages stored before the cap would be, a page with 10,000 links to distinct missing Docks and one with 40,000
 * links within the Dock. For each: get_web_page_links (p50 of BENCH_RUNS calls, after one warm-up call), 10 of
 * them at once (the wall time of the burst), and `GET /a/` anonymously (the first view, which renders, and the
 * p50 of later views). Prints a table; asserts nothing.
 *
 * BENCH_RUNS (10), BENCH_ERA (legacy|modern).
 */
import type { Client } from "@modelcontextprotocol/client"
import { connectMcp, loadAverage, machine, mcpEra, median, number, withFreshServer } from "./support/Bench.ts"

const main = async () => {
  const runs = number("BENCH_RUNS", 10)
  const era = mcpEra()
  const loadStart = loadAverage()

  await withFreshServer(
    "links",
    { env: { DOCK_PLAN_MAX_DOCKS: "1000", DOCK_PLAN_MAX_ARTIFACTS_PER_DOCK: "100000" } },
    async ({
      admin,
      defer,
      dock,
      psql,
      summary
    }) => {
      console.log(machine())
      console.log(summary)
      console.log(`server ready in ${(dock.readyMs / 1000).toFixed(1)} s; MCP era ${era}; 1-minute load ${loadStart}\n`)

      const user = await admin("/admin/users", { email: "links@example.com", username: "bench-links" })
      const token = String((await admin("/admin/tokens", { user: user.email, scopes: ["mcp:write"] })).token)
      const client = await connectMcp({ name: "dock-bench-links", url: `${dock.baseUrl}/mcp`, era, token, retry: true })
      defer(() => client.close())
      const call = async (mcp: Client, name: string, args: Record<string, unknown>) => {
        const result = await mcp.callTool({ name, arguments: args })
        if (result.isError === true) {
          throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 500)}`)
        }
        return result.structuredContent as any
      }
      const timed = async (run: () => Promise<unknown>) => {
        const started = performance.now()
        await run()
        return performance.now() - started
      }

      const bucket = (await call(client, "create_bucket", { title: "Links", slug: "links", visibility: "public" }))
        .bucket
        .id as string
      // 500 pages the cap page links to, 250 other public Docks with one page each: seeded with SQL (fast).
      await psql(`
      insert into parts (dock_id, owner_id, slug, public_slug, title, content_type, page_kind, content, body_text,
        created_at, updated_at)
      select '${bucket}', '${user.id}', 'target-' || i, 'target-' || i || '-bench', 'Target ' || i, 'markdown',
        'web_page', 'Target ' || i, 'Target ' || i, now(), now()
      from generate_series(1, 500) i;
      insert into docks (owner_id, slug, title, visibility, created_at, updated_at)
      select '${user.id}', 'remote-' || i, 'Remote ' || i, 'public', now(), now() from generate_series(1, 250) i;
      insert into parts (dock_id, owner_id, slug, public_slug, title, content_type, page_kind, content, body_text,
        created_at, updated_at)
      select d.id, d.owner_id, 'home', d.slug || '-home-bench', 'Home', 'markdown', 'web_page', 'Home', 'Home', now(),
        now()
      from docks d where d.owner_id = '${user.id}' and d.slug like 'remote-%';`)

      const capLinks = [
        ...Array.from({ length: 500 }, (_, i) => `target-${i + 1}`),
        ...Array.from({ length: 250 }, (_, i) => `bench-links/remote-${i + 1}/home`),
        ...Array.from({ length: 250 }, (_, i) => `missing-${i}/dock/page`)
      ]
      const capPage = (await call(client, "push_web_page", {
        bucket,
        content_type: "markdown",
        page_slug: "cap",
        page_title: "Cap",
        page_content: capLinks.map((link) => `[[${link}]]`).join("\n\n")
      })).part

      /** A page stored as if before the cap: its content and links written with SQL. */
      const stored = async (slug: string, target: string, count: number) => {
        const part = (await call(client, "push_web_page", {
          bucket,
          content_type: "markdown",
          page_slug: slug,
          page_title: slug,
          page_content: "placeholder"
        })).part
        await psql(`update parts set
          content = (select string_agg('[[' || ${target} || ']]', E'\n\n') from generate_series(1, ${count}) i),
          links = array(select ${target} from generate_series(1, ${count}) i)
        where id = '${part.id}'`)
        return part
      }
      const missingDocks = await stored("missing-docks", `'nobody-' || i || '/dock/page'`, 10_000)
      const local = await stored("local-40k", `'page-' || i`, 40_000)

      /**
       * get_web_page_links as one raw JSON-RPC POST, its whole answer read: the server's cost, without the MCP
       * client's own validation of a large answer (seconds for 40,000 links).
       */
      const links = async (slug: string) => {
        const response = await fetch(`${dock.baseUrl}/mcp`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25"
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "get_web_page_links", arguments: { bucket, page_slug: slug } }
          })
        })
        const text = await response.text()
        const json = JSON.parse(text.startsWith("{") ? text : text.slice(text.indexOf("data:") + 5).split("\n")[0]!)
        if (response.status !== 200 || json.result?.isError !== false && json.result?.isError !== undefined) {
          throw new Error(`get_web_page_links: ${response.status} ${text.slice(0, 300)}`)
        }
        return json.result.structuredContent as { outbound: Array<{ resolved: boolean }> }
      }

      const rows: Array<Array<string>> = []
      for (
        const [label, part] of [["1,000 links (cap)", capPage], ["10,000 missing Docks", missingDocks], [
          "40,000 local",
          local
        ]] as const
      ) {
        const first = await links(part.slug)
        const resolved = first.outbound.filter((link: { resolved: boolean }) => link.resolved).length
        const times: Array<number> = []
        for (let i = 0; i < runs; i++) times.push(await timed(() => links(part.slug)))
        const burst = await timed(() => Promise.all(Array.from({ length: 10 }, () => links(part.slug))))
        const view = () =>
          fetch(`${dock.baseUrl}/a/${part.public_slug}`).then(async (response) => {
            if (response.status !== 200) throw new Error(`GET /a/: ${response.status}`)
            await response.text()
          })
        const firstView = await timed(view)
        const views: Array<number> = []
        for (let i = 0; i < runs; i++) views.push(await timed(view))
        rows.push([
          label,
          `${first.outbound.length} (${resolved} resolved)`,
          median(times).toFixed(0),
          burst.toFixed(0),
          firstView.toFixed(0),
          median(views).toFixed(0)
        ])
        console.log(rows.at(-1)!.join(" | "))
      }
      console.log(
        "\n| page | outbound | get_web_page_links p50 ms | 10 at once ms | GET /a/ first ms | GET /a/ p50 ms |\n|---|---|---|---|---|---|"
      )
      for (const row of rows) console.log(`| ${row.join(" | ")} |`)
      console.log(`\n1-minute load at the end ${loadAverage()}`)
    }
  )
}

await main()
