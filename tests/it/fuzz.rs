//! The fuzzer (`benches/fuzz/`) for a bounded budget: mutated golden transcripts
//! against the binary (built-in catalog, `--root`, `--manifest`), the proxy's filters, and
//! `check` against `--manifest`, checking what the README promises; and, in process, the
//! same mutations through `Server::serve`, including the `examples/everything` server,
//! whose handlers wait on the client. The soak is `cargo bench --bench fuzz`.

// Shared with `http_fuzz.rs`, which drives the HTTP target of the same engine.
#[path = "../../benches/fuzz/engine.rs"]
pub mod engine;

use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use engine::oracle::{Want, split_lines, want_line};
use engine::replies::{Out, check_out, judge_replies};
use engine::rng::Rng;
use engine::seeds::{Seed, load_seeds, serves_builtin};
use engine::session::mutate_session;

/// `FUZZ_SEED` picks another seed, to explore beyond the fixed one.
fn seed() -> u64 {
    std::env::var("FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20)
}

#[test]
fn mutated_sessions_against_the_binary_keep_every_promise() {
    let scratch = crate::scratch("fuzz");
    let config = engine::Config {
        bin: env!("CARGO_BIN_EXE_baremcp").into(),
        fixtures: crate::fixture(""),
        scratch: scratch.join("work"),
        seed: seed(),
        cases: 300,
        time: Duration::from_secs(6),
        progress: None,
        out: None,
    };
    let report = engine::fuzz(&config);
    eprintln!("fuzz (binary): {}", report.summary());
    if let Some(first) = report.violations.first() {
        let files = engine::report::write_reproducers(&report.violations, &scratch, config.seed)
            .unwrap_or_default();
        panic!(
            "{} violation(s); reproducers: {files:?}\nthe first:\n{}",
            report.violations.len(),
            first.describe()
        );
    }
    assert!(report.cases >= 30, "too few cases ran: {}", report.summary());
    for target in ["serve", "root", "proxy-calls", "proxy-lists", "manifest", "validate"] {
        assert!(
            report.per_target.contains_key(target),
            "no {target} case ran: {}",
            report.summary()
        );
    }
}

/// Serves `input` in process; a panic that escapes `serve` is a violation.
fn serve(server: &baremcp::Server, input: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut reader = input;
    match panic::catch_unwind(AssertUnwindSafe(|| server.serve(&mut reader, &mut out))) {
        Ok(Ok(())) => Ok(out),
        Ok(Err(e)) => Err(format!("serve failed: {e}")),
        Err(_) => Err("a panic escaped serve".into()),
    }
}

/// Ids named by `notifications/cancelled` lines: those requests may go unanswered.
fn cancelled(input: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(input);
    let mut ids = Vec::new();
    for line in text.lines().filter(|l| l.contains("notifications/cancelled")) {
        if let Some(at) = line.find("\"requestId\":") {
            let rest = &line[at + 12..];
            let end = rest.find([',', '}']).unwrap_or(rest.len());
            ids.push(rest[..end].trim().to_string());
        }
    }
    ids
}

#[test]
fn mutated_sessions_in_process_keep_every_promise() {
    let seeds = load_seeds(&crate::fixture(""));
    let builtin: Vec<&Seed> = seeds.iter().filter(|s| serves_builtin(s)).collect();
    let everything: Vec<&Seed> = seeds.iter().filter(|s| s.name.contains("everything/")).collect();
    let pool: Vec<Vec<u8>> = seeds.iter().flat_map(|s| s.chunks.iter().cloned()).collect();
    assert!(builtin.len() > 20 && !everything.is_empty(), "seeds not found");
    let mut rng = Rng::new(seed());
    let started = Instant::now();
    let (mut cases, mut messages) = (0u64, 0u64);
    let mut tolerated = std::collections::BTreeMap::<&str, u64>::new();
    while cases < 1500 && started.elapsed() < Duration::from_secs(5) {
        let limit = *rng.pick(&[4096usize, 1 << 16]);
        let waits = rng.one_in(3);
        let seed = if waits { *rng.pick(&everything) } else { *rng.pick(&builtin) };
        let args = engine::judge::with_limit(&seed.args, limit);
        let server = if waits {
            crate::everything::server(&args)
        } else {
            crate::transcripts::server_for(&args)
        };
        let input = mutate_session(&mut rng, &seed.chunks, &pool, limit).concat();
        let lines = split_lines(&input);
        cases += 1;
        messages += lines.len() as u64;
        let reproducer = || {
            format!(
                "args: {args:?}\ninput: {:?}",
                String::from_utf8_lossy(&input[..input.len().min(4000)])
            )
        };
        let out = serve(&server, &input).unwrap_or_else(|why| panic!("{why}\n{}", reproducer()));
        let outs: Vec<Out> = split_lines(&out)
            .iter()
            .map(|l| {
                check_out(l).unwrap_or_else(|why| {
                    panic!("{why}: {}\n{}", String::from_utf8_lossy(l), reproducer())
                })
            })
            .collect();
        if !waits
            && let Some(Out::ServerRequest(id, method)) =
                outs.iter().find(|o| matches!(o, Out::ServerRequest(..)))
        {
            panic!("the built-in server asked {method} ({id})\n{}", reproducer());
        }
        let wants: Vec<Want> = lines.iter().map(|l| want_line(l, limit)).collect();
        // The everything server's handlers wait on the client, and requests read during a
        // wait are answered after it: there, replies are counted per id, not ordered.
        let (verdict, classes) = judge_replies(&wants, &outs, !waits, &cancelled(&input));
        if let Err(why) = verdict {
            panic!(
                "{why}\n{}\noutput:\n{}",
                reproducer(),
                String::from_utf8_lossy(&out[..out.len().min(4000)])
            );
        }
        for class in classes {
            *tolerated.entry(class).or_default() += 1;
        }
    }
    eprintln!(
        "fuzz (in process): {cases} cases, {messages} messages in {:.1} s; tolerated: {tolerated:?}",
        started.elapsed().as_secs_f64()
    );
    assert!(cases >= 20, "too few cases ran: {cases}");
}
