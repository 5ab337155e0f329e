/**
 * Pages rendered for reading, kept in memory so that reading a page again does not render or sanitize it again
 * (1 MiB of Markdown takes seconds to render, 1 MiB of HTML most of a second to sanitize). A key names
 * everything the output depends on: the page, its version, and for Markdown where each wikilink points now.
 * The least recently used entries go first once the total passes the budget.
 */
export const RENDER_CACHE_MAX_BYTES = 32 * 1024 * 1024

export const makeRenderCache = (maxBytes = RENDER_CACHE_MAX_BYTES) => {
  const entries = new Map<string, string>()
  let bytes = 0
  // JavaScript strings take two bytes a code unit; the key counts too.
  const sizeOf = (key: string, value: string) => 2 * (key.length + value.length)

  const get = (key: string): string | undefined => {
    const value = entries.get(key)
    if (value !== undefined) {
      entries.delete(key)
      entries.set(key, value)
    }
    return value
  }

  const set = (key: string, value: string): void => {
    const previous = entries.get(key)
    if (previous !== undefined) {
      entries.delete(key)
      bytes -= sizeOf(key, previous)
    }
    if (sizeOf(key, value) > maxBytes) return
    entries.set(key, value)
    bytes += sizeOf(key, value)
    for (const [oldest, oldValue] of entries) {
      if (bytes <= maxBytes) break
      entries.delete(oldest)
      bytes -= sizeOf(oldest, oldValue)
    }
  }

  /** The cached value, or `render()`'s, remembered. */
  const getOrRender = (key: string, render: () => string): string => {
    const cached = get(key)
    if (cached !== undefined) return cached
    const value = render()
    set(key, value)
    return value
  }

  return { get, set, getOrRender, size: () => ({ entries: entries.size, bytes }) }
}

/**
 * Page versions that could not be rendered within the content workers' bound, with the refusal: a version is
 * never rendered again (render on read must not pay for the same runaway document on every GET). Bounded by
 * count; the oldest is forgotten first.
 */
export const RENDER_FAILURES_MAX = 10_000

export const makeFailureMemory = <E>(max = RENDER_FAILURES_MAX) => {
  const failures = new Map<string, E>()
  return {
    get: (key: string): E | undefined => failures.get(key),
    set: (key: string, failure: E): void => {
      failures.delete(key)
      failures.set(key, failure)
      if (failures.size > max) failures.delete(failures.keys().next().value!)
    },
    size: () => failures.size
  }
}
