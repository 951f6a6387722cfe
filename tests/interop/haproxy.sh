#!/usr/bin/env bash
# Legacy sessions at scale: three `baremcp --http` processes behind HAProxy, which learns each
# session's process from the response that minted its id (`stick store-response
# res.hdr(mcp-session-id)`) and routes the session's later requests by it (`stick on
# req.hdr(mcp-session-id)`); baremcp itself is unchanged. The official Python client
# (mcp==2.3.0) in legacy mode opens twelve sessions through it (tests/interop/legacy_sessions.py):
# every response of a session comes from one process, as HAProxy's X-Upstream header and each
# process's own log agree; a killed process costs only its own sessions, whose clients get 404
# and start again. HAProxy checks each process's /readyz: after SIGTERM a process is taken out
# of rotation while it still serves (its drain), and new sessions go to the others. The
# configuration is docs/deployment.md's.
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
declare -A pid_of
for name in b1 b2 b3; do
  port=$(free_port)
  # Each process logs to a file of its own: the proof of who served what.
  "$bin" --http "127.0.0.1:$port" --drain-secs 6 --log-level info --log-file "$work/$name.log" &
  pids+=($!)
  disown $!  # killed on purpose mid-run: no "Killed" line from this shell
  pid_map+="\"$name\": $!,"
  pid_of[$name]=$!
  servers+="    server $name 127.0.0.1:$port check inter 1s fall 1 rise 2"$'\n'
  wait_for "$work/$name.log" "serving MCP at"
done
pid_map="${pid_map%,}}"

listen=$(free_port)
cat >"$work/haproxy.cfg" <<EOF
global
    maxconn 1024
    stats socket $work/haproxy.sock
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
    option httpchk GET /readyz
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

# Draining: SIGTERM to a live process. HAProxy's /readyz check takes it out of rotation while
# it still serves, new sessions go to the others, and then it stops by itself.
victim=$(echo "$out" | sed -n 's/^legacy: killed \(b[0-9]\):.*/\1/p')
for name in b1 b2 b3; do [ "$name" = "$victim" ] || draining=$name; done
kill -TERM "${pid_of[$draining]}"
python3 - "$work/haproxy.sock" "$draining" "${pid_of[$draining]}" "http://127.0.0.1:$listen/mcp" <<'PY'
import json, os, socket, sys, time, urllib.request
sock, name, pid, url = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def status():
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall(b"show stat\n")
    text = b""
    while chunk := s.recv(65536):
        text += chunk
    for row in text.decode().splitlines():
        fields = row.split(",")
        if len(fields) > 17 and fields[0] == "baremcp" and fields[1] == name:
            return fields[17]
deadline = time.monotonic() + 5
while not (status() or "").startswith("DOWN"):
    if time.monotonic() > deadline:
        sys.exit(f"haproxy: {name} was not taken out of rotation within 5 s of SIGTERM")
    time.sleep(0.1)
os.kill(pid, 0)  # raises if it already stopped: the balancer must notice first
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "d", "version": "1"}}})
landed = []
for _ in range(8):
    request = urllib.request.Request(url, init.encode(), {"Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    with urllib.request.urlopen(request, timeout=10) as response:
        landed.append(response.headers["X-Upstream"])
if name in landed:
    sys.exit(f"haproxy: a new session went to the draining {name}: {landed}")
os.kill(pid, 0)
print(f"haproxy: after SIGTERM {name} was out of rotation while still serving; "
      f"8 new sessions went to {sorted(set(landed))}")
PY
for _ in $(seq 200); do kill -0 "${pid_of[$draining]}" 2>/dev/null || break; sleep 0.1; done
if kill -0 "${pid_of[$draining]}" 2>/dev/null; then
  echo "haproxy: $draining did not stop within 20 s of SIGTERM" >&2
  exit 1
fi
grep -q "draining: /readyz answers 503" "$work/$draining.log" || {
  echo "haproxy: $draining's log does not say it drained" >&2
  exit 1
}
echo "haproxy: $draining drained and stopped"
echo "haproxy: legacy sessions passed"
