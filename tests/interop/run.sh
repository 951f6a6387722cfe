#!/usr/bin/env bash
# Interop: the official MCP SDK clients talk to the release binary over stdio.
#   Python (PyPI mcp==2.3.0): the SDK's default path (server/discover probe, so 2026-07-28)
#   and the forced legacy initialize path; tools, resources under --root, and the prompt;
#   sampling and elicitation callbacks against examples/everything in both eras; then the
#   same through `baremcp proxy --record`, and `baremcp replay` of the recordings.
#   TypeScript (npm @modelcontextprotocol/sdk@1.32.2, legacy), when node is installed.
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
else
  echo "interop: node/npm not found; the TypeScript client was not run"
fi
echo "interop: all clients passed"
