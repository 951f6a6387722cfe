//! The proxy targets, judged differentially: what the filter decided against what the
//! upstream saw and ran (`proxy-calls`), and against every reading a client might make of
//! what reached it (`proxy-lists`). A reading is strict (what serde_json, which the proxy
//! uses, reads) or lenient (first or last of a duplicated member, bytes read lossily, `NaN`).

use std::time::Duration;

use super::Target;
use super::cases::Case;
use super::json::{self, LENIENT, Node, Opts, STRICT};
use super::judge::{Outcome, command, judge_server, violation};
use super::oracle::{Want, lenient_id, odd_line, pending, readable_id, split_lines, want_line};
use super::process::{Run, run};
use super::report::Violation;
use super::spans::find;
use super::world::World;

/// The tools the proxy's filters must keep from the upstream and from the client.
const FILTERED: [&str; 2] = ["secret_tool", "other_secret"];

/// `proxy --allow-tools echo`: the upstream never runs a filtered tool nor receives a call
/// that reads as one, and the proxy keeps the server's invariants.
pub fn judge_calls(world: &World, case: &Case, mut outcome: Outcome) -> Outcome {
    let (args, run) = run_calls(world, case);
    // A filtering proxy refuses what it cannot judge itself: a line that is not JSON
    // gets at most one reply, with null or the id it could read there (as a line with
    // no id is a notification to it).
    let wants: Vec<Want> = split_lines(&case.input)
        .iter()
        .map(|l| match want_line(l, case.limit) {
            Want::One(None) => Want::Maybe(lenient_id(l)),
            want => want,
        })
        .collect();
    let verdict = judge_server(&run, &wants, case.limit, false, false);
    let found =
        |class: &str, detail: String| violation(Target::ProxyCalls, case, &args, class, detail);
    outcome.tolerated = verdict.tolerated;
    outcome.strict_failure = verdict.strict.map(|(class, detail)| found(&class, detail));
    let mut broken = verdict.broken;
    // An upstream still busy 2 s after its input closed is ended, as documented: its
    // replies and exit status are lost, by design.
    if find(&run.stderr, b"did not exit within").is_some() {
        broken = None;
    }
    // Replies whose ids the proxy rewrote (escapes decoded, lone surrogates as null,
    // huge integers as floats) cannot be matched while that fix is pending.
    if broken.as_ref().is_some_and(|(class, _)| class == "responses" || class == "not-json-rpc")
        && pending("proxy-id-text")
        && split_lines(&case.input).iter().any(|l| odd_line(l))
    {
        outcome.tolerated.push("proxy-id-text");
        outcome.strict_failure = broken.take().map(|(class, detail)| found(&class, detail));
    }
    match bypass(world) {
        Some((class @ "proxy-ambiguous", detail)) if pending(class) => {
            outcome.tolerated.push(class);
            outcome.strict_failure = Some(found(class, detail));
        }
        Some((class, detail)) => outcome.violation = Some(found(class, detail)),
        None => outcome.violation = broken.map(|(class, detail)| found(&class, detail)),
    }
    outcome
}

/// Runs the proxy in front of an upstream that logs what it receives (`tee`) and serves the
/// world's proxy manifest; returns the proxy's arguments and its run.
fn run_calls(world: &World, case: &Case) -> (Vec<String>, Run) {
    let _ = std::fs::remove_file(&world.proxy_log);
    let _ = std::fs::remove_file(&world.proxy_ran);
    let mut args = vec!["proxy".to_string(), "--max-message-bytes".into(), case.limit.to_string()];
    args.extend(case.args.iter().cloned());
    args.extend([
        "--".into(),
        "sh".into(),
        "-c".into(),
        r#"tee -a "$0" | "$1" --manifest "$2" --max-message-bytes "$3""#.into(),
        world.proxy_log.to_string_lossy().into_owned(),
        world.bin.to_string_lossy().into_owned(),
        world.proxy_manifest.to_string_lossy().into_owned(),
        case.limit.to_string(),
    ]);
    let run = run(&mut command(world, &args), &case.input, false, Duration::from_secs(15));
    (args, run)
}

/// What got past the filter to the upstream: a filtered tool it ran or a forwarded call a
/// strict reader takes for one (`proxy-bypass`), or one only some reader does
/// (`proxy-ambiguous`).
fn bypass(world: &World) -> Option<(&'static str, String)> {
    let saw = std::fs::read(&world.proxy_log).unwrap_or_default();
    let ran = std::fs::read_to_string(&world.proxy_ran).unwrap_or_default();
    if !ran.is_empty() {
        return Some(("proxy-bypass", format!("the upstream ran a filtered tool: {}", ran.trim())));
    }
    let forwarded =
        |opts| split_lines(&saw).into_iter().find(|l| calls_filtered(l, &FILTERED, opts));
    if let Some(line) = forwarded(STRICT) {
        Some((
            "proxy-bypass",
            format!(
                "forwarded a call that a strict reader takes for a filtered tool: {}",
                String::from_utf8_lossy(line)
            ),
        ))
    } else {
        forwarded(LENIENT).map(|line| {
            (
                "proxy-ambiguous",
                format!(
                    "forwarded a call that some reader (duplicates, bad UTF-8, NaN) takes for a filtered tool: {}",
                    String::from_utf8_lossy(line)
                ),
            )
        })
    }
}

/// `proxy --deny-tools`: no reading of what reaches the client lists a filtered tool in a
/// reply to one of its `tools/list` requests, and the proxy finishes after its input ends.
pub fn judge_lists(world: &World, case: &Case, mut outcome: Outcome) -> Outcome {
    let (args, run) = run_lists(world, case);
    let ids: Vec<Vec<u8>> = split_lines(&case.input)
        .iter()
        .filter_map(|l| member(l, "id").map(<[u8]>::to_vec))
        .collect();
    let mut input = case.input.clone();
    input.extend_from_slice(b"\n# upstream replies:\n");
    input.extend_from_slice(&case.replies);
    let found = |class: &str, detail: String| Violation {
        input: input.clone(),
        ..violation(Target::ProxyLists, case, &args, class, detail)
    };
    let reused = ids_reused(&ids, &case.replies);
    for line in split_lines(&run.stdout) {
        let strict = lists_filtered(line, &ids, STRICT);
        let lenient = lists_filtered(line, &ids, LENIENT);
        let shown = |what: &str| format!("{what}: {}", String::from_utf8_lossy(line));
        if strict && reused && pending("proxy-duplicate-ids") {
            outcome.tolerated.push("proxy-duplicate-ids");
            let detail = shown("the client was shown a filtered tool");
            outcome.strict_failure = Some(found("proxy-duplicate-ids", detail));
        } else if strict {
            let detail = shown("the client was shown a filtered tool");
            outcome.violation = Some(found("proxy-bypass", detail));
            break;
        } else if lenient {
            let ambiguous =
                found("proxy-ambiguous", shown("some reader of this reply sees a filtered tool"));
            if pending("proxy-ambiguous") {
                outcome.tolerated.push("proxy-ambiguous");
                outcome.strict_failure = Some(ambiguous);
            } else {
                outcome.violation = Some(ambiguous);
                break;
            }
        }
    }
    if outcome.violation.is_none() && run.hung {
        let detail = "the proxy did not finish after its input ended".into();
        outcome.violation = Some(violation(Target::ProxyLists, case, &args, "hang", detail));
    }
    outcome
}

/// Runs the proxy in front of an upstream (a shell loop) answering each line it gets with
/// the case's next canned reply; returns the proxy's arguments and its run.
fn run_lists(world: &World, case: &Case) -> (Vec<String>, Run) {
    let replies = world.proxy_log.with_extension("replies");
    let _ = std::fs::write(&replies, &case.replies);
    let mut args = vec!["proxy".to_string()];
    args.extend(case.args.iter().cloned());
    args.extend([
        "--".into(),
        "sh".into(),
        "-c".into(),
        r#"while IFS= read -r line; do IFS= read -r reply <&3 || exit 0; printf '%s\n' "$reply"; done 3<"$0""#
            .into(),
        replies.to_string_lossy().into_owned(),
    ]);
    let run = run(&mut command(world, &args), &case.input, false, Duration::from_secs(15));
    (args, run)
}

/// Whether the client reused an id while it was in flight, or the upstream answered one id
/// twice: either breaks JSON-RPC, but the filter must still hold.
fn ids_reused(ids: &[Vec<u8>], replies: &[u8]) -> bool {
    let canonical = |id: &[u8]| String::from_utf8_lossy(id).replace("\\u0061", "a");
    let mut asked: Vec<String> = ids.iter().map(|id| canonical(id)).collect();
    asked.sort();
    let answered: Vec<String> =
        split_lines(replies).iter().filter_map(|r| member(r, "id")).map(canonical).collect();
    asked.windows(2).any(|w| w[0] == w[1])
        || answered.iter().any(|a| answered.iter().filter(|b| *b == a).count() > 1)
}

/// The raw value of a top-level member (first of its name).
fn member<'a>(line: &'a [u8], name: &str) -> Option<&'a [u8]> {
    json::members(line, STRICT)?.into_iter().find(|(k, _)| k.text == name).map(|(_, v)| v)
}

/// Each reading a lenient or careless reader might make of a line: bytes as UTF-8 or
/// lossily, and for a duplicated member the first or the last.
fn readings(line: &[u8], opts: Opts) -> Vec<Node<'static>> {
    let mut texts = vec![line.to_vec()];
    if std::str::from_utf8(line).is_err() {
        texts = vec![String::from_utf8_lossy(line).into_owned().into_bytes()];
    }
    let mut out = Vec::new();
    for text in texts {
        let text: &'static [u8] = Box::leak(text.into_boxed_slice());
        if let Some(node) = json::parse(text, 6, opts) {
            out.push(node);
        }
    }
    out
}

/// The value of `name` in an object under a duplicate policy: first or last.
fn get<'n, 'a>(node: &'n Node<'a>, name: &str, last: bool) -> Option<&'n Node<'a>> {
    let Node::Object(members) = node else { return None };
    let mut found = members.iter().filter(|(k, _)| k.text == name).map(|(_, v)| v);
    if last { found.next_back() } else { found.next() }
}

/// Whether any reading of a forwarded line calls one of `filtered`.
fn calls_filtered(line: &[u8], filtered: &[&str], opts: Opts) -> bool {
    let strict_only = opts == STRICT;
    any_message(line, opts, |message, last| {
        let method = get(message, "method", last).and_then(Node::as_str);
        let name =
            get(message, "params", last).and_then(|p| get(p, "name", last)).and_then(Node::as_str);
        // A strict reader also refuses a member twice in params.
        let clean = !strict_only
            || (strict_envelope(message)
                && get(message, "params", false).is_none_or(no_duplicates));
        clean && method == Some("tools/call") && name.is_some_and(|n| filtered.contains(&n))
    })
}

/// Whether `holds` for some message (a line's, or a batch item) of some reading of `line`,
/// under some duplicate policy (`last`: the last of a duplicated member, else the first).
fn any_message(line: &[u8], opts: Opts, holds: impl Fn(&Node, bool) -> bool) -> bool {
    let strict_only = opts == STRICT;
    // The strict reading is of what serde_json (which the proxy uses) reads too; JSON it
    // refuses (lone surrogates, nesting past 128, numbers past f64) is the lenient part.
    if strict_only && !serde_reads(line) {
        return false;
    }
    let policies: &[bool] = if strict_only { &[false] } else { &[false, true] };
    readings(line, opts).iter().any(|node| {
        let messages: Vec<&Node> = match node {
            Node::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        messages.iter().any(|message| policies.iter().any(|&last| holds(message, last)))
    })
}

/// What a strict reader asks of any message: no member twice, `"jsonrpc":"2.0"`, and an id
/// (without one, a request is a notification).
fn strict_envelope(message: &Node) -> bool {
    no_duplicates(message)
        && get(message, "jsonrpc", false).and_then(Node::as_str) == Some("2.0")
        && readable(get(message, "id", false))
}

/// An id as MCP has them (a string or an integer); JSON-RPC also allows fractions and null,
/// which a lenient peer reads.
fn readable(id: Option<&Node>) -> bool {
    match id {
        Some(Node::String(_)) => true,
        Some(Node::Other(raw)) => readable_id(raw),
        _ => false,
    }
}

/// Whether serde_json, which the proxy uses, reads `line`.
fn serde_reads(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line).is_ok()
}

/// Whether an object names each member once (anything else does).
fn no_duplicates(node: &Node) -> bool {
    let Node::Object(members) = node else { return true };
    let mut names: Vec<&str> = members.iter().map(|(k, _)| k.text.as_str()).collect();
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}

/// Whether any reading of a line the client got lists a filtered tool in a reply to one of
/// its `tools/list` requests.
fn lists_filtered(line: &[u8], ids: &[Vec<u8>], opts: Opts) -> bool {
    let canonical = |raw: &[u8]| -> String {
        match json::string(raw, 0) {
            Ok((_, d)) => format!("s:{}", d.text),
            Err(()) => format!(
                "n:{}",
                String::from_utf8_lossy(raw).trim_start_matches('-').trim_start_matches('0')
            ),
        }
    };
    let asked: Vec<String> = ids.iter().map(|id| canonical(id)).collect();
    let strict_only = opts == STRICT;
    any_message(line, opts, |message, last| {
        let id = match get(message, "id", last) {
            Some(Node::String(d)) => format!("s:{}", d.text),
            Some(Node::Other(raw)) => canonical(raw),
            _ => return false,
        };
        let result = get(message, "result", last);
        let tools = result.and_then(|r| get(r, "tools", last));
        let Some(Node::Array(tools)) = tools else { return false };
        // A strict reader also refuses members twice in the result or a tool.
        let clean = !strict_only
            || (strict_envelope(message)
                && result.is_some_and(no_duplicates)
                && tools.iter().all(no_duplicates));
        clean
            && asked.contains(&id)
            && tools.iter().any(|t| {
                get(t, "name", last).and_then(Node::as_str).is_some_and(|n| FILTERED.contains(&n))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_readings_see_every_ambiguity() {
        let filtered = ["secret_tool"];
        let calls = |line: &[u8], opts| calls_filtered(line, &filtered, opts);
        let plain =
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"secret_tool"}}"#;
        assert!(calls(plain, STRICT));
        let twice = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"secret_tool"}}"#;
        assert!(!calls(twice, STRICT) && calls(twice, LENIENT));
        let bad_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"secret_tool\",\"x\":\"\xff\"}}";
        assert!(!calls(bad_utf8, STRICT) && calls(bad_utf8, LENIENT));
        let nan = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"secret\u005ftool","x":NaN}}"#;
        assert!(!calls(nan, STRICT) && calls(nan, LENIENT));
        assert!(!calls(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
            LENIENT
        ));
        let ids = vec![b"1".to_vec()];
        let listed = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"},{"name":"secret_tool"}]}}"#;
        assert!(lists_filtered(listed, &ids, STRICT));
        assert!(!lists_filtered(listed, &[b"2".to_vec()], LENIENT));
        let twice = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]},"result":{"tools":[{"name":"secret_tool"}]}}"#;
        assert!(!lists_filtered(twice, &ids, STRICT) && lists_filtered(twice, &ids, LENIENT));
        let no_version = br#"{"id":1,"method":"tools/call","params":{"name":"secret_tool"}}"#;
        assert!(!calls(no_version, STRICT) && calls(no_version, LENIENT));
    }
}
