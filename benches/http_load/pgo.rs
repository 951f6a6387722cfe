//! The profile-guided build of `baremcp`: built instrumented, trained on the HTTP load run
//! and a stdio session, then built again with what the training counted.
//!
//! Why: a call's path through the server runs about 26 000 instructions once each, spread
//! over some 87 KB of code, which a 32 KB instruction cache cannot hold from one call to the
//! next (docs/development/performance.md, "Where the time goes"). The profile lets LLVM put
//! the hot path together and the rest aside; the work done is the same.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::load;

/// What to build: cargo's profile and, when not the host, its target.
pub struct Build<'a> {
    pub profile: &'a str,
    pub target: Option<&'a str>,
}

/// Builds the trained binary and says where it is. Its scratch (the instrumented build, the
/// raw counts, the merged profile) is under `target/pgo`.
pub fn build(root: &Path, what: &Build) -> Result<PathBuf, String> {
    let merge = profdata()?;
    let scratch = root.join("target/pgo");
    let counts = scratch.join("counts");
    let _ = std::fs::remove_dir_all(&counts);
    std::fs::create_dir_all(&counts).map_err(|e| e.to_string())?;
    let flags = format!("-Cprofile-generate={}", scratch.join("build-counts").display());
    let instrumented = cargo_build(root, what, &scratch.join("generate"), &flags)?;
    // The runtime names each process's file; the build's own instrumented build scripts
    // write theirs where `-Cprofile-generate` says, apart from these.
    let file = counts.join("baremcp-%p.profraw");
    train_http(&instrumented, &file)?;
    train_stdio(&instrumented, &file)?;
    // One file from each training run, or the profile would say nothing of one of them.
    let files: Vec<PathBuf> = std::fs::read_dir(&counts)
        .map_err(|e| e.to_string())?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.metadata().is_ok_and(|m| m.len() > 0))
        .collect();
    if files.len() != 2 {
        return Err(format!("{} files of counts in {}, not 2", files.len(), counts.display()));
    }
    let profile = scratch.join(format!("{}.profdata", what.profile));
    let mut merging = Command::new(merge);
    merging.args(["merge", "-o"]).arg(&profile).args(&files);
    run(&mut merging, "llvm-profdata merge")?;
    cargo_build(root, what, &scratch.join("use"), &format!("-Cprofile-use={}", profile.display()))
}

/// `cargo build` of the binary with `rustflags` into `dir`, and where the binary is.
fn cargo_build(root: &Path, what: &Build, dir: &Path, rustflags: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "--quiet", "--bin", "baremcp", "--profile", what.profile]);
    build.args(what.target.map(|t| ["--target", t]).iter().flatten());
    build.arg("--target-dir").arg(dir).env("RUSTFLAGS", rustflags).current_dir(root);
    run(&mut build, "cargo build")?;
    // cargo's folder for the `dev` profile is `debug`; every other profile's is its name.
    let folder = if what.profile == "dev" { "debug" } else { what.profile };
    let dir = what.target.map_or(dir.to_path_buf(), |t| dir.join(t));
    Ok(dir.join(folder).join(format!("baremcp{}", std::env::consts::EXE_SUFFIX)))
}

/// The HTTP load run (both eras, streams, the answers a connection gives alone), at the size
/// `cargo bench --bench http_load -- --clients 16 --calls 500` has.
fn train_http(binary: &Path, file: &Path) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("baremcp-pgo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let watched = dir.join("watched.txt");
    std::fs::write(&watched, "first\n").map_err(|e| e.to_string())?;
    let root = dir.to_str().ok_or("the scratch path is not UTF-8")?;
    let mut command = Command::new(binary);
    command.args(["--root", root, "--max-connections", "48"]).env("LLVM_PROFILE_FILE", file);
    let (server, addr) = load::serve(command)?;
    let uri = format!("file://{}", watched.display());
    let plan = load::Plan { clients: 16, calls: 500, watched, uri, pid: None };
    let report = load::run(addr, &plan);
    load::stop(server)?;
    let _ = std::fs::remove_dir_all(&dir);
    report.map(drop)
}

/// A stdio session: initialize, then 5 000 `tools/call hello`, every reply read.
fn train_stdio(binary: &Path, file: &Path) -> Result<(), String> {
    let mut input = String::from(super::INIT);
    input.push_str("\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for id in 1..=5_000 {
        input.push_str(&super::call(id));
        input.push('\n');
    }
    let mut child = Command::new(binary)
        .env("LLVM_PROFILE_FILE", file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let mut stdin = child.stdin.take().unwrap();
    let writer =
        std::thread::spawn(move || std::io::Write::write_all(&mut stdin, input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    writer.join().unwrap().map_err(|e| e.to_string())?;
    let replies = out.stdout.split(|&b| b == b'\n').filter(|l| l.starts_with(b"{")).count();
    match (out.status.success(), replies) {
        (true, 5_001) => Ok(()),
        (ok, n) => Err(format!("stdio training: exit ok {ok}, {n} replies of 5001")),
    }
}

/// `llvm-profdata` of the toolchain's own LLVM (rustup's `llvm-tools`), added when missing.
fn profdata() -> Result<PathBuf, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = |args: &[&str]| {
        let out = Command::new(&rustc).args(args).output().map_err(|e| e.to_string())?;
        Ok::<_, String>(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let sysroot = output(&["--print", "sysroot"])?;
    let version = output(&["-vV"])?;
    let host = version.lines().find_map(|l| l.strip_prefix("host: ")).ok_or("no host triple")?;
    let tool = Path::new(&sysroot).join("lib/rustlib").join(host).join("bin/llvm-profdata");
    if !tool.exists() {
        let mut add = Command::new("rustup");
        run(add.args(["component", "add", "llvm-tools"]), "rustup component add llvm-tools")?;
    }
    tool.exists().then_some(tool).ok_or_else(|| "llvm-profdata is not in the toolchain".into())
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command.status().map_err(|e| format!("{what}: {e}"))?;
    status.success().then_some(()).ok_or_else(|| format!("{what} failed: {status}"))
}
