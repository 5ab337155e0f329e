// Pages (web pages, Markdown files, the Micro DB shell) with their versions, sources, fork tracking, the cover
// page and the grounding Dock of set_grounding_bucket.
export default `
create table parts (
  id             uuid primary key default gen_random_uuid(),
  -- null: a standalone artifact (push_markdown without a Dock), owned by owner_id and listed in no Dock
  dock_id        uuid references docks (id) on delete cascade,
  owner_id       uuid not null references users (id) on delete cascade,
  slug           text,
  -- globally unique and stable: /a/<public_slug>
  public_slug    text not null unique,
  title          text,
  summary        text not null default '',
  content_type   text not null check (content_type in ('markdown', 'html', 'json')),
  page_kind      text not null check (page_kind in ('web_page', 'markdown_file', 'micro_db')),
  -- null: follows the Dock; 'private' hides the part from outsiders even in a public Dock
  visibility     text check (visibility in ('private', 'public')),
  content        text not null,
  -- text-readable content: what search indexes and format "text" returns
  body_text      text not null default '',
  front_matter   jsonb not null default '{}'::jsonb,
  tags           text[] not null default '{}',
  entities       text[] not null default '{}',
  concepts       text[] not null default '{}',
  source_ids     text[] not null default '{}',
  claim_count    integer not null default 0,
  version        integer not null default 1,
  size_bytes     integer not null default 0,
  -- set on the copies a fork makes: the upstream part and its version at fork time
  upstream_part_id      uuid,
  upstream_version      integer,
  created_at     timestamptz not null,
  updated_at     timestamptz not null,
  search         tsvector generated always as (
    setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
    setweight(to_tsvector('english', summary), 'B') ||
    setweight(to_tsvector('english', left(body_text, 500000)), 'C')
  ) stored,
  unique (dock_id, slug)
);
create index parts_dock_idx on parts (dock_id, updated_at desc);
create index parts_owner_idx on parts (owner_id);
create index parts_search_idx on parts using gin (search);
create index parts_upstream_idx on parts (upstream_part_id);

create table part_versions (
  part_id       uuid not null references parts (id) on delete cascade,
  version       integer not null check (version > 0),
  title         text,
  summary       text not null default '',
  content_type  text not null,
  content       text not null,
  front_matter  jsonb not null default '{}'::jsonb,
  size_bytes    integer not null default 0,
  user_id       uuid references users (id) on delete set null,
  token_id      uuid,
  agent_label   text,
  -- 'created', 'updated', 'restored', 'forked', 'snapshot'
  reason        text not null,
  restored_from integer,
  created_at    timestamptz not null,
  primary key (part_id, version)
);

create table sources (
  id          uuid primary key default gen_random_uuid(),
  dock_id     uuid not null references docks (id) on delete cascade,
  title       text not null,
  origin      text not null,
  media_type  text not null,
  body_text   text not null,
  archived_at timestamptz,
  created_at  timestamptz not null
);
create index sources_dock_idx on sources (dock_id, created_at);

alter table docks add column cover_part_id uuid references parts (id) on delete set null;
alter table docks add column forked_from_id uuid references docks (id) on delete set null;
alter table docks add column forked_at timestamptz;
-- the upstream's owner_username/dock_slug at fork time: attribution that outlives the upstream
alter table docks add column forked_from_path text;
alter table docks add column forked_page_count integer;
alter table docks add column search tsvector generated always as (
  setweight(to_tsvector('english', title), 'A') ||
  setweight(to_tsvector('english', coalesce(description, '')), 'B') ||
  setweight(to_tsvector('english', slug), 'C')
) stored;
create index docks_search_idx on docks using gin (search);
create index docks_public_idx on docks (updated_at desc) where visibility = 'public' and hidden_at is null;

-- Insertion order: entries of one millisecond still list newest first.
alter table activity add column seq bigint generated always as identity;
create index activity_dock_seq_idx on activity (dock_id, seq desc);

-- set_grounding_bucket: the active Dock of one token, used by later untargeted reads until it expires.
create table grounding (
  token_id   uuid primary key references tokens (id) on delete cascade,
  dock_id    uuid not null references docks (id) on delete cascade,
  expires_at timestamptz not null,
  updated_at timestamptz not null
);
`
