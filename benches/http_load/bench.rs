//! The `--http` mode of `benches/bench.rs`: keep-alive `tools/call hello` requests per second and
//! their p50/p99 latency with 1 and 16 concurrent clients, for the release `baremcp --http`
//! (2026-07-28 stateless requests, and calls in legacy sessions) against `benches/floor_http.rs`
//! in the same run, rounds interleaved; every reply is checked for its id and greeting.

use std::path::Path;
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::client::Conn;
use super::load;

/// What a client sends: 2026-07-28 requests, legacy ones in a session, or the floor's.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Modern,
    Legacy,
    Floor,
}

const KINDS: [(Kind, &str); 3] = [
    (Kind::Modern, "baremcp, 2026-07-28"),
    (Kind::Legacy, "baremcp, legacy session"),
    (Kind::Floor, "floor"),
];

/// One measure: calls per second and every call's latency.
struct Sample {
    rate: f64,
    latencies: Vec<Duration>,
}

/// `clients` threads, each on its own keep-alive connection, `calls` calls each.
fn measure(addr: std::net::SocketAddr, kind: Kind, clients: usize, calls: u64) -> Sample {
    let go = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let go = go.clone();
            std::thread::spawn(move || {
                let mut conn = Conn::open(addr, "/mcp").expect("connect");
                let session = (kind == Kind::Legacy).then(|| {
                    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
                    let reply = conn.post(&init.to_string(), &[]).expect("initialize");
                    reply.header("mcp-session-id").expect("a session id").to_string()
                });
                let headers = match &session {
                    Some(id) => vec![("Mcp-Session-Id", id.as_str()), ("MCP-Protocol-Version", "2025-11-25")],
                    None => load::modern_headers("tools/call", Some("hello")),
                };
                let requests: Vec<String> = (1..=calls).map(|id| load::hello(id, "World", kind != Kind::Legacy)).collect();
                while !go.load(Ordering::Relaxed) {
                    std::thread::yield_now();
                }
                let mut latencies = Vec::with_capacity(calls as usize);
                for (i, request) in requests.iter().enumerate() {
                    let started = Instant::now();
                    let reply = conn.post(request, &headers).expect("a reply");
                    latencies.push(started.elapsed());
                    let id = i as u64 + 1;
                    assert!(reply.status == 200 && load::greets(&reply.message(), id, "World"), "reply to {id}: {reply:?}");
                }
                latencies
            })
        })
        .collect();
    // Connections open (and sessions made) before the clock starts.
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    go.store(true, Ordering::Relaxed);
    let latencies: Vec<Duration> =
        threads.into_iter().flat_map(|t| t.join().expect("a client panicked")).collect();
    let rate = latencies.len() as f64 / started.elapsed().as_secs_f64();
    Sample { rate, latencies }
}

fn quantile(sorted: &[Duration], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn start(binary: &Path) -> (Child, std::net::SocketAddr) {
    load::spawn(binary, &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs the HTTP bench and prints its table.
pub fn run(ours: &Path, floor: &Path, quick: bool) {
    let rounds = if quick { 1 } else { 5 };
    let levels: [(usize, u64); 2] =
        if quick { [(1, 1_000), (16, 100)] } else { [(1, 10_000), (16, 2_000)] };
    // samples[level][kind]
    let mut samples: Vec<Vec<Vec<Sample>>> =
        (0..2).map(|_| (0..3).map(|_| Vec::new()).collect()).collect();
    for round in 0..rounds {
        for k in 0..3 {
            // Rotate which goes first so drift in the machine hits all alike.
            let which = (round + k) % 3;
            let kind = KINDS[which].0;
            let (mut child, addr) = start(if kind == Kind::Floor { floor } else { ours });
            for (level, &(clients, calls)) in levels.iter().enumerate() {
                samples[level][which].push(measure(addr, kind, clients, calls));
            }
            if kind == Kind::Floor {
                let _ = child.kill();
                let _ = child.wait();
            } else {
                load::stop(child).unwrap_or_else(|e| panic!("{e}"));
            }
        }
        eprintln!("http round {} of {rounds} done", round + 1);
    }
    println!(
        "baremcp --http vs floor_http: {rounds} interleaved round(s), keep-alive tools/call hello, medians"
    );
    println!("| clients | server | calls/s | p50 | p99 | calls/s ratio | p50 ratio | p99 ratio |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|");
    for (level, &(clients, _)) in levels.iter().enumerate() {
        let summary: Vec<(f64, f64, f64)> = samples[level]
            .iter_mut()
            .map(|runs| {
                let rate = median(&mut runs.iter().map(|s| s.rate).collect::<Vec<_>>());
                let mut all: Vec<Duration> =
                    runs.iter().flat_map(|s| s.latencies.iter().copied()).collect();
                all.sort();
                (rate, quantile(&all, 0.5), quantile(&all, 0.99))
            })
            .collect();
        let floor = summary[2];
        for (which, (rate, p50, p99)) in summary.iter().enumerate() {
            let ratios = if which == 2 {
                "- | - | - |".to_string()
            } else {
                format!("{:.2}x | {:.2}x | {:.2}x |", rate / floor.0, p50 / floor.1, p99 / floor.2)
            };
            println!(
                "| {clients} | {} | {rate:.0} | {p50:.0} us | {p99:.0} us | {ratios}",
                KINDS[which].1
            );
        }
    }
}
