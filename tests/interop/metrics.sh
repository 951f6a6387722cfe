#!/usr/bin/env bash
# Metrics: the Prometheus text that `/metrics` serves, judged by Prometheus's own tools.
#   1. `promtool check metrics` on the exposition (fixtures/metrics/exposition.txt, which the
#      unit test transport::telemetry::server_metrics::renders_the_golden_exposition holds
#      byte for byte to what the code writes): no error, no lint warning.
#   2. A real Prometheus scrapes a target serving that exposition, and its query API then
#      answers with the histogram's count, the refusals by reason, and `up` 1 with no scrape
#      error.
# Until the HTTP layer serves `/metrics`, the target is Python's http.server serving the
# fixture; once it does, set TARGET to a running `baremcp --http` and METRICS_PATH=/metrics
# (see "target" below), and nothing else changes.
# promtool and prometheus come from the distribution's `prometheus` package; when it cannot
# be installed, one line says why and the script exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."

WHO=metrics
. tests/interop/lib.sh
need promtool prometheus
need prometheus prometheus

exposition=fixtures/metrics/exposition.txt
# 1. promtool: errors fail the check; lint problems are printed, so any output fails too.
lint=$(promtool check metrics <"$exposition" 2>&1) || { echo "$lint" >&2; exit 1; }
if [ -n "$lint" ]; then
  echo "metrics: promtool check metrics found problems:" >&2
  echo "$lint" >&2
  exit 1
fi
echo "metrics: promtool check metrics passed ($(grep -vc '^#' "$exposition") samples)"

# 2. A real Prometheus scraping a loopback target once a second.
work=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-metrics.XXXXXX")
trap 'stop_started; rm -rf "$work"' EXIT

# The target: the fixture behind Python's http.server, until `/metrics` is wired in.
target_port=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory fixtures/metrics "$target_port" \
  >"$work/target.log" 2>&1 &
pids+=($!)
TARGET=${TARGET:-127.0.0.1:$target_port}
METRICS_PATH=${METRICS_PATH:-/exposition.txt}

prom_port=$(free_port)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: baremcp
    metrics_path: $METRICS_PATH
    static_configs:
      - targets: ["$TARGET"]
EOF
promtool check config "$work/prometheus.yml" >/dev/null
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)

out=$(python3 tests/interop/prometheus_query.py "http://127.0.0.1:$prom_port") || {
  echo "$out"
  echo "metrics: Prometheus did not read the target as expected; its log:" >&2
  tail -20 "$work/prometheus.log" >&2
  exit 1
}
echo "$out"
echo "metrics: passed"
