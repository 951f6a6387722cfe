#!/usr/bin/env bash
# Packs the baremcp binary into an MCP Bundle (.mcpb), the file Claude Desktop installs with
# one click: this folder's manifest.json, the binary as server/baremcp, and the LICENSE,
# zipped by the official mcpb CLI (npm @anthropic-ai/mcpb).
#
#   usage: bash .ci/mcpb/pack.sh [BINARY] [OUT]
#
# BINARY defaults to the static Linux build (`cargo build --profile dist --target
# x86_64-unknown-linux-musl --bin baremcp`); on a Mac, build with `cargo build --release`
# and pass target/release/baremcp. A bundle holds one binary, so it declares the one
# platform that binary runs on. OUT defaults to target/baremcp.mcpb. MCPB may name an
# installed mcpb command; by default npx fetches the pinned version.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-target/x86_64-unknown-linux-musl/dist/baremcp}
out=${2:-target/baremcp.mcpb}
mcpb=${MCPB:-npx --yes @anthropic-ai/mcpb@2.1.2}

# The platform comes from the binary's own header: ELF is Linux, Mach-O is macOS.
case "$(head -c 4 "$binary" | od -An -tx1 | tr -d ' \n')" in
  7f454c46) platform=linux ;;
  cffaedfe | cefaedfe | cafebabe) platform=darwin ;;
  *) echo "pack.sh: $binary is neither a Linux (ELF) nor a macOS (Mach-O) binary" >&2; exit 2 ;;
esac

stage=target/mcpb-stage
rm -rf "$stage"
mkdir -p "$stage/server"
sed "s/\"platforms\": \[[^]]*\]/\"platforms\": [\"$platform\"]/" .ci/mcpb/manifest.json > "$stage/manifest.json"
cp LICENSE "$stage/"
cp "$binary" "$stage/server/baremcp"
chmod 755 "$stage/server/baremcp"
$mcpb pack "$stage" "$out"
