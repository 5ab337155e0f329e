// Share links (issue 16, item 7): a Dock owner's revocable, optionally expiring link to one page, read-only and
// without sign-in at /s/<secret>. Only the SHA-256 of the secret is stored (it is shown once, in the link); a
// row is live while `revoked_at` is null and `expires_at` is null or later than now. The page's and the Dock's
// deletion delete their links; a deleted creator leaves the link (the owner still lists and revokes it).
export default `
create table share_links (
  id           uuid primary key default gen_random_uuid(),
  dock_id      uuid not null references docks (id) on delete cascade,
  part_id      uuid not null references parts (id) on delete cascade,
  secret_hash  text not null unique,
  created_by   uuid references users (id) on delete set null,
  created_at   timestamptz not null,
  expires_at   timestamptz,
  revoked_at   timestamptz
);
create index share_links_dock_idx on share_links (dock_id, created_at);
create index share_links_part_idx on share_links (part_id);
`
