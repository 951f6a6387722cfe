//! The HTTP fuzzer's requests as built: a draft (request line, fields, body, framing) made
//! from a template — 2026-07-28 requests with their headers, legacy messages in a session,
//! `initialize`, GET streams, DELETE, and what the endpoint refuses — each body a client
//! line of the golden transcripts; then written out as bytes with the framing it asks for.
//! `http_mutate.rs` changes drafts and bytes.

use super::json::{self, STRICT};
use super::rng::Rng;
use super::seeds::load_seeds;

/// Stands for the session id in the bytes until the session is opened: as long as an id (128
/// bits in hex), so lengths computed before stay right.
pub const SESSION_SLOT: &str = "5e55105e55105e55105e55105e55105e";

/// The 2026-07-28 `_meta` key that names the version.
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// A legacy `initialize`, `VERSION` replaced.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"VERSION","capabilities":{},"clientInfo":{"name":"http-fuzz","version":"1"}}}"#;

/// The legacy versions a session is opened with (2025-03-26 serves batches).
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The client lines the bodies come from, by era.
pub struct Bodies {
    pub modern: Vec<Vec<u8>>,
    pub legacy: Vec<Vec<u8>>,
    /// Every line, for splicing.
    pub all: Vec<Vec<u8>>,
}

/// Every client line of the golden transcripts, sorted by era (`initialize` left out: a
/// session is opened by the case itself).
pub fn bodies(fixtures: &std::path::Path) -> Bodies {
    let mut bodies = Bodies { modern: Vec::new(), legacy: Vec::new(), all: Vec::new() };
    for seed in load_seeds(fixtures) {
        for chunk in &seed.chunks {
            for line in chunk.split(|&b| b == b'\n').filter(|l| !l.trim_ascii().is_empty()) {
                bodies.all.push(line.to_vec());
                if find(line, VERSION_KEY.as_bytes()) {
                    bodies.modern.push(line.to_vec());
                } else if !find(line, b"\"initialize\"") {
                    bodies.legacy.push(line.to_vec());
                }
            }
        }
    }
    let (modern, legacy) = hostile_reads();
    bodies.all.extend(modern.iter().chain(&legacy).cloned());
    bodies.modern.extend(modern);
    bodies.legacy.extend(legacy);
    bodies
}

/// The server's resource templates whose variables touch (`http_engine::setup` serves them):
/// the shape that makes a matcher try every split.
pub const HOSTILE_TEMPLATES: &str = r#"[{"uriTemplate":"fz://{a}{b}/x","name":"pair","run":{"argv":["echo","--","{a}"]}},{"uriTemplate":"fz://{a}/{+b}{c}/y","name":"reserved","run":{"argv":["echo","--","{c}"]}}]"#;

/// Reads of long URIs shaped to cost [`HOSTILE_TEMPLATES`] the most (runs of plain,
/// percent-encoded and separator characters that never end as a template does), 2026-07-28
/// ones and legacy ones: each must be answered as quickly as any other request, whatever its
/// length. A 2026-07-28 request repeats its URI in `Mcp-Name`, so its URIs are short enough
/// for the head (longer ones test the head's limit); legacy URIs grow to 256 KiB.
fn hostile_reads() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let meta = format!(
        r#","_meta":{{"{VERSION_KEY}":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
    );
    let (mut modern, mut legacy) = (Vec::new(), Vec::new());
    for (n, piece) in ["a", "%41", "a/", "%2F", "/"].iter().enumerate() {
        for (size, era) in [(1 << 12, "modern"), (1 << 14, "legacy"), (1 << 18, "legacy")] {
            let uri = format!("fz://{}/z", piece.repeat(size / piece.len()));
            let meta = if era == "modern" { meta.as_str() } else { "" };
            let read = format!(
                r#"{{"jsonrpc":"2.0","id":{n},"method":"resources/read","params":{{"uri":"{uri}"{meta}}}}}"#
            );
            if era == "modern" { &mut modern } else { &mut legacy }.push(read.into_bytes());
        }
    }
    (modern, legacy)
}

fn find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A request before it is written out.
#[derive(Clone, Debug)]
pub struct Draft {
    pub method: String,
    pub target: String,
    pub version: String,
    /// Names as sent; values as bytes (they may hold anything).
    pub fields: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
    pub framing: Framing,
    /// Head lines end with a bare LF (RFC 9112 §2.2 lets a server read it).
    pub lf_only: bool,
    /// Empty lines before the request line.
    pub leading: usize,
}

/// How the body is framed when the draft is written.
#[derive(Clone, Debug)]
pub enum Framing {
    /// `Content-Length` of the body plus `lie` (a wrong one when not 0).
    Length { lie: i64 },
    /// Chunks cut at these sizes (the rest in one more), with extensions, trailer fields, or
    /// sizes in upper case and with leading zeros.
    Chunked { pieces: Vec<usize>, extensions: bool, trailers: bool, odd_sizes: bool },
    /// No framing field.
    Bare,
}

/// A request drafted from a template, and what its own stage must answer while it is as
/// drafted (`None`: the model's broad set).
pub struct Drafted {
    pub draft: Draft,
    pub stage: Option<Vec<u16>>,
    /// It opens a stream that stays open: nothing after it on its connection is answered.
    pub opens_stream: bool,
}

/// What a case's requests may use.
#[derive(Clone, Copy)]
pub struct Context {
    /// A legacy session is opened before (its id in place of [`SESSION_SLOT`]).
    pub session: bool,
    /// The case may delete it: every use of it may find it gone (`404`).
    pub deletes: bool,
    /// 2025-03-26: batches are served.
    pub batches: bool,
}

impl Draft {
    fn post(body: Vec<u8>, fields: &[(&str, &str)]) -> Draft {
        let mut all = vec![
            ("Host".to_string(), b"localhost".to_vec()),
            ("Content-Type".to_string(), b"application/json".to_vec()),
            ("Accept".to_string(), b"application/json, text/event-stream".to_vec()),
        ];
        all.extend(fields.iter().map(|(n, v)| (n.to_string(), v.as_bytes().to_vec())));
        Draft {
            method: "POST".into(),
            target: "/mcp".into(),
            version: "HTTP/1.1".into(),
            fields: all,
            body,
            framing: Framing::Length { lie: 0 },
            lf_only: false,
            leading: 0,
        }
    }

    fn bodiless(method: &str, target: &str, fields: &[(&str, &str)]) -> Draft {
        let mut draft = Draft::post(Vec::new(), fields);
        draft.fields.retain(|(n, _)| n != "Content-Type");
        draft.method = method.into();
        draft.target = target.into();
        draft.framing = Framing::Bare;
        draft
    }

    /// The value of field `name` (any case), if set.
    pub fn field(&self, name: &str) -> Option<&[u8]> {
        self.fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_slice())
    }

    pub fn set(&mut self, name: &str, value: &[u8]) {
        match self.fields.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some(field) => field.1 = value.to_vec(),
            None => self.fields.push((name.to_string(), value.to_vec())),
        }
    }

    pub fn remove(&mut self, name: &str) {
        self.fields.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    /// The draft as bytes: request line, fields, the framing field, the body framed.
    pub fn write(&self) -> Vec<u8> {
        let end: &[u8] = if self.lf_only { b"\n" } else { b"\r\n" };
        let mut out = end.repeat(self.leading);
        out.extend_from_slice(
            format!("{} {} {}", self.method, self.target, self.version).as_bytes(),
        );
        out.extend_from_slice(end);
        for (name, value) in &self.fields {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(end);
        }
        match &self.framing {
            Framing::Length { lie } => {
                let length = (self.body.len() as i64 + lie).max(0);
                out.extend_from_slice(format!("Content-Length: {length}").as_bytes());
                out.extend_from_slice(end);
                out.extend_from_slice(end);
                out.extend_from_slice(&self.body);
            }
            Framing::Chunked { pieces, extensions, trailers, odd_sizes } => {
                out.extend_from_slice(b"Transfer-Encoding: chunked");
                out.extend_from_slice(end);
                out.extend_from_slice(end);
                let mut at = 0;
                let mut sizes: Vec<usize> = pieces.clone();
                sizes.push(self.body.len().saturating_sub(pieces.iter().sum()));
                for size in sizes.into_iter().filter(|&s| s > 0) {
                    let size = size.min(self.body.len() - at);
                    if size == 0 {
                        continue;
                    }
                    let digits =
                        if *odd_sizes { format!("000{size:X}") } else { format!("{size:x}") };
                    out.extend_from_slice(digits.as_bytes());
                    if *extensions {
                        out.extend_from_slice(b" ; name = \"quoted \\\" value\";flag");
                    }
                    out.extend_from_slice(b"\r\n");
                    out.extend_from_slice(&self.body[at..at + size]);
                    out.extend_from_slice(b"\r\n");
                    at += size;
                }
                out.extend_from_slice(b"0\r\n");
                if *trailers {
                    out.extend_from_slice(b"X-Trailer: yes\r\nX-Other: 1\r\n");
                }
                out.extend_from_slice(b"\r\n");
            }
            Framing::Bare => {
                out.extend_from_slice(end);
                out.extend_from_slice(&self.body);
            }
        }
        out
    }
}

/// The headers a 2026-07-28 request repeats from its body: version, method, and the name
/// (tool, prompt, resource URI, task), base64-wrapped when it is not plain visible ASCII.
pub fn modern_fields(body: &[u8]) -> Vec<(String, String)> {
    let mut fields = vec![("MCP-Protocol-Version".to_string(), "2026-07-28".to_string())];
    let Some(members) = json::members(body, STRICT) else { return fields };
    let get = |name: &str| members.iter().find(|(k, _)| k.text == name).map(|(_, v)| *v);
    let Some(method) = get("method").and_then(|m| json::string(m, 0).ok()).map(|(_, d)| d.text)
    else {
        return fields;
    };
    fields.push(("Mcp-Method".into(), method.clone()));
    let key = match method.as_str() {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return fields,
    };
    let params = get("params").and_then(|p| json::members(p, STRICT)).unwrap_or_default();
    let name = params
        .iter()
        .find(|(k, _)| k.text == key)
        .and_then(|(_, v)| json::string(v, 0).ok())
        .map(|(_, d)| d.text);
    if let Some(name) = name {
        let plain = !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_graphic())
            && !name.starts_with("=?base64?");
        let value = if plain {
            name
        } else {
            format!("=?base64?{}?=", baremcp::encoding::base64(name.as_bytes()))
        };
        fields.push(("Mcp-Name".into(), value));
    }
    fields
}

/// What a legacy message in a live session gets: a request its answer in a `200` (or `400`
/// when it is no valid request), a notification or response `202`, a batch either.
fn legacy_stage(body: &[u8], context: Context) -> Vec<u16> {
    let mut stage = match json::members(body, STRICT) {
        Some(members) => {
            let has = |name: &str| members.iter().any(|(k, _)| k.text == name);
            if has("method") && has("id") { vec![200, 400] } else { vec![202, 400] }
        }
        None if json::items(body, STRICT).is_some() => vec![200, 202, 400],
        None => vec![400],
    };
    if context.deletes {
        stage.push(404);
    }
    stage
}

/// A request from one of the templates.
pub fn template(rng: &mut Rng, bodies: &Bodies, context: Context) -> Drafted {
    let session = ("Mcp-Session-Id", SESSION_SLOT);
    let gone = |statuses: &[u16]| {
        let mut statuses = statuses.to_vec();
        if context.deletes {
            statuses.push(404);
        }
        Some(statuses)
    };
    let pick = rng.below(100);
    let (draft, stage, opens_stream) = match pick {
        // A legacy message in the session.
        0..=29 if context.session => {
            let body = rng.pick(&bodies.legacy).clone();
            let mut fields = vec![session];
            if rng.one_in(3) {
                fields.push(("MCP-Protocol-Version", *rng.pick(&LEGACY_VERSIONS)));
            }
            let stage = legacy_stage(&body, context);
            (Draft::post(body, &fields), Some(stage), false)
        }
        30..=33 if context.session => {
            let fields = [session, ("Accept", "text/event-stream")];
            (Draft::bodiless("GET", "/mcp", &fields), gone(&[200]), true)
        }
        34..=36 if context.deletes => {
            (Draft::bodiless("DELETE", "/mcp", &[session]), Some(vec![204, 404]), false)
        }
        37..=40 => {
            let version = *rng.pick(&LEGACY_VERSIONS);
            let body = INITIALIZE.replace("VERSION", version).into_bytes();
            (Draft::post(body, &[]), Some(vec![200]), false)
        }
        // A legacy message without a session: refused.
        41..=44 => {
            let body = rng.pick(&bodies.legacy).clone();
            (Draft::post(body, &[]), Some(vec![400]), false)
        }
        45..=54 => (refused(rng), None, false),
        _ => {
            let body = rng.pick(&bodies.modern).clone();
            let fields = modern_fields(&body);
            let listen = find(&body, b"subscriptions/listen");
            let refs: Vec<(&str, &str)> =
                fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
            let stage = if find(&body, b"\"id\"") { vec![200, 400, 404] } else { vec![202, 400] };
            (Draft::post(body, &refs), Some(stage), listen)
        }
    };
    let mut drafted = Drafted { draft, stage, opens_stream };
    vary(rng, &mut drafted.draft);
    drafted
}

/// A request the endpoint refuses (or answers) before its message: the metadata paths, `HEAD`
/// and other methods, other paths, a foreign `Host` or `Origin`, media types.
fn refused(rng: &mut Rng) -> Draft {
    const META: &str = "/.well-known/oauth-protected-resource";
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec();
    match rng.below(10) {
        0 => {
            let method = *rng.pick(&["GET", "HEAD", "POST", "DELETE"]);
            Draft::bodiless(method, META, &[])
        }
        1 => {
            let target = *rng.pick(&["/mcp", "/other", META]);
            Draft::bodiless("HEAD", target, &[])
        }
        2 => {
            let method = *rng.pick(&["OPTIONS", "PUT", "PATCH", "TRACE", "get"]);
            Draft::bodiless(method, "/mcp", &[])
        }
        3 => {
            let target = *rng.pick(&["/", "/MCP", "/mcp/", "/other", "//mcp"]);
            Draft::bodiless("GET", target, &[])
        }
        4 => Draft::post(ping, &[("Host", *rng.pick(&["evil.example", "evil.example:80"]))]),
        5 => Draft::post(ping, &[("Origin", *rng.pick(&["http://evil.example", "null"]))]),
        6 => Draft::post(ping, &[("Content-Type", "text/plain")]),
        7 => Draft::post(ping, &[("Accept", "text/html")]),
        8 => Draft::bodiless("GET", "/mcp", &[("Accept", "text/event-stream")]),
        _ => {
            let mut draft = Draft::post(ping, &[]);
            draft.framing = Framing::Bare;
            draft.body.clear();
            draft
        }
    }
}

/// Variations every server must take alike: field-name case, extra fields, another loopback
/// `Host`, a query, `Expect: 100-continue`, HTTP/1.0, chunked framing, bare LF line ends,
/// empty lines before the request.
fn vary(rng: &mut Rng, draft: &mut Draft) {
    for _ in 0..rng.below(3) {
        match rng.below(9) {
            0 => {
                for (name, _) in &mut draft.fields {
                    *name = if rng.one_in(2) {
                        name.to_ascii_lowercase()
                    } else {
                        name.to_ascii_uppercase()
                    };
                }
            }
            1 => draft.fields.push(("User-Agent".into(), b"http-fuzz/1 (\xe2\x9c\x93)".to_vec())),
            2 => {
                let host = *rng.pick(&["127.0.0.1:8080", "[::1]:9", "LocalHost", "localhost:1"]);
                draft.set("Host", host.as_bytes());
            }
            3 if draft.target == "/mcp" => draft.target = "/mcp?x=1&y".into(),
            4 if draft.method == "POST" => draft.set("Expect", b"100-continue"),
            5 if !matches!(draft.framing, Framing::Chunked { .. }) => {
                draft.version = "HTTP/1.0".into();
                if rng.one_in(2) {
                    draft.set("Connection", b"keep-alive");
                }
            }
            6 if draft.version == "HTTP/1.1" && !draft.body.is_empty() => {
                let pieces = (0..rng.below(4)).map(|_| 1 + rng.below(draft.body.len())).collect();
                draft.framing = Framing::Chunked {
                    pieces,
                    extensions: rng.one_in(3),
                    trailers: rng.one_in(3),
                    odd_sizes: rng.one_in(3),
                };
            }
            7 => draft.lf_only = true,
            _ => draft.leading = 1 + rng.below(2),
        }
    }
}

#[cfg(test)]
mod tests {
    // Imported in the test itself: the soak compiles this module without the test harness.
    #[test]
    fn drafts_write_the_framing_they_name() {
        use super::*;
        let mut draft = Draft::post(b"{\"a\":1}".to_vec(), &[]);
        let text = String::from_utf8(draft.write()).unwrap();
        assert!(text.ends_with("Content-Length: 7\r\n\r\n{\"a\":1}"), "{text}");
        draft.framing = Framing::Chunked {
            pieces: vec![2],
            extensions: false,
            trailers: false,
            odd_sizes: false,
        };
        let text = String::from_utf8(draft.write()).unwrap();
        assert!(text.ends_with("chunked\r\n\r\n2\r\n{\"\r\n5\r\na\":1}\r\n0\r\n\r\n"), "{text}");
        let fields = modern_fields(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"h\u00e9"}}"#,
        );
        assert_eq!(fields[1], ("Mcp-Method".to_string(), "tools/call".to_string()));
        assert_eq!(fields[2].1, "=?base64?aMOp?=");
    }
}
