/**
 * Patch edits (edit_markdown_file, edit_web_page): operations on a page's stored source, applied in order in a
 * content worker (Content/PageEdits.ts), all or none, then saved as a push of the result would be. Plain data:
 * the operations cross to the worker by structured clone.
 */

/** Operations in one edit call. */
export const EDIT_OPERATIONS_MAX = 100
/** A `find`, an anchor (`before` / `after`) or a heading path: what locates the change. */
export const EDIT_LOCATOR_MAX = 65_536
/** Front matter keys (top-level keys of the YAML mapping). */
export const EDIT_KEY_MAX = 200

export type PageEdit =
  | {
    /** The body under the heading at `heading` ("Setup > Install"): up to the next heading of its level or higher. */
    readonly op: "replace_section"
    readonly heading: string
    readonly content: string
  }
  | {
    readonly op: "replace_text"
    readonly find: string
    readonly replace: string
    /** Without it `find` must occur exactly once. */
    readonly occurrence?: "all" | undefined
  }
  | {
    /** Exactly one of `before` / `after`, which must occur exactly once. */
    readonly op: "insert_text"
    readonly before?: string | undefined
    readonly after?: string | undefined
    readonly text: string
  }
  | { readonly op: "set_front_matter"; readonly key: string; readonly value: unknown }
  | { readonly op: "delete_front_matter"; readonly key: string }

/** The kinds of page an edit names: edit_markdown_file, edit_web_page. */
export type EditKind = "markdown_file" | "web_page"

/**
 * The stored source's format: Markdown takes every operation, HTML the text ones (as does any web page, whatever
 * its format: edit_web_page offers only those).
 */
export type EditFormat = "markdown" | "html"

export const TEXT_EDIT_OPS: ReadonlyArray<PageEdit["op"]> = ["replace_text", "insert_text"]
