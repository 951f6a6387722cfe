#!/usr/bin/env bash
# The MCP Bundle (.mcpb, one-click install in Claude Desktop): the official mcpb CLI (npm
# @anthropic-ai/mcpb) validates .ci/mcpb/manifest.json, .ci/mcpb/pack.sh packs the binary
# as docs/install.md says, the bundle is unpacked, and the unpacked binary serves an
# initialize, tools/list and resources/list, started as the manifest says (mcpb_serve.mjs).
#
#   usage: bash tests/interop/mcpb.sh [BINARY]   (default: the static Linux build)
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-target/x86_64-unknown-linux-musl/dist/baremcp}
work="$PWD/target/interop/mcpb"
mkdir -p "$work"

if ! command -v npm >/dev/null; then
  echo "mcpb: skipped: npm is not installed"
  exit 0
fi
if [ ! -x "$work/node_modules/.bin/mcpb" ] &&
  ! (cd "$work" && npm install --silent --no-audit --no-fund --no-save "@anthropic-ai/mcpb@2.1.2"); then
  echo "mcpb: skipped: npm could not install @anthropic-ai/mcpb@2.1.2"
  exit 0
fi
mcpb="$work/node_modules/.bin/mcpb"

"$mcpb" validate .ci/mcpb/manifest.json
# The bundle's version is the crate's.
crate=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
grep -q "\"version\": \"$crate\"" .ci/mcpb/manifest.json ||
  { echo "mcpb: .ci/mcpb/manifest.json must say version $crate, as Cargo.toml does" >&2; exit 1; }

MCPB="$mcpb" bash .ci/mcpb/pack.sh "$binary" "$work/baremcp.mcpb" >/dev/null
rm -rf "$work/unpacked"
"$mcpb" unpack "$work/baremcp.mcpb" "$work/unpacked" >/dev/null
cp tests/interop/mcpb_serve.mjs "$work/"
node "$work/mcpb_serve.mjs" "$work/unpacked" "$PWD/fixtures/tree"
