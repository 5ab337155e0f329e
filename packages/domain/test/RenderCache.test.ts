import { describe, expect, it } from "vitest"
import { makeRenderCache } from "../src/Pages/RenderCache.ts"

describe("RenderCache", () => {
  it("renders once per key and answers the remembered value after", () => {
    const cache = makeRenderCache(1_000)
    let renders = 0
    const render = () => {
      renders++
      return "<p>x</p>"
    }
    expect(cache.getOrRender("a", render)).toBe("<p>x</p>")
    expect(cache.getOrRender("a", render)).toBe("<p>x</p>")
    expect(renders).toBe(1)
    expect(cache.getOrRender("b", render)).toBe("<p>x</p>")
    expect(renders).toBe(2)
  })

  it("stays within its byte budget, evicting the least recently used first", () => {
    // Each entry: key (1 code unit) + value (99) = 100 code units = 200 bytes; the budget holds three.
    const cache = makeRenderCache(600)
    for (const key of ["a", "b", "c"]) cache.set(key, key.repeat(99))
    expect(cache.size()).toEqual({ entries: 3, bytes: 600 })
    expect(cache.get("a")).toBe("a".repeat(99)) // a is now the most recently used
    cache.set("d", "d".repeat(99))
    expect(cache.get("b")).toBeUndefined()
    expect(cache.get("a")).toBe("a".repeat(99))
    expect(cache.get("c")).toBe("c".repeat(99))
    expect(cache.get("d")).toBe("d".repeat(99))
    expect(cache.size()).toEqual({ entries: 3, bytes: 600 })
  })

  it("does not keep a value larger than the whole budget, and replacing a key frees its old size", () => {
    const cache = makeRenderCache(600)
    cache.set("big", "x".repeat(400))
    expect(cache.get("big")).toBeUndefined()
    expect(cache.size()).toEqual({ entries: 0, bytes: 0 })
    cache.set("a", "1".repeat(99))
    cache.set("a", "2".repeat(49))
    expect(cache.get("a")).toBe("2".repeat(49))
    expect(cache.size()).toEqual({ entries: 1, bytes: 100 })
  })
})
