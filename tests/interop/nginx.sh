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

nginx=$(command -v nginx || true)
[ -n "$nginx" ] || { [ -x /usr/sbin/nginx ] && nginx=/usr/sbin/nginx; } || true
if [ -z "$nginx" ]; then
  if [ "$(id -u)" = 0 ]; then
    sudo=""
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "nginx: skipped (not installed, and installing it needs root or sudo)"
    exit 0
  fi
  if ! command -v apt-get >/dev/null; then
    echo "nginx: skipped (not installed, and apt-get is not available)"
    exit 0
  fi
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nginx-light ||
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nginx; } >/dev/null 2>&1; then
    echo "nginx: skipped (apt-get could not install nginx-light or nginx)"
    exit 0
  fi
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
fi

cargo build --release --quiet --example everything
everything="$PWD/target/release/examples/everything"
work=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-nginx.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until a process's log says where it serves.
wait_for() {
  for _ in $(seq 100); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nginx: $1 never said $2:" >&2
  cat "$1" >&2
  exit 1
}

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
mkdir -p "$work/nginx/logs" "$work/nginx/temp"
cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 512; }
http {
    access_log $work/nginx/logs/access.log;
    client_body_temp_path $work/nginx/temp/body;
    proxy_temp_path $work/nginx/temp/proxy;
    fastcgi_temp_path $work/nginx/temp/fastcgi;
    uwsgi_temp_path $work/nginx/temp/uwsgi;
    scgi_temp_path $work/nginx/temp/scgi;
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
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $listen), 1)" 2>/dev/null && break
  sleep 0.1
done

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
