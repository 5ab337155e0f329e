// The columns that hold a page's or a source's text, its search vector and JSON documents are compressed with lz4 where
// the server has it (Debian's and most PostgreSQL builds do; PGlite does not, and keeps pglz). pglz took ~2.5 ms to
// compress 75 KB of text on the 2-core machine (lz4 ~0.45 ms), and a Markdown push compresses four such values (the
// page's content, text and search vector, the version's content): PostgreSQL's CPU a 64 KiB push went from ~29 to ~22.5
// ms, for ~30% more bytes on disk (prose-like text in psql) (docs/decisions.md, "lz4 for a page's text"). Only values
// written from now on use it; older ones stay pglz and read as before. Images are left out: their bytes are compressed
// already, and pglz gives up on them after the first KiB where lz4 would go through all of them.
export default `
do $$
begin
  alter table parts
    alter column content set compression lz4,
    alter column body_text set compression lz4,
    alter column search set compression lz4,
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
