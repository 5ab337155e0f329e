/** Ordinary HTML (a report section with headings, a table, a list, an image, a quote and code) repeated to `bytes`. */
export const ordinaryHtml = (bytes: number) => {
  const unit = `<section id="s"><h2>Quarterly report</h2><p>Revenue grew <strong>12%</strong> on the back of ` +
    `<a href="https://example.com/q3">strong demand</a>; see the <em>appendix</em> for <code>raw_data</code>.</p>` +
    `<table><thead><tr><th>Region</th><th align="right">Sales</th></tr></thead><tbody><tr><td>North</td>` +
    `<td align="right">1,204</td></tr><tr><td>South</td><td align="right">988</td></tr></tbody></table>` +
    `<ul><li>First point</li><li>Second point with <img src="https://example.com/i.png" alt="chart"></li></ul>` +
    `<blockquote><p>A quote &amp; a source.</p></blockquote><pre><code class="language-ts">const x = 1 &lt; 2` +
    `</code></pre></section>\n`
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes)
}
