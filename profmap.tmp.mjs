import fs from "node:fs"
import path from "node:path"
import { SourceMapConsumer } from "source-map-js"
const p = JSON.parse(fs.readFileSync(process.argv[2], "utf8"))
const consumers = new Map()
const consumer = (url) => {
  if (!consumers.has(url)) {
    const file = url.replace("file://", "")
    let c = null
    try { c = new SourceMapConsumer(JSON.parse(fs.readFileSync(file + ".map", "utf8"))) } catch {}
    consumers.set(url, c)
  }
  return consumers.get(url)
}
const srcOf = new Map()
const source = (n) => {
  if (srcOf.has(n.id)) return srcOf.get(n.id)
  const cf = n.callFrame
  let s
  if (!cf.url) s = "(native) " + cf.functionName
  else if (cf.url.includes("/bundle/")) {
    const c = consumer(cf.url)
    const pos = c?.originalPositionFor({ line: cf.lineNumber + 1, column: cf.columnNumber })
    const src = pos?.source ?? "?"
    const m = src.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)/)
    s = m ? m[1] + "/" + m[2].split("/").slice(-1)[0] : src.replace(/^.*packages\//, "dock/")
    s += " " + (pos?.name ?? cf.functionName ?? "")
  } else s = cf.url.replace(/^.*node_modules\//, "").split("/").slice(0, 3).join("/") + " " + cf.functionName
  srcOf.set(n.id, s); return s
}
const byId = new Map(p.nodes.map((n) => [n.id, n]))
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const self = new Map(); for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0))
const bySelf = new Map(), byFile = new Map(), incl = new Map(); let busy = 0
for (const [id, t] of self) {
  const n = byId.get(id); const fn = n.callFrame.functionName
  if (fn === "(idle)" || fn === "(program)") continue
  busy += t
  const s = source(n); bySelf.set(s, (bySelf.get(s) ?? 0) + t)
  const file = s.split(" ")[0]; byFile.set(file, (byFile.get(file) ?? 0) + t)
  const seen = new Set(); let cur = id
  while (cur !== undefined) { const k = source(byId.get(cur)); if (k.startsWith("dock/") && !seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + t) } cur = parent.get(cur) }
}
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, t]) => `${(100 * t / busy).toFixed(1).padStart(5)}% ${n}`).join("\n")
console.log("busy ms", (busy / 1000).toFixed(0))
console.log("SELF by file\n" + top(byFile, 45)); console.log("SELF by function\n" + top(bySelf, 40)); console.log("INCL dock\n" + top(incl, 40))
