#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in scripts/conformance/) against
# this server: both protocol eras' frozen requirement sets (2026-07-28 and 2025-11-25), on /mcp with a write
# token and on the anonymous /mcp/public, and the suite's authorization server scenarios (metadata, and the
# authorization code grant, with headless Chromium signing in and approving). Fails when a scenario that applies
# to what Dock offers fails. See docs/conformance.md.
#
#   npm run conformance            (or: bash scripts/conformance.sh)
#
# Environment: CONFORMANCE_CACHE_DIR (default .cache/conformance) holds Node 22 and the suite, installed with
# `npm ci` from scripts/conformance/package-lock.json when missing or outdated; the results of the last run
# (checks.json per scenario, the suite's own output, the server log) are left in $CONFORMANCE_CACHE_DIR/results.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

NODE_VERSION="22.23.3"                  # the node-<os>-<cpu> binary packages in scripts/conformance/package.json
CONFORMANCE_VERSION="0.2.0-alpha.12"    # @modelcontextprotocol/conformance, pinned there too
REVISIONS=(2026-07-28 2025-11-25)

# ---------------------------------------------------------------------------------------------------------------
# Scenarios and checks that do not apply to Dock. Each entry is `<scenario>` or `<scenario>:<check-id>`. The whole
# requirement set still runs (its full output is printed); these are only left out of the verdict. Never list a
# scenario here because it fails: only because it tests something Dock does not offer.
EXCLUDED=(
  # Capabilities Dock does not declare (it declares only `tools`): completions, logging, prompts, resources.
  completion-complete
  logging-set-level
  prompts-list prompts-get-simple prompts-get-with-args prompts-get-embedded-resource prompts-get-with-image
  resources-list resources-read-text resources-read-binary resources-templates-read
  resources-subscribe resources-unsubscribe
  sep-2164-resource-not-found               # resources/read of an unknown URI
  caching:sep-2549-prompts-list-caching-hints
  caching:sep-2549-resources-list-caching-hints
  caching:sep-2549-resources-templates-list-caching-hints
  caching:sep-2549-resources-read-caching-hints
  # Fixture tools of the SDKs' reference "everything" server (test_simple_text, test_image_content,
  # test_audio_content, test_embedded_resource, test_multiple_content_types, test_error_handling,
  # test_tool_with_progress, test_tool_with_logging, json_schema_2020_12_tool, …). Dock's catalogue is its product,
  # not a test fixture; its tool results, errors and JSON Schemas are covered by its own tests.
  tools-call-simple-text tools-call-image tools-call-audio tools-call-embedded-resource
  tools-call-mixed-content tools-call-error tools-call-with-progress tools-call-with-logging
  json-schema-2020-12
  # Server-to-client requests Dock never makes (sampling, elicitation, roots), in both eras: the 2025 requests
  # and the 2026 InputRequiredResult round trips (SEP-2322), all driven through fixture tools/prompts
  # (test_sampling, test_elicitation*, test_input_required_result_*). input-required-result-unsupported-methods
  # is NOT excluded: "never answer tools/list or prompts/list with InputRequiredResult" binds every server.
  tools-call-sampling tools-call-elicitation elicitation-sep1034-defaults elicitation-sep1330-enums
  input-required-result-basic-elicitation input-required-result-basic-sampling input-required-result-basic-list-roots
  input-required-result-request-state input-required-result-multiple-input-requests input-required-result-multi-round
  input-required-result-missing-input-response input-required-result-non-tool-request
  input-required-result-result-type input-required-result-tampered-state input-required-result-capability-check
  input-required-result-ignore-extra-params input-required-result-validate-input
  # Checks of the stateless core (SEP-2575) that need diagnostic fixture tools for behaviour Dock never has:
  # a tool requiring a client capability (test_missing_capability), a tool that sends requests or logs on its
  # response stream (test_streaming_elicitation, test_logging_tool). The other checks of server-stateless count.
  server-stateless:sep-2575-server-rejects-undeclared-capability
  server-stateless:sep-2575-missing-capability-http-400
  server-stateless:sep-2575-http-server-no-independent-requests-on-stream
  server-stateless:sep-2575-server-no-log-without-loglevel
  # SSE resumption (event ids, retry, reconnect) needs sessions and an event store; Dock's 2025 fallback is
  # stateless, answering each POST on its own (pending upstream too).
  server-sse-polling
  # SEP-2243 custom headers come from tools annotated with x-mcp-header; Dock has none.
  http-custom-header-server-validation
  # The tasks extension (SEP-2663, "extension" upstream, never scored); Dock offers no tasks. Needs fixture
  # tools (greet, slow_compute, failing_job, confirm_delete, …).
  tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal tasks-mrtr-input
  tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications tasks-required-task-error
  tasks-mrtr-composition
)
# ---------------------------------------------------------------------------------------------------------------

CACHE="${CONFORMANCE_CACHE_DIR:-$ROOT/.cache/conformance}"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
PACKAGE_DIR="$CACHE/node_modules/@modelcontextprotocol/conformance"
RESULTS="$CACHE/results"

say() { printf '[conformance] %s\n' "$*"; }

# The authorization code grant needs a browser (scripts/conformance/authorize.mjs drives it with playwright-core).
CHROMIUM="${DOCK_CHROMIUM_PATH:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM" ]]; then
  say "Chromium is missing at $CHROMIUM: the authorization-code-grant scenario needs it (apt-get install chromium, or set DOCK_CHROMIUM_PATH)" >&2
  exit 1
fi

# --- Node 22 and the suite, from the npm registry ---------------------------------------------------------------
installed() {
  cmp -s "$ROOT/scripts/conformance/package-lock.json" "$CACHE/package-lock.json" &&
    [[ -f "$PACKAGE_DIR/package.json" ]]
}
if ! installed; then
  say "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION and Node $NODE_VERSION into $CACHE"
  cp "$ROOT/scripts/conformance/package.json" "$ROOT/scripts/conformance/package-lock.json" "$CACHE/"
  (cd "$CACHE" && npm ci --no-audit --no-fund --loglevel=error)
fi
NODE22="$CACHE/node_modules/.bin/node"
if [[ ! -x "$NODE22" ]]; then
  # No node-<os>-<cpu> package for this platform in the lock file: fall back to a Node 22+ on PATH.
  if [[ "$(node -p 'process.versions.node.split(".")[0] >= 22' 2>/dev/null)" == "true" ]]; then
    NODE22="$(command -v node)"
  else
    say "no Node $NODE_VERSION binary package for $(uname -s)/$(uname -m) in scripts/conformance, and no Node 22+ on PATH" >&2
    exit 1
  fi
fi
CONFORMANCE=("$NODE22" "$PACKAGE_DIR/dist/index.js")
say "Node $("$NODE22" --version), @modelcontextprotocol/conformance $("${CONFORMANCE[@]}" --version)"

# --- the server: a free port, a temporary embedded database, a user and a write token ---------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/dock-conformance-XXXXXX")"
rm -rf "$RESULTS" && mkdir -p "$RESULTS"
SERVER_PID=""
PROXY_PID=""
SUITE_PID=""
stop() { # <pid>: SIGTERM, then SIGKILL after 20 seconds
  local pid="$1" i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local code=$?
  [[ -n "$SUITE_PID" ]] && stop "$SUITE_PID"
  [[ -n "$PROXY_PID" ]] && stop "$PROXY_PID"
  [[ -n "$SERVER_PID" ]] && stop "$SERVER_PID"
  rm -rf "$WORK"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  "$NODE22" -e 'const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })'
}
PORT="$(free_port)"
BASE="http://127.0.0.1:$PORT"
ADMIN_TOKEN="dock_admin_conformance-$("$NODE22" -p 'require("node:crypto").randomBytes(16).toString("hex")')"
SERVER_LOG="$RESULTS/server.log"

# As `npm start` runs it (the project's Node), on the embedded database; per-token rate limits off, since the
# suite sends a few hundred requests a minute with the one token.
say "starting the server on $BASE (data in $WORK/data)"
env -u DATABASE_URL \
  PORT="$PORT" HOST=127.0.0.1 DOCK_BASE_URL="$BASE" DOCK_ENV=development DOCK_DATA_DIR="$WORK/data" \
  DOCK_ADMIN_TOKEN="$ADMIN_TOKEN" DOCK_TOKEN_REQUESTS_PER_MINUTE=0 DOCK_TOKEN_WRITES_PER_MINUTE=0 DOCK_PUBLIC_MCP_REQUESTS_PER_MINUTE=0 \
  node --conditions=dock-source --import tsx packages/server/src/main.ts >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!

# Wait (at most 90 s) for /readyz, failing early if the server exits.
if ! "$NODE22" -e '
  const [url, pid] = process.argv.slice(1)
  const deadline = Date.now() + 90_000
  const alive = () => { try { process.kill(Number(pid), 0); return true } catch { return false } }
  const poll = async () => {
    while (Date.now() < deadline && alive()) {
      if (await fetch(url).then((r) => r.ok, () => false)) return 0
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    return 1
  }
  poll().then((code) => process.exit(code))' "$BASE/readyz" "$SERVER_PID"; then
  say "the server did not become ready; its log:" >&2
  cat "$SERVER_LOG" >&2
  exit 1
fi

dock() { DOCK_BASE_URL="$BASE" DOCK_ADMIN_TOKEN="$ADMIN_TOKEN" npm run --silent dock -- "$@"; }
dock users create --email conformance@example.com --username conformance --json >/dev/null
TOKEN="$(dock tokens create --user conformance@example.com --label conformance --scope mcp:write --json |
  "$NODE22" -e 'let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => console.log(JSON.parse(s).token))')"
say "created user conformance@example.com and a write token"

# The suite cannot send headers (`conformance server` has only --url), so /mcp is reached through a loopback proxy
# that forwards everything unchanged and adds `Authorization: Bearer <token>`.
DOCK_CONFORMANCE_TOKEN="$TOKEN" "$NODE22" scripts/conformance/auth-proxy.mjs "$BASE" "$WORK/proxy-port" \
  >"$RESULTS/auth-proxy.log" 2>&1 &
PROXY_PID=$!
for _ in $(seq 1 100); do [[ -s "$WORK/proxy-port" ]] && break; sleep 0.1; done
[[ -s "$WORK/proxy-port" ]] || { say "the auth proxy did not start" >&2; cat "$RESULTS/auth-proxy.log" >&2; exit 1; }
PROXY="http://127.0.0.1:$(cat "$WORK/proxy-port")"

# --- the runs ---------------------------------------------------------------------------------------------------
FAILED=0
run() { # <label> <url> <revision> [exclusion]...
  local label="$1" url="$2" revision="$3"
  shift 3
  say "running the $revision requirement set against $url ($label)"
  # The suite's exit code is not the verdict (it counts scenarios that do not apply); verdict.mjs below is.
  "${CONFORMANCE[@]}" server --url "$url" --requirements "$revision" -o "$RESULTS/$label" \
    >"$RESULTS/$label.log" 2>&1 || true
  if grep -q '=== SUMMARY ===' "$RESULTS/$label.log"; then
    sed -n '/=== SUMMARY ===/,$p' "$RESULTS/$label.log"
  else
    tail -n 50 "$RESULTS/$label.log"
  fi
  "$NODE22" scripts/conformance/verdict.mjs "$PACKAGE_DIR" "$label" "$revision" "$RESULTS/$label" "$@" || FAILED=1
}
for revision in "${REVISIONS[@]}"; do
  run "mcp-$revision" "$PROXY/mcp" "$revision" "${EXCLUDED[@]}"
  run "public-$revision" "$BASE/mcp/public" "$revision" "${EXCLUDED[@]}"
done

# --- the authorization server: metadata, and the authorization code grant through a browser ----------------------
# `conformance authorization` without --scenario runs its two scenarios in order, the metadata one first: the code
# grant takes the authorization and token endpoints from the metadata scenario's result (alone, with --scenario,
# it has no metadata and fails). The code grant prints an authorization URL and waits for a browser to come back
# to its loopback callback http://127.0.0.1:<port>/callback, which must be a registered redirect URI: a public
# client is registered by DCR for it first.
CALLBACK_PORT="$(free_port)"
CLIENT_ID="$("$NODE22" -e '
  const [base, redirectUri] = process.argv.slice(1)
  fetch(`${base}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "MCP conformance suite",
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none"
    })
  }).then(async (response) => {
    const body = await response.text()
    if (response.status !== 201 && response.status !== 200) throw new Error(`POST /oauth/register: ${response.status} ${body}`)
    console.log(JSON.parse(body).client_id)
  }).catch((error) => { console.error(error.message); process.exit(1) })' "$BASE" "http://127.0.0.1:$CALLBACK_PORT/callback")"
say "registered the public client $CLIENT_ID (redirect URI http://127.0.0.1:$CALLBACK_PORT/callback)"
say "running the authorization server scenarios against $BASE (Chromium signs in and approves)"
"${CONFORMANCE[@]}" authorization --url "$BASE" --client-id "$CLIENT_ID" --resource "$BASE/mcp" \
  -p "$CALLBACK_PORT" -o "$RESULTS/authorization" >"$RESULTS/authorization.log" 2>&1 &
SUITE_PID=$!
# The project's Node: playwright-core is in the root node_modules.
if ! DOCK_CHROMIUM_PATH="$CHROMIUM" node scripts/conformance/authorize.mjs "$RESULTS/authorization.log" "$BASE" \
  conformance@example.com "$WORK/data/outbox" >"$RESULTS/authorize.log" 2>&1; then
  say "the browser step failed (the suite would wait five minutes for its callback; stopping it):" >&2
  cat "$RESULTS/authorize.log" >&2
  stop "$SUITE_PID"
fi
wait "$SUITE_PID" 2>/dev/null || true
SUITE_PID=""
if grep -q '=== SUMMARY ===' "$RESULTS/authorization.log"; then
  sed -n '/=== SUMMARY ===/,$p' "$RESULTS/authorization.log"
else
  tail -n 50 "$RESULTS/authorization.log"
fi
"$NODE22" scripts/conformance/verdict.mjs "$PACKAGE_DIR" authorization authorization "$RESULTS/authorization" || FAILED=1

# Errors the server logged while being tested do not fail the run by themselves, but are worth seeing.
if grep -q 'level=ERROR\|"level":"ERROR"' "$SERVER_LOG"; then
  printf '\n'
  say "the server logged errors during the run (full log: $SERVER_LOG):"
  grep 'level=ERROR\|"level":"ERROR"' "$SERVER_LOG" | cut -c1-1200 | head -n 20
fi

printf '\n'
if [[ "$FAILED" -ne 0 ]]; then
  say "FAILED: an applicable scenario failed (details above; results in $RESULTS)"
  exit 1
fi
say "passed: every applicable scenario passed (results in $RESULTS)"
