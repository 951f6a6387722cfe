//! Cases: each target's input and command line, made from the case's own PRNG (mutated
//! sessions, reads aimed out of the root, calls and `tools/list` replies aimed at the proxy's
//! filter, schemas and instances that make validation work, mutated manifests).

use std::path::Path;

use super::Target;
use super::mutate::{META, mutate_line};
use super::rng::Rng;
use super::session::{INIT_2025_03_26, mutate_session};
use super::spans::{body, find};
use super::world::World;

/// The case's input and command line, made from its own PRNG.
pub struct Case {
    pub args: Vec<String>,
    pub input: Vec<u8>,
    pub limit: usize,
    pub sentinel: bool,
    /// For the proxy targets: the upstream's canned replies.
    pub replies: Vec<u8>,
}

/// Makes a case for `target`. The draws come in a fixed order (limit, sentinel, then the
/// target's own), so a seed makes the same case every time.
pub fn make_case(world: &World, target: Target, rng: &mut Rng) -> Case {
    let limits = [1 << 20, 1 << 16, 4096, 16 << 20];
    let choices = if rng.one_in(20) { 4 } else { 3 };
    let limit = *rng.pick(&limits[..choices]);
    let mut case = Case {
        args: Vec::new(),
        input: Vec::new(),
        limit,
        sentinel: rng.below(4) != 0,
        replies: Vec::new(),
    };
    match target {
        Target::Serve => serve_case(world, rng, &mut case),
        Target::Root => root_case(world, rng, &mut case),
        Target::ProxyCalls => proxy_calls_case(rng, &mut case),
        Target::ProxyLists => proxy_lists_case(rng, &mut case),
        Target::Validate => validate_case(world, rng, &mut case),
        Target::Manifest => manifest_case(world, rng, &mut case),
    }
    case
}

/// A built-in transcript's flags with a mutated session.
fn serve_case(world: &World, rng: &mut Rng, case: &mut Case) {
    let seed = &world.seeds[*rng.pick(&world.builtin)];
    case.args = seed.args.clone();
    // Lines from any transcript (other servers' included) make good input too.
    let seed = if rng.one_in(5) { rng.pick(&world.seeds) } else { seed };
    case.input = mutate_session(rng, &seed.chunks, &world.pool, case.limit).concat();
    // The manifest's `slow` tool takes its 300 ms timeout on every call: a batch of
    // thousands is slow, not stuck. Past a few, the name is swapped for an unknown one.
    let mut slow = 0;
    let mut at = 0;
    while let Some(found) = find(&case.input[at..], b"\"slow\"") {
        at += found + 1;
        slow += 1;
        if slow > 10 {
            case.input[at..at + 4].copy_from_slice(b"nope");
        }
    }
}

/// The trapped root, sometimes with small limits, read through mutated `--root` sessions and
/// requests aimed out of it.
fn root_case(world: &World, rng: &mut Rng, case: &mut Case) {
    case.args = vec!["--root".into(), world.root.to_string_lossy().into_owned()];
    if rng.one_in(4) {
        case.args.extend(["--max-resource-bytes".into(), "16".into()]);
    }
    if rng.one_in(4) {
        case.args.extend(["--page-size".into(), "2".into()]);
    }
    let seed = rng.pick(&world.root_seeds).chunks.clone();
    let mut lines = mutate_session(rng, &seed, &world.pool, case.limit);
    for _ in 0..1 + rng.below(6) {
        lines.insert(rng.below(lines.len() + 1), root_request(rng, &world.root));
    }
    case.input = lines.concat();
}

/// Calls aimed at `--allow-tools echo`, mutated as a session.
fn proxy_calls_case(rng: &mut Rng, case: &mut Case) {
    case.args = vec!["--allow-tools".into(), "echo".into()];
    let mut lines = vec![format!("{INIT_2025_03_26}\n").into_bytes()];
    for n in 0..2 + rng.below(6) {
        lines.push(proxy_call(rng, n));
    }
    let pool: Vec<Vec<u8>> = lines.clone();
    let mut lines = mutate_session(rng, &lines, &pool, case.limit);
    if rng.one_in(3) {
        lines.insert(0, format!("{INIT_2025_03_26}\n").into_bytes());
    }
    case.input = lines.concat();
}

/// `tools/list` requests with ids of several kinds, and the upstream's mutated replies to
/// them for `--deny-tools`.
fn proxy_lists_case(rng: &mut Rng, case: &mut Case) {
    case.args = vec!["--deny-tools".into(), "secret_tool,other_secret".into()];
    let n = 1 + rng.below(6);
    for k in 0..n {
        let id =
            *rng.pick(&["1", "\"a\"", "\"\\u0061\"", "18446744073709551616", "-0", "\"\\ud800\""]);
        let id = if id == "1" { (k + 1).to_string() } else { id.to_string() };
        case.input.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n").as_bytes(),
        );
        let reply = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"echo","inputSchema":{{"type":"object"}}}},{{"name":"secret_tool","inputSchema":{{"type":"object"}}}},{{"name":"other_secret"}}],"nextCursor":"c"}}}}"#
        );
        let pool = vec![reply.clone().into_bytes()];
        let mut reply = reply.into_bytes();
        for _ in 0..1 + rng.below(3) {
            reply = mutate_reply(rng, &reply, &pool);
        }
        // The upstream is a shell loop: a NUL or a newline would not survive it.
        reply.retain(|&b| b != 0 && b != b'\n');
        case.replies.extend_from_slice(&reply);
        case.replies.push(b'\n');
    }
}

/// A suite schema (mutated, or one that makes validation work) as the argument, and its
/// instances (some mutated, maybe a hard one) as the input lines.
fn validate_case(world: &World, rng: &mut Rng, case: &mut Case) {
    let (schema, instances) = rng.pick(&world.schemas).clone();
    let mut schema = schema.into_bytes();
    if rng.one_in(2) {
        schema = mutate_line(rng, &schema, &[], 1 << 16);
    }
    if rng.one_in(4) {
        // Schemas that make validation work: unique items, patterns, nesting.
        let hard: &[&str] = &[
            r#"{"uniqueItems":true}"#,
            r#"{"items":{"uniqueItems":true},"uniqueItems":true}"#,
            r#"{"pattern":"^(a|a?)+$"}"#,
            r#"{"pattern":"(x+x+)+y"}"#,
            r##"{"$defs":{"a":{"items":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}"##,
            r#"{"anyOf":[{"items":{"anyOf":[{"type":"array"},{"type":"integer"}]}},{"contains":{"const":1}}]}"#,
        ];
        schema = rng.pick(hard).as_bytes().to_vec();
    }
    let mut lines: Vec<Vec<u8>> = instances.into_iter().map(String::into_bytes).collect();
    for _ in 0..rng.below(3) {
        if !lines.is_empty() {
            let at = rng.below(lines.len());
            lines[at] = mutate_line(rng, &lines[at], &[], 1 << 16);
        }
    }
    if rng.one_in(2) {
        lines.push(hard_instance(rng).into_bytes());
    }
    // Lines are the unit here: a newline inside a mutated instance makes two.
    case.args = vec![String::from_utf8_lossy(&schema).into_owned()];
    case.input = lines.iter().flat_map(|l| [body(l).0, b"\n"].concat()).collect();
}

/// A fixture manifest mutated a few times, as the input (`judge` writes it to a file).
fn manifest_case(world: &World, rng: &mut Rng, case: &mut Case) {
    let (_, text) = rng.pick(&world.manifests);
    let mut text = text.clone();
    for _ in 0..1 + rng.below(4) {
        text = mutate_line(rng, &text, &[], 1 << 16);
    }
    case.input = text;
}

/// A `resources/read` (or subscribe, or completion) of a path made of pieces that try to
/// leave the root or reach what it hides.
fn root_request(rng: &mut Rng, root: &Path) -> Vec<u8> {
    const PIECES: &[&str] = &[
        "..",
        "%2e%2e",
        "%2E%2E",
        ".%2e",
        "%2f",
        "%2F",
        "%252e%252e",
        ".",
        "",
        "secret.txt",
        "inside.txt",
        ".hidden.txt",
        ".dot",
        "inner.txt",
        "link-out",
        "dir-out",
        "link-hidden",
        "link-in",
        "pipe",
        "sub",
        "deep",
        "leaf.txt",
        "%00",
        "blob.bin",
        "%ff",
        "%",
        "%zz",
        "%+0",
        "%-1",
        "files",
        "root",
        "\\u002e\\u002e",
        "x%2f..%2f..",
    ];
    let mut path = String::new();
    for _ in 0..1 + rng.below(5) {
        path.push('/');
        let piece: &&str = rng.pick(PIECES);
        path.push_str(piece);
    }
    let base = match rng.below(6) {
        0 => String::from("file://"),
        1 => format!("file://{}", root.parent().unwrap().display()),
        2 => format!("file:{}", root.display()),
        _ => format!("file://{}", root.display()),
    };
    let id = rng.below(1000);
    let uri = format!("{base}{path}");
    let line = match rng.below(5) {
        0 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/subscribe","params":{{"uri":"{uri}"}}}}"#
        ),
        1 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"completion/complete","params":{{"ref":{{"type":"ref/resource","uri":"file://{}/{{+path}}"}},"argument":{{"name":"path","value":"{}"}}}}}}"#,
            root.display(),
            path.trim_start_matches('/')
        ),
        2 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{{META},"uri":"{uri}"}}}}"#
        ),
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"{uri}"}}}}"#
        ),
    };
    format!("{line}\n").into_bytes()
}

/// A `tools/call` or `tools/list` aimed at the filter.
fn proxy_call(rng: &mut Rng, n: usize) -> Vec<u8> {
    let id = n + 1;
    let name =
        *rng.pick(&["echo", "secret_tool", "other_secret", "secret\\u005ftool", "ech\\u006f"]);
    let meta = if rng.one_in(3) { format!(",{META}") } else { String::new() };
    let line = match rng.below(8) {
        0 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"{}}}"#,
            if meta.is_empty() {
                String::new()
            } else {
                format!(r#","params":{{{}}}"#, &meta[1..])
            }
        ),
        1 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","name":"{name}","arguments":{{}}{meta}}}}}"#
        ),
        2 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{"x":"\xff"}}{meta}}}}}"#
        ),
        3 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","method":"tools/call","params":{{"name":"{name}","arguments":{{}}{meta}}}}}"#
        ),
        4 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo"}},"params":{{"name":"{name}","arguments":{{}}{meta}}}}}"#
        ),
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{}}{meta}}}}}"#
        ),
    };
    raw_ff(format!("{line}\n").as_bytes())
}

/// Mutates a `tools/list` reply toward ambiguity: members twice, escapes, bytes.
fn mutate_reply(rng: &mut Rng, reply: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let text = String::from_utf8_lossy(reply).into_owned();
    let mutated = match rng.below(8) {
        0 => text.replacen(r#""name":"secret_tool""#, r#""name":"echo","name":"secret_tool""#, 1),
        1 => text.replacen(r#""name":"secret_tool""#, r#""name":"secret\u005ftool""#, 1),
        2 => text.replacen(r#""result":{"#, r#""result":{"tools":[],"x":"\xff","#, 1),
        3 => text.replacen(r#","result":"#, r#","result":{"tools":[]},"result":"#, 1),
        4 => {
            let at = text.rfind('}').unwrap_or(0);
            let mut t = text.clone();
            t.insert_str(at, r#","result":{"tools":[{"name":"secret_tool"}]}"#);
            t
        }
        5 => text.replacen(
            r#""inputSchema":{"type":"object"}"#,
            r#""inputSchema":{"type":"object"},"x":NaN"#,
            1,
        ),
        _ => return mutate_line(rng, reply, pool, 1 << 16),
    };
    raw_ff(mutated.as_bytes())
}

/// `\xff` written in the templates above (four characters) becomes the byte itself.
fn raw_ff(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(b"\\xff") {
            out.push(0xff);
            i += 4;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

/// Instances that make a validator work: many unique items, long strings, deep nesting.
fn hard_instance(rng: &mut Rng) -> String {
    let n = 1 + rng.below(5000);
    match rng.below(5) {
        0 => format!("[{}]", (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",")),
        1 => format!(
            "[{}]",
            (0..n).map(|i| format!("[{i},{{\"a\":[{i}]}}]")).collect::<Vec<_>>().join(",")
        ),
        2 => format!("\"{}\"", "a".repeat(n * 100)),
        3 => format!("{}1{}", "[".repeat(n), "]".repeat(n)),
        _ => {
            format!("{{{}}}", (0..n).map(|i| format!("\"k{i}\":{i}")).collect::<Vec<_>>().join(","))
        }
    }
}
