//! The one integration-test binary. Modules:
//!
//! - `transcripts`: golden request/response files replayed in process and over real pipes
//! - `everything`: the conformance fixture server of `examples/everything`
//! - `fuzz`: the seeded mutation fuzzer for a bounded budget (the soak is `benches/fuzz`)
//! - `http_fuzz`: the same fuzzer's HTTP target: hostile requests against `baremcp --http`
//! - `files`: `--root` safety against every escape, listing a large tree in pages, and
//!   watching subscribed files
//! - `http_framing`, `http_eras`, `http_streams`, `http_auth`, `http_jwks`, `http_process`:
//!   Streamable HTTP over raw sockets: statuses and malformed HTTP, both eras, event streams,
//!   authentication (JWTs of an authorization server's keys in `http_jwks`), the binary's
//!   signals and unix sockets (`http_harness`: the server and client they share)
//! - `http_operate`: what operators ask: the probes, `/metrics`, trace context from headers,
//!   spans sent to a collector, prefixed session ids
//! - `http_park`: keep-alive connections parked with the dispatching loop between requests
//! - `http_load`: many HTTP clients at once against the binary; a slow tool beside quick refusals
//! - `http_rules`, `http_bounds`: what issue 25's hostile campaign checked: HEAD, `Allow`, CORS,
//!   principals bound to sessions and `requestState`, session ids in logs; memory, CPU and the
//!   loop held by clients that leave, never answer, or exhaust descriptors
//! - `manifests`: a manifest's commands and files at run time, where the transcripts do not go
//! - `library`: the public library API: registration, typed tools, flushing, the examples
//! - `library_server`: the library fixture server and its transcripts: panics, content types,
//!   rich schemas
//! - `limits`: every bound the server keeps, and ids no transcript can hold
//! - `replay`: `baremcp replay` and `baremcp proxy`: own transcripts, recording, filters, failures
//! - `replay_order`: `baremcp replay` holding each server line to its place
//! - `replay_eof`: the end of input in transcripts: replayed, kept by `--update`, recorded
//! - `proxy`: `baremcp proxy`'s recording header and failures, and how its upstream ends
//! - `proxy_output`: `baremcp proxy` delivering the upstream's last output to a slow client
//! - `schema_suite`: the official JSON Schema Test Suite, both drafts
//! - `clients`: the README's client-setup snippets parse and their commands serve
//! - `docs`: links in README.md and docs/ resolve; the README's quickstarts run as written,
//!   print what they show, and show spec-valid messages
//! - `commands`: manifest commands that write without end or leave grandchildren behind
//! - `tasks`: the tasks extension over pipes: task threads, polling, answers, cancellation
//! - `check`: `baremcp check` on every shape of manifest problem, subcommand flags, and
//!   `validate --jsonl` answering every line
//! - `cli`: the binary's flags, exit codes, `validate`, EOF and broken-pipe behaviour
//! - `startup`: what the binary says as it starts (HTTP's URLs, stdio on a terminal), and
//!   what `--quiet` keeps quiet
//! - `tidy`: module docs, layers, names and lengths, and the documented method table against
//!   the dispatch
//! - `typed`: schemas derived from argument types (`tool_args!`, the type table, the agreement
//!   check), schemars' schemas, structured output with and without its text copy
//! - `intercept`: the `on_request` and `on_reply` hooks over stdio and HTTP
//! - `public_api`: the library's public items against `tests/public-api.txt`
//! - `uris`: resource URIs that are not URIs, refused from clients, at registration, by `check`

// The tests use unix facilities throughout (symlinks, FIFOs, /proc, signals, sh); Windows only
// builds (see docs/install.md, Platforms).
#![cfg(unix)]

mod check;
mod cli;
mod clients;
mod commands;
mod docs;
mod everything;
mod files;
mod fuzz;
mod http_auth;
mod http_bounds;
mod http_eras;
mod http_framing;
mod http_fuzz;
mod http_harness;
mod http_jwks;
mod http_load;
mod http_operate;
#[cfg(target_os = "linux")]
mod http_park;
mod http_process;
mod http_rules;
mod http_streams;
mod intercept;
mod library;
mod library_server;
mod limits;
mod logging;
mod manifests;
mod proxy;
mod proxy_output;
mod public_api;
mod replay;
mod replay_eof;
mod replay_order;
mod schema_suite;
mod schemars_recipe;
mod startup;
mod structured;
mod tasks;
mod tidy;
mod transcripts;
mod typed;
mod uris;

/// The application (`src/bin/baremcp/`), compiled into the tests too, so that transcripts
/// build their server from the same flags in process. Much of it only the binary calls.
#[path = "../../src/bin/baremcp/main.rs"]
#[allow(dead_code)]
mod app;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The repository root, for fixture paths.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(path: &str) -> PathBuf {
    root().join("fixtures").join(path)
}

/// A copy of `fixtures/` with the symbolic links the `--root` tests need (an escape out of the
/// tree, a link inside it, a directory loop, links to a dot-file and a dot-directory, a
/// dot-named link to a plain file), made once per test process: links are not kept
/// in the repository, so a packaged crate or a checkout without them tests the same. Canonical.
pub fn fixtures() -> &'static Path {
    static MIRROR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    MIRROR.get_or_init(|| {
        let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        // Earlier runs' copies go once they are an hour old (a run in parallel keeps its own).
        for old in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let stale = old
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().unwrap_or_default().as_secs() > 3600);
            if old.file_name().to_string_lossy().starts_with("fixtures-") && stale {
                let _ = std::fs::remove_dir_all(old.path());
            }
        }
        let mirror = tmp.join(format!("fixtures-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&mirror);
        copy_tree(&root().join("fixtures"), &mirror);
        let tree = mirror.join("tree");
        std::os::unix::fs::symlink(root().join("README.md"), tree.join("outside-link")).unwrap();
        std::os::unix::fs::symlink("hello.txt", tree.join("inside-link")).unwrap();
        std::os::unix::fs::symlink("../notes", tree.join("notes/loop-dir")).unwrap();
        std::os::unix::fs::symlink(".hidden", tree.join("hidden-link")).unwrap();
        std::os::unix::fs::symlink(".secret-dir", tree.join("hidden-dir-link")).unwrap();
        std::os::unix::fs::symlink("hello.txt", tree.join(".hello-link")).unwrap();
        std::fs::canonicalize(mirror).unwrap()
    })
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// A fresh, empty directory under the target dir for files a test writes (canonical, so it
/// compares equal to paths the server reports).
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::canonicalize(dir).unwrap()
}

/// The server binary started with `args`, talked to over its stdin and stdout; its stderr is
/// dropped.
pub fn serving<A: AsRef<OsStr>>(args: impl IntoIterator<Item = A>) -> std::io::Result<Child> {
    Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
}

/// Like [`serving`], with the server's address space limited to `kib` KiB (`ulimit -v`): a
/// server that would hold too much fails (an allocation error, a clean refusal) instead of
/// taking the machine's memory.
pub fn serving_limited<A: AsRef<OsStr>>(
    kib: u64,
    args: impl IntoIterator<Item = A>,
) -> std::io::Result<Child> {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_baremcp"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
}

/// Whether golden files should be rewritten instead of compared.
pub fn updating() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1")
}

/// A line diff of two texts, for failure messages.
pub fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    // Longest common subsequence, then a walk that prints removals and additions.
    let mut lcs = vec![vec![0usize; a.len() + 1]; e.len() + 1];
    for i in (0..e.len()).rev() {
        for j in (0..a.len()).rev() {
            lcs[i][j] =
                if e[i] == a[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < e.len() || j < a.len() {
        if i < e.len() && j < a.len() && e[i] == a[j] {
            (i, j) = (i + 1, j + 1);
        } else if j < a.len() && (i == e.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("line {:>3} + {}\n", j + 1, a[j]));
            j += 1;
        } else {
            out.push_str(&format!("line {:>3} - {}\n", i + 1, e[i]));
            i += 1;
        }
    }
    out
}
