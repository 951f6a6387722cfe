//! The `--http` mode of `benches/bench.rs`: keep-alive `tools/call hello` requests per second,
//! their p50/p99/p99.9 latency, the server's CPU time per call and its peak memory, with 1, 16
//! and 64 concurrent clients, for the release `baremcp --http` (2026-07-28 stateless requests,
//! and calls in legacy sessions) against `benches/floor_http.rs` (a thread per connection,
//! and `--one-thread`) and rmcp's Streamable HTTP server (`benches/rmcp_peer`, both eras, built
//! here when it can be) in the same run, rounds interleaved; every reply is checked for its id
//! and greeting.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
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

/// Which server a column of the table is.
#[derive(Clone, Copy, PartialEq)]
enum Server {
    Ours,
    Floor,
    /// The floor serving every connection on one thread.
    OneThread,
    Rmcp,
}

/// Every server measured, with the requests it is sent and its name in the table.
const RUNS: [(Server, Kind, &str); 6] = [
    (Server::Ours, Kind::Modern, "baremcp, 2026-07-28"),
    (Server::Ours, Kind::Legacy, "baremcp, legacy session"),
    (Server::Floor, Kind::Floor, "floor"),
    (Server::OneThread, Kind::Floor, "floor, one thread"),
    (Server::Rmcp, Kind::Modern, "rmcp, 2026-07-28"),
    (Server::Rmcp, Kind::Legacy, "rmcp, legacy session"),
];

/// One measure: calls per second, every call's latency, the server's CPU time per call and
/// its peak memory so far.
struct Sample {
    rate: f64,
    latencies: Vec<Duration>,
    cpu_us: f64,
    peak_kib: u64,
}

/// `clients` threads, each on its own keep-alive connection, `calls` calls each, to the
/// server `pid` at `addr`.
fn measure(addr: std::net::SocketAddr, pid: u32, kind: Kind, clients: usize, calls: u64) -> Sample {
    let go = Arc::new(AtomicBool::new(false));
    // Every client waits at `done` after its last call, and keeps its connection until
    // `release`: the server's CPU time is read in between, while the threads that served
    // them are still there to be read.
    let done = Arc::new(Barrier::new(clients + 1));
    let release = Arc::new(Barrier::new(clients + 1));
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let (go, done, release) = (go.clone(), done.clone(), release.clone());
            std::thread::spawn(move || {
                let mut conn = Conn::open(addr, "/mcp").expect("connect");
                let session = (kind == Kind::Legacy).then(|| {
                    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
                    let reply = conn.post(&init.to_string(), &[]).expect("initialize");
                    let id = reply.header("mcp-session-id").expect("a session id").to_string();
                    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
                    let headers = [("Mcp-Session-Id", id.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
                    let reply = conn.post(initialized, &headers).expect("initialized");
                    assert_eq!(reply.status, 202, "notifications/initialized: {reply:?}");
                    id
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
                done.wait();
                release.wait();
                latencies
            })
        })
        .collect();
    // Connections open (and sessions made) before the clock starts.
    std::thread::sleep(Duration::from_millis(200));
    let cpu_before = cpu_ns(pid);
    let started = Instant::now();
    go.store(true, Ordering::Relaxed);
    done.wait();
    let elapsed = started.elapsed();
    let cpu_after = cpu_ns(pid);
    release.wait();
    let latencies: Vec<Duration> =
        threads.into_iter().flat_map(|t| t.join().expect("a client panicked")).collect();
    let rate = latencies.len() as f64 / elapsed.as_secs_f64();
    let used: u64 = cpu_after.iter().map(|(tid, ns)| ns - cpu_before.get(tid).unwrap_or(&0)).sum();
    let cpu_us = used as f64 / 1e3 / latencies.len() as f64;
    let peak_kib = load::peak_kib(pid).unwrap_or(0);
    Sample { rate, latencies, cpu_us, peak_kib }
}

/// The nanoseconds each thread of process `pid` has run (`/proc/PID/task/TID/schedstat`),
/// by thread id: finer than `/proc/PID/stat`'s clock ticks, which short runs need.
fn cpu_ns(pid: u32) -> HashMap<u64, u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("/proc is readable");
    tasks
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            Some((tid, stat.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

fn quantile(sorted: &[Duration], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn start(binary: &Path, args: &[&str]) -> (Child, std::net::SocketAddr) {
    load::spawn(binary, args).unwrap_or_else(|e| panic!("{e}"))
}

/// Builds `benches/rmcp_peer` (a project of its own, fetched from crates.io the first time)
/// into `target/rmcp_peer`; `None`, said in one line, when it cannot be built.
pub fn build_rmcp_peer(root: &Path) -> Option<PathBuf> {
    let manifest = root.join("benches/rmcp_peer/Cargo.toml");
    let target = root.join("target/rmcp_peer");
    eprintln!("building benches/rmcp_peer (rmcp's Streamable HTTP server) ...");
    let built = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .status();
    match built {
        Ok(status) if status.success() => Some(target.join("release/rmcp_peer")),
        _ => {
            println!(
                "rmcp: benches/rmcp_peer could not be built (no network for crates.io?); \
                 measured without it"
            );
            None
        }
    }
}

/// One level's medians for one server: calls/s, p50, p99, p99.9, CPU µs per call, peak MiB.
struct Summary {
    rate: f64,
    p50: f64,
    p99: f64,
    p999: f64,
    cpu_us: f64,
    peak_mib: f64,
}

fn summary(runs: &[Sample]) -> Summary {
    let mut all: Vec<Duration> = runs.iter().flat_map(|s| s.latencies.iter().copied()).collect();
    all.sort();
    let peak_kib = median(&mut runs.iter().map(|s| s.peak_kib as f64).collect::<Vec<_>>());
    Summary {
        rate: median(&mut runs.iter().map(|s| s.rate).collect::<Vec<_>>()),
        p50: quantile(&all, 0.5),
        p99: quantile(&all, 0.99),
        p999: quantile(&all, 0.999),
        cpu_us: median(&mut runs.iter().map(|s| s.cpu_us).collect::<Vec<_>>()),
        peak_mib: peak_kib / 1024.0,
    }
}

/// Runs the HTTP bench and prints its table; `rmcp` is the peer's binary when it was built.
pub fn run(ours: &Path, floor: &Path, rmcp: Option<&Path>, quick: bool) {
    let rounds = if quick { 1 } else { 5 };
    let levels: [(usize, u64); 3] = if quick {
        [(1, 1_000), (16, 100), (64, 25)]
    } else {
        [(1, 10_000), (16, 2_000), (64, 500)]
    };
    let runs: Vec<usize> =
        (0..RUNS.len()).filter(|&r| RUNS[r].0 != Server::Rmcp || rmcp.is_some()).collect();
    // samples[level][run]
    let mut samples: Vec<Vec<Vec<Sample>>> =
        (0..levels.len()).map(|_| (0..RUNS.len()).map(|_| Vec::new()).collect()).collect();
    for round in 0..rounds {
        for k in 0..runs.len() {
            // Rotate which goes first so drift in the machine hits all alike.
            let which = runs[(round + k) % runs.len()];
            let (server, kind, _) = RUNS[which];
            let (binary, args): (&Path, &[&str]) = match server {
                Server::Ours => (ours, &[]),
                Server::Floor => (floor, &[]),
                Server::OneThread => (floor, &["--one-thread"]),
                Server::Rmcp => (rmcp.unwrap_or(ours), &[]),
            };
            let (mut child, addr) = start(binary, args);
            for (level, &(clients, calls)) in levels.iter().enumerate() {
                samples[level][which].push(measure(addr, child.id(), kind, clients, calls));
            }
            if server == Server::Ours {
                load::stop(child).unwrap_or_else(|e| panic!("{e}"));
            } else {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        eprintln!("http round {} of {rounds} done", round + 1);
    }
    println!(
        "baremcp --http vs floor_http and rmcp: {rounds} interleaved round(s), keep-alive \
         tools/call hello; calls/s and CPU per call are medians of the rounds, quantiles over \
         all their calls, memory the median peak (VmHWM) after each level"
    );
    println!(
        "| clients | server | calls/s | p50 | p99 | p99.9 | CPU/call | peak | \
         calls/s vs floor | vs rmcp | CPU vs floor | p99 vs floor | \
         vs one-thread floor: calls/s, CPU, p99 |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for (level, &(clients, _)) in levels.iter().enumerate() {
        let all: Vec<Option<Summary>> =
            samples[level].iter().map(|runs| (!runs.is_empty()).then(|| summary(runs))).collect();
        let measured = |server| {
            let at = RUNS.iter().position(|r| r.0 == server).expect("in RUNS");
            all[at].as_ref().expect("the floors are always measured")
        };
        let (floor, one) = (measured(Server::Floor), measured(Server::OneThread));
        for &which in &runs {
            let (server, kind, name) = RUNS[which];
            let s = all[which].as_ref().expect("measured");
            // rmcp of the same era.
            let peer = RUNS.iter().position(|r| r.0 == Server::Rmcp && r.1 == kind);
            let vs_rmcp = match peer.and_then(|p| all[p].as_ref()) {
                Some(r) if server == Server::Ours => format!("{:.2}x", s.rate / r.rate),
                _ => "-".into(),
            };
            // Calls/s, CPU per call and p99 against a floor.
            let ratios = |f: &Summary| (s.rate / f.rate, s.cpu_us / f.cpu_us, s.p99 / f.p99);
            let (rate, cpu, p99) = ratios(floor);
            let vs_floor = match server {
                Server::Floor => "- | - | - | - | - |".to_string(),
                Server::Ours => {
                    let (one_rate, one_cpu, one_p99) = ratios(one);
                    format!(
                        "{rate:.2}x | {vs_rmcp} | {cpu:.2}x | {p99:.2}x | \
                         {one_rate:.2}x, {one_cpu:.2}x, {one_p99:.2}x |"
                    )
                }
                _ => format!("{rate:.2}x | {vs_rmcp} | {cpu:.2}x | {p99:.2}x | - |"),
            };
            println!(
                "| {clients} | {name} | {:.0} | {:.0} us | {:.0} us | {:.0} us | {:.1} us | \
                 {:.1} MiB | {vs_floor}",
                s.rate, s.p50, s.p99, s.p999, s.cpu_us, s.peak_mib
            );
        }
    }
}
