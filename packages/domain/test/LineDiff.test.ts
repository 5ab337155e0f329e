// The unified line diff of page versions (Content/LineDiff.ts): hunks, counts, the size cut and the work cap.
import { describe, expect, it } from "@effect/vitest"
import { countLines, lineDiff, splitLines } from "../src/Content/LineDiff.ts"

/** Applies a unified diff (as lineDiff writes it, full context) to `from`, to check it gives `to`. */
const apply = (from: string, diff: string): string => {
  const a = splitLines(from)
  const out: Array<string> = []
  let at = 0
  const lines = splitLines(diff)
  for (let i = 0; i < lines.length; i++) {
    const header = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(lines[i]!)
    if (header === null) continue
    const start = Number(header[2]) === 0 ? Number(header[1]) : Number(header[1]) - 1
    while (at < start) out.push(a[at++]!)
    for (let j = i + 1; j < lines.length && !lines[j]!.startsWith("@@"); j++) {
      const line = lines[j]!
      if (line.startsWith(" ")) {
        expect(a[at]).toBe(line.slice(1))
        out.push(a[at++]!)
      } else if (line.startsWith("-")) {
        expect(a[at]).toBe(line.slice(1))
        at++
      } else if (line.startsWith("+")) out.push(line.slice(1))
    }
  }
  while (at < a.length) out.push(a[at++]!)
  return out.map((line) => `${line}\n`).join("")
}

describe("lineDiff", () => {
  it("answers nothing for the same lines", () => {
    expect(lineDiff("a\nb\n", "a\nb\n")).toEqual({ diff: "", added: 0, removed: 0, truncated: false, exact: true })
    expect(lineDiff("", "")).toMatchObject({ diff: "", added: 0, removed: 0 })
  })

  it("writes hunks with three lines of context", () => {
    const from = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
    const to = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"
    const result = lineDiff(from, to)
    expect(result).toMatchObject({ added: 1, removed: 1, truncated: false, exact: true })
    expect(result.diff).toBe("@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n")
  })

  it("writes labels when both are given", () => {
    const result = lineDiff("a\n", "b\n", { fromLabel: "version 1", toLabel: "version 2" })
    expect(result.diff).toBe("--- version 1\n+++ version 2\n@@ -1,1 +1,1 @@\n-a\n+b\n")
  })

  it("counts a new text's lines as added and an emptied text's as removed", () => {
    expect(lineDiff("", "a\nb\nc")).toMatchObject({ added: 3, removed: 0, diff: "@@ -0,0 +1,3 @@\n+a\n+b\n+c\n" })
    expect(lineDiff("a\nb\n", "")).toMatchObject({ added: 0, removed: 2, diff: "@@ -1,2 +0,0 @@\n-a\n-b\n" })
  })

  it("splits far-apart changes into hunks and joins near ones", () => {
    const base = Array.from({ length: 40 }, (_, i) => `line ${i}`)
    const to = [...base]
    to[2] = "changed 2"
    to[30] = "changed 30"
    to[34] = "changed 34"
    const result = lineDiff(base.join("\n"), to.join("\n"))
    expect(result.diff.match(/^@@/gm)).toHaveLength(2)
    expect(result).toMatchObject({ added: 3, removed: 3 })
    expect(apply(base.join("\n"), result.diff)).toBe(`${to.join("\n")}\n`)
  })

  it("finds a shortest diff that applies, for many random edits", () => {
    let seed = 7
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    }
    for (let round = 0; round < 200; round++) {
      const from = Array.from({ length: random(30) }, () => String.fromCharCode(97 + random(5)))
      const to = [...from]
      for (let e = random(6); e > 0; e--) {
        const at = random(to.length + 1)
        if (random(2) === 0 && to.length > 0) to.splice(at % to.length, 1)
        else to.splice(at, 0, String.fromCharCode(97 + random(5)))
      }
      const fromText = from.map((l) => `${l}\n`).join("")
      const toText = to.map((l) => `${l}\n`).join("")
      const result = lineDiff(fromText, toText)
      expect(result.exact).toBe(true)
      expect(apply(fromText, result.diff)).toBe(toText)
      expect(from.length + result.added - result.removed).toBe(to.length)
    }
  })

  it("cuts the diff text at maxBytes on a line boundary, counts stay whole", () => {
    const to = Array.from({ length: 1000 }, (_, i) => `new line ${i}`).join("\n")
    const result = lineDiff("", to, { maxBytes: 200 })
    expect(result.truncated).toBe(true)
    expect(result.exact).toBe(true)
    expect(new TextEncoder().encode(result.diff).byteLength).toBeLessThanOrEqual(200)
    expect(result.diff.endsWith("\n")).toBe(true)
    expect(result.added).toBe(1000)
  })

  it("answers the coarse diff for two 1 MiB texts that differ everywhere", () => {
    // Every line differs: Myers would need ~130,000 steps of up to 260,000 diagonals each.
    const from = Array.from({ length: 131_072 }, (_, i) => `a${i % 997}`).join("\n").slice(0, 1 << 20)
    const to = Array.from({ length: 131_072 }, (_, i) => `b${i % 991}`).join("\n").slice(0, 1 << 20)
    const result = lineDiff(from, to)
    expect(result.exact).toBe(false)
    expect(result.truncated).toBe(true)
    expect(result.removed).toBe(countLines(from))
    expect(result.added).toBe(countLines(to))
    expect(new TextEncoder().encode(result.diff).byteLength).toBeLessThanOrEqual(65_536)
    expect(result.diff.startsWith("@@ -1,")).toBe(true)
  })

  it("stays exact for a 1 MiB text with one line changed (prefix and suffix are cut first)", () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i}`)
    const changed = [...lines]
    changed[50_000] = "the one change"
    const result = lineDiff(lines.join("\n"), changed.join("\n"))
    expect(result).toMatchObject({ added: 1, removed: 1, exact: true, truncated: false })
  })

  it("counts lines as splitLines does", () => {
    for (const text of ["", "a", "a\n", "a\nb", "a\nb\n", "\n", "\n\n"]) {
      expect(countLines(text)).toBe(splitLines(text).length)
    }
  })
})
