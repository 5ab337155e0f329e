// The parser (markdown-it since issue 15) builds the tree micromark built: the same HTML through the same
// mdast → hast → HTML steps, document by document, for CommonMark and each GitHub extension; and what a push reads
// (readMarkdown) is what a rendering gives, without the HTML.
import { describe, expect, it } from "@effect/vitest"
import { toHtml } from "hast-util-to-html"
import { fromMarkdown } from "mdast-util-from-markdown"
import { gfmFromMarkdown } from "mdast-util-gfm"
import { toHast } from "mdast-util-to-hast"
import { gfm } from "micromark-extension-gfm"
import { parseMarkdown } from "../src/Content/MarkdownParse.ts"
import { readMarkdown, renderMarkdown } from "../src/Content/MarkdownRender.ts"
import { ordinary } from "../src/Content/MarkdownSamples.ts"

const micromark = (body: string) =>
  toHtml(toHast(fromMarkdown(body, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] })))
const markdownIt = (body: string) => toHtml(toHast({ type: "root", children: parseMarkdown(body) }))

const documents: Record<string, string> = {
  "task lists": "- [ ] todo\n- [x] done\n- [X] also done\n- plain item\n\n1. [x] first\n   - [ ] nested\n",
  "task list checks followed by spaces and a line break": "- [ ] \n  next line\n- [x]\n  next\n- [ ]\n- [y] no",
  "footnotes, labels folded as micromark folds them": "a[^Note] b[^1.2] c[^x:y]\n\n[^note]: One\n[^1.2]: Two\n" +
    "    continued\n\n    para two\n[^x:y]: Three\n\n[^unused]: Four",
  "tables, aligned, ragged, escaped pipes": "| a | b |\n|:--|--:|\n| 1 | 2 | 3 |\n| 4 |\n| `x\\|y` | [[p\\|q]] |",
  "strikethrough with one and two tildes": "~~gone~~ kept ~one~ ~~~three~~~ ~a~~ ~~b~",
  "autolink literals": "See www.example.com, https://example.org/x?y=1. and (https://a.com/b_(c)) me@example.com " +
    "https://ex.com/a_b_",
  // Each pattern runs only on text holding what it needs (`://`, `www.`, `@`): every case, in one text and alone.
  "autolink literals of every kind and case, alone and together":
    "Write to ME@Example.com, see HTTPS://EXAMPLE.ORG/A " +
    "and WWW.Example.com.\n\nOr Www.x.org/p alone.\n\nOr HTTP://X.ORG alone.\n\nDots. Alone. Here.",
  // Lines starting with a letter skip the scan's block tests: such lines inside and after HTML, code and tables.
  "lines of letters inside and after blocks": "<div>\nletters here\n</div>\n\n```\nletters in code\n```\n\n" +
    "| a | b |\n|---|---|\nletters end the table\n\nword [x]: not a definition\n\n[x]: /def\n\n<!--\nnote\n-->\ntext",
  "references, defined before and after": "[a][ref] [ref] [c][] ![i][ref]\n\n[ref]: /r 'R'\n[c]: </u v> \"C\"",
  "lists tight and loose": "- a\n- b\n\n- c\n\n1. x\n\n   y\n2. z\n\n5. five\n6. six",
  "code": "```js title=x\ncode\n\n```\n\n    indented\n\n\n    more\n\n~~~\nopen fence",
  "unclosed fences in containers": "- a\n\n  ```\n  code\n\nx\n\n> ```\n> code\n>\n",
  "raw HTML, entities and escapes": "<div>\nx\n</div>\n\ninline <b>bold</b> &amp; &copy; &#35; \\* \\_",
  "emphasis": "*a **b** c* _d_ __e__ ***f*** a*b*c a_b_c **foo*bar**",
  "image alts with escapes, entities, code and emphasis":
    "![a\\]\\(b\\) \\<c\\> \\&amp; &copy; `d` *e*](/i.png \"t\\\" x\")" +
    " ![[[w]] <b>h</b>](/j.png)",
  "breaks and headings": "a  \nb\\\nc\n\n# h1 #\n\nSetext\n===\n\n## h2\n---\n",
  "ordinary prose": ordinary(32 * 1024)
}

describe("markdown-it builds micromark's tree", () => {
  it.each(Object.entries(documents))("%s", (_, body) => {
    expect(markdownIt(body)).toBe(micromark(body))
  })

  it("a push reads what a rendering gives, without the HTML", () => {
    const body = ordinary(64 * 1024)
    const { html: _html, ...rendered } = renderMarkdown(body, { resolveWikilink: () => undefined })
    expect(readMarkdown(body)).toEqual(rendered)
  })
})
