#!/usr/bin/env bash
# Interop: the official MCP SDK clients talk to the release binary over stdio.
#   Python (PyPI mcp==2.3.0): the SDK's default path (server/discover probe, so 2026-07-28)
#   and the forced legacy initialize path; tools, resources under --root, and the prompt;
#   sampling and elicitation callbacks against examples/everything in both eras; then the
#   same through `baremcp proxy --record`, and `baremcp replay` of the recordings.
#   TypeScript (npm @modelcontextprotocol/sdk@1.32.2, legacy), when node is installed, and
#   the official conformance suite (npm @modelcontextprotocol/conformance@0.1.10) over
#   supergateway's Streamable HTTP bridge, then 0.2.0-alpha.12's requirement lists
#   (conformance-next.sh).
# Everything is installed under target/interop/, so a fresh clone needs only python3 (and
# node with npm for the TypeScript half).
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release --quiet --bin baremcp --example everything
bin="$PWD/target/release/baremcp"
everything="$PWD/target/release/examples/everything"
work="$PWD/target/interop"
mkdir -p "$work"

venv="$work/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0"
tree="$PWD/fixtures/tree"
"$venv/bin/python" tests/interop/python_client.py "$bin" "$tree" auto
"$venv/bin/python" tests/interop/python_client.py "$bin" "$tree" legacy

# Sampling and elicitation callbacks against examples/everything: server requests in the
# legacy era, InputRequiredResult retries in 2026-07-28.
"$venv/bin/python" tests/interop/python_everything.py "$everything" auto
"$venv/bin/python" tests/interop/python_everything.py "$everything" legacy

# The same client through the recording proxy; the recording must replay against the server.
for mode in auto legacy; do
  session="$work/python-$mode-session.txt"
  "$venv/bin/python" tests/interop/python_client.py "$bin" "$tree" "$mode" "$session"
  "$bin" replay "$session" -- "$bin" --root "$tree"
done

if command -v node >/dev/null && command -v npm >/dev/null; then
  node_dir="$work/node"
  mkdir -p "$node_dir"
  if [ ! -d "$node_dir/node_modules/@modelcontextprotocol/sdk" ]; then
    (cd "$node_dir" && npm install --silent --no-audit --no-fund --no-save "@modelcontextprotocol/sdk@1.32.2")
  fi
  cp tests/interop/ts_client.mjs "$node_dir/"
  node "$node_dir/ts_client.mjs" "$bin"

  # The official conformance suite's server scenarios (all, pending included) against
  # examples/everything. The suite speaks Streamable HTTP only, so supergateway bridges it
  # to our stdio, one server process per session, on a free loopback port.
  conf_dir="$work/conformance"
  mkdir -p "$conf_dir"
  if [ ! -d "$conf_dir/node_modules/supergateway" ]; then
    (cd "$conf_dir" && npm install --silent --no-audit --no-fund --no-save \
      "@modelcontextprotocol/conformance@0.1.10" "supergateway@4.0.0")
  fi
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$conf_dir/node_modules/.bin/supergateway" --stdio "$everything" --stateful \
    --outputTransport streamableHttp --port "$port" >"$conf_dir/gateway.log" 2>&1 &
  gateway=$!
  trap 'kill "$gateway" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do
    grep -q "Listening on port" "$conf_dir/gateway.log" && break
    sleep 0.1
  done
  node "$conf_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
    --suite all --url "http://127.0.0.1:$port/mcp" -o "$conf_dir/results" | grep -E '^(✓|✗|Total)'
  kill "$gateway" 2>/dev/null || true
  wait "$gateway" 2>/dev/null || true

  # The next release's frozen requirement lists (2026-07-28 and 2025-11-25), in their own script.
  bash tests/interop/conformance-next.sh "$everything"
else
  echo "interop: node/npm not found; the TypeScript client and conformance suite were not run"
fi
echo "interop: all clients passed"
