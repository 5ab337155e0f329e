// History counts against a Dock's content size (docs/decisions.md, "History is content"): `dock_usage.bytes`
// now holds every stored version of every page (the current one included, as before) and every Micro DB
// snapshot, besides rows, images and sources. Existing counters are raised by the history they did not count.
export default `
insert into dock_usage (dock_id)
select distinct dock_id from parts where dock_id is not null
on conflict (dock_id) do nothing;

update dock_usage u set bytes = u.bytes + history.bytes
from (
  select p.dock_id, sum(v.size_bytes)::bigint as bytes
  from part_versions v join parts p on p.id = v.part_id
  where p.dock_id is not null and (p.page_kind = 'micro_db' or v.version <> p.version)
  group by p.dock_id
) history
where history.dock_id = u.dock_id;
`
