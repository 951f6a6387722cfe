#!/usr/bin/env bash
# A real authorization server against baremcp's JWT verification: npm oidc-provider 9.13.3 (a
# certified OpenID provider) on loopback, issuing JWT access tokens by the client-credentials
# grant for RFC 8707 resource indicators (tests/interop/oidc_provider.mjs).
#
#   oidc.sh --check
#       1. The verifier in process: for RS256, PS256, ES256 and EdDSA, the provider's JWKS
#          written to a file the way an operator's cron does, a token for
#          http://127.0.0.1:8000/mcp and one for another resource, then a key rotation, the
#          new JWKS and a new token. baremcp's verifier (transport/http/jwks_file.rs, through
#          an ignored test that reads the cases) must accept the first token against the first
#          JWKS, refuse the other resource's, and after the rotation accept only the new token.
#       2. End to end, for each algorithm: `baremcp --http` on a free port with the provider's
#          JWKS file, its real URL as the audience and `--required-scope mcp:tools`. With curl:
#          a token for it is served (200), one for another resource refused (401
#          invalid_token), one without mcp:tools refused (403 insufficient_scope); the official
#          TypeScript (1.32.2) and Python (2.3.0) SDK clients run the client-credentials flow
#          themselves from baremcp's 401 and call `hello`; then the provider rotates its keys,
#          the JWKS file is rewritten, and without a restart the new key's tokens are served
#          and the old key's refused.
#   oidc.sh serve [--alg ALG] [--port N]    run the provider (prints `issuer URL`)
#   oidc.sh jwks ISSUER FILE | token ISSUER RESOURCE [SCOPE] | rotate ISSUER
#       the steps one at a time, against a provider started with `serve`
#
# Installs under target/interop/oidc (the Python SDK in target/interop/venv). Without node
# and npm, or when npm cannot install, it prints one line saying so and exits 0; without the
# Python SDK, one line says that client was skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
work="$PWD/target/interop/oidc"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "oidc: skipped: node and npm are needed for oidc-provider"
  exit 0
fi
mkdir -p "$work"
# One install for all three: an `npm install --no-save` prunes the packages installed before it.
if [ ! -d "$work/node_modules/oidc-provider" ] || [ ! -d "$work/node_modules/jose" ] ||
    [ ! -d "$work/node_modules/@modelcontextprotocol/sdk" ]; then
  if ! (cd "$work" && npm install --silent --no-audit --no-fund --no-save \
      oidc-provider@9.13.3 jose@6.2.18 @modelcontextprotocol/sdk@1.32.2) >"$work/npm.log" 2>&1; then
    echo "oidc: skipped: npm could not install oidc-provider ($(tail -n 1 "$work/npm.log"))"
    exit 0
  fi
fi
cp tests/interop/oidc_provider.mjs tests/interop/oidc_client.mjs "$work/"

if [ "${1:-}" != "--check" ]; then
  exec node "$work/oidc_provider.mjs" "$@"
fi

cases="$work/cases"
rm -rf "$cases"
mkdir -p "$cases"
# The provider warns on stderr that it runs with development defaults (http, no adapter):
# its log is shown only when the run fails.
if ! node "$work/oidc_provider.mjs" check "$cases" 2>"$work/provider.log"; then
  cat "$work/provider.log" >&2
  exit 1
fi
for file in "$cases"/check-*.json; do
  BAREMCP_OIDC_CASES="$file" cargo test --quiet --lib -- --ignored \
    --exact transport::http::jwks_file::tests::oidc_provider_tokens
done
echo "oidc: tokens of oidc-provider 9.13.3 verified (RS256, PS256, ES256, EdDSA), rotation included"

# 2. End to end.
WHO=oidc
source tests/interop/lib.sh
trap stop_started EXIT
cargo build --quiet --bin baremcp
bin="$PWD/target/debug/baremcp"
# The client oidc_provider.mjs registers.
client=(baremcp-interop baremcp-interop-secret)
python=""
if (mcp_venv) >"$work/pip.log" 2>&1; then
  python="$PWD/target/interop/venv/bin/python"
else
  echo "oidc: the Python SDK client skipped: pip could not install mcp==2.3.0 ($(tail -n 1 "$work/pip.log"))"
fi
hello='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

provider() { node "$work/oidc_provider.mjs" "$@" 2>>"$e2e/provider.log"; }

# The status of a 2026-07-28 call of `hello` with bearer TOKEN; the response in $e2e/head and
# $e2e/body.
call() {
  curl -s -o "$e2e/body" -D "$e2e/head" -w '%{http_code}' "$resource" \
    -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: hello' -d "$hello"
}

# Fails the run, showing the last response and baremcp's log.
fail() {
  echo "oidc: $alg: $1" >&2
  cat "$e2e/head" "$e2e/body" >&2 || true
  tail -n 20 "$e2e/baremcp.log" >&2
  exit 1
}

# expect STATUS WHAT TOKEN [TEXT]: the call with TOKEN answers STATUS, and says TEXT (in its
# head or body) when given.
expect() {
  local got
  got=$(call "$3")
  [ "$got" = "$1" ] || fail "$2: $got, want $1"
  [ -z "${4:-}" ] || grep -qiF -- "$4" "$e2e/head" "$e2e/body" || fail "$2: no $4"
}

end_to_end() {
  alg=$1
  e2e="$work/e2e-$alg"
  rm -rf "$e2e"
  mkdir -p "$e2e"
  node "$work/oidc_provider.mjs" serve --alg "$alg" >"$e2e/provider.out" 2>"$e2e/provider.log" &
  pids+=($!)
  wait_for "$e2e/provider.out" '^issuer '
  issuer=$(sed -n 's/^issuer //p' "$e2e/provider.out")
  port=$(free_port)
  resource="http://127.0.0.1:$port/mcp"
  provider jwks "$issuer" "$e2e/jwks.json"
  "$bin" --http "127.0.0.1:$port" --jwks-file "$e2e/jwks.json" --jwt-audience "$resource" \
    --jwt-issuer "$issuer" --required-scope mcp:tools --authorization-server "$issuer" \
    --resource-metadata-url "http://127.0.0.1:$port/.well-known/oauth-protected-resource/mcp" \
    --log-level info 2>"$e2e/baremcp.log" &
  pids+=($!)
  wait_for "$e2e/baremcp.log" 'serving MCP at'

  local good other unscoped fresh
  good=$(provider token "$issuer" "$resource" "mcp:tools mcp:admin")
  signed=$(python3 -c 'import base64, json, sys; h = sys.argv[1].split(".")[0]
print(json.loads(base64.urlsafe_b64decode(h + "=" * (-len(h) % 4)))["alg"])' "$good")
  [ "$signed" = "$alg" ] || fail "the provider signed with $signed"
  expect 200 "a token for this server" "$good" '"text":"Hello, World!"'
  other=$(provider token "$issuer" "http://127.0.0.1:$port/other")
  expect 401 "a token for another resource" "$other" 'error="invalid_token"'
  grep -qF 'token audience is not this server' "$e2e/baremcp.log" || fail "the refusal's reason is not logged"
  unscoped=$(provider token "$issuer" "$resource" mcp:admin)
  expect 403 "a token without mcp:tools" "$unscoped" 'error="insufficient_scope", scope="mcp:tools"'
  ! grep -qF -- "$good" "$e2e/baremcp.log" || fail "a token is in the log"

  # The official SDK clients, from the 401 to the call, by themselves.
  node "$work/oidc_client.mjs" "$resource" "$issuer" "${client[@]}" mcp:tools \
    2>>"$e2e/provider.log" || fail "the TypeScript SDK client failed"
  if [ -n "$python" ]; then
    "$python" tests/interop/oidc_client.py "$resource" "$issuer" "${client[@]}" ||
      fail "the Python SDK client failed"
  fi

  # The provider rotates its keys; the operator's copy of its JWKS follows, and baremcp with it.
  provider rotate "$issuer" >/dev/null
  fresh=$(provider token "$issuer" "$resource")
  expect 401 "a new key's token before the file has the key" "$fresh"
  provider jwks "$issuer" "$e2e/jwks.json"
  local started=$(date +%s%N)
  for _ in $(seq 100); do
    [ "$(call "$fresh")" = 200 ] && break
    sleep 0.1
  done
  local took=$((($(date +%s%N) - started) / 1000000))
  expect 200 "a new key's token once the file has the key" "$fresh" '"text":"Hello, World!"'
  expect 401 "the old key's token after the rotation" "$good" 'error="invalid_token"'
  echo "oidc: $alg end to end: 200, other resource 401, no scope 403, SDK clients served," \
    "rotation in force after ${took} ms"
  stop_started
}

for alg in RS256 PS256 ES256 EdDSA; do
  end_to_end "$alg"
done
