/**
 * bench/pages: the page tools on the real server (a child process on a fresh PostgreSQL database on
 * DOCK_TEST_DATABASE_URL's server or postgres://postgres@127.0.0.1:5432, dropped at the end), each client its
 * own token and its own MCP client (the v2 SDK over Streamable HTTP, connected once):
 *
 * 1. push_web_page of ~64 KiB Markdown (headings, lists, links, a table, wikilinks; every write a new page or a
 *    changed version, never "unchanged"): writes/s, p50/p95 with 1 writer and with 16 concurrent writers, each
 *    in its own Dock, then the same 16 rewriting their pages (each write another document, so that every line
 *    changes), and 16 writers sharing one Dock (writers of one Dock take turns on its row lock).
 * 2. get_web_page with 10 concurrent readers on those pages (and on one 64 KiB HTML page, sanitized per read), and
 *    list_web_pages of 100 of them a call.
 * 3. search_web_pages over BENCH_PAGES pages in BENCH_DOCKS public, discoverable Docks of a few users, seeded
 *    with SQL (a Zipf-like vocabulary, so the tsvectors look like prose): p50/p95 and calls/s per query kind
 *    (common word, rare word, two words, phrase) by a user who owns none of them, a common word within one Dock
 *    (`bucket`: the Dock-by-Dock walk), list_web_pages walked by its cursor in both orders in those Docks, the
 *    seeding time, and, for a kind that is slow, `explain analyze` of its first candidate statement (mirrored from
 *    PagesRepo.search).
 * 4. sanitizeHtml on 1 MiB of ordinary and of deeply nested HTML, and prepareMarkdown on one of the pushed
 *    documents (the CPU a push costs before any SQL), in this process (median of several runs).
 *
 * The per-token request and write limits are off and the plan caps raised, so nothing but the server itself
 * limits the run. Every call figure also gives the CPU a call cost the server process and PostgreSQL's backends
 * (from /proc; latency moves with the machine's other load, CPU far less). Prints the 1-minute load average at
 * start and end and a table at the end; asserts nothing.
 *
 * BENCH_PAGES (100000), BENCH_DOCKS (200), BENCH_OWNERS (5), BENCH_VOCABULARY (30000), BENCH_SENTENCES (50000),
 * BENCH_SECONDS (measured per write/read scenario, 10), BENCH_WARMUP_SECONDS (2), BENCH_WRITERS (16),
 * BENCH_READERS (10), BENCH_PAGE_KIB (64), BENCH_SEARCH_CLIENTS (4), BENCH_SEARCH_SECONDS (per query kind, 8),
 * BENCH_SEARCH_LIMIT (20, the tool's default),
 * BENCH_SLOW_MS (p95 above which the plan is shown, 200), BENCH_SANITIZE_RUNS (7), BENCH_ERA (legacy|modern),
 * BENCH_SERVER_NODE_ARGS (extra Node options for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
 * BENCH_KEEP_DATABASE=1 (keep the seeded database for experiments with psql; its name is printed),
 * BENCH_ONLY=search (only part 3: the seeding and the searches; parts 1, 2 and 4 are skipped),
 * BENCH_DATABASE=<name> (with BENCH_ONLY=search: the searches on a database seeded and kept by an earlier run, not
 * seeded again; to compare two versions of the code on the same pages).
 *
 * Each call figure also says how long the server's event loop was held at most while it was measured (the server
 * reports it every second, bench/support/LoopDelay.mjs).
 */
import type { Client } from "@modelcontextprotocol/client"
import { contentJobs } from "../packages/domain/src/Content/ContentJobs.ts"
import { sanitizeHtml } from "../packages/domain/src/Content/HtmlSanitizer.ts"
import {
  connectMcp,
  cpuBetween,
  type CpuReading,
  fill,
  loadAverage,
  machine,
  mcpEra,
  median,
  MiB,
  mulberry32,
  number,
  percentile,
  readCpu,
  time,
  withFreshServer
} from "./support/Bench.ts"
import { ordinaryHtml } from "./support/HtmlSamples.ts"

// ---------------------------------------------------------------------------------------------------------------
// Words: ordinary English at the top ranks (stop words first, as in prose), then made-up words for the long tail.
// A word's rank r is drawn as floor(V ** u), u uniform: P(r) ~ log(1 + 1/r), a Zipf law with exponent 1.
// ---------------------------------------------------------------------------------------------------------------

const STOP = "the of and to a in is for on with that this it as be by are from at we".split(" ")
const COMMON = (
  "data team system project user page release schedule service update review design report customer feature " +
  "support plan process model change issue version test build account budget deadline quality policy market " +
  "network storage request response server client query index search result value metric goal risk owner " +
  "meeting note decision action summary draft document source reference section table chart figure example " +
  "analysis research study survey interview insight trend forecast revenue cost price sales growth margin " +
  "contract vendor partner supplier inventory order shipment delivery invoice payment refund ticket incident " +
  "outage alert monitor dashboard log trace error latency throughput capacity scale cluster region zone backup " +
  "restore migration schema column row record field type format parser compiler runtime library framework " +
  "module package dependency license security access token session login password permission role audit " +
  "compliance privacy consent retention archive export import sync cache queue worker job task pipeline stage " +
  "deploy rollout rollback canary feedback onboarding training hiring roadmap milestone sprint backlog story " +
  "estimate velocity retro standup handbook guide tutorial lesson course chapter glossary appendix benchmark " +
  "baseline experiment hypothesis sample variance median percentile outlier cohort funnel conversion churn " +
  "retention engagement campaign channel audience brand content editor author reader comment thread reply " +
  "mention link image video audio file folder workspace dock artifact markdown wiki"
).split(" ")
/** Vocabulary entries of two words, so a phrase search has real adjacent matches (and more AND-only pages). */
const PHRASES = ["release schedule", "customer feedback", "error budget"]

const vocabulary = (size: number): Array<string> => {
  const words = [...STOP, ...COMMON]
  // The phrases sit near rank 300, so each is in about a tenth of the pages.
  words.splice(Math.min(300, words.length), 0, ...PHRASES)
  const seen = new Set(words)
  const random = mulberry32(7)
  const onsets = [
    "b",
    "br",
    "c",
    "ch",
    "d",
    "f",
    "g",
    "gr",
    "k",
    "l",
    "m",
    "n",
    "p",
    "pl",
    "r",
    "s",
    "st",
    "t",
    "tr",
    "v",
    "z"
  ]
  const vowels = ["a", "e", "i", "o", "u", "ai", "ou", "ea"]
  const codas = ["", "", "n", "r", "l", "s", "th", "nd", "rk", "x"]
  const pick = <A>(list: ReadonlyArray<A>) => list[Math.floor(random() * list.length)]!
  while (words.length < size) {
    const syllables = 2 + Math.floor(random() * 2)
    let word = ""
    for (let i = 0; i < syllables; i++) word += pick(onsets) + pick(vowels) + pick(codas)
    if (!seen.has(word)) {
      seen.add(word)
      words.push(word)
    }
  }
  return words
}

// ---------------------------------------------------------------------------------------------------------------
// The Markdown written by push_web_page: prose with headings, lists, links, a table, a quote, code and wikilinks.
// ---------------------------------------------------------------------------------------------------------------

const markdownDocument = (seed: number, bytes: number, words: ReadonlyArray<string>) => {
  const random = mulberry32(seed)
  const word = () => words[Math.floor(Math.pow(words.length, random()))]!
  const content = () => COMMON[Math.floor(random() * COMMON.length)]!
  const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
  const sentence = () => {
    const parts: Array<string> = []
    const length = 8 + Math.floor(random() * 14)
    for (let i = 0; i < length; i++) {
      const roll = random()
      if (roll < 0.03) {
        parts.push(`[${content()} ${content()}](https://example.com/${content()}/${Math.floor(random() * 1000)})`)
      } else if (roll < 0.045) parts.push(`[[${capital(content())} ${capital(content())}]]`)
      else if (roll < 0.06) parts.push(`**${word()}**`)
      else if (roll < 0.07) parts.push(`\`${content()}_${content()}\``)
      else parts.push(word())
    }
    return capital(parts.join(" ")) + "."
  }
  const paragraph = () => Array.from({ length: 3 + Math.floor(random() * 4) }, sentence).join(" ")
  const title = `${capital(content())} ${content()} ${content()} notes`
  const out = [`# ${title}`, "", "REVISION", "", paragraph(), ""]
  let size = 0
  for (let section = 1; size < bytes; section++) {
    const block: Array<string> = [
      `## ${section}. ${capital(content())} and ${content()}`,
      "",
      paragraph(),
      "",
      paragraph(),
      ""
    ]
    const kind = section % 4
    if (kind === 0) {
      for (let i = 0; i < 5; i++) block.push(`- ${capital(content())}: ${sentence()}`)
      block.push("")
    } else if (kind === 1) {
      for (let i = 1; i <= 4; i++) block.push(`${i}. ${sentence()} See [[${capital(content())} ${content()}]].`)
      block.push("")
    } else if (kind === 2) {
      block.push("| Item | Owner | Status | Estimate |", "| --- | --- | --- | ---: |")
      for (let i = 0; i < 6; i++) {
        block.push(
          `| ${capital(content())} ${content()} | @${word()} | ${random() < 0.5 ? "open" : "done"} | ${
            Math.floor(random() * 40)
          } d |`
        )
      }
      block.push("")
    } else {
      block.push(
        `> ${sentence()} ${sentence()}`,
        "",
        "```ts",
        `const ${content()} = await ${content()}.${content()}(${Math.floor(random() * 100)})`,
        "```",
        ""
      )
    }
    block.push(`### ${capital(content())} ${content()}`, "", paragraph(), "")
    const text = block.join("\n")
    out.push(text)
    size += Buffer.byteLength(text) + 1
  }
  return out.join("\n")
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring.
// ---------------------------------------------------------------------------------------------------------------

interface Figure {
  readonly label: string
  readonly calls: number
  readonly perSecond: number
  readonly p50: number
  readonly p95: number
  readonly errors: number
  readonly note: string
  /** The longest the server's event loop was held while the figure was measured (ms), when known. */
  readonly blockedMs: number | undefined
  /** What a measured call cost the server and PostgreSQL in CPU, when measured. */
  readonly cpu: string | undefined
}

/** The server's output, once it runs: its `loop-delay` lines (bench/support/LoopDelay.mjs). */
let serverOutput: (() => string) | undefined

/** The longest event-loop delay the server reported for the seconds between `from` and `to` (epoch ms). */
const blockedBetween = (from: number, to: number): number | undefined => {
  let longest: number | undefined
  for (const [, at, ms] of (serverOutput?.() ?? "").matchAll(/^loop-delay (\d+) ([\d.]+)$/gm)) {
    // Each line covers the second before it.
    if (Number(at) > from + 1000 && Number(at) <= to + 1000) longest = Math.max(longest ?? 0, Number(ms))
  }
  return longest
}

/**
 * The CPU used so far by the server process and the database's backends (from /proc, in ms), once the server
 * runs: unlike latency, hardly changed by whatever else loads the machine.
 */
let cpuMeter: (() => Promise<CpuReading>) | undefined

/** What the measured calls cost the server and PostgreSQL in CPU, each call on average. */
const cpuPerCall = (before: CpuReading, after: CpuReading, calls: number) => {
  const { process: server, database } = cpuBetween(before, after)
  const per = (ms: number) => (ms / Math.max(1, calls)).toFixed(1)
  return `CPU a call: server ${per(server)} ms, PostgreSQL ${per(database)} ms`
}

/**
 * Every client calls in a loop (`call(client index, call number)`, true when it succeeded) for `warmup` seconds
 * unrecorded, then `seconds` recorded. Latency per successful call; calls/s over the recorded wall time.
 */
const drive = async (
  label: string,
  clients: number,
  warmup: number,
  seconds: number,
  call: (client: number, n: number) => Promise<boolean>,
  note = ""
): Promise<Figure> => {
  const counters = Array.from({ length: clients }, () => 0)
  const phase = async (ms: number, record: Array<number> | undefined) => {
    let errors = 0
    const start = performance.now()
    const deadline = start + ms
    await Promise.all(counters.map(async (_, index) => {
      while (performance.now() < deadline) {
        const before = performance.now()
        const ok = await call(index, counters[index]!++)
        if (!ok) errors++
        else record?.push(performance.now() - before)
      }
    }))
    return { errors, elapsed: performance.now() - start }
  }
  if (warmup > 0) await phase(warmup * 1000, undefined)
  const latencies: Array<number> = []
  const measuredFrom = Date.now()
  const cpuBefore = await cpuMeter?.()
  const { elapsed, errors } = await phase(seconds * 1000, latencies)
  const cpuAfter = await cpuMeter?.()
  const cpu = cpuBefore === undefined || cpuAfter === undefined
    ? undefined
    : cpuPerCall(cpuBefore, cpuAfter, latencies.length + errors)
  // (the last second's line comes a second later)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const blockedMs = blockedBetween(measuredFrom, Date.now() - 1100)
  latencies.sort((a, b) => a - b)
  const figure = {
    label,
    calls: latencies.length,
    perSecond: latencies.length / (elapsed / 1000),
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    errors,
    note,
    blockedMs,
    cpu
  }
  console.log(
    `  ${label}: ${figure.perSecond.toFixed(1)}/s, p50 ${figure.p50.toFixed(1)} ms, p95 ${figure.p95.toFixed(1)} ms ` +
      `(${figure.calls} calls, ${errors} errors${note === "" ? "" : `; ${note}`}` +
      `${blockedMs === undefined ? "" : `; event loop held at most ${blockedMs.toFixed(0)} ms`})` +
      `${cpu === undefined ? "" : `\n    ${cpu}`}`
  )
  return figure
}

const main = async () => {
  const pages = number("BENCH_PAGES", 100_000)
  const dockCount = number("BENCH_DOCKS", 200)
  const owners = number("BENCH_OWNERS", 5)
  const vocabularySize = number("BENCH_VOCABULARY", 30_000)
  const sentences = number("BENCH_SENTENCES", 50_000)
  const seconds = number("BENCH_SECONDS", 10)
  const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
  const writers = number("BENCH_WRITERS", 16)
  const readers = number("BENCH_READERS", 10)
  const pageBytes = number("BENCH_PAGE_KIB", 64) * 1024
  const searchClients = number("BENCH_SEARCH_CLIENTS", 4)
  const searchSeconds = number("BENCH_SEARCH_SECONDS", 8)
  const searchLimit = number("BENCH_SEARCH_LIMIT", 20)
  const slowMs = number("BENCH_SLOW_MS", 200)
  const sanitizeRuns = number("BENCH_SANITIZE_RUNS", 7)
  const era = mcpEra()
  /** BENCH_ONLY=search: part 3 alone (the other parts take minutes and load the machine). */
  const only = process.env.BENCH_ONLY
  if (only !== undefined && only !== "search") throw new Error(`BENCH_ONLY: only "search" is known, not ${only}`)
  const all = only === undefined
  const benchStart = performance.now()
  const loadStart = loadAverage({ all: true })

  console.log(machine())
  console.log(`load average (1/5/15 min) at start: ${loadStart}\n`)

  // -------------------------------------------------------------------------------------------------------------
  // 4. In this process, first, before anything else runs: the sanitizer and the Markdown preparation.
  // -------------------------------------------------------------------------------------------------------------
  const sanitizeFigures: Array<{ label: string; median: number; worst: number }> = []
  console.log(`in this process, ${sanitizeRuns} runs each after one warm-up:`)
  const words = vocabulary(vocabularySize)
  const documents = Array.from({ length: 8 }, (_, i) => markdownDocument(1000 + i, pageBytes - 200, words))
  const docBytes = documents.reduce((sum, d) => sum + Buffer.byteLength(d), 0) / documents.length
  const inProcess = (label: string, run: () => void) => {
    run()
    const runs = Array.from({ length: sanitizeRuns }, () => time(run))
    sanitizeFigures.push({ label, median: median(runs), worst: Math.max(...runs) })
    console.log(`  ${label}: median ${median(runs).toFixed(0)} ms, worst ${Math.max(...runs).toFixed(0)} ms`)
  }
  const ordinary = ordinaryHtml(MiB)
  const nested = fill("<div>")
  if (all) {
    inProcess("sanitizeHtml, 1 MiB ordinary HTML", () => sanitizeHtml(ordinary))
    inProcess("sanitizeHtml, 1 MiB nested <div>", () => sanitizeHtml(nested))
    // What a Markdown push costs the server before any SQL (same module resolution as the server's).
    const markdown = documents[0]!.replace("REVISION", "Revision 0.")
    // (the work prepareMarkdown hands to a content worker)
    inProcess(
      `prepareMarkdown, ${(docBytes / 1024).toFixed(0)} KiB (push CPU)`,
      () => contentJobs.markdownPage({ content: markdown, frontMatterRequired: false })
    )
  }

  // -------------------------------------------------------------------------------------------------------------
  // The server on a fresh database.
  // -------------------------------------------------------------------------------------------------------------
  const figures: Array<Figure> = []
  const searchFigures: Array<Figure> = []
  const seedSeconds: Record<string, number> = {}
  await withFreshServer("pages", {
    // e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to see where the server spends its time
    nodeArgs: [
      `--import=${new URL("./support/LoopDelay.mjs", import.meta.url).href}`,
      ...(process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "")
    ],
    env: {
      // The plan's caps out of the way too: nothing but the server itself limits the run.
      DOCK_PLAN_MAX_DOCKS: "100000",
      DOCK_PLAN_MAX_ARTIFACTS_PER_DOCK: "1000000000",
      DOCK_PLAN_MAX_DOCK_BYTES: "2000000000"
    }
  }, async ({ dock, summary, psql, admin, defer, reused }) => {
    serverOutput = dock.output
    const poolSize = process.env.DOCK_DB_POOL_SIZE ?? "10 (default)"
    console.log(`\n${summary}`)
    console.log(`server ready in ${(dock.readyMs / 1000).toFixed(1)} s; DOCK_DB_POOL_SIZE ${poolSize}; MCP era ${era}`)

    const tokenOf = async (email: string, scopes: Array<string>) =>
      String((await admin("/admin/tokens", { user: email, scopes })).token)
    const connect = async (token: string) => {
      const client = await connectMcp({ name: "dock-bench-pages", url: `${dock.baseUrl}/mcp`, era, token, retry: true })
      defer(() => client.close())
      return client
    }
    const shown = new Set<string>()
    /** One tool call; false (and its first error of each tool shown) when it failed. */
    const call = async (client: Client, name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args })
      if (result.isError === true) {
        if (!shown.has(name)) {
          shown.add(name)
          console.error(`  ${name} failed: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 500)}`)
        }
        return undefined
      }
      return result.structuredContent as Record<string, unknown>
    }

    // An existing database (BENCH_DATABASE) has its users and its pages already.
    if (reused && all) throw new Error("BENCH_DATABASE is for BENCH_ONLY=search: parts 1 and 2 write pages")
    const searcherId = reused
      ? await psql("select id from users where username = 'bench-searcher'")
      : (await admin("/admin/users", { email: "writer@example.com", username: "bench-writer" }),
        String((await admin("/admin/users", { email: "searcher@example.com", username: "bench-searcher" })).id))

    const literal = (text: string) => `'${text.replace(/'/g, "''")}'`
    // CPU a call costs the server process and the database's backends, measured by every `drive` from now on.
    cpuMeter = () => readCpu(dock.child.pid, psql)
    if (!reused) {
      // -----------------------------------------------------------------------------------------------------------
      // Seeding for search, with SQL: vocabulary, a pool of sentences, then every page a random run of sentences.
      // -----------------------------------------------------------------------------------------------------------
      console.log(
        `\nseeding ${pages} pages in ${dockCount} public, discoverable Docks of ${owners} users (vocabulary ` +
          `${words.length}, ${sentences} sentences)…`
      )
      const timed = async (label: string, sql: string) => {
        const started = performance.now()
        const out = await psql(sql)
        seedSeconds[label] = (performance.now() - started) / 1000
        console.log(`  ${label}: ${seedSeconds[label]!.toFixed(1)} s`)
        return out
      }
      await timed(
        "users, Docks, words, sentences",
        `
      create unlogged table bench_vocab (rank integer primary key, word text not null);
      insert into bench_vocab select ordinality, word
        from unnest(array[${words.map(literal).join(",")}]) with ordinality as t(word, ordinality);
      insert into users (username, email, kind, confirmed, created_at, updated_at)
        select 'seed-owner-' || i, 'seed-owner-' || i || '@example.com', 'person', true, now(), now()
        from generate_series(1, ${owners}) i;
      create unlogged table bench_docks (n integer primary key, id uuid not null, owner_id uuid not null);
      with made as (
        insert into docks (owner_id, slug, title, description, visibility, discoverable, created_at, updated_at)
        select u.id, 'seed-dock-' || i, 'Seed Dock ' || i, 'Seeded by bench/pages', 'public', true, now(), now()
        from generate_series(1, ${dockCount}) i
          join users u on u.username = 'seed-owner-' || (1 + i % ${owners})
        returning id, owner_id, slug
      )
      insert into bench_docks select substr(slug, 11)::integer % ${dockCount}, id, owner_id from made;
      create unlogged table bench_sentences as
        select i as id, upper(left(s, 1)) || substr(s, 2) || '.' as text
        from (
          select w.i, string_agg(v.word, ' ' order by w.k) as s
          from (
            select i, k, floor(power(${words.length}::float8, random()))::integer as rank
            from generate_series(1, ${sentences}) i, lateral generate_series(1, 6 + i % 14) k
          ) w join bench_vocab v on v.rank = w.rank
          group by w.i
        ) t;
      alter table bench_sentences add primary key (id);
    `
      )
      // In chunks (progress shows). Planted rare words: 'quokkaline' in 1 page of 5000, 'zirconate' of 20000,
      // 'plinthwork' of 2000.
      const chunk = Math.min(pages, 10_000)
      for (let lo = 1; lo <= pages; lo += chunk) {
        const hi = Math.min(pages, lo + chunk - 1)
        const started = performance.now()
        await psql(`set jit = off;
        insert into parts (dock_id, owner_id, slug, public_slug, title, summary, content_type, page_kind, content,
          body_text, size_bytes, created_at, updated_at)
        select d.id, d.owner_id, 'page-' || g, 'seed-page-' || g, t.title, left(b.body, 240), 'markdown', 'web_page',
          '# ' || t.title || E'\\n\\n' || b.body, b.body, octet_length(b.body) + octet_length(t.title) + 4,
          now() - make_interval(mins => g), now() - make_interval(mins => g)
        from generate_series(${lo}, ${hi}) g
          join bench_docks d on d.n = g % ${dockCount}
          -- offset 0: not pulled up, so one title per page rather than one per use
          cross join lateral (
            select (select initcap(v.word) from bench_vocab v where v.rank = 21 + (g * 37) % 200) || ' ' ||
              (select v.word from bench_vocab v where v.rank = 21 + (g * 53) % 300) || ' ' ||
              (select v.word from bench_vocab v where v.rank = r.rank) as title
            from (select floor(power(${words.length}::float8, random()))::integer + 0 * g as rank offset 0) r
            offset 0
          ) t
          cross join lateral (
            select string_agg((select s.text from bench_sentences s where s.id = x.sid), ' ')
              || case when g % 5000 = 17 then ' Quokkaline deposits were found.' else '' end
              || case when g % 20000 = 3 then ' The zirconate sample held.' else '' end
              || case when g % 2000 = 11 then ' Plinthwork needs repair.' else '' end as body
            from (select 1 + floor(random() * ${sentences})::integer as sid from generate_series(1, 10 + (g * 7919) % 50)) x
          ) b;`)
        const spent = (performance.now() - started) / 1000
        seedSeconds["pages"] = (seedSeconds["pages"] ?? 0) + spent
        console.log(
          `  pages ${lo}-${hi}: ${spent.toFixed(1)} s (${(spent * 1e6 / (hi - lo + 1)).toFixed(0)} µs a page)`
        )
      }
      await timed("vacuum analyze", "vacuum analyze parts; vacuum analyze docks; vacuum analyze users;")
    }
    const [pageCount, avgBytes, tableSize] = (await psql(
      `select count(*), avg(octet_length(body_text))::integer, pg_size_pretty(pg_total_relation_size('parts')) from parts`
    )).split("|")
    console.log(`  ${pageCount} pages, body_text ${avgBytes} bytes on average, parts ${tableSize} with indexes`)

    // Parts 1 and 2 (skipped with BENCH_ONLY=search).
    if (all) {
      // -----------------------------------------------------------------------------------------------------------
      // 1. push_web_page.
      // -----------------------------------------------------------------------------------------------------------
      const writeTokens = await Promise.all(
        Array.from({ length: writers }, () => tokenOf("writer@example.com", ["mcp:write"]))
      )
      const writeClients = await Promise.all(writeTokens.map(connect))
      const writerDocks: Array<string> = []
      for (let w = 0; w < writers; w++) {
        const made = await call(writeClients[w]!, "create_bucket", { title: `Writer ${w}`, slug: `writer-${w}` })
        if (made === undefined) throw new Error("create_bucket failed")
        writerDocks.push(`bench-writer/${(made.bucket as { slug: string }).slug}`)
      }
      const actions: Record<string, number> = {}
      /** Pages that exist now, as [bucket, page_slug]: what the readers read. */
      const written: Array<readonly [string, string]> = []
      let revision = 0
      /**
       * A write: a page of the writer's rotation (32 slugs), its content one of 8 documents with a new revision line:
       * each slug's own document (an edit of a line), or with `rewrite` the next document each time (every line).
       */
      const push = async (client: Client, bucket: string, slugPrefix: string, n: number, rewrite = false) => {
        const document = rewrite ? n + Math.floor(n / 32) + 1 : n
        const content = documents[document % documents.length]!.replace(
          "REVISION",
          `_Revision ${++revision} by ${slugPrefix} at ${new Date().toISOString()}._`
        )
        const out = await call(client, "push_web_page", {
          bucket,
          page_slug: `${slugPrefix}-p${n % 32}`,
          content_type: "markdown",
          page_content: content
        })
        if (out === undefined) return false
        actions[String(out.action)] = (actions[String(out.action)] ?? 0) + 1
        if (out.action === "created") written.push([bucket, `${slugPrefix}-p${n % 32}`])
        return out.action !== "unchanged"
      }
      console.log(
        `\npush_web_page, Markdown of ${(docBytes / 1024).toFixed(1)} KiB (8 documents, each write a new revision; ` +
          `${warmup} s warm-up, ${seconds} s measured):`
      )
      figures.push(
        await drive(
          "push_web_page, 1 writer",
          1,
          warmup,
          seconds,
          (_, n) => push(writeClients[0]!, writerDocks[0]!, "solo", n)
        )
      )
      figures.push(
        await drive(
          `push_web_page, ${writers} writers, own Docks`,
          writers,
          warmup,
          seconds,
          (w, n) => push(writeClients[w]!, writerDocks[w]!, `w${w}`, n)
        )
      )
      // The same pages written again, each write another of the 8 documents: its version's line counts diff two
      // unrelated 64 KiB documents (lineDiff's whole work budget; Content/Diffs.ts).
      figures.push(
        await drive(
          `push_web_page, ${writers} writers, own Docks, rewrites`,
          writers,
          warmup,
          seconds,
          (w, n) => push(writeClients[w]!, writerDocks[w]!, `w${w}`, n, true)
        )
      )
      figures.push(
        await drive(
          `push_web_page, ${writers} writers, one Dock`,
          writers,
          warmup,
          seconds,
          (w, n) => push(writeClients[w]!, writerDocks[0]!, `s${w}`, n)
        )
      )
      console.log(`  actions: ${JSON.stringify(actions)}`)

      // -----------------------------------------------------------------------------------------------------------
      // 2. get_web_page on the pages just written (and one HTML page, which every read sanitizes again).
      // -----------------------------------------------------------------------------------------------------------
      const readTokens = await Promise.all(
        Array.from({ length: readers }, () => tokenOf("writer@example.com", ["mcp:read"]))
      )
      const readClients = await Promise.all(readTokens.map(connect))
      const html = ordinaryHtml(pageBytes)
      if (
        await call(writeClients[0]!, "push_web_page", {
          bucket: writerDocks[0]!,
          page_slug: "html-page",
          page_content: html
        }) === undefined
      ) {
        throw new Error("push_web_page (HTML) failed")
      }
      console.log(`\nget_web_page, ${readers} concurrent readers (${warmup} s warm-up, ${seconds} s measured):`)
      figures.push(
        await drive(`get_web_page, ${readers} readers, 64 KiB Markdown`, readers, warmup, seconds, async (r, n) => {
          const [bucket, page] = written[(r * 7919 + n * 31) % written.length]!
          return (await call(readClients[r]!, "get_web_page", { bucket, page_slug: page })) !== undefined
        }, `over the ${written.length} pages written`)
      )
      figures.push(
        await drive(
          `get_web_page, ${readers} readers, 64 KiB HTML`,
          readers,
          warmup,
          seconds,
          async (r) =>
            (await call(readClients[r]!, "get_web_page", { bucket: writerDocks[0]!, page_slug: "html-page" })) !==
              undefined,
          "one page, sanitized again per read"
        )
      )
      // A list shows no content: 100 pages of 64 KiB Markdown a call (the writers' shared Dock), never their text.
      figures.push(
        await drive(
          `list_web_pages, ${readers} readers, 64 KiB Markdown`,
          readers,
          warmup,
          seconds,
          async (r, n) =>
            (await call(readClients[r]!, "list_web_pages", {
              bucket: writerDocks[0]!,
              limit: 100,
              sort: n % 2 === 0 ? "alphabetical" : "recent"
            })) !== undefined,
          "100 pages a call, in either order"
        )
      )
    }

    // -----------------------------------------------------------------------------------------------------------
    // 3. search_web_pages by a user who owns none of the seeded Docks (they are public and discoverable).
    // -----------------------------------------------------------------------------------------------------------
    const searchTokens = await Promise.all(
      Array.from({ length: searchClients }, () => tokenOf("searcher@example.com", ["mcp:read"]))
    )
    const searchers = await Promise.all(searchTokens.map(connect))
    const kinds: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["common word", ["data", "team", "system"]],
      ["rare word", ["quokkaline", "zirconate", "plinthwork"]],
      ["two words", ["budget deadline", "network storage", "invoice payment"]],
      ["phrase", PHRASES.map((p) => `"${p}"`)]
    ]
    console.log(
      `\nsearch_web_pages over ${pageCount} pages, ${searchClients} concurrent clients, ${searchSeconds} s per kind ` +
        `(1 s warm-up), limit ${searchLimit}:`
    )
    const matches = (query: string) =>
      psql(`select count(*) from parts where search @@ websearch_to_tsquery('english', ${literal(query)})`)
    for (const [kind, queries] of kinds) {
      const counts: Array<string> = []
      for (const query of queries) counts.push(await matches(query))
      searchFigures.push(
        await drive(
          `search_web_pages, ${kind}`,
          searchClients,
          1,
          searchSeconds,
          async (c, n) =>
            (await call(searchers[c]!, "search_web_pages", {
              query: queries[(c + n) % queries.length]!,
              limit: searchLimit
            })) !==
              undefined,
          `queries ${queries.join(", ")}; matching pages ${counts.join(", ")}`
        )
      )
    }
    // Within one Dock (`bucket`): the Dock-by-Dock walk, on that Dock's own index.
    const oneDock = (await psql("select id from docks where slug like 'seed-dock-%' order by slug limit 3")).split("\n")
    searchFigures.push(
      await drive(
        "search_web_pages, common word, in one Dock",
        searchClients,
        1,
        searchSeconds,
        async (c, n) =>
          (await call(searchers[c]!, "search_web_pages", {
            query: ["data", "team", "system"][(c + n) % 3]!,
            bucket: oneDock[(c + n) % oneDock.length]!,
            limit: searchLimit
          })) !== undefined,
        `about ${Math.round(Number(pageCount) / dockCount)} pages a Dock`
      )
    )
    // 1 client, sequential: latency without queueing behind the other clients.
    console.log(`\nsearch_web_pages, 1 client, common word (no concurrency):`)
    const solo = await drive(
      "search_web_pages, common word, 1 client",
      1,
      1,
      searchSeconds,
      async (_, n) =>
        (await call(searchers[0]!, "search_web_pages", {
          query: ["data", "team", "system"][n % 3]!,
          limit: searchLimit
        })) !==
          undefined
    )
    searchFigures.push(solo)

    // list_web_pages in the seeded Docks, each client walking one Dock's list by its cursor (and starting over at
    // its end): a page of 50 from wherever the last one ended, in either order (migration 19: one index walk).
    for (const sort of ["alphabetical", "recent"] as const) {
      const cursors = new Map<number, string | undefined>()
      searchFigures.push(
        await drive(
          `list_web_pages, ${sort}, by cursor`,
          searchClients,
          1,
          searchSeconds,
          async (c) => {
            const cursor = cursors.get(c)
            const answer = await call(searchers[c]!, "list_web_pages", {
              bucket: oneDock[c % oneDock.length]!,
              sort,
              limit: 50,
              ...(cursor === undefined ? {} : { cursor })
            })
            cursors.set(c, (answer?.["next_cursor"] as string | null | undefined) ?? undefined)
            return answer !== undefined
          },
          `about ${Math.round(Number(pageCount) / dockCount)} pages a Dock, 50 a call`
        )
      )
    }

    // The plans, for each kind whose p95 is over BENCH_SLOW_MS: PagesRepo.search's candidate statement for this
    // user's first query of that kind, among the newest 1,000 pages (the first window; the searcher reads more
    // than SEARCH_DOCK_BY_DOCK Docks), with literals and the transaction's settings.
    const member = `(d.owner_id = '${searcherId}' or d.id = any('{}'::uuid[]))`
    const firstWindow = (query: string, end: string) => `
      select p.id from parts p join docks d on d.id = p.dock_id
      where d.hidden_at is null and (${member} or (d.visibility = 'public' and d.discoverable))
        and (p.visibility is distinct from 'private' or ${member}) and p.updated_at >= '${end}'::timestamptz
        and exists (select from parts s where s.ctid = p.ctid and s.dock_id::text = d.id::text
          and s.search @@ websearch_to_tsquery('english', ${literal(query)}))
      order by p.updated_at desc, p.id
      limit 100`
    const slow = kinds.filter((_, i) => searchFigures[i]!.p95 > slowMs)
    if (slow.length > 0) {
      const end = await psql("select (select updated_at from parts order by updated_at desc offset 999 limit 1)::text")
      for (const [kind, queries] of slow) {
        console.log(`
${kind}: p95 over ${slowMs} ms; explain (analyze, buffers) of the first window's statement:`)
        const plan = await psql(
          `set enable_seqscan = off; set enable_hashjoin = off; set enable_mergejoin = off;
          explain (analyze, buffers) ${firstWindow(queries[0]!, end)}`
        )
        console.log(plan.split("\n").map((line) => `  ${line}`).join("\n"))
      }
    }
  })

  // -------------------------------------------------------------------------------------------------------------
  // The table.
  // -------------------------------------------------------------------------------------------------------------
  const row = (cells: ReadonlyArray<string>) =>
    console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(46) : cell.padStart(10))).join(" "))
  console.log("")
  row(["figure", "calls/s", "p50 ms", "p95 ms", "calls", "errors", "loop held ms"])
  for (const f of [...figures, ...searchFigures]) {
    row([
      f.label,
      f.perSecond.toFixed(1),
      f.p50.toFixed(1),
      f.p95.toFixed(1),
      String(f.calls),
      String(f.errors),
      f.blockedMs?.toFixed(0) ?? ""
    ])
  }
  for (const f of sanitizeFigures) {
    row([f.label, "", f.median.toFixed(0), `${f.worst.toFixed(0)} max`, String(sanitizeRuns), ""])
  }
  row([`seeding ${pages} pages (s)`, "", "", "", Object.values(seedSeconds).reduce((a, b) => a + b, 0).toFixed(1), ""])
  console.log(
    `\nin process: median (p50 column) and worst of ${sanitizeRuns} runs; seeding: ${
      Object.entries(seedSeconds).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(", ")
    }`
  )
  for (const f of [...figures, ...searchFigures]) if (f.cpu !== undefined) console.log(`${f.label}: ${f.cpu}`)
  console.log(
    `load average (1/5/15 min): ${loadStart} at start, ${loadAverage({ all: true })} at end; ` +
      `whole run ${((performance.now() - benchStart) / 1000).toFixed(0)} s`
  )
}

await main()
