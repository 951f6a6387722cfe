#!/usr/bin/env bash
# Traces: every OTLP/HTTP JSON export the span exporter sends is validated against the OTLP
# protobuf definitions by a tiny collector (tests/interop/otlp_collector.py, on the PyPI
# package opentelemetry-proto and protobuf's json_format), on loopback.
# Until the HTTP layer takes --otlp-endpoint, the spans come from the library's ignored test
# transport::telemetry::otlp::tests::exports_to_the_collector_named_by_env (302 spans, some
# failed, joining a caller's trace); once it does, point a `baremcp --http --otlp-endpoint`
# at the collector and make calls instead.
# When the package cannot be installed, one line says why and the script exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."

work="$PWD/target/interop"
mkdir -p "$work"
venv="$work/venv-otlp"
if ! { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } >/dev/null 2>&1 ||
  ! "$venv/bin/pip" install --quiet --disable-pip-version-check opentelemetry-proto >/dev/null 2>&1; then
  echo "otlp: skipped (pip could not install opentelemetry-proto)"
  exit 0
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
summary=$(mktemp "${TMPDIR:-/tmp}/baremcp-otlp.XXXXXX")
"$venv/bin/python" tests/interop/otlp_collector.py "$port" "$summary" &
collector=$!
trap 'kill "$collector" 2>/dev/null || true; rm -f "$summary"' EXIT
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
  sleep 0.1
done

BAREMCP_OTLP_TEST_ENDPOINT="http://127.0.0.1:$port/v1/traces" cargo test --quiet --lib -- \
  --ignored --exact transport::telemetry::otlp::tests::exports_to_the_collector_named_by_env \
  >"$work/otlp-test.log" 2>&1 || { cat "$work/otlp-test.log" "$summary" >&2; exit 1; }

read -r line <"$summary"
echo "otlp: the collector read $line"
case "$line" in
  *" spans=302 errors=0") echo "otlp: every export parsed as an ExportTraceServiceRequest" ;;
  *) echo "otlp: expected 302 valid spans and no error:" >&2; cat "$summary" >&2; exit 1 ;;
esac
