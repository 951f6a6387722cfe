//! The fuzzer's soak: `cargo bench --bench fuzz -- --seconds N [--seed S]
//! [--out DIR] [--target stdio|http]` builds the `baremcp` binary of the same profile, drives
//! it for N seconds — with mutated golden transcripts over stdio (`stdio`, the default; see
//! `engine.rs` for the targets, `judge.rs` for the invariants), or with hostile HTTP over
//! `--http` (`http`; see `http_engine.rs`) — prints messages (requests) per second and every
//! violation, writes each reproducer to DIR (default `target/fuzz/`), and exits 1 when
//! anything was found. `--target http --replay FILE` runs one HTTP reproducer again.
//! `cargo test` runs the same engines for a few seconds (`tests/it/fuzz.rs`,
//! `tests/it/http_fuzz.rs`).

// `cargo bench` builds a target without a harness under `--cfg test` but without `#[test]`
// functions, so the test modules' imports go unused here; `cargo test` runs those modules.
#![cfg_attr(test, allow(unused_imports))]

// The engine drives processes with unix facilities (process groups, rlimits, symlinks):
// elsewhere the soak says so and stops (see docs/install.md, Platforms).
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
    let (mut http, mut replay) = (false, None::<PathBuf>);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().unwrap_or_else(|| panic!("{name} needs a value"));
        match arg.as_str() {
            "--seconds" => {
                seconds = value("--seconds").parse().expect("--seconds needs a whole number")
            }
            "--seed" => seed = value("--seed").parse().expect("--seed needs a whole number"),
            "--out" => out = Some(PathBuf::from(value("--out"))),
            "--target" => match value("--target").as_str() {
                "stdio" => http = false,
                "http" => http = true,
                other => {
                    eprintln!("--target is stdio or http, not {other:?}");
                    return ExitCode::from(2);
                }
            },
            "--replay" => replay = Some(PathBuf::from(value("--replay"))),
            // `cargo bench` passes it to every bench target.
            "--bench" => {}
            other => {
                eprintln!(
                    "unknown argument {other:?}\nusage: fuzz [--seconds N] [--seed S] [--out DIR] [--target stdio|http] [--replay FILE]"
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
    if let Some(file) = replay {
        return replay_http(&config, &file);
    }
    eprintln!("fuzzing {} for {seconds} s with seed {seed}", config.bin.display());
    if http {
        return soak_http(&config, &out);
    }
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

/// The HTTP soak: counts, tolerated classes, reproducers.
#[cfg(unix)]
fn soak_http(config: &engine::Config, out: &std::path::Path) -> ExitCode {
    use engine::http_engine::{describe, fuzz_http, summary};
    let report = fuzz_http(config, &engine::http_cases::Kind::ALL);
    println!("http: {}", summary(&report));
    for (class, example) in &report.tolerated_examples {
        println!("\n--- tolerated {class} (pending fix), one example:\n{}", describe(example));
    }
    for (kind, (_, slowest)) in &report.slowest {
        let _ = std::fs::create_dir_all(out);
        let _ = std::fs::write(out.join(format!("http-slowest-{kind}.txt")), describe(slowest));
    }
    if !report.violations.is_empty() {
        println!("reproducers (each violation is also printed above as found): {}", out.display());
    }
    if report.violations.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// Runs one HTTP reproducer against a fresh server and says what it shows.
#[cfg(unix)]
fn replay_http(config: &engine::Config, file: &std::path::Path) -> ExitCode {
    use engine::http_engine::{run_case, setup};
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let case = match engine::http_repro::read_case(&text) {
        Ok(case) => case,
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let world = setup(config).expect("the fuzzer's scratch directory");
    let mut server = engine::http_server::Server::start(&world.launch).expect("the server starts");
    let verdict = run_case(&world, &mut server, &case);
    println!("{} request(s); tolerated: {:?}", verdict.requests, verdict.tolerated);
    match verdict.broken {
        Some((class, detail)) => {
            println!("violation {class}: {detail}");
            ExitCode::FAILURE
        }
        None => {
            println!("no violation");
            ExitCode::SUCCESS
        }
    }
}
