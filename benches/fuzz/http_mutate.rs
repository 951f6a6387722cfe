//! Mutations of a drafted request: fields duplicated, dropped, folded, given control bytes,
//! grown to the head's bounds or multiplied past its field count; request lines with other
//! versions, methods, targets and spacing; `Content-Length` lies and duplicates; transfer
//! codings alone, stacked and beside a length; broken chunks and trailers; other hosts,
//! origins, media types and session ids; the message mutated as the stdio fuzzer mutates a
//! line; and, on the written bytes, flipped, inserted, deleted and spliced bytes.

use super::http_gen::{Draft, Framing, SESSION_SLOT};
use super::http_model::{MAX_FIELDS, MAX_HEAD};
use super::mutate::mutate_line;
use super::rng::Rng;

/// Values a field may be given.
const VALUES: [&[u8]; 12] = [
    b"",
    b" ",
    b"a\rb",
    b"a\0b",
    b"a\x01b",
    b"a\x7fb",
    b"\xff\xfe",
    b"\xc3\xa9t\xc3\xa9",
    b"a\x0bb",
    b"chunked",
    b"close",
    b"=?base64?!!?=",
];

/// Mutates a draft in one to three ways; the written bytes are for [`mutate_bytes`].
pub fn mutate_draft(rng: &mut Rng, draft: &mut Draft, pool: &[Vec<u8>], max_body: usize) {
    for _ in 0..1 + rng.below(3) {
        match rng.below(22) {
            0 | 1 => duplicate_field(rng, draft),
            2 if !draft.fields.is_empty() => {
                let at = rng.below(draft.fields.len());
                draft.fields.remove(at);
            }
            3 => fold(rng, draft),
            4 | 5 => odd_field(rng, draft),
            6 => huge_field(rng, draft),
            7 => many_fields(rng, draft),
            8 => request_line(rng, draft),
            9 | 10 => length_lie(rng, draft, max_body),
            11 | 12 => transfer_coding(rng, draft),
            13 => {
                let value = *rng.pick(&[
                    "evil.example",
                    "",
                    "localhost:",
                    "::1",
                    "127.0.0.1.evil:80",
                    "localhost, evil.example",
                    "[::1]evil.example",
                ]);
                if rng.one_in(3) {
                    draft.fields.push(("Host".into(), value.as_bytes().to_vec()));
                } else if rng.one_in(2) {
                    draft.remove("Host");
                } else {
                    draft.set("Host", value.as_bytes());
                }
            }
            14 => {
                let origin = *rng.pick(&[
                    "http://evil.example",
                    "null",
                    "http://localhost:3000",
                    "https://[::1]",
                    "file://",
                    "http://localhost.evil.example",
                ]);
                draft.set("Origin", origin.as_bytes());
            }
            15 => {
                let media = *rng.pick(&[
                    "text/plain",
                    "application/json; charset=utf-8",
                    "APPLICATION/JSON",
                    "application/jsonx",
                    "application/json;",
                ]);
                if rng.one_in(4) {
                    draft.remove("Content-Type")
                } else {
                    draft.set("Content-Type", media.as_bytes())
                }
            }
            16 => {
                let accept =
                    *rng.pick(&["text/html", "application/json", "text/event-stream", "*/*", ""]);
                draft.set("Accept", accept.as_bytes());
            }
            17 => {
                let id =
                    *rng.pick(&["0123456789abcdef0123456789abcdef", "", "x", &SESSION_SLOT[..16]]);
                if rng.one_in(3) {
                    draft.remove("Mcp-Session-Id")
                } else {
                    draft.set("Mcp-Session-Id", id.as_bytes())
                }
            }
            18 => mcp_fields(rng, draft),
            19 => {
                let (name, value) = *rng.pick(&[
                    ("Expect", "100-continue"),
                    ("Expect", "something-else"),
                    ("Connection", "close"),
                    ("Connection", "close, keep-alive"),
                    ("Upgrade", "h2c"),
                    ("Connection", "Upgrade, HTTP2-Settings"),
                ]);
                draft.set(name, value.as_bytes());
            }
            _ if !pool.is_empty() => {
                let body =
                    if draft.body.is_empty() { rng.pick(pool).clone() } else { draft.body.clone() };
                let mut mutated = mutate_line(rng, &body, pool, max_body);
                mutated.truncate(max_body + 64);
                draft.body = mutated;
            }
            _ => {}
        }
    }
}

fn duplicate_field(rng: &mut Rng, draft: &mut Draft) {
    if draft.fields.is_empty() {
        return;
    }
    let (name, value) = draft.fields[rng.below(draft.fields.len())].clone();
    let value = if rng.one_in(2) { value } else { rng.pick(&VALUES).to_vec() };
    let at = rng.below(draft.fields.len() + 1);
    draft.fields.insert(at, (name, value));
}

/// obs-fold: a line that starts with a space or tab.
fn fold(rng: &mut Rng, draft: &mut Draft) {
    if let Some(field) = draft.fields.last_mut() {
        let fold: &[u8] = if rng.one_in(2) { b"\r\n folded" } else { b"\r\n\tfolded" };
        field.1.extend_from_slice(fold);
    }
}

/// Bytes a field may not hold, or a name that is not one.
fn odd_field(rng: &mut Rng, draft: &mut Draft) {
    match rng.below(4) {
        0 if !draft.fields.is_empty() => {
            let at = rng.below(draft.fields.len());
            let value = rng.pick(&VALUES);
            draft.fields[at].1.extend_from_slice(value);
        }
        1 => {
            let name = *rng.pick(&["Bad Name", "Host ", "", "X\x01", "Ä", "X:Y", "(x)"]);
            draft.fields.push((name.into(), b"x".to_vec()));
        }
        2 => draft.fields.push(("X-Bare-CR".into(), b"a\rX-Smuggled: 1".to_vec())),
        _ => {
            // A line with no colon at all, after some field.
            if let Some(field) = draft.fields.last_mut() {
                field.1.extend_from_slice(b"\r\nno colon here");
            }
        }
    }
}

/// One field grown so that the head ends within a few bytes of its bound.
fn huge_field(rng: &mut Rng, draft: &mut Draft) {
    let head = draft.write().len().saturating_sub(draft.body.len());
    let room = MAX_HEAD.saturating_sub(head + 12);
    let size = match rng.below(4) {
        0 => room,
        1 => room + 1 + rng.below(64),
        2 => room.saturating_sub(rng.below(64)),
        _ => MAX_HEAD * (1 + rng.below(3)),
    };
    draft.fields.push(("X-Big".into(), vec![b'a'; size]));
}

/// Fields up to and past the count allowed.
fn many_fields(rng: &mut Rng, draft: &mut Draft) {
    let target = MAX_FIELDS - 3 + rng.below(8);
    let mut n = 0;
    while draft.fields.len() + 1 < target {
        draft.fields.push((format!("X-F{n}"), b"1".to_vec()));
        n += 1;
    }
}

/// Versions, methods, targets and spacing of the request line.
fn request_line(rng: &mut Rng, draft: &mut Draft) {
    match rng.below(4) {
        0 => {
            draft.version = rng
                .pick(&[
                    "HTTP/1.0",
                    "HTTP/2.0",
                    "HTTP/1.2",
                    "HTTP/0.9",
                    "http/1.1",
                    "HTTP/1.1 ",
                    "HTTP/11",
                    "HTTP/1.1\r",
                    "",
                ])
                .to_string();
        }
        1 => {
            draft.method = rng
                .pick(&["HEAD", "PUT", "OPTIONS", "CONNECT", "post", "", "P@ST", "POST\0", "PRI"])
                .to_string();
        }
        2 => {
            let long = format!("/mcp?{}", "q".repeat(MAX_HEAD - 100 + rng.below(200)));
            let targets = [
                "*",
                "http://localhost/mcp",
                "mcp",
                "/mcp%2f",
                "/%6dcp",
                "/mcp#frag",
                "/mcp\x01",
                "/m\u{e9}cp",
                "/.well-known/oauth-protected-resource/mcp",
                long.as_str(),
            ];
            draft.target = rng.pick(&targets).to_string();
        }
        _ => {
            let glue = *rng.pick(&["  ", "\t", " \t"]);
            draft.target = format!("{glue}{}", draft.target.trim_start());
        }
    }
}

/// A wrong, malformed, repeated or oversized `Content-Length`.
fn length_lie(rng: &mut Rng, draft: &mut Draft, max_body: usize) {
    let real = draft.body.len();
    match rng.below(5) {
        0 => {
            let lie = 1 + rng.below(6) as i64;
            draft.framing = Framing::Length { lie: if rng.one_in(2) { lie } else { -lie } };
        }
        1 => {
            draft.framing = Framing::Bare;
            let value = *rng.pick(&[
                "+1",
                "1, 1",
                "0x10",
                "",
                " 5 ",
                "-1",
                "99999999999999999999",
                "1 1",
                "٣",
            ]);
            draft.set("Content-Length", value.as_bytes());
        }
        2 => {
            draft.framing = Framing::Bare;
            let other = if rng.one_in(2) { real } else { real + 1 };
            draft.fields.push(("Content-Length".into(), real.to_string().into_bytes()));
            draft.fields.push(("Content-Length".into(), format!("{other:0>3}").into_bytes()));
        }
        3 => {
            draft.framing = Framing::Bare;
            let big = max_body + 1 + rng.below(1 << 20);
            draft.set("Content-Length", big.to_string().as_bytes());
        }
        _ => draft.framing = Framing::Bare,
    }
}

/// Transfer codings: alone, listed, repeated, beside a length, on HTTP/1.0; chunks broken.
fn transfer_coding(rng: &mut Rng, draft: &mut Draft) {
    match rng.below(6) {
        0 => {
            let coding = *rng.pick(&[
                "gzip",
                "chunked, identity",
                "identity",
                "Chunked",
                "chunked,",
                " chunked",
                "chunked, chunked",
            ]);
            draft.framing = Framing::Bare;
            draft.set("Transfer-Encoding", coding.as_bytes());
        }
        1 => {
            // Both: how requests are smuggled past a proxy.
            draft.fields.push(("Transfer-Encoding".into(), b"chunked".to_vec()));
        }
        2 => {
            draft.fields.push(("Transfer-Encoding".into(), b"chunked".to_vec()));
            draft.fields.push(("Transfer-Encoding".into(), b"identity".to_vec()));
            draft.framing = Framing::Bare;
        }
        3 => {
            draft.version = "HTTP/1.0".into();
            draft.framing = Framing::Chunked {
                pieces: vec![],
                extensions: false,
                trailers: false,
                odd_sizes: false,
            };
        }
        _ => {
            // Chunks written by hand, broken one way or another.
            draft.framing = Framing::Bare;
            draft.set("Transfer-Encoding", b"chunked");
            draft.body = broken_chunks(rng, &draft.body);
        }
    }
}

/// `body` as chunks with one thing wrong (or, one time in five, nothing).
fn broken_chunks(rng: &mut Rng, body: &[u8]) -> Vec<u8> {
    let size = format!("{:x}", body.len());
    let (mut line, mut end, mut last) = (size.clone(), "\r\n".to_string(), "0\r\n\r\n".to_string());
    match rng.below(10) {
        0 => line = format!("+{size}"),
        1 => line = format!("0x{size}"),
        2 => line = format!(" {size}"),
        3 => line = format!("{size};"),
        4 => line = format!("{size};a=\"open"),
        5 => end = "XX".into(),
        6 => last = format!("0\r\nX-T: {}\r\n\r\n", "t".repeat(MAX_HEAD + 10)),
        7 => last = String::new(),
        8 => line = format!("{size}{}", ";e".repeat(600)),
        _ => {}
    }
    let mut out = format!("{line}\r\n").into_bytes();
    out.extend_from_slice(body);
    out.extend_from_slice(end.as_bytes());
    out.extend_from_slice(last.as_bytes());
    out
}

/// The 2026-07-28 fields made to disagree with the body, or left out.
fn mcp_fields(rng: &mut Rng, draft: &mut Draft) {
    match rng.below(5) {
        0 => draft
            .set("MCP-Protocol-Version", rng.pick(&["2099-01-01", "", "2025-11-25"]).as_bytes()),
        1 => draft.remove("MCP-Protocol-Version"),
        2 => draft.set("Mcp-Method", rng.pick(&["tools/list", "", "nope"]).as_bytes()),
        3 => draft.remove("Mcp-Method"),
        _ => draft
            .set("Mcp-Name", rng.pick(&["other", "=?base64?aGk?=", "=?base64?**?="]).as_bytes()),
    }
}

/// Byte-level changes to written requests: a bit flipped, a byte set, inserted or deleted,
/// the end cut, a stretch repeated.
pub fn mutate_bytes(rng: &mut Rng, bytes: &mut Vec<u8>) {
    if bytes.is_empty() {
        return;
    }
    let at = rng.below(bytes.len());
    match rng.below(6) {
        0 => bytes[at] ^= 1 << rng.below(8),
        1 => bytes[at] = *rng.pick(b"\r\n\0 :\t;\x7f\xff0aZ"),
        2 => bytes.insert(at, *rng.pick(b"\r\n\0 :\t;\x7f\xff0")),
        3 => {
            let n = 1 + rng.below(8.min(bytes.len() - at));
            bytes.drain(at..at + n);
        }
        4 => bytes.truncate(at),
        _ => {
            let n = 1 + rng.below(32.min(bytes.len() - at));
            let copy = bytes[at..at + n].to_vec();
            bytes.splice(at..at, copy);
        }
    }
}
