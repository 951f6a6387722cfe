//! The HTTP fuzzer (`benches/fuzz/http_*.rs`) for a bounded budget: random and mutated
//! requests — heads, bodies, framing, pipelining, slow writers, closes mid-request, legacy
//! sessions and 2026-07-28 requests — against `baremcp --http`, every connection and the
//! process judged (see `http_engine.rs`). The loads (a busy loop, departed clients, floods)
//! take seconds each and run in the soak: `cargo bench --bench fuzz -- --target http`.

use std::time::Duration;

use crate::fuzz::engine;
use engine::http_cases::Kind;

/// `FUZZ_SEED` picks another seed, to explore beyond the fixed one.
fn seed() -> u64 {
    std::env::var("FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(25)
}

#[test]
fn hostile_http_keeps_every_promise() {
    let scratch = crate::scratch("http-fuzz");
    let config = engine::Config {
        bin: env!("CARGO_BIN_EXE_baremcp").into(),
        fixtures: crate::fixture(""),
        scratch: scratch.join("work"),
        seed: seed(),
        cases: 400,
        time: Duration::from_secs(5),
        progress: None,
        out: None,
    };
    let report = engine::http_engine::fuzz_http(&config, Kind::quick());
    let summary = engine::http_engine::summary(&report);
    eprintln!("http fuzz: {summary}");
    if let Some(first) = report.violations.first() {
        let mut files = Vec::new();
        for (n, v) in report.violations.iter().enumerate() {
            files.extend(engine::http_engine::write_reproducer(v, &scratch, config.seed, n));
        }
        panic!(
            "{} violation(s); reproducers: {files:?}\nthe first:\n{}",
            report.violations.len(),
            engine::http_engine::describe(first)
        );
    }
    assert!(report.cases >= 20, "too few cases ran: {summary}");
    for kind in ["pipelined", "mutated", "session"] {
        assert!(report.per_target.contains_key(kind), "no {kind} case ran: {summary}");
    }
}
