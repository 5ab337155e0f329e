// search_web_pages looks for its candidates among the newest pages first (PagesRepo.search): the newest pages
// in order, and where the 1,000th and the 10,000th newest page sit, come from this index rather than a sort of
// every page.
export default `
create index parts_updated_idx on parts (updated_at desc, id);
`
