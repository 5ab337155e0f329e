// Users, Docks, Dock members and the activity log: what the Foundation slice stands on.
export default `
create table users (
  id                uuid primary key default gen_random_uuid(),
  username          text not null unique,
  email             text unique,
  kind              text not null check (kind in ('person', 'anonymous')),
  confirmed         boolean not null default false,
  identity_provider text,
  default_dock_id   uuid,
  created_at        timestamptz not null,
  updated_at        timestamptz not null
);

create table docks (
  id            uuid primary key default gen_random_uuid(),
  owner_id      uuid not null references users (id) on delete cascade,
  slug          text not null,
  title         text not null,
  description   text,
  visibility    text not null default 'private' check (visibility in ('private', 'public')),
  discoverable  boolean not null default false,
  allow_forks   boolean not null default false,
  tags          text[] not null default '{}',
  topics        text[] not null default '{}',
  created_at    timestamptz not null,
  updated_at    timestamptz not null,
  unique (owner_id, slug)
);

alter table users
  add constraint users_default_dock_fk foreign key (default_dock_id)
  references docks (id) on delete set null deferrable initially deferred;

create table dock_members (
  dock_id     uuid not null references docks (id) on delete cascade,
  user_id     uuid not null references users (id) on delete cascade,
  role        text not null check (role in ('owner', 'editor', 'viewer')),
  created_at  timestamptz not null,
  primary key (dock_id, user_id)
);
create index dock_members_user_idx on dock_members (user_id);

create table activity (
  id           uuid primary key default gen_random_uuid(),
  dock_id      uuid references docks (id) on delete cascade,
  user_id      uuid references users (id) on delete set null,
  token_id     uuid,
  agent_label  text,
  action       text not null,
  subject_type text,
  subject_id   uuid,
  details      jsonb not null default '{}'::jsonb,
  created_at   timestamptz not null
);
create index activity_dock_time_idx on activity (dock_id, created_at desc);
`
