#!/usr/bin/env bash
# The systemd unit of docs/deployment.md (the ```ini block after `<!-- unit: baremcp@.service
# -->`), checked two ways:
#   1. `systemd-analyze verify` on an instance of it, with ExecStart pointed at the release
#      binary: no error and no warning.
#   2. What its sandboxing asks of the binary, tried without systemd: the binary runs under the
#      kernel's memory write-xor-execute lock (prctl PR_SET_MDWE, what systemd uses for
#      MemoryDenyWriteExecute= where the kernel has it) and no_new_privs, and the calculator,
#      which opens glibc's libm at run time, still answers `sqrt(16) + ln(e)`; a writable and
#      executable mapping is refused under the same lock, so the lock was on.
# systemd-analyze comes with systemd; when it is missing, or the kernel has no PR_SET_MDWE
# (Linux before 6.3), one line says which part was skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release --quiet --bin baremcp
bin="$PWD/target/release/baremcp"
work=$(mktemp -d "${TMPDIR:-/tmp}/baremcp-systemd.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The unit as the page gives it, with the binary's path swapped in.
awk '/<!-- unit: baremcp@.service -->/ {found=1; next}
     found && /^```ini/ {inside=1; next}
     inside && /^```/ {exit}
     inside {print}' docs/deployment.md | sed "s|/usr/local/bin/baremcp|$bin|" >"$work/baremcp@.service"
grep -q '^ExecStart=' "$work/baremcp@.service" || { echo "systemd: no unit found in docs/deployment.md" >&2; exit 1; }

if command -v systemd-analyze >/dev/null; then
  out=$(cd "$work" && systemd-analyze verify "$work/baremcp@8081.service" 2>&1) || {
    echo "$out" >&2
    exit 1
  }
  if [ -n "$out" ]; then
    echo "systemd: systemd-analyze verify warned:" >&2
    echo "$out" >&2
    exit 1
  fi
  echo "systemd: systemd-analyze verify passed on baremcp@8081.service"
else
  echo "systemd: verify skipped (systemd-analyze is not installed)"
fi

python3 - "$bin" <<'EOF'
import ctypes, json, mmap, subprocess, sys

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS, PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN = 38, 65, 1
if libc.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0:
    print("systemd: the write-xor-execute run skipped (this kernel has no PR_SET_MDWE)")
    sys.exit(0)
libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
# The lock is on: a writable and executable mapping is refused.
try:
    mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    sys.exit("systemd: a writable and executable mapping was allowed: the lock is not on")
except PermissionError:
    pass
lines = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "calculate", "arguments": {"expression": "sqrt(16) + ln(e)"}}},
]
stdin = "".join(json.dumps(line) + "\n" for line in lines)
# The lock and no_new_privs pass on to the child across fork and exec.
run = subprocess.run([sys.argv[1]], input=stdin, capture_output=True, text=True, timeout=30)
replies = [json.loads(line) for line in run.stdout.splitlines()]
result = replies[-1].get("result", {})
if result.get("structuredContent") != {"value": 5}:
    sys.exit(f"systemd: under the lock the calculator said {replies[-1]} ({run.stderr.strip()})")
print("systemd: under write-xor-execute and no_new_privs the calculator opened libm: sqrt(16) + ln(e) = 5")
EOF
echo "systemd: passed"
