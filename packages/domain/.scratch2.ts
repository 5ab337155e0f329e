import { renderMarkdown } from "./src/Pages/MarkdownDocument.ts"
const M = 1024 * 1024
const cases: Record<string, string> = {
  quotes: ">".repeat(M),
  quotes_sp: "> ".repeat(M / 2),
  lists: Array.from({ length: 2000 }, (_, i) => " ".repeat(i * 2) + "- x").join("\n"),
  brackets: "[".repeat(M),
  stars: "*".repeat(M),
  starsA: "*a".repeat(M / 2),
  links: "[a](b) ".repeat(M / 7),
  wikis: "[[a]] ".repeat(M / 6),
  emph: "*a **b ".repeat(M / 7),
  tablewide: "|" + "a|".repeat(5000) + "\n|" + "-|".repeat(5000) + "\n" + ("|" + "b|".repeat(5000) + "\n").repeat(50),
  backticks: "`".repeat(M),
  plain: "hello world. ".repeat(M / 13),
}
for (const [k, md] of Object.entries(cases)) {
  const t = performance.now()
  try { const r = renderMarkdown(md, { resolveWikilink: () => undefined }); console.log(k, md.length, (performance.now() - t).toFixed(0), "ms", r.html.length) }
  catch (e) { console.log(k, "threw", (e as Error).message.slice(0, 80), (performance.now() - t).toFixed(0)) }
}
