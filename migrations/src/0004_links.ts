// Wikilink targets of each page, as written (`Page`, `slug`, `owner/dock/page-slug`). They are resolved when
// read, so a link starts working as soon as its target page appears.
export default `
alter table parts add column links text[] not null default '{}';
create index parts_links_idx on parts using gin (links);
`
