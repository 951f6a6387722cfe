//! The profile-guided build of `baremcp`: built instrumented, trained on the HTTP load run
//! and a stdio session, then built again with what the training counted.
//!
//! Why: a call's path through the server runs about 26 000 instructions, nearly each once,
//! over some 87 KB of code, which a 32 KB instruction cache cannot hold from one call to the
//! next (docs/development/performance.md, "The instruction cache"). The profile lets LLVM
//! put the hot path together and the rest aside; the work done is the same. What the
//! training does not run (bearer tokens, command tools, request logs) is laid out as cold.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{cargo, load};

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
    let io = |e: std::io::Error| format!("{}: {e}", counts.display());
    std::fs::create_dir_all(&counts).map_err(io)?;
    eprintln!("pgo: building baremcp instrumented ...");
    // Where the instrumented build scripts write theirs, which no one reads: emptied first.
    let build_counts = scratch.join("build-counts");
    let _ = std::fs::remove_dir_all(&build_counts);
    let generate = format!("-Cprofile-generate={}", build_counts.display());
    let instrumented = cargo_build(root, what, &scratch.join("generate"), &generate)?;
    // The runtime names each process's file (`%p`), apart from the build scripts' files.
    let file = counts.join("baremcp-%p.profraw");
    eprintln!("pgo: training it on the HTTP load run and a stdio session ...");
    train_http(&instrumented, &file)?;
    train_stdio(&instrumented, &file);
    // One file from each training run, or the profile would say nothing of one of them.
    let files: Vec<PathBuf> = std::fs::read_dir(&counts)
        .map_err(io)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.metadata().is_ok_and(|m| m.len() > 0))
        .collect();
    if files.len() != 2 {
        return Err(format!("{} files of counts in {}, not 2", files.len(), counts.display()));
    }
    let profile = scratch.join(format!("{}.profdata", what.profile));
    let mut merging = Command::new(&merge);
    let merged = merging.args(["merge", "-o"]).arg(&profile).args(&files).status();
    match merged {
        Ok(status) if status.success() => {}
        Ok(status) => return Err(format!("{} merge: {status}", merge.display())),
        Err(e) => return Err(format!("{}: {e}", merge.display())),
    }
    eprintln!("pgo: building it with the profile ...");
    // cargo does not see a profile change in a dependency already built: all are built anew.
    let used = scratch.join("use");
    let _ = std::fs::remove_dir_all(&used);
    cargo_build(root, what, &used, &format!("-Cprofile-use={}", profile.display()))
}

/// `cargo build` of the binary with `flag` added to the environment's rustflags, into `dir`,
/// and where the binary is. Set as `CARGO_ENCODED_RUSTFLAGS`, so that a path with a space
/// stays one flag (and cargo, as with any rustflags in the environment, ignores those of
/// its config files).
fn cargo_build(root: &Path, what: &Build, dir: &Path, flag: &str) -> Result<PathBuf, String> {
    let mut flags: Vec<String> = match std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        Ok(encoded) => encoded.split('\x1f').map(String::from).collect(),
        Err(_) => std::env::var("RUSTFLAGS")
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect(),
    };
    flags.retain(|f| !f.is_empty());
    flags.push(flag.to_string());
    let mut build = cargo::cargo(root);
    build.args(["build", "--bin", "baremcp", "--profile", what.profile]);
    build.args(what.target.map(|t| ["--target", t]).iter().flatten());
    build.arg("--target-dir").arg(dir);
    build.env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f")).env_remove("RUSTFLAGS");
    cargo::executables(build, ["baremcp"]).map(|[binary]| binary)
}

/// The HTTP load run (both eras, event streams, a file watched, the answers a connection
/// gives alone) as `cargo bench --bench http_load -- --clients 16 --calls 500` runs it.
fn train_http(binary: &Path, file: &Path) -> Result<(), String> {
    let dir = load::Scratch::new("baremcp-pgo")?;
    let mut command = Command::new(binary);
    // Stopped with SIGTERM, it exits at once: no one is there to be told it is draining.
    command.args(["--drain-secs", "0"]).env("LLVM_PROFILE_FILE", file);
    let report = load::load_run(command, dir.path(), 16, 500)?;
    match report.streams_told {
        16 => Ok(()),
        n => Err(format!("{n} of 16 streams carried the change of the watched file")),
    }
}

/// A stdio session: initialize, then 5 000 `tools/call hello`, every reply checked.
fn train_stdio(binary: &Path, file: &Path) {
    let mut command = Command::new(binary);
    command.env("LLVM_PROFILE_FILE", file).env("RUST_LOG", "warn");
    let mut server = super::Server::spawn(command);
    server.initialize();
    for id in 1..=5_000 {
        server.send(&super::call(id));
        super::check(server.reply(), id);
    }
    server.finish();
}

/// `llvm-profdata` of the toolchain's own LLVM (rustup's `llvm-tools`), added when missing.
fn profdata() -> Result<PathBuf, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = |args: &[&str]| {
        let out = Command::new(&rustc).args(args).output();
        match out {
            Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into()),
            Ok(out) => Err(format!("{rustc} {}: {}", args.join(" "), out.status)),
            Err(e) => Err(format!("{rustc}: {e}")),
        }
    };
    let sysroot: String = output(&["--print", "sysroot"])?;
    let version = output(&["-vV"])?;
    let host = version.lines().find_map(|l| l.strip_prefix("host: "));
    let host = host.ok_or_else(|| format!("`{rustc} -vV` names no host"))?;
    let tool = Path::new(sysroot.trim()).join("lib/rustlib").join(host).join("bin/llvm-profdata");
    if !tool.exists() {
        eprintln!("pgo: adding rustup's llvm-tools, which has llvm-profdata ...");
        let added = Command::new("rustup").args(["component", "add", "llvm-tools"]).status();
        if !added.is_ok_and(|s| s.success()) {
            return Err("rustup could not add llvm-tools (llvm-profdata): add it by hand".into());
        }
    }
    tool.exists().then_some(tool).ok_or_else(|| "llvm-profdata is not in the toolchain".into())
}
