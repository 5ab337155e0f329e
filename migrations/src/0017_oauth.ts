// OAuth 2.1 for MCP clients (issue 17, docs/oauth.md). Clients are registered (RFC 7591, `client_id` ours) or
// described by a Client ID Metadata Document (`client_id` = its https URL, the fetched document cached here).
// A grant is one person's consent to one client: scopes, the Docks allowed (null = all they may write) and the
// resource. Authorization codes and refresh tokens are stored as SHA-256 hashes, single use. Access tokens are
// rows of `tokens` (kind 'oauth') so /mcp keeps its one lookup by hash; they carry their grant and audience, and
// die with the grant (revoked together; deleted with it).
export default `
create table oauth_clients (
  id            text primary key,
  kind          text not null check (kind in ('registered', 'metadata_document')),
  client_name   text not null,
  client_uri    text,
  redirect_uris text[] not null,
  created_at    timestamptz not null,
  last_used_at  timestamptz,
  fetched_at    timestamptz
);

create table oauth_grants (
  id                 uuid primary key default gen_random_uuid(),
  user_id            uuid not null references users (id) on delete cascade,
  client_id          text not null references oauth_clients (id) on delete cascade,
  scopes             text[] not null,
  allowed_bucket_ids uuid[],
  resource           text not null,
  created_at         timestamptz not null,
  last_used_at       timestamptz,
  revoked_at         timestamptz
);
create index oauth_grants_user_idx on oauth_grants (user_id, created_at);

create table oauth_codes (
  id             uuid primary key default gen_random_uuid(),
  code_hash      text not null unique,
  grant_id       uuid not null references oauth_grants (id) on delete cascade,
  client_id      text not null,
  redirect_uri   text not null,
  code_challenge text not null,
  created_at     timestamptz not null,
  expires_at     timestamptz not null,
  used_at        timestamptz
);

create table oauth_refresh_tokens (
  id          uuid primary key default gen_random_uuid(),
  secret_hash text not null unique,
  grant_id    uuid not null references oauth_grants (id) on delete cascade,
  created_at  timestamptz not null,
  expires_at  timestamptz not null,
  used_at     timestamptz,
  revoked_at  timestamptz
);
create index oauth_refresh_tokens_grant_idx on oauth_refresh_tokens (grant_id);

alter table tokens add column grant_id uuid references oauth_grants (id) on delete cascade;
alter table tokens add column audience text;
create index tokens_grant_idx on tokens (grant_id) where grant_id is not null;
`
