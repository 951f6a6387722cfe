//! Judging a case: each target run under an address-space limit, and what it did held against
//! the promises — for the server, the invariants every run must keep (alive to the end of
//! input, exit 0, valid JSON-RPC only, bounded memory and output, the oracle's replies); for
//! `validate` and `check`, their documented verdicts and exit codes. The proxy targets' own
//! judges are in `proxy.rs`.

use std::process::Command;
use std::time::{Duration, Instant};

use super::Target;
use super::cases::Case;
use super::json::{self, STRICT};
use super::oracle::{Want, pending, split_lines, want_line};
use super::process::{OUTPUT_LINE_CAP, Run, SENTINEL_ID, run};
use super::proxy;
use super::replies::{Out, judge_replies};
use super::report::Violation;
use super::session::INIT_2025_03_26;
use super::spans::find;
use super::world::{MARKER, World};

/// What a case came to.
#[derive(Default)]
pub struct Outcome {
    pub messages: u64,
    pub violation: Option<Violation>,
    /// The pending classes that widened the oracle for this case.
    pub tolerated: Vec<&'static str>,
    /// When the case passed only thanks to them: what the strict oracle said.
    pub strict_failure: Option<Violation>,
}

/// Runs a case and judges what happened.
pub fn judge(world: &World, target: Target, case: &Case) -> Outcome {
    let outcome = Outcome { messages: split_lines(&case.input).len() as u64, ..Outcome::default() };
    match target {
        Target::Serve | Target::Root => judge_served(world, target, case, outcome),
        Target::ProxyCalls => proxy::judge_calls(world, case, outcome),
        Target::ProxyLists => proxy::judge_lists(world, case, outcome),
        Target::Validate => judge_validate(world, case, outcome),
        Target::Manifest => judge_manifest(world, case, outcome),
    }
}

/// A broken promise of `target` on `case`, run with `args`.
pub fn violation(
    target: Target,
    case: &Case,
    args: &[String],
    class: &str,
    detail: String,
) -> Violation {
    Violation {
        target: target.name().into(),
        class: class.into(),
        detail,
        args: args.to_vec(),
        input: case.input.clone(),
    }
}

/// Address space a fuzzed process may take: an amplification shows as a failed allocation
/// (reported) rather than as a machine out of memory.
const ADDRESS_SPACE_KIB: u64 = 4 << 20;

/// The binary with `args`, under the address-space limit, with no logging or state secret
/// from the environment.
pub fn command(world: &World, args: &[String]) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", &format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\"")])
        .arg(&world.bin)
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("BAREMCP_STATE_SECRET");
    command
}

/// A seed's serving flags with `--max-message-bytes limit`: a seed's own (a transcript's
/// `# args:`) is replaced, since the binary refuses the flag given twice.
pub fn with_limit(args: &[String], limit: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len() + 2);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--max-message-bytes" => {
                rest.next();
            }
            flag if flag.starts_with("--max-message-bytes=") => {}
            _ => out.push(arg.clone()),
        }
    }
    out.extend(["--max-message-bytes".into(), limit.to_string()]);
    out
}

/// The server itself (`serve`, `root`): its invariants, and for `root` no hidden byte out.
fn judge_served(world: &World, target: Target, case: &Case, mut outcome: Outcome) -> Outcome {
    let args = with_limit(&case.args, case.limit);
    let deadline =
        Duration::from_secs(if args.iter().any(|a| a == "--manifest") { 30 } else { 15 });
    let run = run(&mut command(world, &args), &case.input, case.sentinel, deadline);
    let mut wants: Vec<Want> =
        split_lines(&case.input).iter().map(|l| want_line(l, case.limit)).collect();
    if case.sentinel {
        wants.push(Want::One(Some(SENTINEL_ID.into())));
    }
    let verdict = judge_server(&run, &wants, case.limit, true, case.sentinel);
    let found = |class: &str, detail: String| violation(target, case, &args, class, detail);
    outcome.tolerated = verdict.tolerated;
    outcome.strict_failure = verdict.strict.map(|(class, detail)| found(&class, detail));
    outcome.violation = if target == Target::Root && find(&run.stdout, MARKER.as_bytes()).is_some()
    {
        Some(found("root-escape", "a file the root must hide was served".into()))
    } else {
        verdict.broken.map(|(class, detail)| found(&class, detail))
    };
    outcome
}

/// `validate --jsonl`: one well-formed verdict per instance line, exit 0 (all valid), 1 or 2
/// (a refusal said on stderr, with no verdict), no panic, within 10 s.
fn judge_validate(world: &World, case: &Case, mut outcome: Outcome) -> Outcome {
    let path = world.manifest_dir.join("schema.json");
    if std::fs::write(&path, case.args[0].as_bytes()).is_err() {
        return outcome;
    }
    let args = vec!["validate".to_string(), "--jsonl".into(), path.to_string_lossy().into_owned()];
    let started = Instant::now();
    let run = run(&mut command(world, &args), &case.input, false, Duration::from_secs(30));
    let took = started.elapsed();
    let lines = split_lines(&case.input).len();
    let verdicts: Vec<&[u8]> = split_lines(&run.stdout);
    let well_formed = verdicts.iter().all(|v| {
        json::members(v, STRICT).is_some_and(|m| {
            m.iter().any(|(k, v)| k.text == "valid" && (*v == b"true" || *v == b"false"))
                && m.iter().any(|(k, v)| k.text == "errors" && v.starts_with(b"["))
        })
    });
    let all_valid = verdicts.iter().all(|v| find(v, br#""valid":true"#).is_some());
    let mut input = format!("schema: {}\n", case.args[0]).into_bytes();
    input.extend_from_slice(&case.input);
    let v = |class: &str, detail: String| Violation {
        input: input.clone(),
        ..violation(Target::Validate, case, &args, class, detail)
    };
    outcome.violation = if run.hung {
        Some(v("hang", "validate did not finish within 30 s".into()))
    } else if let Some(at) = find(&run.stderr, b"panicked") {
        Some(v(
            "panic",
            String::from_utf8_lossy(&run.stderr[at.saturating_sub(100)..]).into_owned(),
        ))
    } else if !matches!(run.code, Some(0..=2)) {
        Some(v(
            "exit-code",
            format!("exit {:?}: {}", run.code, String::from_utf8_lossy(&run.stderr)),
        ))
    } else if run.code == Some(2) && (run.stderr.is_empty() || !run.stdout.is_empty()) {
        Some(v("exit-code", "exit 2 must say why on stderr and print no verdict".into()))
    } else if run.code != Some(2) && (verdicts.len() != lines || !well_formed) {
        Some(v(
            "verdicts",
            format!(
                "{lines} instance line(s), {} verdict line(s), well formed: {well_formed}",
                verdicts.len()
            ),
        ))
    } else if run.code != Some(2) && (run.code == Some(0)) != all_valid {
        Some(v("exit-code", format!("exit {:?} but all valid: {all_valid}", run.code)))
    } else if took > Duration::from_secs(10) {
        let found = v("slow", format!("validation took {:.1} s", took.as_secs_f64()));
        if pending("validation-budget") {
            outcome.tolerated.push("validation-budget");
            outcome.strict_failure = Some(found);
            None
        } else {
            Some(found)
        }
    } else {
        None
    };
    outcome
}

/// A mutated manifest: `check` exits 0 or 2 (saying why), `--manifest` agrees with it, and
/// serves valid JSON-RPC when it was accepted; neither panics nor hangs.
fn judge_manifest(world: &World, case: &Case, mut outcome: Outcome) -> Outcome {
    let path = world.manifest_dir.join("mutated.json");
    if std::fs::write(&path, &case.input).is_err() {
        return outcome;
    }
    let file = path.to_string_lossy().into_owned();
    let check_args = vec!["check".to_string(), file.clone()];
    let check = run(&mut command(world, &check_args), b"", false, Duration::from_secs(10));
    let serve_args = vec!["--manifest".to_string(), file];
    let init =
        format!("{INIT_2025_03_26}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}}\n");
    let serve =
        run(&mut command(world, &serve_args), init.as_bytes(), false, Duration::from_secs(10));
    outcome.messages = 2;
    if let Some((class, detail)) = manifest_disagreement(&check, &serve) {
        outcome.violation = Some(violation(Target::Manifest, case, &serve_args, class, detail));
    }
    outcome
}

/// The first promise `check` and `--manifest` broke on one manifest, if any.
fn manifest_disagreement(check: &Run, serve: &Run) -> Option<(&'static str, String)> {
    let panicked = |r: &Run| find(&r.stderr, b"panicked").is_some();
    if check.hung || serve.hung {
        Some(("hang", "check or --manifest did not finish".to_string()))
    } else if panicked(check) || panicked(serve) {
        Some((
            "panic",
            format!(
                "{}{}",
                String::from_utf8_lossy(&check.stderr),
                String::from_utf8_lossy(&serve.stderr)
            ),
        ))
    } else if !matches!(check.code, Some(0 | 2)) {
        Some(("exit-code", format!("check exited with {:?}", check.code)))
    } else if check.code != serve.code {
        Some((
            "check-disagrees",
            format!(
                "check exited {:?} but --manifest {:?}: {}",
                check.code,
                serve.code,
                String::from_utf8_lossy(&serve.stderr)
            ),
        ))
    } else if check.code == Some(2) && check.stderr.is_empty() && check.stdout.is_empty() {
        Some(("silent-refusal", "check refused the manifest without saying why".to_string()))
    } else if check.code == Some(0) && !serve.outs.iter().all(|o| o.is_ok()) {
        Some(("bad-output", format!("{:?}", serve.outs)))
    } else {
        None
    }
}

/// What the invariants said of a server run.
#[derive(Debug, Default)]
pub struct Verdict {
    /// The first broken invariant: its class and what showed it.
    pub broken: Option<(String, String)>,
    /// The pending classes that widened the oracle.
    pub tolerated: Vec<&'static str>,
    /// When the run passed only thanks to them: what the strict oracle said.
    pub strict: Option<(String, String)>,
}

impl Verdict {
    fn broken(class: &str, detail: String) -> Verdict {
        Verdict { broken: Some((class.into(), detail)), ..Verdict::default() }
    }

    /// Passed only because `class` is pending.
    fn tolerated(class: &'static str, detail: String) -> Verdict {
        Verdict { tolerated: vec![class], strict: Some((class.into(), detail)), broken: None }
    }
}

/// The invariants every server run must keep, in the order they are checked: the process,
/// its output's shape, its memory and the sentinel's answer, then the replies against `wants`.
pub fn judge_server(
    run: &Run,
    wants: &[Want],
    limit: usize,
    in_order: bool,
    sentinel: bool,
) -> Verdict {
    let has_batch = wants.iter().any(|w| matches!(w, Want::Batch(_)));
    let early = process_failure(run, has_batch)
        .or_else(|| shape_failure(run, in_order))
        .or_else(|| sentinel_failure(run, limit, has_batch, sentinel));
    if let Some(verdict) = early {
        return verdict;
    }
    let outs: Vec<Out> = run.outs.iter().filter_map(|o| o.clone().ok()).collect();
    let (verdict, tolerated) = judge_replies(wants, &outs, in_order, &[]);
    match verdict {
        Ok(None) => Verdict { tolerated, ..Verdict::default() },
        Ok(Some(strict_why)) => {
            let class = tolerated.first().copied().unwrap_or("pending");
            Verdict { strict: Some((class.into(), strict_why)), tolerated, broken: None }
        }
        Err(why) => Verdict::broken("responses", why),
    }
}

/// Grown past a bound: broken, unless the input has a batch while batch amplification is
/// pending.
fn amplified(has_batch: bool, class: &str, detail: String) -> Verdict {
    if has_batch && pending("batch-amplification") {
        Verdict::tolerated("batch-amplification", detail)
    } else {
        Verdict::broken(class, detail)
    }
}

/// The process: a reply line past the cap, a hang, a panic, a failed allocation, input left
/// unread, an exit status other than 0.
fn process_failure(run: &Run, has_batch: bool) -> Option<Verdict> {
    let stderr_from = |at: usize, to: usize| {
        String::from_utf8_lossy(&run.stderr[at..to.min(run.stderr.len())]).into_owned()
    };
    Some(if let Some(len) = run.huge_line {
        amplified(
            has_batch,
            "amplification",
            format!("a reply line of {len} bytes (cap {OUTPUT_LINE_CAP})"),
        )
    } else if run.hung {
        Verdict::broken(
            "hang",
            format!(
                "still running past the deadline after its input ended (sentinel seen: {})",
                run.sentinel_seen
            ),
        )
    } else if let Some(at) = find(&run.stderr, b"panicked") {
        Verdict::broken("panic", stderr_from(at.saturating_sub(200), at + 400))
    } else if let Some(at) = find(&run.stderr, b"memory allocation of") {
        amplified(has_batch, "memory", stderr_from(at, at + 200))
    } else if run.write_failed {
        Verdict::broken(
            "died-early",
            format!("stopped reading its input before the end; exit {:?}", run.code),
        )
    } else if run.code != Some(0) {
        Verdict::broken(
            "exit-code",
            format!("exit status {:?} at end of input; stderr: {}", run.code, stderr_from(0, 500)),
        )
    } else {
        return None;
    })
}

/// The output: every line valid JSON-RPC, and no request of the server's own (nothing it
/// serves asks the client anything).
fn shape_failure(run: &Run, in_order: bool) -> Option<Verdict> {
    for (out, excerpt) in run.outs.iter().zip(&run.excerpts) {
        match out {
            // The filtering proxy re-serializes a `tools/list` reply: a huge integer id
            // comes back as a float (finding F6).
            Err(why)
                if !in_order
                    && why.starts_with("a response whose id is not")
                    && pending("proxy-id-rewritten") =>
            {
                return Some(Verdict::tolerated("proxy-id-rewritten", format!("{why}: {excerpt}")));
            }
            Err(why) => return Some(Verdict::broken("not-json-rpc", format!("{why}: {excerpt}"))),
            Ok(Out::ServerRequest(id, method)) => {
                return Some(Verdict::broken(
                    "server-request",
                    format!("the server asked {method} ({id}) though nothing it serves asks"),
                ));
            }
            Ok(_) => {}
        }
    }
    None
}

/// Peak memory, read when the sentinel ping was answered: within 8 MiB + 4 × the line limit;
/// and that ping answered, when one was sent.
fn sentinel_failure(run: &Run, limit: usize, has_batch: bool, sentinel: bool) -> Option<Verdict> {
    let bound_kib = (8 << 10) + 4 * (limit as u64 >> 10);
    if let Some(peak) = run.peak_kib.filter(|&peak| peak > bound_kib) {
        let detail = format!(
            "peak memory {peak} KiB over {bound_kib} KiB (8 MiB + 4 × the {limit} byte line limit)"
        );
        return Some(amplified(has_batch, "memory", detail));
    }
    (sentinel && !run.sentinel_seen).then(|| {
        Verdict::broken("no-answer", "the ping sent after the input was never answered".into())
    })
}
