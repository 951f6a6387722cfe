#!/usr/bin/env bash
# Metrics: what `baremcp --http` serves at /metrics, judged by Prometheus's own tools.
#   1. `promtool check metrics` on the golden exposition (fixtures/metrics/exposition.txt, which
#      the unit test transport::telemetry::server_metrics::renders_the_golden_exposition holds
#      byte for byte to what the code writes) and on the real /metrics of a running server
#      after a legacy session made three tools/call: no error, no lint warning.
#   2. A real Prometheus scrapes that server (with its bearer token, as docs/deployment.md
#      configures it), and its query API then answers: `up` 1 with no scrape error, the
#      tools/call histogram's count for the tool hello exactly 3 with its 15 buckets, and a
#      refusal series per reason.
# promtool and prometheus come from the distribution's `prometheus` package; when it cannot
# be installed, one line says why and the script exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."

WHO=metrics
. tests/interop/lib.sh
need promtool prometheus
need prometheus prometheus

cargo build --release --quiet --bin baremcp
bin="$PWD/target/release/baremcp"
work=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-metrics.XXXXXX")
trap 'stop_started; rm -rf "$work"' EXIT

# promtool: errors fail the check; lint problems are printed, so any output fails too.
promtool_check() {
  local lint
  lint=$(promtool check metrics <"$1" 2>&1) || { echo "$lint" >&2; exit 1; }
  if [ -n "$lint" ]; then
    echo "metrics: promtool check metrics found problems in $2:" >&2
    echo "$lint" >&2
    exit 1
  fi
  echo "metrics: promtool check metrics passed on $2 ($(grep -vc '^#' "$1") samples)"
}
promtool_check fixtures/metrics/exposition.txt "the golden exposition"

# The server, with a token: /metrics asks for it as the MCP endpoint does.
printf 'prometheus %s\n' "metrics-$RANDOM$RANDOM" >"$work/tokens"
token=$(cut -d' ' -f2 "$work/tokens")
printf '%s' "$token" >"$work/prometheus-token"
port=$(free_port)
"$bin" --http "127.0.0.1:$port" --auth-token-file "$work/tokens" --log-level info \
  --log-file "$work/baremcp.log" &
pids+=($!)
wait_for "$work/baremcp.log" "serving MCP at"

# A legacy session: initialize, then three tools/call of hello; and one request without the
# token, refused.
python3 - "http://127.0.0.1:$port" "$token" <<'PY'
import json, sys, urllib.error, urllib.request
base, token = sys.argv[1], sys.argv[2]
def post(body, session=None, auth=True):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if auth:
        headers["Authorization"] = f"Bearer {token}"
    if session:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(base + "/mcp", json.dumps(body).encode(), headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("Mcp-Session-Id"), response.read()
session, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "m", "version": "1"}}})
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
for i in range(3):
    _, body = post({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                    "params": {"name": "hello", "arguments": {"name": "metrics"}}}, session)
    assert b"Hello, metrics!" in body, body
try:
    post({"jsonrpc": "2.0", "id": 2, "method": "ping"}, session, auth=False)
    sys.exit("metrics: a request without the token was served")
except urllib.error.HTTPError as refused:
    assert refused.code == 401, refused.code
PY

curl_metrics() {
  python3 - "http://127.0.0.1:$port/metrics" "$token" <<'PY'
import sys, urllib.request
request = urllib.request.Request(sys.argv[1], headers={"Authorization": f"Bearer {sys.argv[2]}"})
with urllib.request.urlopen(request, timeout=10) as response:
    sys.stdout.write(response.read().decode())
PY
}
curl_metrics >"$work/metrics.txt"
promtool_check "$work/metrics.txt" "the server's /metrics"

# A real Prometheus scraping the server once a second, with the token.
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: baremcp
    metrics_path: /metrics
    authorization:
      credentials_file: $work/prometheus-token
    static_configs:
      - targets: ["127.0.0.1:$port"]
EOF
promtool check config "$work/prometheus.yml" >/dev/null
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)

out=$(python3 tests/interop/prometheus_query.py "http://127.0.0.1:$prom_port" 3) || {
  echo "$out"
  echo "metrics: Prometheus did not read the server as expected; its log:" >&2
  tail -20 "$work/prometheus.log" >&2
  exit 1
}
echo "$out"
echo "metrics: passed"
