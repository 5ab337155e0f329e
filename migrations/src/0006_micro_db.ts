// The Micro DB: each Dock's typed tables (their columns as a JSON array) and their rows (JSON objects keyed by
// column slug). The Dock's shell part (page_kind micro_db) carries the snapshots as its versions.
export default `
create table micro_db_tables (
  id          uuid primary key default gen_random_uuid(),
  dock_id     uuid not null references docks (id) on delete cascade,
  name        text not null,
  slug        text not null,
  description text,
  position    integer not null,
  -- MicroDbColumn[] in position order (docs/micro-db.md)
  columns     jsonb not null default '[]'::jsonb,
  -- kept under the table's row lock: the plan's rows-per-table cap
  row_count   integer not null default 0,
  created_at  timestamptz not null,
  updated_at  timestamptz not null,
  unique (dock_id, slug)
);
create index micro_db_tables_dock_idx on micro_db_tables (dock_id, position);

create table micro_db_rows (
  id          uuid primary key default gen_random_uuid(),
  table_id    uuid not null references micro_db_tables (id) on delete cascade,
  -- insertion order: a table's default row order, stable under paging (a bulk insert keeps its order)
  seq         bigint generated always as identity,
  data        jsonb not null,
  -- UTF-8 bytes of data's JSON: what the row counts against the Dock's content size
  size_bytes  integer not null,
  created_at  timestamptz not null,
  updated_at  timestamptz not null
);
-- A table's rows in their default (insertion) order: every query reads rows through it.
create index micro_db_rows_table_idx on micro_db_rows (table_id, seq);
-- eq / in / contains filters and unique checks as containment lookups (data @> '{"col": value}'). Without a
-- pending list (fastupdate off): every lookup would otherwise scan the list of recent inserts until a vacuum
-- flushes it (500 unique values checked against 100,000 rows: 400 ms with a full list, 7 ms without).
create index micro_db_rows_data_idx on micro_db_rows using gin (data jsonb_path_ops) with (fastupdate = off);

-- One Micro DB per Dock: at most one shell part.
create unique index parts_one_micro_db_idx on parts (dock_id) where page_kind = 'micro_db';
`
