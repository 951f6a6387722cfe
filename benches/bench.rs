//! The benchmark: the release `baremcp` against floor B (`benches/floor.rs`, a plain
//! serde_json loop) in one run, rounds interleaved, driver and servers pinned to one CPU.
//! Floor A (`benches/floor_a.rs`, no parsing at all) runs alongside: the targets are ratios
//! to floor B, and floor A shows how far below floor B any server can get on this machine.
//!
//! `cargo bench --bench bench` measures start-up to the initialize reply,
//! ping-pong latency, pipelined throughput (every reply checked for its id, its text and its
//! order), peak memory, instructions per call (when valgrind is installed), the bounded
//! memory of huge lines, and the static binary (when the musl target is installed), then
//! prints medians, ratios and whether each target is met. `--quick` runs one short round
//! without valgrind or the musl build (CI uses it to check that the bench itself works).
//!
//! `--http` measures Streamable HTTP instead: the release `baremcp --http` against
//! `benches/floor_http.rs` and rmcp (`benches/rmcp_peer`) in `http_load/bench.rs`;
//! `--http --quick` is its short round.
//!
//! `--pgo` measures the profile-guided build of `baremcp` (`http_load/pgo.rs`) in place of
//! the release one (which is then not built), in either bench; `--pgo-build [--profile P]
//! [--target T]` only builds it and prints where it is.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

#[path = "http_load/cargo.rs"]
mod cargo;
#[path = "http_load/client.rs"]
mod client;
#[path = "http_load/bench.rs"]
mod http;
#[path = "http_load/load.rs"]
mod load;
#[path = "http_load/pgo.rs"]
mod pgo;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;

fn call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"hello","arguments":{{"name":"World"}}}}}}"#
    )
}

struct Server {
    child: Child,
    /// `None` while a writer thread owns the pipe.
    stdin: Option<BufWriter<ChildStdin>>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Server {
    fn start(binary: &Path, args: &[&str]) -> Server {
        let mut command = Command::new(binary);
        command.args(args).stderr(Stdio::null());
        Server::spawn(command)
    }

    /// Starts `command`, its stderr as it was set (ours when not).
    fn spawn(mut command: Command) -> Server {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", command.get_program().display()));
        let stdin = Some(BufWriter::with_capacity(1 << 16, child.stdin.take().unwrap()));
        let stdout = BufReader::with_capacity(1 << 16, child.stdout.take().unwrap());
        Server { child, stdin, stdout, line: String::new() }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn reply(&mut self) -> &str {
        self.line.clear();
        self.stdout.read_line(&mut self.line).unwrap();
        assert!(self.line.ends_with('\n'), "the server closed its output");
        &self.line
    }

    fn initialize(&mut self) {
        self.send(INIT);
        let reply = self.reply();
        assert!(
            reply.contains("\"protocolVersion\":\"2025-11-25\""),
            "bad initialize reply: {reply}"
        );
    }

    /// Peak resident memory so far, in KiB.
    fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    fn finish(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the server exited with {status}");
    }
}

/// A reply is right when it has the request's id and the greeting.
fn check(reply: &str, id: u64) {
    let id_field = format!("\"id\":{id},");
    assert!(
        reply.contains(&id_field) && reply.contains("\"text\":\"Hello, World!\""),
        "reply to {id} is wrong: {reply}"
    );
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn startup(binary: &Path, times: usize) -> f64 {
    let mut samples: Vec<f64> = (0..times)
        .map(|_| {
            let started = Instant::now();
            let mut server = Server::start(binary, &[]);
            server.initialize();
            let elapsed = started.elapsed().as_secs_f64();
            server.finish();
            elapsed
        })
        .collect();
    median(&mut samples)
}

fn ping_pong(binary: &Path, calls: u64) -> f64 {
    let mut server = Server::start(binary, &[]);
    server.initialize();
    let requests: Vec<String> = (1..=calls).map(call).collect();
    let mut samples = Vec::with_capacity(calls as usize);
    for (i, request) in requests.iter().enumerate() {
        let started = Instant::now();
        server.send(request);
        let reply = server.reply();
        samples.push(started.elapsed().as_secs_f64());
        check(reply, i as u64 + 1);
    }
    server.finish();
    median(&mut samples)
}

/// Sends `calls` requests without waiting, checks every reply in order; returns calls per
/// second and the server's peak memory in KiB.
fn pipelined(binary: &Path, calls: u64) -> (f64, u64) {
    let mut server = Server::start(binary, &[]);
    server.initialize();
    let mut input = Vec::with_capacity(calls as usize * 100);
    for id in 1..=calls {
        input.extend_from_slice(call(id).as_bytes());
        input.push(b'\n');
    }
    let mut stdin = server.stdin.take().unwrap();
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        stdin.write_all(&input).unwrap();
        stdin.flush().unwrap();
        stdin
    });
    for id in 1..=calls {
        let reply = server.reply();
        check(reply, id);
    }
    let rate = calls as f64 / started.elapsed().as_secs_f64();
    let peak = server.peak_kib();
    // The pipe stays open until the peak is read, so the server is still alive to be read.
    server.stdin = Some(writer.join().unwrap());
    server.finish();
    (rate, peak)
}

/// Peak memory after a `tools/call hello` whose name is `bytes` long (just under the line
/// limit), and after a stream of lines twice the limit.
fn huge_lines(binary: &Path, bytes: usize) -> (u64, u64) {
    let mut server = Server::start(binary, &[]);
    server.initialize();
    let name = "x".repeat(bytes - 200);
    server.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"hello","arguments":{{"name":"{name}"}}}}}}"#));
    let reply = server.reply().len();
    assert!(reply > bytes - 200, "the big call was not answered in full");
    let call_peak = server.peak_kib();
    server.finish();

    let mut server = Server::start(binary, &[]);
    server.initialize();
    let long = "y".repeat(2 * bytes);
    for id in 1..=8 {
        server.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"pad":"{long}"}}}}"#
        ));
        let reply = server.reply();
        assert!(reply.contains("message too large") || reply.contains("\"result\""), "{reply}");
    }
    let stream_peak = server.peak_kib();
    server.finish();
    (call_peak, stream_peak)
}

/// A 2026-07-28 `tools/call hello`: no handshake, the era in `_meta`.
fn modern_call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"hello","arguments":{{"name":"World"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    )
}

/// Instructions per call from valgrind's callgrind: a run with `calls` calls minus a run
/// with none, so start-up and exit cancel out.
fn instructions_per_call(binary: &Path, dir: &Path, calls: u64) -> Option<f64> {
    instructions_per(binary, dir, calls, Some(INIT), call)
}

fn instructions_per(
    binary: &Path,
    dir: &Path,
    calls: u64,
    first: Option<&str>,
    call: fn(u64) -> String,
) -> Option<f64> {
    let count = |input: &Path| -> Option<f64> {
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(binary)
            .stdin(std::fs::File::open(input).ok()?)
            .stdout(Stdio::null())
            .output()
            .ok()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = stderr.lines().find(|l| l.contains("Collected"))?;
        line.split_whitespace().last()?.parse().ok()
    };
    let write = |name: &str, n: u64| -> PathBuf {
        let path = dir.join(name);
        let mut text = first.map(|line| format!("{line}\n")).unwrap_or_default();
        for id in 1..=n {
            text.push_str(&call(id));
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        path
    };
    let (none, some) = (write("calls-0.jsonl", 0), write(&format!("calls-{calls}.jsonl"), calls));
    Some((count(&some)? - count(&none)?) / calls as f64)
}

/// Builds the static musl binary if that target is installed; returns its size and whether
/// it is statically linked.
fn static_binary(root: &Path) -> Option<(u64, bool)> {
    let targets = Command::new("rustup").args(["target", "list", "--installed"]).output().ok()?;
    if !String::from_utf8_lossy(&targets.stdout).contains("x86_64-unknown-linux-musl") {
        return None;
    }
    let mut build = cargo::cargo(root);
    build.args(["build", "--release", "--bin", "baremcp", "--target", "x86_64-unknown-linux-musl"]);
    let [path] = cargo::executables(build, ["baremcp"]).ok()?;
    let size = std::fs::metadata(&path).ok()?.len();
    // A static executable has no PT_INTERP program header (no dynamic loader).
    let mut bytes = Vec::new();
    std::fs::File::open(&path).ok()?.read_to_end(&mut bytes).ok()?;
    let interp = bytes.windows(b"ld-linux".len()).any(|w| w == b"ld-linux")
        || bytes.windows(9).any(|w| w == b"ld-musl-x");
    Some((size, !interp))
}

fn pin_to_one_cpu() -> bool {
    // Children inherit the affinity, so pinning the driver pins the servers too.
    Command::new("taskset")
        .args(["-cp", "0", &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

struct Row {
    what: &'static str,
    unit: &'static str,
    ours: f64,
    floor: f64,
    /// Floor A's value: not judged, it shows what the machine leaves to save.
    floor_a: Option<f64>,
    /// The ratio ours/floor must be at most this (or at least, for throughput).
    target: f64,
    higher_is_better: bool,
}

impl Row {
    fn ratio(&self) -> f64 {
        self.ours / self.floor
    }
    fn met(&self) -> bool {
        if self.higher_is_better {
            self.ratio() >= self.target
        } else {
            self.ratio() <= self.target
        }
    }
}

/// What the command line asks for (see the module's doc).
#[derive(Default)]
struct Options {
    quick: bool,
    http: bool,
    pgo: bool,
    pgo_build: bool,
    profile: Option<String>,
    target: Option<String>,
}

fn options() -> Result<Options, lexopt::Error> {
    use lexopt::prelude::*;
    let mut options = Options::default();
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("quick") => options.quick = true,
            Long("http") => options.http = true,
            Long("pgo") => options.pgo = true,
            Long("pgo-build") => options.pgo_build = true,
            Long("profile") => options.profile = Some(parser.value()?.string()?),
            Long("target") => options.target = Some(parser.value()?.string()?),
            // `cargo bench` passes it to every bench target.
            Long("bench") => {}
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(options)
}

fn main() {
    let options = options().unwrap_or_else(|e| panic!("{e}"));
    let quick = options.quick;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let trained = |profile: &str, target: Option<&str>| {
        let built = pgo::build(&root, &pgo::Build { profile, target });
        built.unwrap_or_else(|e| panic!("the profile-guided build: {e}"))
    };
    if options.pgo_build {
        let profile = options.profile.as_deref().unwrap_or("release");
        return println!("{}", trained(profile, options.target.as_deref()).display());
    }
    assert!(
        options.profile.is_none() && options.target.is_none(),
        "--profile and --target go with --pgo-build"
    );
    // `--pgo`: ours is the profile-guided build (`http_load/pgo.rs`), and its release build,
    // which nothing would run, is not made (it costs CI minutes); the floors are release
    // builds either way.
    let ours = || {
        if options.pgo {
            trained("release", None)
        } else {
            cargo::release(&root).unwrap_or_else(|e| panic!("{e}"))
        }
    };
    if options.http {
        let [floor] = build_floors(&root, ["floor_http"]);
        let rmcp = http::build_rmcp_peer(&root);
        return http::run(&ours(), &floor, rmcp.as_deref(), quick);
    }
    // Ours, floor B, floor A: the order of every row's values.
    let [floor, floor_a] = build_floors(&root, ["floor", "floor_a"]);
    let binaries = [ours(), floor, floor_a];
    let pinned = pin_to_one_cpu();
    let (rounds, starts, pings, pipelined_calls) =
        if quick { (1, 5, 2_000, 20_000) } else { (5, 20, 20_000, 200_000) };
    let mut rows = interleaved_rounds(&binaries, rounds, starts, pings, pipelined_calls);
    let mut notes = Vec::new();
    if !quick {
        instruction_counts(&binaries, &mut rows, &mut notes);
        let ours = &binaries[0];
        notes.push(peak_by_call_count(ours, pipelined_calls, rows[3].ours));
        notes.push(huge_lines_note(ours));
        notes.push(static_binary_note(&root));
    }
    print_table(rounds, pinned, &rows, &notes);
}

/// `cargo build --release` of the floors named, and where each executable is.
fn build_floors<const N: usize>(root: &Path, names: [&str; N]) -> [PathBuf; N] {
    let mut build = cargo::cargo(root);
    build.args(["build", "--release"]);
    for floor in names {
        build.args(["--bench", floor]);
    }
    cargo::executables(build, names).unwrap_or_else(|e| panic!("{e}"))
}

/// Start-up, ping-pong, pipelined throughput and its peak memory, measured in `rounds`
/// rounds over the three servers; one row each, of medians.
fn interleaved_rounds(
    binaries: &[PathBuf; 3],
    rounds: usize,
    starts: usize,
    pings: u64,
    pipelined_calls: u64,
) -> Vec<Row> {
    let mut samples: [[Vec<f64>; 3]; 4] = Default::default();
    for round in 0..rounds {
        // Rotate which server goes first so drift in the machine hits all alike.
        for k in 0..3 {
            let which = (round + k) % 3;
            let binary = &binaries[which];
            samples[0][which].push(startup(binary, starts));
            samples[1][which].push(ping_pong(binary, pings));
            let (rate, peak) = pipelined(binary, pipelined_calls);
            samples[2][which].push(rate);
            samples[3][which].push(peak as f64);
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    // Measure `i` of the three servers, in the unit shown.
    let mut measured = |i: usize, what, unit, scale: f64, target, higher_is_better| {
        let mut m = |which: usize| median(&mut samples[i][which]) * scale;
        Row { what, unit, ours: m(0), floor: m(1), floor_a: Some(m(2)), target, higher_is_better }
    };
    vec![
        measured(0, "start-up to initialize reply", "ms", 1e3, 1.2, false),
        measured(1, "ping-pong tools/call (median)", "us", 1e6, 0.8, false),
        measured(2, "pipelined tools/call", "calls/s", 1.0, 1.8, true),
        measured(3, "peak memory, pipelined run", "MiB", 1.0 / 1024.0, 1.1, false),
    ]
}

/// Instructions per call under valgrind: a row against floor B, and a note for the 2026-07-28
/// call, which has no floor.
fn instruction_counts(binaries: &[PathBuf; 3], rows: &mut Vec<Row>, notes: &mut Vec<String>) {
    let [ours, floor, floor_a] = binaries;
    let dir = std::env::temp_dir().join(format!("baremcp-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    match (instructions_per_call(ours, &dir, 10_000), instructions_per_call(floor, &dir, 10_000)) {
        (Some(a), Some(b)) => rows.push(Row {
            what: "instructions per tools/call",
            unit: "instr",
            ours: a,
            floor: b,
            floor_a: instructions_per_call(floor_a, &dir, 10_000),
            target: 0.35,
            higher_is_better: false,
        }),
        _ => notes.push("instructions per call: skipped (valgrind not installed)".to_string()),
    }
    if let Some(modern) = instructions_per(ours, &dir, 10_000, None, modern_call) {
        notes.push(format!(
            "instructions per 2026-07-28 tools/call (no floor to compare): {modern:.0}"
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Peak memory is flat in the number of calls: 20 000 and 2 000 000 against the rounds'
/// `base` MiB for `pipelined_calls`.
fn peak_by_call_count(ours: &Path, pipelined_calls: u64, base: f64) -> String {
    // Medians of three runs, like the 200 000-call row's medians of rounds: one run's peak
    // moves by a few percent here (the kernel maps code in 64 KiB runs as it is touched).
    let peak_mib = |n: u64| median(&mut [0; 3].map(|_| pipelined(ours, n).1 as f64 / 1024.0));
    let flat: Vec<(u64, f64)> = [20_000u64, 2_000_000].iter().map(|&n| (n, peak_mib(n))).collect();
    let spread = flat.iter().map(|(_, p)| (p / base - 1.0).abs()).fold(0.0, f64::max);
    format!(
        "peak memory by call count: 20k {:.2} MiB, {pipelined_calls} {base:.2} MiB, 2M {:.2} MiB ({})",
        flat[0].1,
        flat[1].1,
        if spread <= 0.05 { "flat: met" } else { "not flat: NOT MET" }
    )
}

/// Huge lines keep memory bounded by the line limit plus a small constant.
fn huge_lines_note(ours: &Path) -> String {
    let limit = baremcp::DEFAULT_MAX_MESSAGE_BYTES;
    let (call_peak, stream_peak) = huge_lines(ours, limit);
    let mib = |kib: u64| kib as f64 / 1024.0;
    // "The line limit plus a small constant": 4 MiB of slack over the limit.
    let bounded = |kib: u64| if mib(kib) <= ((limit >> 20) + 4) as f64 { "met" } else { "NOT MET" };
    format!(
        "a {} MiB-argument call peaks at {:.1} MiB ({}); 8 lines of {} MiB (over the limit) peak at {:.1} MiB ({}); \
         target: the limit plus 4 MiB",
        limit >> 20,
        mib(call_peak),
        bounded(call_peak),
        (2 * limit) >> 20,
        mib(stream_peak),
        bounded(stream_peak)
    )
}

/// The static musl binary's size and linking, or how to get it measured.
fn static_binary_note(root: &Path) -> String {
    match static_binary(root) {
        Some((size, is_static)) => format!(
            "static musl binary: {size} bytes ({}), {} ({})",
            if size <= 1 << 20 { "<= 1 MiB: met" } else { "> 1 MiB: NOT MET" },
            if is_static { "no dynamic loader" } else { "dynamically linked" },
            if is_static { "met" } else { "NOT MET" }
        ),
        None => "static musl binary: skipped (rustup target add x86_64-unknown-linux-musl)".into(),
    }
}

/// The results as a Markdown table, then the notes.
fn print_table(rounds: usize, pinned: bool, rows: &[Row], notes: &[String]) {
    println!(
        "baremcp vs floor B: {rounds} interleaved round(s), medians; {}",
        if pinned {
            "driver and servers pinned to CPU 0"
        } else {
            "not pinned (taskset not found)"
        }
    );
    println!("| measure | baremcp | floor B | ratio | target | | floor A (ratio to B) |");
    println!("|---|---:|---:|---:|---:|---|---:|");
    for row in rows {
        let cmp = if row.higher_is_better { ">=" } else { "<=" };
        let floor_a = row
            .floor_a
            .map_or("-".into(), |a| format!("{a:.2} {} ({:.2}x)", row.unit, a / row.floor));
        println!(
            // Three decimals: a ratio just under its target must not print as the target.
            "| {} | {:.2} {} | {:.2} {} | {:.3}x | {cmp} {}x | {} | {floor_a} |",
            row.what,
            row.ours,
            row.unit,
            row.floor,
            row.unit,
            row.ratio(),
            row.target,
            if row.met() { "met" } else { "NOT MET" }
        );
    }
    for note in notes {
        println!("- {note}");
    }
}
