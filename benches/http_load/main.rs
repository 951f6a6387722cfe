//! The HTTP load run: `cargo bench --bench http_load` starts the release
//! `baremcp --http` serving a scratch `--root`, and drives it with 64 clients of 1 000 calls
//! each (legacy sessions and 2026-07-28 requests, one open stream each; `load.rs` says what
//! is checked), then reports calls per second, latency, the server's peak memory, and the
//! slow-tool check against a second server. `--clients N`, `--calls N`; `--quick` is 8 × 50.
//! Any wrong or missing reply fails the run (exit 1).

mod cargo;
mod client;
mod load;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use lexopt::prelude::*;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("http_load: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let (mut clients, mut calls) = (64, 1000);
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("clients") => clients = parser.value()?.parse()?,
            Long("calls") => calls = parser.value()?.parse()?,
            Long("quick") => (clients, calls) = (8, 50),
            // `cargo bench` passes it to every bench target.
            Long("bench") => {}
            _ => return Err(arg.unexpected().into()),
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let binary = cargo::release(&root)?;
    let dir = load::Scratch::new("baremcp-http-load")?;
    drive(&binary, dir.path(), clients, calls)
}

fn drive(
    binary: &std::path::Path,
    dir: &std::path::Path,
    clients: usize,
    calls: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let report = load::load_run(Command::new(binary), dir, clients, calls)?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let mib =
        |kib: Option<u64>| kib.map_or("-".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
    println!(
        "http load: {clients} clients ({} legacy sessions, {} 2026-07-28) x {calls} calls, one open stream each",
        clients.div_ceil(2),
        clients / 2
    );
    println!(
        "- {} tools/call replies checked, plus {} 202/400/404 answers, in {:.2} s: {:.0} calls/s",
        report.calls,
        report.others,
        report.elapsed.as_secs_f64(),
        report.per_second()
    );
    println!(
        "- latency per call: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(report.quantile(0.5)),
        ms(report.quantile(0.99)),
        ms(report.quantile(1.0))
    );
    println!(
        "- {} of {clients} streams carried the change of the watched file",
        report.streams_told
    );
    println!(
        "- server peak memory (VmHWM): {} with every stream open, {} after every call",
        mib(report.peak_before),
        mib(report.peak_after)
    );
    if report.streams_told != clients {
        return Err("a stream did not carry the change".into());
    }

    std::fs::write(dir.join("slow.json"), load::slow_manifest(2))?;
    let manifest = dir.join("slow.json");
    let (server, addr) =
        load::spawn(binary, &["--manifest", manifest.to_str().ok_or("not UTF-8")?])?;
    let slow = load::slow_tool(addr);
    load::stop(server)?;
    let slow = slow?;
    println!(
        "- while a tool slept {:.2} s on one connection, other connections got:",
        slow.slow.as_secs_f64()
    );
    for (what, took) in &slow.answers {
        println!("  - {what} in {:.2} ms", ms(*took));
    }
    Ok(())
}
