//! Building the project's programs with the cargo that runs the bench, and asking it where
//! it put them: a bench target's file is named with a hash, and a profile, target or target
//! folder of its own puts any elsewhere.

// Each program that includes this file uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The `cargo` running the bench, in `root`.
pub fn cargo(root: &Path) -> Command {
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo.current_dir(root);
    cargo
}

/// Runs `build` (a `cargo build`) and says where each executable in `names` is.
pub fn executables<const N: usize>(
    mut build: Command,
    names: [&str; N],
) -> Result<[PathBuf; N], String> {
    build.args(["--quiet", "--message-format=json-render-diagnostics"]);
    let built = build.stderr(Stdio::inherit()).output().map_err(|e| format!("cargo: {e}"))?;
    if !built.status.success() {
        return Err(format!("cargo build failed: {}", built.status));
    }
    let stdout = String::from_utf8_lossy(&built.stdout);
    let found = names.map(|name| {
        stdout.lines().find_map(|line| {
            let message: serde_json::Value = serde_json::from_str(line).ok()?;
            let path = message["executable"].as_str().filter(|_| message["target"]["name"] == name);
            path.map(PathBuf::from)
        })
    });
    match names.iter().zip(&found).find(|(_, path)| path.is_none()) {
        Some((name, _)) => Err(format!("cargo built no executable named {name}")),
        None => Ok(found.map(Option::unwrap)),
    }
}

/// `cargo build --release` of the `baremcp` binary, and where it is.
pub fn release(root: &Path) -> Result<PathBuf, String> {
    let mut build = cargo(root);
    build.args(["build", "--release", "--bin", "baremcp"]);
    executables(build, ["baremcp"]).map(|[binary]| binary)
}
