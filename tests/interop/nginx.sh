#!/usr/bin/env bash
# Scale-out: three `examples/everything --http` processes sharing BAREMCP_STATE_SECRET behind
# nginx on loopback, round robin, no stickiness (the README's "Many processes behind a load
# balancer" configuration). A 2026-07-28 client (tests/interop/nginx_client.py, standard
# library only) completes an input_required elicitation whose retry lands on another
# process, shown both by nginx's X-Upstream header and by each process's own log; then one
# process is killed mid-run and costs only its in-flight requests.
# nginx comes from the distribution's packages; when it cannot be installed, one line says
# why and the script exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."

WHO=nginx
. tests/interop/lib.sh
need nginx nginx-light nginx
nginx=$(command -v nginx || echo /usr/sbin/nginx)

cargo build --release --quiet --example everything
everything="$PWD/target/release/examples/everything"
work=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-nginx.XXXXXX")
trap 'stop_started; rm -rf "$work"' EXIT

export BAREMCP_STATE_SECRET
BAREMCP_STATE_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
backends=()
pid_map="{"
for i in 1 2 3; do
  port=$(free_port)
  RUST_LOG=info "$everything" --http "127.0.0.1:$port" 2>"$work/backend-$port.log" &
  pids+=($!)
  disown $!  # killed on purpose mid-run: no "Killed" line from this shell
  backends+=("$port")
  pid_map+="\"127.0.0.1:$port\": $!,"
  wait_for "$work/backend-$port.log" "serving MCP at"
done
pid_map="${pid_map%,}}"
# A process with a secret of its own: the same retry must be refused there.
other=$(free_port)
BAREMCP_STATE_SECRET=another-secret RUST_LOG=info "$everything" --http "127.0.0.1:$other" 2>"$work/other.log" &
pids+=($!)
wait_for "$work/other.log" "serving MCP at"

listen=$(free_port)
servers=""
for port in "${backends[@]}"; do servers+="        server 127.0.0.1:$port max_fails=1 fail_timeout=10s;"$'\n'; done
nginx_conf "$work/nginx" <<EOF
    upstream baremcp {
$servers    }
    server {
        listen 127.0.0.1:$listen;
        location /mcp {
            proxy_pass http://baremcp;
            proxy_http_version 1.1;
            proxy_set_header Host \$host;
            proxy_buffering off;
            proxy_read_timeout 1h;
            client_body_buffer_size 1m;
            add_header X-Upstream \$upstream_addr always;
        }
    }
}
EOF
"$nginx" -p "$work/nginx" -c "$work/nginx/nginx.conf" -t -q
"$nginx" -p "$work/nginx" -c "$work/nginx/nginx.conf" 2>>"$work/nginx/logs/error.log" &
pids+=($!)
wait_port "$listen"

out=$(python3 tests/interop/nginx_client.py "http://127.0.0.1:$listen/mcp" "http://127.0.0.1:$other/mcp" "$pid_map") || {
  echo "$out"
  echo "nginx: the client failed; nginx's error log, and the end of each process's log:" >&2
  cat "$work/nginx/logs/error.log" >&2
  for log in "$work"/backend-*.log; do echo "== $log" >&2; tail -5 "$log" >&2; done
  exit 1
}
echo "$out" | grep -v '^ASKED='
# Each process's own log: the question came from one, the answer from another.
asked=$(echo "$out" | sed -n 's/^ASKED=\([^ ]*\) .*/\1/p')
answered=$(echo "$out" | sed -n 's/.* ANSWERED=\(.*\)/\1/p')
grep -q "tools/call id=7001 .*ok" "$work/backend-${asked##*:}.log" ||
  { echo "nginx: $asked's log does not show the question" >&2; exit 1; }
grep -q "tools/call id=7002 .*ok" "$work/backend-${answered##*:}.log" ||
  { echo "nginx: $answered's log does not show the retry" >&2; exit 1; }
if grep -q "tools/call id=7002 " "$work/backend-${asked##*:}.log"; then
  echo "nginx: the process that asked also served the retry" >&2
  exit 1
fi
echo "nginx: backend logs agree: the question on ${asked##*:}, the retry on ${answered##*:}"
echo "nginx: scale-out passed"
