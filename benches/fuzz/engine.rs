//! The fuzzer's engine, shared by the soak (`benches/fuzz/main.rs`) and the bounded run in
//! `cargo test` (`tests/it/fuzz.rs`): the targets it drives and the loop that drives them —
//! the server binary (built-in catalog, `--root`, `--manifest`), `baremcp proxy` with its tool
//! filters (differentially: what the filter decided against what the upstream saw), and
//! `baremcp check` against `--manifest` on mutated manifests.
//!
//! Everything is deterministic for a given seed: the same seed makes the same inputs. A case
//! goes seeds → mutations → a case → a process run → the judge, one file each:
//!
//! - `rng.rs`: the PRNG; `seeds.rs`: the golden transcripts' client lines;
//! - `spans.rs`, `mutate.rs`, `session.rs`: mutations of a line and of a session;
//! - `oracle.rs`: what a client may expect for each line; `replies.rs`: what the server wrote,
//!   checked and matched against that;
//! - `world.rs`: what a run sets up once; `cases.rs`: each target's input and flags;
//! - `process.rs`: running a process; `judge.rs`, `proxy.rs`: the promises held against it;
//! - `report.rs`: violations, reproducers and counts; `json.rs`: the fuzzer's JSON reader.
//!
//! The HTTP target (`--target http`) has its own loop, `http_engine.rs`, over the same seeds,
//! PRNG, line mutations, oracle and report, with its own `http_*.rs` steps.

#![allow(dead_code)] // the soak and the test each use their own part

// Each file is named by its path: the soak loads this file as `mod engine`, where a plain
// `mod` would look in `engine/`, and the tests load it by `#[path]`, where it would not. The
// modules are public for those tests; nothing outside the fuzzer sees them.
#[path = "cases.rs"]
pub mod cases;
#[path = "http_cases.rs"]
pub mod http_cases;
#[path = "http_drive.rs"]
pub mod http_drive;
#[path = "http_engine.rs"]
pub mod http_engine;
#[path = "http_expect.rs"]
pub mod http_expect;
#[path = "http_gen.rs"]
pub mod http_gen;
#[path = "http_host.rs"]
pub mod http_host;
#[path = "http_judge.rs"]
pub mod http_judge;
#[path = "http_model.rs"]
pub mod http_model;
#[path = "http_mutate.rs"]
pub mod http_mutate;
#[path = "http_reply.rs"]
pub mod http_reply;
#[path = "http_repro.rs"]
pub mod http_repro;
#[path = "http_server.rs"]
pub mod http_server;
#[path = "json.rs"]
pub mod json;
#[path = "judge.rs"]
pub mod judge;
#[path = "mutate.rs"]
pub mod mutate;
#[path = "oracle.rs"]
pub mod oracle;
#[path = "process.rs"]
pub mod process;
#[path = "proxy.rs"]
pub mod proxy;
#[path = "replies.rs"]
pub mod replies;
#[path = "report.rs"]
pub mod report;
#[path = "rng.rs"]
pub mod rng;
#[path = "seeds.rs"]
pub mod seeds;
#[path = "session.rs"]
pub mod session;
#[path = "spans.rs"]
pub mod spans;
#[path = "world.rs"]
pub mod world;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cases::{Case, make_case};
use judge::{Outcome, judge};
use report::{Report, Violation, write_reproducer};
use rng::Rng;
use world::{World, setup};

/// Where the fuzzer runs and for how long.
pub struct Config {
    /// The `baremcp` binary.
    pub bin: PathBuf,
    /// The repository's `fixtures/`.
    pub fixtures: PathBuf,
    /// A directory the fuzzer may fill (roots, manifests, logs).
    pub scratch: PathBuf,
    pub seed: u64,
    /// Stop after this many cases...
    pub cases: u64,
    /// ...or this much time, whichever comes first.
    pub time: Duration,
    /// Print progress every this often (`None`: quiet).
    pub progress: Option<Duration>,
    /// Write each violation's reproducer here as soon as it is found.
    pub out: Option<PathBuf>,
}

/// What a case drives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// The binary with a seed's own flags (catalog, `--root` fixtures, `--manifest`).
    Serve,
    /// `--root` over a directory with things that must never be served.
    Root,
    /// `proxy --allow-tools`: mutated calls; the upstream logs what it receives.
    ProxyCalls,
    /// `proxy --deny-tools`: an upstream answering `tools/list` with mutated replies.
    ProxyLists,
    /// Mutated manifests: `check` and `--manifest` must agree and never crash.
    Manifest,
    /// `validate --jsonl`: the JSON Schema Test Suite's schemas and instances, mutated, and
    /// instances that make validation work hard.
    Validate,
}

impl Target {
    /// The target of the next case: the server most often, each other target in proportion.
    fn draw(rng: &mut Rng) -> Target {
        match rng.below(20) {
            0..=10 => Target::Serve,
            11..=13 => Target::Root,
            14..=15 => Target::ProxyCalls,
            16..=17 => Target::ProxyLists,
            18 => Target::Manifest,
            _ => Target::Validate,
        }
    }

    /// The target's name in reports and reproducers' file names.
    pub fn name(self) -> &'static str {
        match self {
            Target::Serve => "serve",
            Target::Root => "root",
            Target::ProxyCalls => "proxy-calls",
            Target::ProxyLists => "proxy-lists",
            Target::Manifest => "manifest",
            Target::Validate => "validate",
        }
    }
}

/// Runs the fuzzer until its budget is spent.
pub fn fuzz(config: &Config) -> Report {
    let started = Instant::now();
    let mut report = Report::default();
    let world = match setup(config) {
        Ok(world) => world,
        Err(e) => {
            report.violations.push(Violation {
                target: "setup".into(),
                class: "setup".into(),
                detail: e.to_string(),
                args: Vec::new(),
                input: Vec::new(),
            });
            return report;
        }
    };
    let mut rng = Rng::new(config.seed);
    let mut last_progress = Instant::now();
    while report.cases < config.cases && started.elapsed() < config.time {
        let case_seed = rng.next();
        let mut case_rng = Rng::new(case_seed);
        let target = Target::draw(&mut rng);
        let case_started = Instant::now();
        let case = make_case(&world, target, &mut case_rng);
        let outcome = judge(&world, target, &case);
        count(&mut report, target, &case, &outcome, case_started.elapsed());
        if let Some(v) = outcome.violation {
            let v = minimize(&world, target, v);
            report.keep(config, v, Violation::describe, write_reproducer);
        }
        report.tick(config, started, &mut last_progress, "messages");
    }
    report.elapsed = started.elapsed();
    report
}

/// Counts a case that took `took` in the report: per target, its time and whether it is the
/// slowest yet, its messages, and the pending classes it was tolerated for.
fn count(report: &mut Report, target: Target, case: &Case, outcome: &Outcome, took: Duration) {
    *report.time_per_target.entry(target.name()).or_default() += took;
    if report.slowest.get(target.name()).is_none_or(|(t, _)| *t < took) {
        let v = Violation {
            target: target.name().into(),
            class: "slowest".into(),
            detail: format!("took {:.2} s", took.as_secs_f64()),
            args: case.args.clone(),
            input: case.input.clone(),
        };
        report.slowest.insert(target.name(), (took, v));
    }
    report.cases += 1;
    report.messages += outcome.messages;
    *report.per_target.entry(target.name()).or_default() += 1;
    for &class in &outcome.tolerated {
        *report.tolerated.entry(class.to_string()).or_default() += 1;
        if let Some(v) = outcome.strict_failure.as_ref().filter(|v| v.class == class) {
            report.tolerated_examples.entry(class.to_string()).or_insert_with(|| v.clone());
        }
    }
}

/// Shrinks a violation's input: whole lines first, then each line's bytes from the end,
/// while the same class still shows.
fn minimize(world: &World, target: Target, violation: Violation) -> Violation {
    // A hang costs its whole deadline per try: keep it as found.
    if !matches!(target, Target::Serve | Target::Root | Target::ProxyCalls)
        || violation.class == "hang"
    {
        return violation;
    }
    let started = Instant::now();
    let args: Vec<String> = {
        // Drop the flags `judge` adds back.
        let mut args = violation.args.clone();
        if let Some(at) = args.iter().position(|a| a == "--max-message-bytes")
            && target != Target::ProxyCalls
        {
            args.drain(at..at + 2);
        }
        args
    };
    let limit = violation
        .args
        .iter()
        .position(|a| a == "--max-message-bytes")
        .and_then(|at| violation.args.get(at + 1)?.parse().ok())
        .unwrap_or(1 << 20);
    let case_args = if target == Target::ProxyCalls {
        vec!["--allow-tools".to_string(), "echo".to_string()]
    } else {
        args
    };
    let fails = |input: &[u8]| {
        let case = Case {
            args: case_args.clone(),
            input: input.to_vec(),
            limit,
            sentinel: false,
            replies: Vec::new(),
        };
        let outcome = judge(world, target, &case);
        outcome.violation.is_some_and(|v| v.class == violation.class)
    };
    let mut lines: Vec<Vec<u8>> =
        violation.input.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    if !fails(&lines.concat()) {
        // Needs the sentinel (memory) or is flaky: keep it whole.
        return violation;
    }
    let mut tries = 0;
    let mut chunk = lines.len().div_ceil(2).max(1);
    let budget = |tries: u32| tries < 60 && started.elapsed() < Duration::from_secs(30);
    while chunk >= 1 && budget(tries) {
        let mut at = 0;
        while at < lines.len() && budget(tries) {
            let mut fewer = lines.clone();
            fewer.drain(at..(at + chunk).min(lines.len()));
            tries += 1;
            if !fewer.is_empty() && fails(&fewer.concat()) {
                lines = fewer;
            } else {
                at += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    Violation {
        input: lines.concat(),
        detail: format!("{} (minimized)", violation.detail),
        ..violation
    }
}
