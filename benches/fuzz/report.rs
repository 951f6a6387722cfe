//! What a run found: each violation with what reproduces it (described as a transcript
//! would write it, and written to files), and the report's counts per target and class.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Config;
use super::oracle::PENDING;

/// A broken promise, with what reproduces it.
#[derive(Clone, Debug)]
pub struct Violation {
    pub target: String,
    pub class: String,
    pub detail: String,
    /// The command line (after the binary).
    pub args: Vec<String>,
    pub input: Vec<u8>,
}

impl Violation {
    /// The reproducer as text: the command, and the input with escapes, as a transcript
    /// would write it.
    pub fn describe(&self) -> String {
        let mut input = String::new();
        for line in self.input.split_inclusive(|&b| b == b'\n') {
            input.push_str("-->~ ");
            for &b in &line[..line.len().min(2000)] {
                push_escaped(&mut input, b, false);
            }
            if line.len() > 2000 {
                input.push_str(&format!(" ... ({} more bytes)", line.len() - 2000));
            }
            input.push('\n');
            if input.len() > 20_000 {
                input.push_str("... (cut; see the .bin file)\n");
                break;
            }
        }
        format!(
            "target: {}\nclass: {}\ndetail: {}\nargs: {}\ninput ({} bytes):\n{input}",
            self.target,
            self.class,
            self.detail,
            self.args.join(" "),
            self.input.len()
        )
    }
}

/// What a run did: its counts per target, its violations, what it tolerated, its slowest cases.
#[derive(Debug, Default)]
pub struct Report {
    pub cases: u64,
    /// Lines sent, over every target.
    pub messages: u64,
    pub elapsed: Duration,
    pub violations: Vec<Violation>,
    /// Cases that passed only because a pending class (see [`PENDING`]) widened the oracle.
    pub tolerated: BTreeMap<String, u64>,
    /// One reproducer of each tolerated class, for the notes.
    pub tolerated_examples: BTreeMap<String, Violation>,
    pub per_target: BTreeMap<&'static str, u64>,
    /// Time spent per target.
    pub time_per_target: BTreeMap<&'static str, Duration>,
    /// The slowest case of each target, with what reproduces it.
    pub slowest: BTreeMap<&'static str, (Duration, Violation)>,
}

impl Report {
    /// The counts in a few lines: messages and cases per second, then per target and class.
    pub fn summary(&self) -> String {
        self.summary_of("messages", PENDING)
    }

    /// [`Report::summary`] counting `unit`s (what `messages` holds), the tolerated classes
    /// explained by `pending`.
    pub fn summary_of(&self, unit: &str, pending: &[(&str, &str)]) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let mut out = format!(
            "{} cases, {} {unit} in {:.1} s: {:.0} {unit}/s, {:.1} cases/s; {} violation(s)",
            self.cases,
            self.messages,
            secs,
            self.messages as f64 / secs,
            self.cases as f64 / secs,
            self.violations.len()
        );
        for (target, n) in &self.per_target {
            let time = self.time_per_target.get(target).copied().unwrap_or_default();
            let slowest = self.slowest.get(target).map_or(0.0, |(t, _)| t.as_secs_f64());
            out.push_str(&format!(
                "\n  {target}: {n} cases in {:.1} s (slowest {slowest:.2} s)",
                time.as_secs_f64()
            ));
        }
        for (class, n) in &self.tolerated {
            let why = pending.iter().find(|(c, _)| c == class).map_or("", |(_, why)| why);
            out.push_str(&format!("\n  tolerated (pending fix) {class}: {n} case(s) — {why}"));
        }
        out
    }

    /// Keeps a violation: shown (as `show` writes it) when the run shows progress, and its
    /// reproducer written (by `write`) to the run's directory as soon as it is found.
    pub fn keep(&mut self, config: &Config, v: Violation, show: Show, write: Write) {
        if config.progress.is_some() {
            eprintln!("--- violation {}:\n{}", self.violations.len() + 1, show(&v));
        }
        if let Some(dir) = &config.out {
            let _ = write(&v, dir, config.seed, self.violations.len());
        }
        self.violations.push(v);
    }

    /// Prints a progress line — cases, `unit`s (per second since `started`), violations so
    /// far — when `last` is as old as the run's progress interval.
    pub fn tick(&self, config: &Config, started: Instant, last: &mut Instant, unit: &str) {
        let Some(every) = config.progress else { return };
        if last.elapsed() < every {
            return;
        }
        *last = Instant::now();
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "[{secs:>6.0} s] {} cases, {} {unit} ({:.0}/s), {} violation(s)",
            self.cases,
            self.messages,
            self.messages as f64 / secs.max(1e-9),
            self.violations.len()
        );
    }
}

/// How a target describes a violation.
pub type Show = fn(&Violation) -> String;
/// How a target writes a violation's reproducer: into a directory, for a seed, as its `n`th.
pub type Write = fn(&Violation, &Path, u64, usize) -> std::io::Result<PathBuf>;

/// Writes `BASE.txt` (`text`) and `BASE.bin` (`bytes`) into `dir`; returns the `.txt` path.
pub fn write_pair(dir: &Path, base: &str, text: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let base = dir.join(base);
    std::fs::write(base.with_extension("bin"), bytes)?;
    std::fs::write(base.with_extension("txt"), text)?;
    Ok(base.with_extension("txt"))
}

/// Writes `b` as a transcript would: printable ASCII as it is, `\\ \r \n \t`, and `\xNN`
/// for the rest (`\"` too when `quoted`).
pub fn push_escaped(out: &mut String, b: u8, quoted: bool) {
    match b {
        b'\\' => out.push_str("\\\\"),
        b'\r' => out.push_str("\\r"),
        b'\n' => out.push_str("\\n"),
        b'\t' => out.push_str("\\t"),
        b'"' if quoted => out.push_str("\\\""),
        0x20..=0x7e => out.push(b as char),
        _ => out.push_str(&format!("\\x{b:02X}")),
    }
}

/// Writes each violation's reproducer into `dir` (see [`write_reproducer`]); returns the
/// `.txt` paths.
pub fn write_reproducers(
    violations: &[Violation],
    dir: &Path,
    seed: u64,
) -> std::io::Result<Vec<PathBuf>> {
    violations.iter().enumerate().map(|(n, v)| write_reproducer(v, dir, seed, n)).collect()
}

/// Writes one violation as `violation-SEED-N-TARGET-CLASS.txt` (described) and `.bin` (the
/// input's raw bytes); returns the `.txt` path.
pub fn write_reproducer(
    v: &Violation,
    dir: &Path,
    seed: u64,
    n: usize,
) -> std::io::Result<PathBuf> {
    let base = format!("violation-{seed}-{n}-{}-{}", v.target, v.class);
    write_pair(dir, &base, &v.describe(), &v.input)
}
