// Per-minute request and write rates move to an UNLOGGED table (docs/decisions.md, "The MCP hot path"): a hit
// writes no WAL, so counting a read costs no durable commit (no WAL flush), while the count stays one row per
// key and window that every instance increments atomically. PostgreSQL empties an unlogged table after a crash
// (not after a clean restart), which forgets at most the current minute's counts. The daily abuse caps
// (registrations, OTP sends and wrong tries) stay in the logged `rate_limit_counters`.
export default `
create unlogged table request_counters (
  key          text not null,
  window_start timestamptz not null,
  count        integer not null,
  primary key (key, window_start)
);
create index request_counters_window_idx on request_counters (window_start);
`
