/**
 * Ordinary Markdown of a given size, the same every run: prose with some emphasis, links, code, wikilinks and
 * reference links under headings, with a list, table, code block, quote or task list in each section, and
 * footnotes and definitions at the end. Test data (exported by `@dock/domain/testing`), not used by the service:
 * the render-limit tests and `bench/markdown` use it.
 */
const words = ("the of and to in is that for it as was with be by on not this are or from at which have an they " +
  "data page system report analysis market growth customer product service revenue quarter results team").split(" ")

/** `wikilinks: false` writes plain words where wikilinks would be. */
export const ordinary = (size: number, wikilinks = true): string => {
  let seed = 42
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
  const pick = <T>(items: ReadonlyArray<T>) => items[Math.floor(random() * items.length)]!
  const sentence = () => {
    const text = Array.from({ length: 6 + Math.floor(random() * 14) }, () => {
      const word = pick(words)
      const roll = random()
      return roll < 0.03
        ? `**${word}**`
        : roll < 0.06
        ? `*${word}*`
        : roll < 0.08
        ? `\`${word}_id\``
        : roll < 0.1
        ? `[${word}](https://example.com/${word})`
        : roll < 0.11
        ? (wikilinks ? `[[${word} page]]` : word)
        : roll < 0.115
        ? `[${word}][ref${Math.floor(random() * 4)}]`
        : word
    }).join(" ")
    return text[0]!.toUpperCase() + text.slice(1) + pick([".", ".", "?", ";"])
  }
  const paragraph = () => Array.from({ length: 2 + Math.floor(random() * 5) }, sentence).join(" ")
  const blocks: Array<string> = []
  for (let section = 1, length = 0; length < size; section++) {
    const roll = random()
    const extra = roll < 0.3
      ? Array.from({ length: 3 + Math.floor(random() * 6) }, () => `- ${sentence()}`).join("\n")
      : roll < 0.45
      ? Array.from({ length: 3 + Math.floor(random() * 4) }, (_, i) => `${i + 1}. ${sentence()}`).join("\n")
      : roll < 0.6
      ? ["| Name | Value |", "|:--|--:|", ...Array.from({ length: 6 }, () => `| ${pick(words)} | ${section} |`)]
        .join("\n")
      : roll < 0.75
      ? "```ts\nconst total = compute(data, 1)\n\nreturn [total]\n```"
      : roll < 0.85
      ? `> ${paragraph()}\n> ${sentence()}[^n${section % 3}]`
      : `- [ ] ${sentence()}\n- [x] ${sentence()}`
    const heading = `## ${section}. ${pick(words)} ${pick(words)}`
    const next = [heading, paragraph(), paragraph(), paragraph(), extra, paragraph()].join("\n\n")
    blocks.push(next)
    length += next.length + 2
  }
  const definitions = ["[ref0]: https://example.com/0", "[ref1]: /one", "[Ref2]: /two \"Two\"", "[ref3]: <>"]
  const footnotes = ["[^n0]: Note zero.", "[^n1]: Note one.", "[^n2]: Note two."]
  return [...blocks, definitions.join("\n"), ...footnotes].join("\n\n") + "\n"
}

/**
 * Ordinary Markdown of about `size` characters under a long front matter (a list of 5,200 small mappings, ~60 KB):
 * a push reads 1 MB of it in ~0.7 s or more, where 1 MB of ordinary Markdown alone takes ~0.2 s. The deadline tests
 * use it: no Markdown we know of runs away from the parser, so a document that outlasts a short deadline is a long,
 * slow one.
 */
export const slowToRead = (size: number): string => {
  const items = Array.from({ length: 5200 }, (_, i) => `  - k: ${i}`).join("\n")
  const frontMatter = `---\ntitle: Slow to read\nitems:\n${items}\n---\n`
  return frontMatter + ordinary(Math.max(0, size - frontMatter.length))
}
