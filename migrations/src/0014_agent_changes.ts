// Undo an agent (issue 18, docs/undo.md): what revert_agent_changes needs to know and bring back.
// - trashed_parts: a deleted page (its `parts` row and every `part_versions` row, as JSON) kept for a retention
//   period so that a revert can bring it back with its history; written by Parts.remove in the delete's own
//   transaction, purged by the trash sweep (server/src/Jobs.ts).
// - micro_db_row_changes: the row change log, one entry per row an insert, update or delete wrote (who: token and
//   user; what: the op and the row's data before it), written in the same statement as the row write.
// - indexes to find one token's versions, deletions, row changes and activity since a time.
export default `
create table trashed_parts (
  id          uuid primary key,
  dock_id     uuid not null references docks (id) on delete cascade,
  slug        text,
  -- the parts row (without its generated columns) and its part_versions rows, as they were
  part        jsonb not null,
  versions    jsonb not null,
  size_bytes  bigint not null,
  user_id     uuid,
  token_id    uuid,
  deleted_at  timestamptz not null
);
create index trashed_parts_dock_idx on trashed_parts (dock_id, deleted_at);
create index trashed_parts_token_idx on trashed_parts (token_id, deleted_at) where token_id is not null;
create index trashed_parts_time_idx on trashed_parts (deleted_at);

create table micro_db_row_changes (
  seq         bigint generated always as identity primary key,
  dock_id     uuid not null references docks (id) on delete cascade,
  table_id    uuid not null,
  row_id      uuid not null,
  token_id    uuid,
  user_id     uuid,
  op          text not null check (op in ('insert', 'update', 'delete')),
  -- the row's data before the change (null for an insert)
  data_before jsonb,
  at          timestamptz not null
);
create index micro_db_row_changes_token_idx on micro_db_row_changes (token_id, at) where token_id is not null;
create index micro_db_row_changes_row_idx on micro_db_row_changes (row_id, seq);
create index micro_db_row_changes_time_idx on micro_db_row_changes (at);

create index part_versions_token_idx on part_versions (token_id, created_at) where token_id is not null;
create index activity_token_idx on activity (token_id, created_at) where token_id is not null;
`
