// How a page's big values are stored (docs/decisions.md, "lz4 for a page's text, no compression for its search
// vector"). pglz took ~2.5 ms to compress 75 KB of text on the 2-core machine (lz4 ~0.45 ms), and a Markdown push
// compressed four such values: the page's content, text and search vector, and the version's content.
//
// - Text and JSON documents are compressed with lz4 where the server has it (Debian's and most PostgreSQL builds
//   do; PGlite does not, and keeps pglz): ~30% more bytes on disk than pglz for prose.
// - The search vector is never compressed (`storage external`: kept out of line as it is when the row is big).
//   pglz gave up on most vectors after trying (it keeps a value only when it saves a quarter), lz4 saved ~7% of
//   them, and search reads the vector of every page its walk looks at: compressed with lz4, PostgreSQL's CPU a
//   search rose by ~1.5 ms over 100,000 pages.
//
// Only values written from now on are stored this way; older ones read as before. Images are left out: their bytes
// are compressed already, and pglz gives up on them after the first KiB where lz4 would go through all of them.
export default `
alter table parts alter column search set storage external;
do $$
begin
  alter table parts
    alter column content set compression lz4,
    alter column body_text set compression lz4,
    alter column front_matter set compression lz4;
  alter table part_versions
    alter column content set compression lz4,
    alter column front_matter set compression lz4;
  alter table sources alter column body_text set compression lz4;
  alter table trashed_parts
    alter column part set compression lz4,
    alter column versions set compression lz4;
  alter table micro_db_rows alter column data set compression lz4;
exception when feature_not_supported then
  raise notice 'this server has no lz4: text stays compressed with pglz';
end
$$;
`
