/**
 * Where a search hit's snippet is cut from. `ts_headline` parses all the text it is given (about 0.6 ms of CPU
 * for 3 KB, 20 ms for 100 KB), so PagesRepo.search gives it a window of the text around the first match rather
 * than the whole text: the first place a phrase of the query occurs, else the first place one of its words does
 * (found with a regular expression, which costs a small fraction of a parse), and marks every word of the query
 * found there. This module turns the query (as `websearch_to_tsquery` wrote it) into that regular expression and
 * that highlight query.
 */

/** The positive terms of a query: each one lexeme, or a phrase (lexemes, each `gap` positions after the last). */
export interface Term {
  readonly lexemes: ReadonlyArray<string>
  /** `gaps[i]`: how many positions lexeme i + 1 is after lexeme i (`<->` is 1, `<2>` is 2). */
  readonly gaps: ReadonlyArray<number>
}

type Token =
  | { readonly _tag: "Lexeme"; readonly text: string }
  | { readonly _tag: "Follows"; readonly distance: number }
  | { readonly _tag: "Not" }
  | { readonly _tag: "Open" }
  | { readonly _tag: "Close" }
  | { readonly _tag: "Other" }

/** The tokens of a tsquery's text form: `'lexeme'` (quotes doubled inside, `:*`/weights after), `!`, `<->`, `<N>`, `&`, `|`, parentheses. */
const tokens = (text: string): Array<Token> => {
  const out: Array<Token> = []
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "'") {
      let lexeme = ""
      i++
      while (i < text.length) {
        if (text[i] === "'" && text[i + 1] === "'") {
          lexeme += "'"
          i += 2
        } else if (text[i] === "\\" && i + 1 < text.length) {
          lexeme += text[i + 1]
          i += 2
        } else if (text[i] === "'") {
          i++
          break
        } else lexeme += text[i++]
      }
      // a prefix flag or weights (`:*`, `:AB`): not needed to find the text
      if (text[i] === ":") {
        i++
        while (i < text.length && /[*A-Da-d]/.test(text[i]!)) i++
      }
      out.push({ _tag: "Lexeme", text: lexeme })
    } else if (c === "<") {
      const end = text.indexOf(">", i)
      const inside = text.slice(i + 1, end === -1 ? text.length : end)
      out.push({ _tag: "Follows", distance: inside === "-" ? 1 : Math.max(1, Number.parseInt(inside, 10) || 1) })
      i = end === -1 ? text.length : end + 1
    } else if (c === "!") {
      out.push({ _tag: "Not" })
      i++
    } else if (c === "(") {
      out.push({ _tag: "Open" })
      i++
    } else if (c === ")") {
      out.push({ _tag: "Close" })
      i++
    } else if (c === "&" || c === "|") {
      out.push({ _tag: "Other" })
      i++
    } else i++
  }
  return out
}

/**
 * The positive terms of a query in `websearch_to_tsquery`'s text form (`'releas' <-> 'schedul' & !'team'`):
 * what a matching page has somewhere. Negated lexemes and groups are left out (a matching page lacks them).
 */
export const termsOf = (tsquery: string): ReadonlyArray<Term> => {
  const list = tokens(tsquery)
  const terms: Array<Term> = []
  let current: { lexemes: Array<string>; gaps: Array<number> } | undefined
  let pendingGap: number | undefined
  const close = () => {
    if (current !== undefined) terms.push(current)
    current = undefined
    pendingGap = undefined
  }
  for (let i = 0; i < list.length; i++) {
    const token = list[i]!
    if (token._tag === "Not") {
      close()
      // skip what is negated: a lexeme, or a parenthesised group (websearch writes `-"a b"` as `!( 'a' <-> 'b' )`)
      if (list[i + 1]?._tag === "Open") {
        let depth = 0
        for (i++; i < list.length; i++) {
          if (list[i]!._tag === "Open") depth++
          else if (list[i]!._tag === "Close" && --depth === 0) break
        }
      } else i++
    } else if (token._tag === "Lexeme") {
      if (current !== undefined && pendingGap !== undefined) {
        current.lexemes.push(token.text)
        current.gaps.push(pendingGap)
        pendingGap = undefined
      } else {
        close()
        current = { lexemes: [token.text], gaps: [] }
      }
    } else if (token._tag === "Follows") {
      pendingGap = token.distance
    } else close()
  }
  close()
  return terms.filter((term) => term.lexemes.length > 0)
}

const escapeRegex = (text: string) => text.replace(/[\\^$.|?*+()[\]{}-]/g, "\\$&")

/**
 * A lexeme as it may appear in text: English stems are mostly a prefix of their words (`schedul`: schedule,
 * scheduled), except that a final y becomes i (`studi`: study, studies).
 */
const wordPattern = (lexeme: string) =>
  (lexeme.endsWith("i") && lexeme.length > 1 ? `${escapeRegex(lexeme.slice(0, -1))}[iy]` : escapeRegex(lexeme)) +
  "\\w*"

/** A phrase as it may appear in text: its words in order, with as many words between them as its gaps allow. */
const phrasePattern = (term: Term) =>
  term.lexemes.map((lexeme, i) => {
    if (i === 0) return wordPattern(lexeme)
    const between = term.gaps[i - 1]! - 1
    return `\\W+${between > 0 ? `(?:\\w+\\W+){0,${between}}` : ""}${wordPattern(lexeme)}`
  }).join("")

/**
 * Regular expressions (PostgreSQL's, matched without case) for where a page's snippet starts: its phrases, then
 * any of its words. Empty when the query has no such term.
 */
export const snippetLocators = (tsquery: string): { readonly phrases: string; readonly words: string } => {
  const terms = termsOf(tsquery)
  const phrases = terms.filter((term) => term.lexemes.length > 1)
  const words = [...new Set(terms.flatMap((term) => term.lexemes))]
  return {
    phrases: phrases.map(phrasePattern).join("|"),
    words: words.map(wordPattern).join("|")
  }
}

/**
 * The query ts_headline marks matches with: every positive word of the query, any of them (`'releas' |
 * 'schedul'`), so that the words found in the window are marked even when the rest of the query is outside it.
 * Empty when the query has none.
 */
export const highlightQuery = (tsquery: string): string =>
  [...new Set(termsOf(tsquery).flatMap((term) => term.lexemes))]
    .map((lexeme) => `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`)
    .join(" | ")
