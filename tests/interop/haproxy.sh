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

skip() {
  echo "haproxy: skipped ($1)"
  exit 0
}
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
  if [ "$(id -u)" = 0 ]; then
    sudo=""
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    skip "not installed, and installing it needs root or sudo"
  fi
  command -v apt-get >/dev/null || skip "not installed, and apt-get is not available"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy; } \
    >/dev/null 2>&1 || skip "apt-get could not install haproxy"
fi
haproxy=$(command -v haproxy || echo /usr/sbin/haproxy)

cargo build --release --quiet --bin baremcp
bin="$PWD/target/release/baremcp"
work=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-haproxy.XXXXXX")
venv="$PWD/target/interop/venv"
mkdir -p "$PWD/target/interop"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0"

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
wait_for() {
  for _ in $(seq 100); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "haproxy: $1 never said $2:" >&2
  cat "$1" >&2
  exit 1
}

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
"$haproxy" -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $listen), 1)" 2>/dev/null && break
  sleep 0.1
done

out=$("$venv/bin/python" tests/interop/legacy_sessions.py "http://127.0.0.1:$listen/mcp" "$pid_map" 2>&1) || {
  echo "$out"
  echo "haproxy: the client failed; HAProxy's log and the end of each process's log:" >&2
  cat "$work/haproxy.log" >&2
  for log in "$work"/b?.log; do echo "== $log" >&2; tail -5 "$log" >&2; done
  exit 1
}
echo "$out" | grep -v '^SESSION='
# Each process's own log: a session's successful requests all appear in its process's log,
# and in no other.
checked=0
while read -r session upstream; do
  for log in "$work"/b?.log; do
    served=$(grep -c " 20[02] session=$session " "$log" || true)
    if [ "$(basename "$log" .log)" = "$upstream" ]; then
      [ "$served" -ge 2 ] || { echo "haproxy: $upstream's log does not show session $session" >&2; exit 1; }
    elif [ "$served" -ne 0 ]; then
      echo "haproxy: $log served $served requests of $upstream's session $session" >&2
      exit 1
    fi
  done
  checked=$((checked + 1))
done < <(echo "$out" | sed -n 's/^SESSION=\([^ ]*\) UPSTREAM=\(.*\)/\1 \2/p')
echo "haproxy: each process's log agrees for all $checked sessions"
echo "haproxy: legacy sessions passed"
