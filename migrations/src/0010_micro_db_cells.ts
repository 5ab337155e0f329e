// Typed copies of the Micro DB's scalar values, one row per (row, column) that has a number, boolean or string:
// btree order for typed range filters and sorts, which JSON rows cannot have without per-column (DDL) indexes.
// Triggers on micro_db_rows keep them in step with every write of `data` (inserts, updates, schema changes that
// rewrite rows, deletes, the cascade of a table's or Dock's delete, fork copies), in the writer's transaction.
// Strings are kept as their first 200 characters (a btree entry holds at most ~2.7 kB); Query.ts knows that
// (CELL_TEXT_CHARS) and compares longer values on the row itself.
export default `
create table micro_db_cells (
  table_id uuid not null,
  row_seq  bigint not null,
  slug     text not null,
  -- numbers as they are, booleans as 0 and 1 (false before true)
  num      numeric,
  -- strings (text, select, url, email, dates and datetimes as ISO text) ordered by code point
  txt      text collate "C",
  -- a row's cell of a column in one index lookup, its value included: a filter checked on a row a sort walks
  primary key (table_id, row_seq, slug) include (num, txt)
);
create index micro_db_cells_num_idx on micro_db_cells (table_id, slug, num, row_seq) where num is not null;
create index micro_db_cells_txt_idx on micro_db_cells (table_id, slug, txt, row_seq) where txt is not null;
-- Which values are common in which column ("todo" in status, true in done): without them the planner takes every
-- column's values for any column's and thinks filters far narrower than they are.
create statistics micro_db_cells_slug_num (mcv) on slug, num from micro_db_cells;
create statistics micro_db_cells_slug_txt (mcv) on slug, txt from micro_db_cells;

-- The cells of one row's data: what is indexed, in one place (the triggers and the backfill below).
create function micro_db_cells_of(data jsonb) returns table (slug text, num numeric, txt text)
language sql immutable as $$
  select e.key,
    case jsonb_typeof(e.value) when 'number' then e.value::numeric when 'boolean' then e.value::boolean::int end,
    case jsonb_typeof(e.value) when 'string' then left(e.value #>> '{}', 200) end
  from jsonb_each(data) e
  where jsonb_typeof(e.value) in ('number', 'boolean', 'string')
$$;

-- One statement's rows at once (transition tables): a 500-row insert is one insert of cells, not 500.
create function micro_db_rows_cells() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' then
    delete from micro_db_cells c using old_rows o where c.table_id = o.table_id and c.row_seq = o.seq;
  end if;
  if tg_op <> 'DELETE' then
    insert into micro_db_cells (table_id, row_seq, slug, num, txt)
    select n.table_id, n.seq, v.slug, v.num, v.txt from new_rows n cross join lateral micro_db_cells_of(n.data) v;
  end if;
  return null;
end
$$;
create trigger micro_db_rows_cells_inserted after insert on micro_db_rows
  referencing new table as new_rows for each statement execute function micro_db_rows_cells();
create trigger micro_db_rows_cells_updated after update on micro_db_rows
  referencing old table as old_rows new table as new_rows for each statement execute function micro_db_rows_cells();
create trigger micro_db_rows_cells_deleted after delete on micro_db_rows
  referencing old table as old_rows for each statement execute function micro_db_rows_cells();

insert into micro_db_cells (table_id, row_seq, slug, num, txt)
select r.table_id, r.seq, v.slug, v.num, v.txt from micro_db_rows r cross join lateral micro_db_cells_of(r.data) v;
`
