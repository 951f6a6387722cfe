#!/usr/bin/env bash
# Line coverage of src/ by `cargo test`: cargo-llvm-cov instruments the library and the
# binary, and collects the profile of every process the tests start (the binary run over
# pipes counts too). Prints the per-file table and the TOTAL line; extra arguments go to
# `cargo llvm-cov` (e.g. `--html`, `--text`). docs/development/coverage.md's figure comes from this script.
# A test that fails (a timing test on a loaded machine) is reported above the table, and
# does not hide the figure.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo llvm-cov --version >/dev/null 2>&1; then
  echo "coverage skipped: cargo-llvm-cov is missing (cargo install cargo-llvm-cov --locked; rustup component add llvm-tools-preview)"
  exit 0
fi
cargo llvm-cov --ignore-run-fail --summary-only --ignore-filename-regex '/(tests|examples)/' "$@"
