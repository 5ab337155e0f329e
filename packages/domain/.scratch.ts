import { Effect } from "effect"
import { renderMarkdown, splitFrontMatter, deriveSummary } from "./src/Pages/MarkdownDocument.ts"
const r = (md: string) => renderMarkdown(md, { resolveWikilink: (t) => t === "Known" || t === "a/b/c" ? { href: `/a/${t}` } : undefined })
const show = (md: string) => { const x = r(md); console.log(JSON.stringify(md), "\n ->", x.html, "\n   text:", JSON.stringify(x.text), x.wikilinks, x.firstHeading, x.lead, x.warnings) }
show("# Hi [[Known]]\n\nSee [[Known]] and [[missing|Label]] and [[a/b/c]] and `[[code]]`\n\n```\n[[fence]]\n```\n")
show("| a | b |\n|---|---|\n| 1 | [[x\\|y]] |\n\n- [ ] todo\n- [x] done\n\n~~gone~~ www.example.com https://x.org\n\nFoot[^1]\n\n[^1]: note")
show("<script>alert(1)</script>\n\nhi <b onclick=x>b</b>")
show("[a](javascript:alert(1)) [b](&#106;avascript:alert(1)) [c](java\tscript:x) <javascript:alert(1)> [d][r] ![i](javascript:x \"t\\\" onerror=alert(1)\") ![ok](https://x/y.png \"a\\\" onerror=x\") [ok](https://ok)\n\n[r]: javascript:alert(2)\n\n[e][r] ![f][r]\n\n[z](vbscript:x) [y](data:text/html,x) ![d](data:image/png;base64,AAA) [[Known]] [p [[Known]]](https://q)")
show("[[ Known ]]\n\n[known]: https://x\n\n[[Known]]")
const pr = (s: string) => Effect.runSync(Effect.either(splitFrontMatter(s, { required: true })))
console.log(pr("---\ntitle: x\ndate: 2024-01-01\nn: .inf\n---\nbody"))
console.log(pr("---\na: 1\nb: [1,\n---\nbody"))
console.log(pr("---\n%YAML 1.1\n---\nx"))
console.log(pr("---\na: &a [*a]\n---\nx"))
console.log(pr("---\n? [a]\n: b\n---\nx"))
console.log(deriveSummary("word ".repeat(100)), deriveSummary("x".repeat(300)).length)
