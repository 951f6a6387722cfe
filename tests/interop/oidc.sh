#!/usr/bin/env bash
# A real authorization server against baremcp's JWT verification: npm oidc-provider 9.13.3 (a
# certified OpenID provider) on loopback, issuing JWT access tokens by the client-credentials
# grant for RFC 8707 resource indicators (tests/interop/oidc_provider.mjs).
#
#   oidc.sh --check
#       For RS256, PS256, ES256 and EdDSA: the provider's JWKS written to a file the way an
#       operator's cron does, a token for http://127.0.0.1:8000/mcp and one for another
#       resource, then a key rotation, the new JWKS and a new token. baremcp's verifier
#       (transport/http/jwks_file.rs, through an ignored test that reads the cases) must
#       accept the first token against the first JWKS, refuse the other resource's, and after
#       the rotation accept only the new token.
#   oidc.sh serve [--alg ALG] [--port N]    run the provider (prints `issuer URL`)
#   oidc.sh jwks ISSUER FILE | token ISSUER RESOURCE [SCOPE] | rotate ISSUER
#       the steps one at a time, against a provider started with `serve`
#
# Installs under target/interop/oidc. Without node and npm, or when npm cannot install, it
# prints one line saying so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
work="$PWD/target/interop/oidc"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "oidc: skipped: node and npm are needed for oidc-provider"
  exit 0
fi
mkdir -p "$work"
if [ ! -d "$work/node_modules/oidc-provider" ] || [ ! -d "$work/node_modules/jose" ]; then
  if ! (cd "$work" && npm install --silent --no-audit --no-fund --no-save \
      oidc-provider@9.13.3 jose@6.2.18) >"$work/npm.log" 2>&1; then
    echo "oidc: skipped: npm could not install oidc-provider ($(tail -n 1 "$work/npm.log"))"
    exit 0
  fi
fi
cp tests/interop/oidc_provider.mjs "$work/"

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
