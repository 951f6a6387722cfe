# Shared by the interop scripts (sourced, from the repository's root): a distribution package
# installed or one line saying why the script skips, the Python SDK, an nginx.conf's start,
# free loopback ports, waiting for what a script started, stopping it, and the check that
# each legacy session was served by one process. Each script sets WHO (the name its messages
# start with) first.

pids=()

# Stops every process the script started (listed in `pids`), waiting up to 5 s for each.
stop_started() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  pids=()
}

# Makes COMMAND available, installing the first of PACKAGES that apt-get can install;
# otherwise prints why and exits 0.
need() {
  local command=$1 sudo="" package
  shift
  command -v "$command" >/dev/null || [ -x "/usr/sbin/$command" ] && return 0
  skip() {
    echo "$WHO: skipped ($command is not installed, and $1)"
    exit 0
  }
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null && sudo -n true 2>/dev/null || skip "installing it needs root or sudo"
    sudo="sudo -n"
  fi
  command -v apt-get >/dev/null || skip "apt-get is not available"
  $sudo apt-get update -qq >/dev/null 2>&1 || true
  for package in "$@"; do
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$package" >/dev/null 2>&1 && return 0
  done
  skip "apt-get could not install $*"
}

# The official Python SDK (mcp==2.3.0) in target/interop/venv, as tests/interop/run.sh has it.
mcp_venv() {
  venv="$PWD/target/interop/venv"
  mkdir -p "$PWD/target/interop"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0"
}

# Writes DIR/nginx.conf: a start that keeps everything of nginx's under DIR (its pid, logs and
# temporary files) and opens the `http {` block, then the rest of it from standard input.
nginx_conf() {
  mkdir -p "$1/logs" "$1/temp"
  {
    cat <<EOF
daemon off;
worker_processes 1;
pid $1/nginx.pid;
error_log $1/logs/error.log warn;
events { worker_connections 512; }
http {
    access_log $1/logs/access.log;
    client_body_temp_path $1/temp/body;
    proxy_temp_path $1/temp/proxy;
    fastcgi_temp_path $1/temp/fastcgi;
    uwsgi_temp_path $1/temp/uwsgi;
    scgi_temp_path $1/temp/scgi;
EOF
    cat
  } >"$1/nginx.conf"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until FILE says TEXT (a process's log saying where it serves), up to 10 s.
wait_for() {
  for _ in $(seq 100); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "$WHO: $1 never said $2:" >&2
  cat "$1" >&2
  exit 1
}

# Waits until something accepts connections on loopback PORT, up to 10 s.
wait_port() {
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" 2>/dev/null && return 0
    sleep 0.1
  done
}

# Each process's own log against what tests/interop/legacy_sessions.py printed
# (`SESSION=<id> UPSTREAM=<name>` lines): a session's successful requests all appear in the log
# of its process, DIR/<name's last :-part>.log, and in no other log of DIR.
sessions_in_own_logs() {
  local dir=$1 output=$2 checked=0 session upstream log served
  while read -r session upstream; do
    for log in "$dir"/*.log; do
      served=$(grep -c " 20[02] session=$session " "$log" || true)
      if [ "$(basename "$log" .log)" = "${upstream##*:}" ]; then
        [ "$served" -ge 2 ] || { echo "$WHO: $upstream's log does not show session $session" >&2; exit 1; }
      elif [ "$served" -ne 0 ]; then
        echo "$WHO: $log served $served requests of $upstream's session $session" >&2
        exit 1
      fi
    done
    checked=$((checked + 1))
  done < <(echo "$output" | sed -n 's/^SESSION=\([^ ]*\) UPSTREAM=\(.*\)/\1 \2/p')
  echo "$WHO: each process's log agrees for all $checked sessions"
}
