#!/usr/bin/env bash
# The README's quickstart "Serve HTTP with a token", run as written: its blocks are read from
# README.md (nothing is copied here), with this build's baremcp first on PATH and the port
# 8080 replaced by a free one. The token is made and the server started by the first block,
# and the server must say on stderr what the README says it does; curl must print what the
# README shows; the `claude mcp add` line is run with a stand-in `claude` that records its
# arguments, which must then reach the server; the Python and TypeScript programs are
# installed with the README's own install commands and must print `Hello, World!`; and a
# request without the token gets 401.
#
#   usage: bash tests/interop/quickstart_http.sh BAREMCP VENV
# VENV is a Python virtual environment (run.sh makes it); the TypeScript program runs when
# node and npm are installed, else one line says it was skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(realpath "$1")
venv=$(realpath "$2")
work="$PWD/target/interop/quickstart-http"
rm -rf "$work"
mkdir -p "$work/blocks"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# Each fenced block of the section, in order, as blocks/N.LANG, with the port replaced.
python3 - "$work/blocks" "$port" <<'EOF'
import pathlib, sys
out, port = pathlib.Path(sys.argv[1]), sys.argv[2]
text = pathlib.Path("README.md").read_text()
section = text[text.index("\n## Serve HTTP with a token\n"):]
section = section[: section.index("\n## ", 1)]
(out / "section.md").write_text(section.replace("127.0.0.1:8080", f"127.0.0.1:{port}"))
parts = section.split("\n```")
for n, block in enumerate(parts[1::2]):
    lang, _, body = block.partition("\n")
    (out / f"{n}.{lang}").write_text(body.replace("127.0.0.1:8080", f"127.0.0.1:{port}"))
EOF
blocks="$work/blocks"
ls "$blocks" | tr '\n' ' ' | grep -q '^0.sh 1.sh 2.text 3.sh 4.python 5.js section.md $' ||
  { echo "quickstart: the section's blocks changed: $(ls "$blocks" | tr '\n' ' ')" >&2; exit 1; }
cd "$work"
export PATH="$(dirname "$bin"):$PATH"

# Make the token, then start the server (the block's last line) in the background.
head -n -1 "$blocks/0.sh" | bash -e
start=$(tail -n 1 "$blocks/0.sh")
case "$start" in baremcp\ --http\ *) ;; *) echo "quickstart: not a start line: $start" >&2; exit 1 ;; esac
bash -c "exec $start" 2>server.log &
served=$!
trap 'kill "$served" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

# The server says what the README says it says.
says=$(grep -o '^It says `[^`]*`' "$blocks/section.md" | sed 's/^It says `//; s/`$//')
grep -qF "$says" server.log || { echo "quickstart: the server did not say: $says" >&2; cat server.log >&2; exit 1; }

# curl prints exactly the reply the README shows.
got=$(bash -e "$blocks/1.sh")
[ "$got" = "$(cat "$blocks/2.text")" ] ||
  { printf 'quickstart: curl printed\n%s\nthe README shows\n%s\n' "$got" "$(cat "$blocks/2.text")" >&2; exit 1; }
echo "quickstart: curl: as shown"

# Claude Code: the arguments the line gives `claude` name this server and a header it takes.
claude() { printf '%s\n' "$@" >claude.args; }
source "$blocks/3.sh"
mapfile -t args <claude.args
[ "${args[*]:0:6}" = "mcp add --transport http baremcp http://127.0.0.1:$port/mcp" ] && [ "${args[6]}" = "--header" ] ||
  { echo "quickstart: claude mcp add got: ${args[*]}" >&2; exit 1; }
initialize='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"quickstart","version":"1.0"}}}'
status() {
  curl -s -o /dev/null -w '%{http_code}' "${args[5]}" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' "$@" -d "$initialize"
}
[ "$(status -H "${args[7]}")" = 200 ] || { echo "quickstart: claude's header was refused" >&2; exit 1; }
[ "$(status)" = 401 ] || { echo "quickstart: a request without the token was not 401" >&2; exit 1; }
echo "quickstart: claude mcp add: its URL and header are served; without the header, 401"

# The Python SDK, installed as the README says (into the venv), then the program as shown.
pip_install=$(grep -o '`pip install [^`]*`' "$blocks/section.md" | tr -d '`')
"$venv/bin/${pip_install%% *}" ${pip_install#pip } --quiet --disable-pip-version-check
cp "$blocks/4.python" client.py
[ "$("$venv/bin/python" client.py)" = "Hello, World!" ] || { echo "quickstart: the Python program failed" >&2; exit 1; }
echo "quickstart: python: Hello, World!"

# The TypeScript SDK, installed as the README says, in this folder.
if command -v node >/dev/null && command -v npm >/dev/null; then
  npm_install=$(grep -o '`npm install [^`]*`' "$blocks/section.md" | tr -d '`')
  $npm_install --silent --no-audit --no-fund >/dev/null
  cp "$blocks/5.js" client.mjs
  [ "$(node client.mjs)" = "Hello, World!" ] || { echo "quickstart: the TypeScript program failed" >&2; exit 1; }
  echo "quickstart: typescript: Hello, World!"
else
  echo "quickstart: skipped the TypeScript program: node and npm are not installed"
fi
kill "$served"
wait "$served" 2>/dev/null || true
