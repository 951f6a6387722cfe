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

WHO="nginx sessions"
. tests/interop/lib.sh
need nginx nginx-light nginx
nginx=$(command -v nginx || echo /usr/sbin/nginx)

cargo build --release --quiet --bin baremcp
bin="$PWD/target/release/baremcp"
mcp_venv

has_prefix=no
"$bin" --help 2>&1 | grep -q -- --session-id-prefix && has_prefix=yes
if [ $# -gt 0 ]; then
  modes=("$1")
  if [ "$1" = prefix ] && [ $has_prefix = no ]; then
    echo "nginx sessions: skipped (this baremcp has no --session-id-prefix)"
    exit 0
  fi
else
  modes=(retry)
  if [ $has_prefix = yes ]; then
    modes+=(prefix)
  fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-nginx-sessions.XXXXXX")
trap 'stop_started; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# `server` lines for PORTS, each followed by SUFFIX.
servers() {
  local suffix=$1 port
  shift
  for port in "$@"; do echo "        server 127.0.0.1:$port$suffix;"; done
}

# For one mode and the backends' PORTS: the http block's maps and upstreams, the location's
# routing lines, and any further location.
configure() {
  local mode=$1 port other
  shift
  local pool="    upstream baremcp {
$([ "$mode" = prefix ] || echo "        hash \$mcp_session_key consistent;")
$(servers " max_fails=1 fail_timeout=10s" "$@")
    }"
  extra_locations=""
  case $mode in
    retry)
      upstreams="    map \$http_mcp_session_id \$mcp_session_key {
        \"\" \$request_id;
        default \$http_mcp_session_id;
    }
$pool"
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
      upstreams="    map \$http_mcp_session_id \$mcp_upstream {
$(for port in "$@"; do echo "        ~^p$port\\. p$port;"; done)
        default baremcp;
    }
$pool"
      for port in "$@"; do
        local others=()
        for other in "$@"; do [ "$other" = "$port" ] || others+=("$other"); done
        upstreams+="
    upstream p$port {
$(servers " max_fails=1 fail_timeout=10s" "$port")
$(servers " backup" "${others[@]}")
    }"
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
  wait_port "$listen"

  local out
  out=$("$venv/bin/python" tests/interop/legacy_sessions.py "http://127.0.0.1:$listen/mcp" "$pid_map" 2>&1) || {
    echo "$out"
    echo "nginx sessions ($mode): the client failed; nginx's error log and each process's log end:" >&2
    cat "$dir/nginx/logs/error.log" >&2
    for log in "$dir"/*.log; do echo "== $log" >&2; tail -5 "$log" >&2; done
    exit 1
  }
  echo "$out" | grep -v '^SESSION=' | sed "s/^/($mode) /"
  sessions_in_own_logs "$dir" "$out"
  stop_started
}

# nginx.conf for one mode: DIR LISTEN_PORT BACKEND_PORT...
write_conf() {
  local mode=$1 dir=$2 listen=$3
  shift 3
  configure "$mode" "$@"
  nginx_conf "$dir/nginx" <<EOF
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
