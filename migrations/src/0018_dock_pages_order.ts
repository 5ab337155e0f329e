// A Dock's pages newest first with their ties in id order, straight from one index: search's walk of one Dock
// (PagesRepo.search, Dock by Dock) orders by (updated_at desc, id). The index it replaces, (dock_id, updated_at
// desc), left the ties to a sort, and the planner then preferred walking every page newest first
// (parts_updated_idx) and testing each against the Dock, reading each page's search vector on the way: a Dock
// with no match, or only old ones, walked the whole table (41 ms for 22 Docks of 2,000 pages, 2.6 ms with this).
export default `
create index parts_dock_updated_idx on parts (dock_id, updated_at desc, id);
drop index parts_dock_idx;
`
