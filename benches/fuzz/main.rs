//! The fuzzer's soak: `cargo bench --bench fuzz -- --seconds N [--seed S]
//! [--out DIR]` builds the `baremcp` binary of the same profile, drives it with mutated
//! golden transcripts for N seconds (see `engine.rs` for the targets, `judge.rs` for the
//! invariants), prints messages per second and every violation, writes each reproducer to DIR
//! (default `target/fuzz/`), and exits 1 when anything was found. `cargo test` runs the same
//! engine for a few seconds (`tests/it/fuzz.rs`).

// The engine drives processes with unix facilities (process groups, rlimits, symlinks):
// elsewhere the soak says so and stops (see README, Platforms).
#[cfg(unix)]
mod engine;

#[cfg(unix)]
use std::path::PathBuf;
#[cfg(unix)]
use std::process::Command;
use std::process::ExitCode;
#[cfg(unix)]
use std::time::Duration;

#[cfg(not(unix))]
fn main() -> ExitCode {
    eprintln!("the fuzzer needs a unix system");
    ExitCode::from(2)
}

#[cfg(unix)]
fn main() -> ExitCode {
    let (mut seconds, mut seed, mut out) = (60u64, 1u64, None::<PathBuf>);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().unwrap_or_else(|| panic!("{name} needs a value"));
        match arg.as_str() {
            "--seconds" => {
                seconds = value("--seconds").parse().expect("--seconds needs a whole number")
            }
            "--seed" => seed = value("--seed").parse().expect("--seed needs a whole number"),
            "--out" => out = Some(PathBuf::from(value("--out"))),
            // `cargo bench` passes it to every bench target.
            "--bench" => {}
            other => {
                eprintln!(
                    "unknown argument {other:?}\nusage: fuzz [--seconds N] [--seed S] [--out DIR]"
                );
                return ExitCode::from(2);
            }
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The binary in this program's own profile directory: target/<profile>/baremcp.
    let exe = std::env::current_exe().expect("the soak's own path");
    let profile_dir =
        exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps/fuzz-HASH");
    let release = profile_dir.file_name().is_some_and(|p| p == "release");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "--quiet", "--bin", "baremcp"]).current_dir(&root);
    if release {
        build.arg("--release");
    }
    assert!(build.status().expect("cargo build").success(), "building baremcp failed");
    let out = out.unwrap_or_else(|| profile_dir.parent().unwrap_or(profile_dir).join("fuzz"));
    let config = engine::Config {
        bin: profile_dir.join("baremcp"),
        fixtures: root.join("fixtures"),
        scratch: out.join("scratch"),
        seed,
        cases: u64::MAX,
        time: Duration::from_secs(seconds),
        progress: Some(Duration::from_secs(30)),
        out: Some(out.clone()),
    };
    eprintln!("fuzzing {} for {seconds} s with seed {seed}", config.bin.display());
    let report = engine::fuzz(&config);
    println!("{}", report.summary());
    for (class, example) in &report.tolerated_examples {
        println!("\n--- tolerated {class} (pending fix), one example:\n{}", example.describe());
    }
    for (target, (_, slowest)) in &report.slowest {
        let _ = std::fs::create_dir_all(&out);
        let _ = std::fs::write(out.join(format!("slowest-{target}.txt")), slowest.describe());
    }
    if !report.violations.is_empty() {
        println!("reproducers (each violation is also printed above as found): {}", out.display());
    }
    if report.violations.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
