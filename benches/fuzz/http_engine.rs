//! The HTTP fuzzer's run, shared by the soak (`--target http`) and the bounded run in
//! `cargo test` (`tests/it/http_fuzz.rs`): one `baremcp --http` kept across cases, each case
//! driven and judged — every connection (`http_judge.rs`), then the process: alive, no panic
//! on stderr, a sentinel request answered, peak memory within the bound, no CPU burnt while
//! descriptors run out — shrunk when it fails, and written as a reproducer.
//!
//! Inputs are deterministic for a seed: `http_gen.rs` and `http_mutate.rs` make requests,
//! `http_cases.rs` connections and cases, `http_drive.rs` runs them, `http_model.rs`,
//! `http_expect.rs` and `http_reply.rs` are what the judge reads them with, `http_server.rs`
//! the process, `http_repro.rs` the reproducers.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Config;
use super::http_cases::{Case, Kind, Makings, SLOW_SECS, Script, Step, make_case};
use super::http_drive::drive;
use super::http_gen::{Bodies, HOSTILE_TEMPLATES, SESSION_SLOT, bodies};
use super::http_judge::{PENDING, judge_conn, pending};
use super::http_repro::write_case;
use super::http_server::{Launch, Server};
use super::report::{Report, Violation, write_pair};
use super::rng::Rng;

/// The largest body the fuzzed server takes (`--max-message-bytes`).
pub const MAX_BODY: usize = 1 << 20;
/// `--request-timeout-secs`.
const REQUEST_TIMEOUT_SECS: u64 = 3;
/// Peak memory may reach this plus [`PER_CONNECTION`] for each connection open at once.
const BASE_KIB: u64 = 24 << 10;
/// What one connection may make the server hold: its request as read and as the message
/// handed to the loop, up to the body limit each.
const PER_CONNECTION: u64 = 2 * MAX_BODY as u64 / 1024;

/// What a run sets up once.
pub struct HttpWorld {
    pub bodies: Bodies,
    /// The server kept across cases.
    pub launch: Launch,
    /// A server with a high connection cap, started for each case that runs its descriptors
    /// out (under the case's limit).
    pub scarce: Launch,
}

/// The server's flags: a root to read, a manifest with a slow tool (it keeps the loop busy)
/// and a quick one, templates hostile URIs are read against, a small body limit, short
/// timeouts, a connection cap, RFC 9728 metadata.
pub fn setup(config: &Config) -> std::io::Result<HttpWorld> {
    std::fs::create_dir_all(&config.scratch)?;
    let manifest = config.scratch.join("http-manifest.json");
    let slow = format!(
        r#"{{"server":{{"name":"http-fuzz","version":"1.0.0"}},"tools":[{{"name":"fuzz_slow","description":"Sleeps","run":{{"argv":["sleep","{SLOW_SECS}"],"timeoutMs":60000}}}},{{"name":"hello","description":"Greets","inputSchema":{{"type":"object","properties":{{"name":{{"type":"string"}}}}}},"run":{{"argv":["printf","Hello, %s!","{{name}}"]}}}}],"resourceTemplates":{HOSTILE_TEMPLATES}}}"#
    );
    std::fs::write(&manifest, slow)?;
    let root = std::fs::canonicalize(config.fixtures.join("tree"))?;
    let args = |connections: &str| -> Vec<String> {
        [
            "--root",
            &root.to_string_lossy(),
            "--manifest",
            &manifest.to_string_lossy(),
            "--max-message-bytes",
            &MAX_BODY.to_string(),
            "--request-timeout-secs",
            &REQUEST_TIMEOUT_SECS.to_string(),
            "--idle-timeout-secs",
            "5",
            "--max-connections",
            connections,
            "--resource-metadata-url",
            "http://127.0.0.1/.well-known/oauth-protected-resource",
            "--authorization-server",
            "http://127.0.0.1/",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    Ok(HttpWorld {
        bodies: bodies(&config.fixtures),
        launch: Launch { bin: config.bin.clone(), args: args("32"), files: None },
        scarce: Launch { bin: config.bin.clone(), args: args("512"), files: None },
    })
}

/// What one case came to.
#[derive(Debug, Default)]
pub struct Verdict {
    pub requests: u64,
    /// The first broken promise: class and detail.
    pub broken: Option<(String, String)>,
    pub tolerated: Vec<&'static str>,
    /// The server must be started again (it died or stopped answering).
    pub restart: bool,
}

/// Runs the HTTP fuzzer on cases of `kinds` until its budget is spent.
pub fn fuzz_http(config: &Config, kinds: &[Kind]) -> Report {
    let started = Instant::now();
    let mut report = Report::default();
    let world = match setup(config) {
        Ok(world) => world,
        Err(e) => return failed_setup(report, e.to_string()),
    };
    let mut server = match Server::start(&world.launch) {
        Ok(server) => server,
        Err(e) => return failed_setup(report, e),
    };
    let makings = Makings {
        bodies: &world.bodies,
        max_body: MAX_BODY,
        request_timeout_ms: REQUEST_TIMEOUT_SECS * 1000,
    };
    let mut rng = Rng::new(config.seed);
    let mut last_progress = Instant::now();
    while report.cases < config.cases && started.elapsed() < config.time {
        let case_seed = rng.next();
        let mut case_rng = Rng::new(case_seed);
        let kind = Kind::draw(&mut case_rng, kinds);
        let case = make_case(&mut case_rng, kind, &makings);
        let case_started = Instant::now();
        let verdict = run_case(&world, &mut server, &case);
        count(&mut report, &case, &verdict, case_started.elapsed(), &world);
        if verdict.restart {
            server = match Server::start(&world.launch) {
                Ok(server) => server,
                Err(e) => return failed_setup(report, e),
            };
        }
        if let Some((class, detail)) = verdict.broken {
            let (case, detail) = minimize(&world, &mut server, case, &class, detail);
            let v = violation(&world, &case, &class, &format!("{detail} (case seed {case_seed})"));
            report.keep(config, v, describe, write_reproducer);
        }
        report.tick(config, started, &mut last_progress, "requests");
    }
    report.elapsed = started.elapsed();
    report
}

/// The counts in a few lines: requests and cases per second, then per kind, then what was
/// tolerated and why.
pub fn summary(report: &Report) -> String {
    report.summary_of("requests", PENDING)
}

fn failed_setup(mut report: Report, why: String) -> Report {
    report.violations.push(Violation {
        target: "http".into(),
        class: "setup".into(),
        detail: why,
        args: Vec::new(),
        input: Vec::new(),
    });
    report
}

fn count(report: &mut Report, case: &Case, verdict: &Verdict, took: Duration, world: &HttpWorld) {
    let kind = case.kind.name();
    *report.time_per_target.entry(kind).or_default() += took;
    if report.slowest.get(kind).is_none_or(|(t, _)| *t < took) {
        let detail = format!("took {:.2} s", took.as_secs_f64());
        report.slowest.insert(kind, (took, violation(world, case, "slowest", &detail)));
    }
    report.cases += 1;
    report.messages += verdict.requests;
    *report.per_target.entry(kind).or_default() += 1;
    for &class in &verdict.tolerated {
        *report.tolerated.entry(class.to_string()).or_default() += 1;
        if !report.tolerated_examples.contains_key(class) {
            let v = violation(world, case, class, "tolerated: the class is pending");
            report.tolerated_examples.insert(class.to_string(), v);
        }
    }
}

/// A case's reproducer as a violation: the script is its input.
fn violation(world: &HttpWorld, case: &Case, class: &str, detail: &str) -> Violation {
    let launch = if case.files.is_some() { &world.scarce } else { &world.launch };
    let mut args = launch.args.clone();
    if let Some(files) = case.files {
        args.push(format!("(under ulimit -n {files})"));
    }
    Violation {
        target: "http".into(),
        class: class.into(),
        detail: detail.into(),
        args,
        input: write_case(case).into_bytes(),
    }
}

/// A reproducer as text: what broke, the server's flags, and the script.
pub fn describe(v: &Violation) -> String {
    format!(
        "# class: {}\n# detail: {}\n# server: baremcp --http 127.0.0.1:0 {}\n# replay: cargo bench --bench fuzz -- --target http --replay FILE\n{}",
        v.class,
        v.detail.replace('\n', "\n#   "),
        v.args.join(" "),
        String::from_utf8_lossy(&v.input)
    )
}

/// Writes `http-violation-SEED-N-CLASS.txt` (the script, replayable) and `.bin` (the first
/// connection's bytes, the session id left as its placeholder); returns the `.txt` path.
pub fn write_reproducer(
    v: &Violation,
    dir: &Path,
    seed: u64,
    n: usize,
) -> std::io::Result<PathBuf> {
    let case = super::http_repro::read_case(&String::from_utf8_lossy(&v.input));
    let first = case.ok().and_then(|c| c.scripts.first().map(Script::bytes)).unwrap_or_default();
    write_pair(dir, &format!("http-violation-{seed}-{n}-{}", v.class), &describe(v), &first)
}

/// The case with the session's id in place of its placeholder (found across writes too).
fn with_session(case: &Case, id: &str) -> Vec<Script> {
    let slot = SESSION_SLOT.as_bytes();
    let mut scripts = case.scripts.clone();
    for script in &mut scripts {
        let mut stream = script.bytes();
        let mut at = 0;
        while let Some(found) = stream[at..].windows(slot.len()).position(|w| w == slot) {
            stream[at + found..at + found + slot.len()].copy_from_slice(id.as_bytes());
            at += found + slot.len();
        }
        let mut rest = stream.as_slice();
        for step in &mut script.steps {
            if let Step::Write(bytes) = step {
                let (now, later) = rest.split_at(bytes.len());
                *bytes = now.to_vec();
                rest = later;
            }
        }
    }
    scripts
}

/// Runs a case on `server` (or, for fd-flood, a server of its own) and judges it.
pub fn run_case(world: &HttpWorld, server: &mut Server, case: &Case) -> Verdict {
    if let Some(files) = case.files {
        let scarce = Launch { files: Some(files), ..world.scarce.clone() };
        return match Server::start(&scarce) {
            Ok(mut scarce) => judge_case(&mut scarce, case),
            Err(e) => Verdict { broken: Some(("setup".into(), e)), ..Verdict::default() },
        };
    }
    judge_case(server, case)
}

fn judge_case(server: &mut Server, case: &Case) -> Verdict {
    let mut verdict = Verdict::default();
    let scripts = match &case.session {
        Some(version) => match server.open_session(version) {
            Ok(id)
                if id.len() == SESSION_SLOT.len() && id.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                with_session(case, &id)
            }
            Ok(id) => {
                verdict.broken =
                    Some(("session".into(), format!("a session id not 128 bits in hex: {id:?}")));
                return verdict;
            }
            Err(why) => {
                verdict.broken = Some(("session".into(), why));
                verdict.restart = server.alive().is_err();
                return verdict;
            }
        },
        None => case.scripts.clone(),
    };
    server.reset_peak();
    let (cpu_before, wall) = (server.cpu_ticks(), Instant::now());
    let patience = Duration::from_secs(if case.kind.at_capacity() { 12 } else { 6 });
    let runs = drive(server.addr, &scripts, MAX_BODY, pending("head-body"), patience);
    let cpu = server.cpu_ticks().zip(cpu_before).map(|(a, b)| a.saturating_sub(b));
    let wall = wall.elapsed();
    if std::env::var_os("HTTP_FUZZ_DEBUG").is_some() {
        show_runs(&runs, wall, cpu);
    }
    let mut conn_broken = None;
    for (n, run) in runs.iter().enumerate() {
        let found = judge_conn(case, n, run, MAX_BODY);
        verdict.requests += found.requests as u64;
        verdict.tolerated.extend(found.tolerated);
        if conn_broken.is_none() {
            conn_broken = found.broken.map(|(c, d)| (c, format!("connection {}: {d}", n + 1)));
        }
    }
    verdict.tolerated.sort_unstable();
    verdict.tolerated.dedup();
    verdict.broken = process_failure(server, case, &mut verdict, cpu, wall).or(conn_broken);
    verdict
}

/// What each connection did (`HTTP_FUZZ_DEBUG`, for `--replay`): how it ended, what it
/// sent and what came back.
fn show_runs(runs: &[super::http_drive::ConnRun], wall: Duration, cpu_ticks: Option<u64>) {
    eprintln!("the connections took {wall:?} and {cpu_ticks:?} ticks of the server's CPU");
    for (n, run) in runs.iter().enumerate() {
        eprintln!(
            "connection {}: {:?}, {} bytes sent, half-closed {}, write error {:?}; received:\n{}",
            n + 1,
            run.end,
            run.sent.len(),
            run.half_closed,
            run.write_error,
            String::from_utf8_lossy(&run.received[..run.received.len().min(3000)])
        );
    }
}

/// The process after a case: alive, no panic, answering, within its memory bound, and not
/// burning CPU while descriptors ran out.
fn process_failure(
    server: &mut Server,
    case: &Case,
    verdict: &mut Verdict,
    cpu_ticks: Option<u64>,
    wall: Duration,
) -> Option<(String, String)> {
    if let Err(why) = server.alive() {
        verdict.restart = true;
        return Some(("died".into(), format!("{why}\n{}", server.log_tail())));
    }
    if let Some(panic) = server.panic_since() {
        return Some(("panic".into(), panic));
    }
    let patience = Duration::from_secs(SLOW_SECS * 2 + 10);
    if let Err(why) = server.sentinel(patience) {
        verdict.restart = true;
        return Some(("no-answer".into(), format!("after the case: {why}")));
    }
    let bound = BASE_KIB + PER_CONNECTION * case.open_at_once as u64;
    if let Some(peak) = server.peak_kib().filter(|&p| p > bound) {
        let detail = format!(
            "peak memory {peak} KiB over {bound} KiB ({} MiB + {} MiB for each of {} connection(s) open at once)",
            BASE_KIB >> 10,
            PER_CONNECTION >> 10,
            case.open_at_once
        );
        // Memory the allocator keeps stays resident: start afresh so that the next cases
        // are measured alone.
        verdict.restart = true;
        if case.kind == Kind::Departed && pending("memory-departed") {
            verdict.tolerated.push("memory-departed");
        } else {
            return Some(("memory".into(), detail));
        }
    }
    // Clock ticks are hundredths of a second on Linux.
    let busy = cpu_ticks.map_or(0.0, |t| t as f64 / 100.0);
    if case.files.is_some() && busy > 0.6 * wall.as_secs_f64() {
        let detail =
            format!("{busy:.2} s of CPU in {:.2} s while descriptors ran out", wall.as_secs_f64());
        if pending("accept-spin") {
            verdict.tolerated.push("accept-spin");
        } else {
            return Some(("spin".into(), detail));
        }
    }
    None
}

/// Shrinks a failing case while the same class still shows: connections dropped, then each
/// connection's planned requests, then its writes joined into one. The loads (busy,
/// departed, floods) are kept as they are: their shape is the finding.
fn minimize(
    world: &HttpWorld,
    server: &mut Server,
    case: Case,
    class: &str,
    detail: String,
) -> (Case, String) {
    if case.kind.at_capacity() || matches!(class, "no-answer" | "memory" | "setup") {
        return (case, detail);
    }
    let started = Instant::now();
    let mut tries = 0;
    let mut best = (case, detail);
    let mut progress = true;
    while progress && tries < 40 && started.elapsed() < Duration::from_secs(30) {
        progress = false;
        for candidate in smaller(&best.0) {
            if tries >= 40 || started.elapsed() >= Duration::from_secs(30) {
                break;
            }
            tries += 1;
            let verdict = run_case(world, server, &candidate);
            if verdict.restart
                && let Ok(fresh) = Server::start(&world.launch)
            {
                *server = fresh;
            }
            if let Some((_, detail)) = verdict.broken.filter(|(c, _)| c == class) {
                best = (candidate, format!("{detail} (minimized)"));
                progress = true;
                break;
            }
        }
    }
    best
}

/// Cases one step smaller than `case`.
fn smaller(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    if case.scripts.len() > 1 {
        for i in 0..case.scripts.len() {
            let mut fewer = case.clone();
            fewer.scripts.remove(i);
            out.push(fewer);
        }
    }
    for (i, script) in case.scripts.iter().enumerate() {
        let writes = script.steps.iter().filter(|s| matches!(s, Step::Write(_))).count();
        if script.planned.len() > 1 {
            for drop in 0..script.planned.len() {
                let mut fewer = case.clone();
                fewer.scripts[i] = without_request(script, drop);
                out.push(fewer);
            }
        }
        if writes > 1 || script.steps.iter().any(|s| matches!(s, Step::Pause(_) | Step::Await(_))) {
            let mut joined = case.clone();
            let mut steps = vec![Step::Write(script.bytes())];
            steps.extend(
                script.steps.iter().filter(|s| matches!(s, Step::HalfClose | Step::Close)).cloned(),
            );
            joined.scripts[i].steps = steps;
            out.push(joined);
        }
    }
    out
}

/// `script` without its `drop`-th planned request, written in one go.
fn without_request(script: &Script, drop: usize) -> Script {
    let bytes = script.bytes();
    let cut = &script.planned[drop];
    let (start, end) = (cut.start.min(bytes.len()), cut.end.min(bytes.len()));
    let mut kept = bytes[..start].to_vec();
    kept.extend_from_slice(&bytes[end..]);
    let removed = end - start;
    let planned = script
        .planned
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != drop)
        .map(|(_, p)| {
            let mut p = p.clone();
            if p.start >= end {
                p.start -= removed;
                p.end -= removed;
            }
            p
        })
        .collect();
    let mut steps = vec![Step::Write(kept)];
    steps.extend(
        script.steps.iter().filter(|s| matches!(s, Step::HalfClose | Step::Close)).cloned(),
    );
    Script { at_ms: script.at_ms, steps, planned }
}
