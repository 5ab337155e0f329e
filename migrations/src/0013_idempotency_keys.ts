// Idempotent retries (issue 18, item 2): one row per caller and idempotency_key. `owner` is the caller's token id
// (or `user:<id>` for a principal without a token); `fingerprint` is the sha-256 of the call's arguments in
// canonical JSON (without the key). A row is `pending` while its call runs (`claim` names that call, so that only
// it completes or releases the row) and `done` with the first answer's JSON text. Rows are swept 24 hours after
// `created_at`; a pending claim older than a minute is taken over (its call died). docs/decisions.md,
// "Idempotent retries".
export default `
create table idempotency_keys (
  owner       text not null,
  key         text not null,
  tool        text not null,
  fingerprint text not null,
  claim       uuid not null,
  state       text not null check (state in ('pending', 'done')),
  answer      text,
  created_at  timestamptz not null default now(),
  claimed_at  timestamptz not null default now(),
  primary key (owner, key)
);
create index idempotency_keys_created_idx on idempotency_keys (created_at);
`
