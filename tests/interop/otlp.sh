#!/usr/bin/env bash
# Traces: `baremcp --http --otlp-endpoint` sends a span per request to a tiny collector
# (tests/interop/otlp_collector.py, on the PyPI package opentelemetry-proto and protobuf's
# json_format) that validates every export against the OTLP protobuf definitions, on
# loopback. The client makes 310 2026-07-28 requests: 250 tools/call joining a caller's trace
# through `_meta` (with a tracestate of two members), 40 tools/list through the HTTP
# `traceparent` header, 10 calls of an unknown tool (failed spans), and 10 whose caller did
# not sample its trace (not recorded); then SIGTERM, and the exporter sends what is queued.
# Exactly 300 valid spans must arrive, in more than one batch.
# When the package cannot be installed, one line says why and the script exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."

WHO=otlp
. tests/interop/lib.sh
work="$PWD/target/interop"
mkdir -p "$work"
venv="$work/venv-otlp"
if ! { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } >/dev/null 2>&1 ||
  ! "$venv/bin/pip" install --quiet --disable-pip-version-check opentelemetry-proto >/dev/null 2>&1; then
  echo "otlp: skipped (pip could not install opentelemetry-proto)"
  exit 0
fi

cargo build --release --quiet --bin baremcp
bin="$PWD/target/release/baremcp"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-otlp.XXXXXX")
trap 'stop_started; rm -rf "$tmp"' EXIT

collector_port=$(free_port)
"$venv/bin/python" tests/interop/otlp_collector.py "$collector_port" "$tmp/summary" &
pids+=($!)
wait_port "$collector_port"

port=$(free_port)
"$bin" --http "127.0.0.1:$port" --drain-secs 0 --log-level info --log-file "$tmp/baremcp.log" \
  --otlp-endpoint "http://127.0.0.1:$collector_port/v1/traces" &
server=$!
pids+=($server)
wait_for "$tmp/baremcp.log" "serving MCP at"

python3 - "127.0.0.1" "$port" <<'PY'
import http.client, json, sys
host, port = sys.argv[1], int(sys.argv[2])
conn = http.client.HTTPConnection(host, port, timeout=10)
PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0"
def call(n, method, params, meta=None, headers=None):
    params = dict(params)
    params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {}, **(meta or {})}
    body = json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
    head = {"Content-Type": "application/json", "Accept": "application/json",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, **(headers or {})}
    if "name" in params:
        head["Mcp-Name"] = params["name"]
    conn.request("POST", "/mcp", body, head)
    response = conn.getresponse()
    response.read()
    assert response.status == 200, (response.status, method, params)
hello = {"name": "hello", "arguments": {"name": "otlp"}}
for n in range(250):
    call(n, "tools/call", hello, {"traceparent": PARENT + "1", "tracestate": "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"})
for n in range(40):
    call(1000 + n, "tools/list", {}, headers={"traceparent": PARENT + "1"})
for n in range(10):
    call(2000 + n, "tools/call", {"name": "nope"})
for n in range(10):
    call(3000 + n, "tools/call", hello, {"traceparent": PARENT + "0"})
PY
kill -TERM "$server"
wait "$server"

read -r line <"$tmp/summary"
echo "otlp: the collector read $line"
requests=$(echo "$line" | sed -n 's/^requests=\([0-9]*\) .*/\1/p')
case "$line" in
  *" spans=300 errors=0") ;;
  *) echo "otlp: expected 300 valid spans and no error:" >&2; cat "$tmp/summary" >&2; exit 1 ;;
esac
if [ "$requests" -lt 2 ]; then
  echo "otlp: expected the spans in more than one batch" >&2
  exit 1
fi
echo "otlp: every export parsed as an ExportTraceServiceRequest, in $requests batches"
