// Images (push_image): the bytes live in `blobs`, the default ObjectStore (keyed like an object store's paths,
// owned by a Dock so they go with it), and each image's record in `images`.
export default `
create table blobs (
  -- docks/<dock_id>/images/<image_id>.<ext>: the key an S3-compatible store would use too
  key          text primary key,
  dock_id      uuid not null references docks (id) on delete cascade,
  content_type text not null,
  size_bytes   integer not null check (size_bytes >= 0),
  data         bytea not null,
  created_at   timestamptz not null
);
create index blobs_dock_idx on blobs (dock_id);

create table images (
  id          uuid primary key,
  dock_id     uuid not null references docks (id) on delete cascade,
  -- the ObjectStore key of the re-encoded bytes (no foreign key: the store may live outside the database)
  blob_key    text not null,
  -- what the decoder found; the bytes were re-encoded to it with every metadata block dropped
  format      text not null check (format in ('jpeg', 'png', 'webp')),
  width       integer not null check (width > 0),
  height      integer not null check (height > 0),
  -- stored (re-encoded) bytes: what the image counts against the Dock's content size
  size_bytes  integer not null check (size_bytes > 0),
  -- as given by the uploader: data, never a path
  filename    text not null,
  alt_text    text not null,
  caption     text,
  user_id     uuid references users (id) on delete set null,
  token_id    uuid,
  agent_label text,
  created_at  timestamptz not null
);
create index images_dock_idx on images (dock_id, created_at);
`
