#!/usr/bin/env bash
# Legacy sessions at scale behind nginx (open source nginx has no `sticky learn`, which is
# nginx Plus only, and `hash $http_mcp_session_id` alone cannot work: `initialize` carries
# no session id, so the process that mints one is not the one the hash later picks). The
# ways that work, each run with the official Python client (tests/interop/legacy_sessions.py:
# twelve legacy sessions, every response of a session from one process, a killed process
# costing only its own sessions, whose clients get 404 and start again), and each process's
# own log checked:
#   retry:  baremcp unchanged. A session is hashed to a process; a process that does not hold
#           it answers 404 before doing anything, and nginx tries the next one
#           (`proxy_next_upstream error timeout http_404 non_idempotent`), so a request costs
#           up to N-1 extra 404s: for a few processes. `initialize` is spread by hashing a
#           random `$request_id`.
#   prefix: each process started with `--session-id-prefix NAME` mints ids `NAME.<hex>`; a
#           `map` on the id picks the process's own upstream (with the others as `backup`,
#           which answer 404 once it is gone). Run when the binary has that flag.
# The configurations are docs/deployment.md's. nginx comes from the distribution's packages;
# when it cannot be installed, one line says why and the script exits 0.
#   usage: nginx_sessions.sh [retry|prefix]   (default: both, prefix only when supported)
set -euo pipefail
cd "$(dirname "$0")/../.."

skip() {
  echo "nginx sessions: skipped ($1)"
  exit 0
}
nginx=$(command -v nginx || true)
[ -n "$nginx" ] || { [ -x /usr/sbin/nginx ] && nginx=/usr/sbin/nginx; } || true
if [ -z "$nginx" ]; then
  if [ "$(id -u)" = 0 ]; then
    sudo=""
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    skip "nginx is not installed, and installing it needs root or sudo"
  fi
  command -v apt-get >/dev/null || skip "nginx is not installed, and apt-get is not available"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nginx-light ||
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nginx; } >/dev/null 2>&1 ||
    skip "apt-get could not install nginx-light or nginx"
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
fi

cargo build --release --quiet --bin baremcp
bin="$PWD/target/release/baremcp"
venv="$PWD/target/interop/venv"
mkdir -p "$PWD/target/interop"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0"

has_prefix=no
"$bin" --help 2>&1 | grep -q -- --session-id-prefix && has_prefix=yes
if [ $# -gt 0 ]; then
  modes=("$1")
  [ "$1" != prefix ] || [ $has_prefix = yes ] || skip "this baremcp has no --session-id-prefix"
else
  modes=(retry)
  if [ $has_prefix = yes ]; then
    modes+=(prefix)
  fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-nginx-sessions.XXXXXX")
pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  pids=()
}
trap 'stop_all; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for() {
  for _ in $(seq 100); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nginx sessions: $1 never said $2:" >&2
  cat "$1" >&2
  exit 1
}

# The upstream blocks and the location's routing lines for one mode.
configure() {
  local mode=$1
  shift
  local ports=("$@") port other
  upstreams=""
  extra_locations=""
  case $mode in
    retry)
      upstreams+="    map \$http_mcp_session_id \$mcp_session_key {"$'\n'
      upstreams+="        \"\" \$request_id;"$'\n'
      upstreams+="        default \$http_mcp_session_id;"$'\n'
      upstreams+="    }"$'\n'
      upstreams+="    upstream baremcp {"$'\n'
      upstreams+="        hash \$mcp_session_key consistent;"$'\n'
      for port in "${ports[@]}"; do
        upstreams+="        server 127.0.0.1:$port max_fails=1 fail_timeout=10s;"$'\n'
      done
      upstreams+="    }"$'\n'
      # When every live process said 404 and only a dead one is left untried, nginx says
      # 502 ("no live upstreams"): for a request naming a session that is the session's
      # end, so it is answered as baremcp would, 404.
      routing="proxy_pass http://baremcp;
            proxy_next_upstream error timeout http_404 non_idempotent;
            error_page 502 = @session_gone;"
      extra_locations="location @session_gone {
            if (\$http_mcp_session_id = \"\") { return 502; }
            default_type application/json;
            return 404 '{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32001,\"message\":\"session not found: send initialize again\"}}';
        }"
      ;;
    prefix)
      upstreams+="    map \$http_mcp_session_id \$mcp_upstream {"$'\n'
      for port in "${ports[@]}"; do
        upstreams+="        ~^p$port\\. p$port;"$'\n'
      done
      upstreams+="        default baremcp;"$'\n'
      upstreams+="    }"$'\n'
      upstreams+="    upstream baremcp {"$'\n'
      for port in "${ports[@]}"; do
        upstreams+="        server 127.0.0.1:$port max_fails=1 fail_timeout=10s;"$'\n'
      done
      upstreams+="    }"$'\n'
      for port in "${ports[@]}"; do
        upstreams+="    upstream p$port {"$'\n'
        upstreams+="        server 127.0.0.1:$port max_fails=1 fail_timeout=10s;"$'\n'
        for other in "${ports[@]}"; do
          [ "$other" = "$port" ] || upstreams+="        server 127.0.0.1:$other backup;"$'\n'
        done
        upstreams+="    }"$'\n'
      done
      routing="proxy_pass http://\$mcp_upstream;"
      ;;
  esac
}

run_mode() {
  local mode=$1 dir="$work/$1" port ports=() pid_map="{"
  mkdir -p "$dir"
  for _ in 1 2 3; do
    port=$(free_port)
    local extra=()
    [ "$mode" = prefix ] && extra=(--session-id-prefix "p$port")
    "$bin" --http "127.0.0.1:$port" "${extra[@]}" --log-level info --log-file "$dir/$port.log" &
    pids+=($!)
    disown $!  # killed on purpose mid-run: no "Killed" line from this shell
    pid_map+="\"127.0.0.1:$port\": $!,"
    ports+=("$port")
    wait_for "$dir/$port.log" "serving MCP at"
  done
  pid_map="${pid_map%,}}"
  local listen
  listen=$(free_port)
  write_conf "$mode" "$dir" "$listen" "${ports[@]}"
  "$nginx" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -t -q
  "$nginx" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" 2>>"$dir/nginx/logs/error.log" &
  pids+=($!)
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $listen), 1)" 2>/dev/null && break
    sleep 0.1
  done

  local out
  out=$("$venv/bin/python" tests/interop/legacy_sessions.py "http://127.0.0.1:$listen/mcp" "$pid_map" 2>&1) || {
    echo "$out"
    echo "nginx sessions ($mode): the client failed; nginx's error log and each process's log end:" >&2
    cat "$dir/nginx/logs/error.log" >&2
    for log in "$dir"/*.log; do echo "== $log" >&2; tail -5 "$log" >&2; done
    exit 1
  }
  echo "$out" | grep -v '^SESSION=' | sed "s/^/($mode) /"
  # Each process's own log: a session's successful requests are all in its process's log.
  local checked=0 session upstream log served
  while read -r session upstream; do
    for log in "$dir"/*.log; do
      served=$(grep -c " 20[02] session=$session " "$log" || true)
      if [ "$(basename "$log" .log)" = "${upstream##*:}" ]; then
        [ "$served" -ge 2 ] || { echo "nginx sessions: $upstream's log lacks session $session" >&2; exit 1; }
      elif [ "$served" -ne 0 ]; then
        echo "nginx sessions: $log served $served requests of $upstream's session $session" >&2
        exit 1
      fi
    done
    checked=$((checked + 1))
  done < <(echo "$out" | sed -n 's/^SESSION=\([^ ]*\) UPSTREAM=\(.*\)/\1 \2/p')
  echo "nginx sessions ($mode): each process's log agrees for all $checked sessions"
  stop_all
}

# nginx.conf for one mode: DIR LISTEN_PORT BACKEND_PORT...
write_conf() {
  local mode=$1 dir=$2 listen=$3
  shift 3
  mkdir -p "$dir/nginx/logs" "$dir/nginx/temp"
  configure "$mode" "$@"
  cat >"$dir/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/logs/error.log warn;
events { worker_connections 512; }
http {
    access_log $dir/nginx/logs/access.log;
    client_body_temp_path $dir/nginx/temp/body;
    proxy_temp_path $dir/nginx/temp/proxy;
    fastcgi_temp_path $dir/nginx/temp/fastcgi;
    uwsgi_temp_path $dir/nginx/temp/uwsgi;
    scgi_temp_path $dir/nginx/temp/scgi;
$upstreams
    server {
        listen 127.0.0.1:$listen;
        location /mcp {
            $routing
            proxy_http_version 1.1;
            proxy_set_header Host \$host;
            proxy_buffering off;
            proxy_read_timeout 1h;
            add_header X-Upstream \$upstream_addr always;
        }
        $extra_locations
    }
}
EOF
}

if [ $# -eq 0 ] && [ $has_prefix = no ]; then
  # Not run, but its configuration is still checked by nginx itself.
  write_conf prefix "$work/prefix-check" "$(free_port)" 8081 8082 8083
  "$nginx" -p "$work/prefix-check/nginx" -c "$work/prefix-check/nginx/nginx.conf" -t -q
  echo "nginx sessions: prefix mode's configuration passes nginx -t; not run (this baremcp has no --session-id-prefix yet)"
fi
for mode in "${modes[@]}"; do run_mode "$mode"; done
echo "nginx sessions: passed"
