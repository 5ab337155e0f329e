// The web app's sign-in (issue 16): emailed six-digit codes and browser sessions. A code is stored as
// HMAC(DOCK_SECRET, "sign-in"‖email‖code), single use, voided by a newer one, with its wrong tries counted on the
// row. A session is looked up by the SHA-256 of its cookie value (the clear id exists only in the cookie);
// it ends at `expires_at` or when revoked (sign-out). docs/web.md.
export default `
create table sign_in_codes (
  id          uuid primary key default gen_random_uuid(),
  email       text not null,
  code_hash   text not null,
  created_at  timestamptz not null,
  expires_at  timestamptz not null,
  wrong_tries integer not null default 0,
  used_at     timestamptz,
  voided_at   timestamptz
);
create index sign_in_codes_email_idx on sign_in_codes (email, created_at desc);

create table sessions (
  id           uuid primary key default gen_random_uuid(),
  id_hash      text not null unique,
  user_id      uuid not null references users (id) on delete cascade,
  created_at   timestamptz not null,
  expires_at   timestamptz not null,
  last_seen_at timestamptz not null,
  revoked_at   timestamptz
);
create index sessions_user_idx on sessions (user_id);
`
