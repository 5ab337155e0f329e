// search_web_pages ranks hits by this small vector: the title (A), the summary (B) and the first 2,000
// characters of the text (C). Matching still uses the whole text (`search`). Ranking by `search` itself read the
// whole (TOASTed) vector of every matching page: 85% of the time of a search for a common word over 100,000
// pages (bench:pages).
export default `
alter table parts add column rank_vector tsvector generated always as (
  setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
  setweight(to_tsvector('english', summary), 'B') ||
  setweight(to_tsvector('english', left(body_text, 2000)), 'C')
) stored;
`
