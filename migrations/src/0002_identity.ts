// Tokens, rate-limit counters, anonymous and verified-email registrations with their OTPs, sandbox marks and
// per-Dock usage counters.
export default `
create table tokens (
  id                 uuid primary key default gen_random_uuid(),
  user_id            uuid not null references users (id) on delete cascade,
  secret_hash        text not null unique,
  label              text,
  kind               text not null check (kind in ('personal', 'anonymous', 'claimed_from_anonymous', 'oauth')),
  scopes             text[] not null,
  allowed_bucket_ids uuid[],
  created_at         timestamptz not null,
  expires_at         timestamptz,
  revoked_at         timestamptz,
  last_used_at       timestamptz
);
create index tokens_user_idx on tokens (user_id, created_at);

-- Fixed-window counters: one row per key and window, incremented atomically by every instance.
create table rate_limit_counters (
  key          text not null,
  window_start timestamptz not null,
  count        integer not null,
  primary key (key, window_start)
);
create index rate_limit_counters_window_idx on rate_limit_counters (window_start);

alter table docks add column sandbox boolean not null default false;
alter table docks add column hidden_at timestamptz;

-- Content counters per Dock, reserved atomically inside each write's transaction.
create table dock_usage (
  dock_id   uuid primary key references docks (id) on delete cascade,
  artifacts integer not null default 0 check (artifacts >= 0),
  bytes     bigint not null default 0 check (bytes >= 0)
);

create table registrations (
  id              uuid primary key default gen_random_uuid(),
  secret_hash     text not null unique,
  kind            text not null check (kind in ('anonymous', 'verified_email')),
  status          text not null check (status in ('unclaimed', 'otp_sent', 'claimed', 'expired')),
  user_id         uuid references users (id) on delete cascade,
  dock_id         uuid references docks (id) on delete set null,
  token_id        uuid references tokens (id) on delete set null,
  agent_label     text,
  requester_ip    text,
  email           text,
  claimed_user_id uuid references users (id) on delete set null,
  created_at      timestamptz not null,
  expires_at      timestamptz not null,
  claimed_at      timestamptz,
  expired_at      timestamptz
);
create index registrations_status_idx on registrations (status, expires_at);

create table otp_codes (
  id              uuid primary key default gen_random_uuid(),
  registration_id uuid not null references registrations (id) on delete cascade,
  email           text not null,
  code_hash       text not null,
  created_at      timestamptz not null,
  expires_at      timestamptz not null,
  used_at         timestamptz,
  voided_at       timestamptz,
  wrong_tries     integer not null default 0
);
create index otp_codes_registration_idx on otp_codes (registration_id, created_at desc);
`
