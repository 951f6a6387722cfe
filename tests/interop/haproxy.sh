#!/usr/bin/env bash
# Legacy sessions at scale: three `baremcp --http` processes behind HAProxy, which learns each
# session's process from the response that minted its id (`stick store-response
# res.hdr(mcp-session-id)`) and routes the session's later requests by it (`stick on
# req.hdr(mcp-session-id)`); baremcp itself is unchanged. The official Python client
# (mcp==2.3.0) in legacy mode opens twelve sessions through it (tests/interop/legacy_sessions.py):
# every response of a session comes from one process, as HAProxy's X-Upstream header and each
# process's own log agree; a killed process costs only its own sessions, whose clients get 404
# and start again. The configuration is docs/deployment.md's.
# HAProxy comes from the distribution's packages; when it cannot be installed, one line says
# why and the script exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."

WHO=haproxy
. tests/interop/lib.sh
need haproxy haproxy
haproxy=$(command -v haproxy || echo /usr/sbin/haproxy)

cargo build --release --quiet --bin baremcp
bin="$PWD/target/release/baremcp"
work=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-haproxy.XXXXXX")
mcp_venv
trap 'stop_started; rm -rf "$work"' EXIT

servers=""
pid_map="{"
for name in b1 b2 b3; do
  port=$(free_port)
  # Each process logs to a file of its own: the proof of who served what.
  "$bin" --http "127.0.0.1:$port" --log-level info --log-file "$work/$name.log" &
  pids+=($!)
  disown $!  # killed on purpose mid-run: no "Killed" line from this shell
  pid_map+="\"$name\": $!,"
  servers+="    server $name 127.0.0.1:$port check inter 1s fall 1 rise 2"$'\n'
  wait_for "$work/$name.log" "serving MCP at"
done
pid_map="${pid_map%,}}"
# Health checks ask /readyz once the server has it (docs/deployment.md), else connect only.
httpchk=""
if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/readyz', timeout=2)" 2>/dev/null; then
  httpchk="option httpchk GET /readyz"
fi

listen=$(free_port)
cat >"$work/haproxy.cfg" <<EOF
global
    maxconn 1024
defaults
    mode http
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    retries 2
    option redispatch
frontend mcp
    bind 127.0.0.1:$listen
    default_backend baremcp
backend baremcp
    balance roundrobin
    $httpchk
    stick-table type string len 64 size 100k expire 30m
    stick on req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)
    http-response set-header X-Upstream %[srv_name]
$servers
EOF
"$haproxy" -c -q -f "$work/haproxy.cfg"
"$haproxy" -db -f "$work/haproxy.cfg" >"$work/haproxy.out" 2>&1 &
pids+=($!)
wait_port "$listen"

out=$("$venv/bin/python" tests/interop/legacy_sessions.py "http://127.0.0.1:$listen/mcp" "$pid_map" 2>&1) || {
  echo "$out"
  echo "haproxy: the client failed; HAProxy's log and the end of each process's log:" >&2
  cat "$work/haproxy.out" >&2
  for log in "$work"/b?.log; do echo "== $log" >&2; tail -5 "$log" >&2; done
  exit 1
}
echo "$out" | grep -v '^SESSION='
sessions_in_own_logs "$work" "$out"
echo "haproxy: legacy sessions passed"
