//! The `--http` mode of `benches/bench.rs`: keep-alive `tools/call hello` requests per second,
//! their p50/p99/p99.9 latency, the server's CPU time per call and its peak memory, with 1, 16
//! and 64 concurrent clients, for the release `baremcp --http` (2026-07-28 stateless requests,
//! and calls in legacy sessions) against `benches/floor_http.rs` (a thread per connection,
//! and `--one-thread`) and rmcp's Streamable HTTP server (`benches/rmcp_peer`, both eras, built
//! here when it can be), every reply checked for its id and greeting. All the servers run at
//! once and are called in turn, a slice of 5 to 50 ms each (`slice_of`), so that the drift of
//! this shared machine falls on all alike; at one client, the client and the servers are
//! pinned to one CPU and then to two (`Placement`), which left to the kernel would decide
//! between figures five times apart.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
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

/// Where the client and the servers run at one client, on Linux with two CPUs or more. The
/// same calls differ fivefold here between the two: on one CPU each hop is a switch; across
/// two each is a wake-up of an idle CPU (an interrupt, and on a virtual machine the host's
/// scheduling too), which left alone the kernel picks for us anew every time.
#[derive(Clone, Copy, PartialEq)]
enum Placement {
    /// Wherever the kernel puts them.
    Free,
    /// The servers on the first CPU, the client on the same one, or on the next.
    OneCpu,
    TwoCpus,
}

impl Placement {
    fn name(self) -> &'static str {
        match self {
            Placement::Free => "",
            Placement::OneCpu => ", one CPU",
            Placement::TwoCpus => ", two CPUs",
        }
    }
}

/// Pins threads to CPUs for [`Placement`] (Linux: `sched_setaffinity`).
#[cfg(target_os = "linux")]
mod pin {
    /// A `cpu_set_t`: 1 024 CPUs, as glibc has it.
    pub type Mask = [u64; 16];

    unsafe extern "C" {
        fn sched_getaffinity(tid: i32, size: usize, mask: *mut Mask) -> i32;
        fn sched_setaffinity(tid: i32, size: usize, mask: *const Mask) -> i32;
    }

    /// The CPUs the calling thread may use (the coordinator's, never pinned: the bench's),
    /// and how many: what threads are let go back to.
    pub fn all() -> (Mask, u32) {
        let mut mask = [0; 16];
        // SAFETY: the kernel writes at most `size_of::<Mask>()` bytes into `mask`.
        let ok = unsafe { sched_getaffinity(0, size_of::<Mask>(), &mut mask) } == 0;
        let count = if ok { mask.iter().map(|w| w.count_ones()).sum() } else { 0 };
        (mask, count)
    }

    /// The `nth` CPU of `all` alone.
    pub fn nth(all: &Mask, nth: u32) -> Mask {
        let bit = (0..1024).filter(|&b| all[b / 64] >> (b % 64) & 1 == 1).nth(nth as usize);
        let mut one = [0; 16];
        if let Some(b) = bit {
            one[b / 64] = 1 << (b % 64);
        }
        one
    }

    /// Thread `tid` (0: the calling one) to `mask`; whether it was (a thread gone meanwhile
    /// is not).
    pub fn set(tid: i32, mask: &Mask) -> bool {
        // SAFETY: the kernel only reads `size_of::<Mask>()` bytes of `mask`.
        unsafe { sched_setaffinity(tid, size_of::<Mask>(), mask) == 0 }
    }

    /// Every thread of process `pid` to `mask`.
    pub fn process(pid: u32, mask: &Mask) {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return };
        for tid in tasks.flatten().filter_map(|t| t.file_name().to_str()?.parse().ok()) {
            set(tid, mask);
        }
    }
}

/// Off Linux nothing is pinned: one CPU is all [`pin::all`] says, so every level is `Free`.
#[cfg(not(target_os = "linux"))]
mod pin {
    pub type Mask = [u64; 16];

    pub fn all() -> (Mask, u32) {
        ([0; 16], 1)
    }

    pub fn nth(all: &Mask, _: u32) -> Mask {
        *all
    }

    pub fn set(_: i32, _: &Mask) -> bool {
        true
    }

    pub fn process(_: u32, _: &Mask) {}
}

/// What one server measured at one level, summed over its slices: calls, the time from the
/// first call of each slice to its last reply, the server's CPU time (`None` where it cannot
/// be read), every call's latency, and its peak memory after the level.
#[derive(Default)]
struct Sample {
    calls: u64,
    busy: Duration,
    cpu_ns: Option<u64>,
    latencies: Vec<Duration>,
    peak_kib: u64,
}

/// A server under measure: the process, where it listens, what its clients send.
#[derive(Clone, Copy)]
struct Target {
    pid: u32,
    addr: std::net::SocketAddr,
    kind: Kind,
}

/// Calls each client makes on one server before the next server's turn: 200 at one client,
/// 800 or so in all at more (5 to 50 ms here), so that a burst of another tenant's load on
/// this shared machine falls on every server alike rather than on whichever ran then.
fn slice_of(clients: usize) -> u64 {
    (200 * clients.min(4)).div_ceil(clients) as u64
}

/// One client's connection to one server, with the requests it will send.
struct Line {
    conn: Conn,
    session: Option<String>,
    requests: Vec<String>,
    next: usize,
    latencies: Vec<Duration>,
}

impl Line {
    fn open(target: &Target, calls: u64) -> Line {
        let mut conn = Conn::open(target.addr, "/mcp").expect("connect");
        let session = (target.kind == Kind::Legacy).then(|| {
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
        let modern = target.kind != Kind::Legacy;
        let requests = (0..=calls).map(|id| load::hello(id, "World", modern)).collect();
        let latencies = Vec::with_capacity(calls as usize + 1);
        let mut line = Line { conn, session, requests, next: 0, latencies };
        // Call 0 unmeasured, so that no server's first call (its threads, its buffers) is.
        line.calls(1);
        line.latencies.clear();
        line
    }

    /// Makes the next `n` calls, each reply checked, and keeps their latencies.
    fn calls(&mut self, n: u64) {
        let headers = match &self.session {
            Some(id) => {
                vec![("Mcp-Session-Id", id.as_str()), ("MCP-Protocol-Version", "2025-11-25")]
            }
            None => load::modern_headers("tools/call", Some("hello")),
        };
        for _ in 0..n {
            let Some(request) = self.requests.get(self.next) else { return };
            let started = Instant::now();
            let reply = self.conn.post(request, &headers).expect("a reply");
            self.latencies.push(started.elapsed());
            let id = self.next as u64;
            self.next += 1;
            assert!(
                reply.status == 200 && load::greets(&reply.message(), id, "World"),
                "reply to {id}: {reply:?}"
            );
        }
    }
}

/// One level: `clients` threads, each with a keep-alive connection to every target, make
/// `calls` calls on each, taking the targets in turn a slice at a time (in an order shuffled
/// each round); the clock and the server's CPU time run only while its slice does.
fn measure(targets: &[Target], clients: usize, calls: u64, placement: Placement) -> Vec<Sample> {
    const DONE: usize = usize::MAX;
    let slice = slice_of(clients);
    // The servers pinned before any connection opens, so that every thread they start for
    // one inherits the pin.
    let (all, _) = pin::all();
    if placement != Placement::Free {
        targets.iter().for_each(|t| pin::process(t.pid, &pin::nth(&all, 0)));
    }
    let turn = Arc::new(AtomicUsize::new(DONE));
    let (start, done) = (Arc::new(Barrier::new(clients + 1)), Arc::new(Barrier::new(clients + 1)));
    // The first call's start and the last reply of the slice under way, over all clients.
    let span: Arc<Mutex<Option<(Instant, Instant)>>> = Arc::default();
    let shared = Arc::new(targets.to_vec());
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let (turn, start, done, span, targets) =
                (turn.clone(), start.clone(), done.clone(), span.clone(), shared.clone());
            std::thread::spawn(move || {
                if placement != Placement::Free {
                    let (all, _) = pin::all();
                    let cpu = pin::nth(&all, (placement == Placement::TwoCpus).into());
                    assert!(pin::set(0, &cpu), "a client could not be pinned");
                }
                let mut lines: Vec<Line> = targets.iter().map(|t| Line::open(t, calls)).collect();
                start.wait();
                loop {
                    start.wait();
                    let which = turn.load(Ordering::Acquire);
                    if which == DONE {
                        return lines.into_iter().map(|l| l.latencies).collect::<Vec<_>>();
                    }
                    let first = Instant::now();
                    lines[which].calls(slice);
                    let last = Instant::now();
                    let mut span = span.lock().unwrap();
                    let (a, b) = span.get_or_insert((first, last));
                    (*a, *b) = ((*a).min(first), (*b).max(last));
                    drop(span);
                    done.wait();
                }
            })
        })
        .collect();
    // Every connection open (and every session made) before the first slice.
    start.wait();
    let mut samples: Vec<Sample> =
        targets.iter().map(|_| Sample { cpu_ns: Some(0), ..Sample::default() }).collect();
    let (mut order, mut seed): (Vec<usize>, u64) = ((0..targets.len()).collect(), 0x9e37_79b9);
    for _ in 0..calls.div_ceil(slice) {
        // A new order each round (Fisher-Yates on xorshift), so that no server always follows
        // the same one and inherits what it left (caches, a CPU awake or not).
        for i in (1..order.len()).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            order.swap(i, (seed % (i as u64 + 1)) as usize);
        }
        for &which in &order {
            let cpu_before = load::cpu_ns(targets[which].pid);
            turn.store(which, Ordering::Release);
            start.wait();
            done.wait();
            let cpu_after = load::cpu_ns(targets[which].pid);
            let (first, last) = span.lock().unwrap().take().expect("every client made its calls");
            let sample = &mut samples[which];
            sample.busy += last - first;
            let used = cpu_before.zip(cpu_after).map(|(before, after)| {
                after.iter().map(|(tid, ns)| ns - before.get(tid).unwrap_or(&0)).sum::<u64>()
            });
            sample.cpu_ns = sample.cpu_ns.zip(used).map(|(sum, used)| sum + used);
        }
    }
    turn.store(DONE, Ordering::Release);
    start.wait();
    for thread in threads {
        let latencies = thread.join().expect("a client panicked");
        for (sample, mut these) in samples.iter_mut().zip(latencies) {
            sample.calls += these.len() as u64;
            sample.latencies.append(&mut these);
        }
    }
    for (sample, target) in samples.iter_mut().zip(targets) {
        pin::process(target.pid, &all);
        sample.latencies.sort();
        sample.peak_kib = load::peak_kib(target.pid).unwrap_or(0);
    }
    samples
}

fn quantile(sorted: &[Duration], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6
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

/// One level's figures for one server: calls/s, p50, p99, p99.9, CPU µs per call (`None`
/// when not read), peak MiB.
struct Summary {
    rate: f64,
    p50: f64,
    p99: f64,
    p999: f64,
    cpu_us: Option<f64>,
    peak_mib: f64,
}

fn summary(sample: &Sample) -> Summary {
    let all = &sample.latencies;
    Summary {
        rate: sample.calls as f64 / sample.busy.as_secs_f64(),
        p50: quantile(all, 0.5),
        p99: quantile(all, 0.99),
        p999: quantile(all, 0.999),
        cpu_us: sample.cpu_ns.map(|ns| ns as f64 / 1e3 / sample.calls as f64),
        peak_mib: sample.peak_kib as f64 / 1024.0,
    }
}

/// Runs the HTTP bench and prints its table; `rmcp` is the peer's binary when it was built.
pub fn run(ours: &Path, floor: &Path, rmcp: Option<&Path>, quick: bool) {
    let (one, sixteen, sixty_four) = if quick { (1_000, 100, 25) } else { (20_000, 4_000, 1_000) };
    // At one client, both placements where there are two CPUs to place on.
    let mut levels = vec![(1, one, Placement::Free)];
    if pin::all().1 >= 2 {
        levels = vec![(1, one, Placement::OneCpu), (1, one, Placement::TwoCpus)];
    }
    levels.extend([(16, sixteen, Placement::Free), (64, sixty_four, Placement::Free)]);
    let runs: Vec<usize> =
        (0..RUNS.len()).filter(|&r| RUNS[r].0 != Server::Rmcp || rmcp.is_some()).collect();
    let children: Vec<(Child, Target)> = runs
        .iter()
        .map(|&which| {
            let (server, kind, _) = RUNS[which];
            let (binary, args): (&Path, &[&str]) = match server {
                Server::Ours => (ours, &[]),
                Server::Floor => (floor, &[]),
                Server::OneThread => (floor, &["--one-thread"]),
                Server::Rmcp => (rmcp.unwrap_or(ours), &[]),
            };
            let (child, addr) = start(binary, args);
            let pid = child.id();
            (child, Target { pid, addr, kind })
        })
        .collect();
    let targets: Vec<Target> = children.iter().map(|(_, t)| *t).collect();
    // A reply missed or wrong panics its client, which would leave the others waiting at a
    // barrier: any panic ends the bench, and the servers with it.
    let pids: Vec<String> = targets.iter().map(|t| t.pid.to_string()).collect();
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        let _ = Command::new("kill").arg("-KILL").args(&pids).status();
        std::process::exit(101);
    }));
    // summaries[level][run], `None` for a server not measured.
    let summaries: Vec<Vec<Option<Summary>>> = levels
        .iter()
        .map(|&(clients, calls, placement)| {
            let mut all: Vec<Option<Summary>> = RUNS.iter().map(|_| None).collect();
            for (sample, &which) in measure(&targets, clients, calls, placement).iter().zip(&runs) {
                all[which] = Some(summary(sample));
            }
            eprintln!("http: {clients} client(s){} done", placement.name());
            all
        })
        .collect();
    for ((child, _), &which) in children.into_iter().zip(&runs) {
        if RUNS[which].0 == Server::Ours {
            load::stop(child).unwrap_or_else(|e| panic!("{e}"));
        } else {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    // The default hook back.
    drop(std::panic::take_hook());
    print(&summaries, &levels, &runs);
}

/// The table: for each level (`summaries[level][run]`), each server measured (`runs`).
fn print(summaries: &[Vec<Option<Summary>>], levels: &[(usize, u64, Placement)], runs: &[usize]) {
    println!(
        "baremcp --http vs floor_http and rmcp: keep-alive tools/call hello, every server \
         running at once and served in turn, {} calls per client at a time (in an order \
         shuffled each round), so that the machine's drift falls on all alike; at one client, \
         the client and the servers on one CPU, then the client on another; calls/s over the \
         time each server was being called, CPU per call over the same time, quantiles over \
         all its calls, memory its peak (VmHWM) after each level",
        [1, 16, 64].map(|clients| format!("{} at {clients}", slice_of(clients))).join(", ")
    );
    println!(
        "| clients | server | calls/s | p50 | p99 | p99.9 | CPU/call | peak | \
         calls/s vs floor | vs rmcp | CPU vs floor | p99 vs floor | \
         vs one-thread floor: calls/s, CPU, p99 |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for (all, &(clients, _, placement)) in summaries.iter().zip(levels) {
        let clients = format!("{clients}{}", placement.name());
        let measured = |server| {
            let at = RUNS.iter().position(|r| r.0 == server).expect("in RUNS");
            all[at].as_ref().expect("the floors are always measured")
        };
        let (floor, one) = (measured(Server::Floor), measured(Server::OneThread));
        for &which in runs {
            let (server, kind, name) = RUNS[which];
            let s = all[which].as_ref().expect("measured");
            // rmcp of the same era.
            let peer = RUNS.iter().position(|r| r.0 == Server::Rmcp && r.1 == kind);
            let vs_rmcp = match peer.and_then(|p| all[p].as_ref()) {
                Some(r) if server == Server::Ours => format!("{:.2}x", s.rate / r.rate),
                _ => "-".into(),
            };
            // Calls/s, CPU per call ("-" when not read) and p99 against a floor.
            let ratios = |f: &Summary| {
                let cpu = s.cpu_us.zip(f.cpu_us).map(|(ours, its)| format!("{:.2}x", ours / its));
                (s.rate / f.rate, cpu.unwrap_or_else(|| "-".into()), s.p99 / f.p99)
            };
            let (rate, cpu, p99) = ratios(floor);
            let vs_floor = match server {
                Server::Floor => "- | - | - | - | - |".to_string(),
                Server::Ours => {
                    let (one_rate, one_cpu, one_p99) = ratios(one);
                    format!(
                        "{rate:.2}x | {vs_rmcp} | {cpu} | {p99:.2}x | \
                         {one_rate:.2}x, {one_cpu}, {one_p99:.2}x |"
                    )
                }
                _ => format!("{rate:.2}x | {vs_rmcp} | {cpu} | {p99:.2}x | - |"),
            };
            let cpu_us = s.cpu_us.map_or_else(|| "-".into(), |us| format!("{us:.1} us"));
            println!(
                "| {clients} | {name} | {:.0} | {:.0} us | {:.0} us | {:.0} us | {cpu_us} | \
                 {:.1} MiB | {vs_floor}",
                s.rate, s.p50, s.p99, s.p999, s.peak_mib
            );
        }
    }
    if summaries.iter().flatten().flatten().any(|s| s.cpu_us.is_none()) {
        println!("CPU: not measured (no /proc/PID/task/TID/schedstat to read here: Linux only)");
    }
}
