// Issue 18 (diffs and write preconditions). Each page version records the lines it added and removed relative
// to the version before it (version 1: all its lines added), computed by the writer (docs/versions.md, "Lines per version");
// versions written before this migration keep nulls, which list_*_versions shows as null ("not recorded").
// Micro DB rows gain a version: 1 at insert, raised by every update of the row, the base_version that
// update_micro_db_row / delete_micro_db_row may require. Existing rows start at 1.
export default `
alter table part_versions add column lines_added integer, add column lines_removed integer;
alter table micro_db_rows add column version integer not null default 1;
`
