//! The request reader's tests: heads, targets, fields and bodies read off loopback
//! connections as the server reads them.

use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};

use super::*;
use crate::transport::http::body_budget::BodyBudget;
use crate::transport::http::socket::Stream;

/// Reads one request off a loopback connection as the server does: the status it is
/// refused with, or 200 when its head and body were read.
fn status(request: &[u8]) -> u16 {
    match read(request) {
        Ok(()) => 200,
        Err(ReadError::Status(status, _)) => status,
        Err(ReadError::Closed) => 0,
    }
}

/// Reads one request's head and body off a loopback connection as the server does.
fn read(request: &[u8]) -> Result<(), ReadError> {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    client.write_all(request).unwrap();
    client.shutdown(Shutdown::Write).unwrap();
    let mut reader = Reader::new(Socket::new(Stream::Tcp(listener.accept().unwrap().0)));
    let limits =
        Limits { max_body: 1000, deadline: Duration::from_secs(5), idle: Duration::from_secs(5) };
    reader
        .head(&limits, &AtomicBool::new(false))
        .and_then(|head| reader.body(&head, &limits, &BodyBudget::new(1 << 20)))
        .map(drop)
}

#[test]
fn a_cr_or_nul_in_a_value_is_the_fault_reported_whatever_follows_it() {
    let why = |headers: String| match read(format!("GET / HTTP/1.1\r\n{headers}\r\n").as_bytes()) {
        Err(ReadError::Status(status, why)) => (status, why),
        other => panic!("{headers:?} was read: {other:?}"),
    };
    let cr = (400, "cr or nul in a header value");
    let many: String = (0..70).map(|n| format!("X-{n}: 1\r\n")).collect();
    let long = format!("X-Long: {}\r\n", "a".repeat(20_000));
    for fault in ["X-A: a\rb\r\n", "X-A: a\0b\r\n"] {
        assert_eq!(why(format!("Host: a\r\n{fault}")), cr, "{fault:?}");
        // Found once the head is read, yet it was sent before what fails later.
        assert_eq!(why(format!("Host: a\r\n{fault}{many}")), cr, "{fault:?}");
        assert_eq!(why(format!("Host: a\r\n{fault}{long}")), cr, "{fault:?}");
        assert_eq!(why(format!("Origin: a\r\n{fault}Origin: b\r\n")), cr, "{fault:?}");
        assert_eq!(why(format!("Origin: a\r\nOrigin: b{}", &fault[4..])), cr, "{fault:?}");
    }
    // What is refused before it still is.
    assert_eq!(why(format!("Host: a\r\n{many}X-A: a\rb\r\n")).0, 431);
    assert_eq!(why("Host: a\r\nX A: a\rb\r\n".into()), (400, "malformed header name"));
}

fn with_headers(headers: &str, body: &str) -> u16 {
    status(format!("POST /mcp HTTP/1.1\r\n{headers}\r\n{body}").as_bytes())
}

/// A chunked body of one 0x5f-byte chunk under the size line `size`.
fn chunk_sized(size: &str) -> u16 {
    let body = format!("{size}\r\n{}\r\n0\r\n\r\n", "a".repeat(0x5f));
    with_headers("Host: a\r\nTransfer-Encoding: chunked\r\n", &body)
}

/// The head of `request`, read as the server reads it, or the status it is refused with.
fn head_of(request: &str) -> Result<(String, u8, Option<String>), u16> {
    match read_head(request) {
        Ok(head) => {
            Ok((head.path().to_string(), head.minor, head.header("host").map(String::from)))
        }
        Err(ReadError::Status(status, _)) => Err(status),
        Err(ReadError::Closed) => Err(0),
    }
}

/// Reads the head of `request` off a loopback connection as the server does.
fn read_head(request: &str) -> Result<Head, ReadError> {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    client.write_all(request.as_bytes()).unwrap();
    let mut reader = Reader::new(Socket::new(Stream::Tcp(listener.accept().unwrap().0)));
    let limits =
        Limits { max_body: 0, deadline: Duration::from_secs(5), idle: Duration::from_secs(5) };
    reader.head(&limits, &AtomicBool::new(false))
}

#[test]
fn a_field_looked_up_by_name_is_its_first_line_whether_its_name_is_known_or_not() {
    let fields = [
        "Content-Length: 0",
        "X-One: 1",
        "ACCEPT: a/b",
        "Traceparent: t",
        "Origin: o",
        "accept: c/d",
        "Authorization: a",
        "Content-Type: c",
        "Mcp-Session-Id: s",
        "MCP-Protocol-Version: v",
        "Mcp-Method: m",
        "Mcp-Name: n",
        "X-One: 2",
    ];
    let names = [
        "host",
        "origin",
        "authorization",
        "content-type",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "content-length",
        "accept",
        "traceparent",
        "tracestate",
        "x-one",
        "x-two",
    ];
    for (target, version) in [("/mcp", "1.1"), ("http://b/mcp", "1.1"), ("http://b/mcp", "1.0")] {
        for host in ["", "Host: a\r\n"] {
            // Each field first, last, and between the others.
            for turn in 0..fields.len() {
                let mut lines = fields.to_vec();
                lines.rotate_left(turn);
                let lines = lines.join("\r\n");
                let request = format!("GET {target} HTTP/{version}\r\n{host}{lines}\r\n\r\n");
                let Ok(head) = read_head(&request) else {
                    assert!(host.is_empty() && version == "1.1", "{request:?}");
                    continue;
                };
                for name in names {
                    assert_eq!(head.header(name), head.values(name).next(), "{name}: {request:?}");
                }
                // An absolute-form target's authority is the host, in place of the field's.
                let host = head.header("host");
                assert_eq!(host, Some(if target == "/mcp" { "a" } else { "b" }), "{request:?}");
            }
        }
    }
}

#[test]
fn absolute_form_targets_and_later_minor_versions_are_served() {
    let read = |line: &str| head_of(&format!("{line}\r\nHost: other\r\n\r\n"));
    let absolute = read("GET http://127.0.0.1:8080/mcp?x=1 HTTP/1.1");
    assert_eq!(absolute, Ok(("/mcp".into(), 1, Some("127.0.0.1:8080".into()))));
    assert_eq!(read("GET HTTPS://[::1]?q HTTP/1.1"), Ok(("/".into(), 1, Some("[::1]".into()))));
    // RFC 9112 §3.2: the Host field is still required on HTTP/1.1, and still single.
    let bare = head_of("GET http://localhost/mcp HTTP/1.1\r\n\r\n");
    assert_eq!(bare, Err(400));
    let http10 = head_of("GET http://localhost/mcp HTTP/1.0\r\n\r\n");
    assert_eq!(http10, Ok(("/mcp".into(), 0, Some("localhost".into()))));
    let empty_port = read("GET http://localhost:/mcp HTTP/1.1");
    assert_eq!(empty_port, Ok(("/mcp".into(), 1, Some("localhost:".into()))));
    let refused = ["http:///mcp", "http://ann@localhost/mcp", "ftp://localhost/mcp", "*"];
    for refused in refused.into_iter().chain(["http://[::1/mcp", "http://a,b/", "http://a:b/"]) {
        assert_eq!(read(&format!("GET {refused} HTTP/1.1")), Err(400), "{refused}");
    }
    assert_eq!(read("GET /mcp HTTP/1.2"), Ok(("/mcp".into(), 1, Some("other".into()))));
    assert_eq!(read("GET /mcp HTTP/2.0"), Err(505));
    // Not `HTTP/` DIGIT `.` DIGIT: a malformed request line, not an unserved version.
    for malformed in ["HTTP/01.1", "HTTP/1", "HTTP/1.1x", "HTTP/1.", "HTTP/1.10", "HTTP/a.1"] {
        assert_eq!(read(&format!("GET /mcp {malformed}")), Err(400), "{malformed}");
    }
}

#[test]
fn a_field_that_names_one_thing_comes_once_and_list_fields_combine() {
    let get =
        |fields: &str| status(format!("GET /mcp HTTP/1.1\r\nHost: a\r\n{fields}\r\n").as_bytes());
    for twice in ["Origin: http://a", "Authorization: Bearer t", "Mcp-Session-Id: s", "MCP-Name: x"]
    {
        let lower = twice.to_ascii_lowercase();
        assert_eq!(get(&format!("{twice}\r\n{lower}\r\n")), 400, "{twice}");
        assert_eq!(get(&format!("{twice}\r\n")), 200, "{twice}");
    }
    assert_eq!(get("Accept: text/html\r\nAccept: application/json\r\n"), 200);
    // Every `Mcp-*` field names one thing, those a tool names too.
    assert_eq!(get("Mcp-Param-Region: eu\r\nmcp-param-region: us\r\n"), 400);
    assert_eq!(get("Mcp-Param-Region: eu\r\nMcp-Param-Zone: a\r\n"), 200);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let request = "GET /mcp HTTP/1.1\r\nHost: a\r\nAccept: a/b\r\nX: 1\r\naccept: c/d;q=0\r\n\r\n";
    client.write_all(request.as_bytes()).unwrap();
    let mut reader = Reader::new(Socket::new(Stream::Tcp(listener.accept().unwrap().0)));
    let limits =
        Limits { max_body: 0, deadline: Duration::from_secs(5), idle: Duration::from_secs(5) };
    let head = reader.head(&limits, &AtomicBool::new(false)).unwrap();
    assert_eq!(head.list("accept").as_deref(), Some("a/b, c/d;q=0"));
    assert_eq!(head.list("x").as_deref(), Some("1"));
    assert_eq!(head.list("y"), None);
    // A known name absent is found absent without a search; one present, on every line.
    assert_eq!((head.list("expect"), head.list("connection")), (None, None));
    assert!(head.keep_alive);
    // `Connection` is a list too: `close` on a second line closes.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let request =
        "GET /mcp HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n";
    client.write_all(request.as_bytes()).unwrap();
    let mut reader = Reader::new(Socket::new(Stream::Tcp(listener.accept().unwrap().0)));
    let head = reader.head(&limits, &AtomicBool::new(false)).unwrap();
    assert!(!head.keep_alive);
    assert_eq!(head.list("connection").as_deref(), Some("keep-alive, close"));
    // On HTTP/1.0 too, `close` wins over `keep-alive`.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    client.write_all(b"GET /mcp HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n").unwrap();
    let mut reader = Reader::new(Socket::new(Stream::Tcp(listener.accept().unwrap().0)));
    let head = reader.head(&limits, &AtomicBool::new(false)).unwrap();
    assert!(!head.keep_alive);
}

/// `len` bytes of fields in lines ending in `ending`, the empty line that ends them included:
/// fifty of 250-byte values, then one padded to the length.
fn fields_of(len: usize, ending: &str) -> String {
    let mut fields: String =
        (0..50).map(|n| format!("X-{n:02}: {}{ending}", "a".repeat(250))).collect();
    let pad = len - fields.len() - "X-Pad: ".len() - 2 * ending.len();
    fields += &format!("X-Pad: {}{ending}{ending}", "a".repeat(pad));
    assert_eq!(fields.len(), len);
    fields
}

#[test]
fn the_head_limit_counts_the_bytes_sent_line_endings_whole() {
    for ending in ["\r\n", "\n"] {
        let opening = format!("GET / HTTP/1.1{ending}Host: a{ending}");
        let head = |len: usize| opening.clone() + &fields_of(len - opening.len(), ending);
        assert_eq!(status(head(MAX_HEAD_BYTES).as_bytes()), 200, "{ending:?}");
        // A byte more is refused, though it was one byte less per line without its CR.
        assert_eq!(status(head(MAX_HEAD_BYTES + 1).as_bytes()), 431, "{ending:?}");
        // The trailer fields of a chunked body keep the same limit, counted the same way.
        let chunked = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
        let trailers = |len: usize| chunked.to_string() + &fields_of(len, ending);
        assert_eq!(status(trailers(MAX_HEAD_BYTES).as_bytes()), 200, "{ending:?}");
        assert_eq!(status(trailers(MAX_HEAD_BYTES + 1).as_bytes()), 431, "{ending:?}");
    }
}

#[test]
fn a_request_line_refused_before_its_end_says_whether_it_is_a_head() {
    for (request, status, head) in [
        // A request line too long is 414 (RFC 9112 §3); a header line too long, 431.
        (format!("HEAD /{} HTTP/1.1\r\n\r\n", "a".repeat(20_000)), 414, true),
        (format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(20_000)), 414, false),
        (format!("GET / HTTP/1.1\r\nX-A: {}\r\n\r\n", "a".repeat(20_000)), 431, false),
        ("HEAD /healthz HT".to_string(), 408, true),
        // Whole but malformed: still a HEAD by its first bytes.
        ("HEAD /healthz HTTP/1.1 extra\r\n\r\n".to_string(), 400, true),
        ("HEAD  /healthz HTTP/1.1\r\n\r\n".to_string(), 400, true),
    ] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        client.write_all(request.as_bytes()).unwrap();
        let mut reader = Reader::new(Socket::new(Stream::Tcp(listener.accept().unwrap().0)));
        let limits = Limits {
            max_body: 0,
            deadline: Duration::from_millis(300),
            idle: Duration::from_secs(5),
        };
        let refused = match reader.head(&limits, &AtomicBool::new(false)) {
            Err(ReadError::Status(refused, _)) => refused,
            other => panic!("{other:?}"),
        };
        assert_eq!((refused, reader.head_request), (status, head), "{}", &request[..16]);
    }
}

#[test]
fn transfer_encoding_fields_are_one_list() {
    let chunked = "0\r\n\r\n";
    assert_eq!(with_headers("Host: a\r\nTransfer-Encoding: chunked\r\n", chunked), 200);
    assert_eq!(with_headers("Host: a\r\nTransfer-Encoding: Chunked\r\n", chunked), 200);
    // Empty list elements are no coding (RFC 9110 §5.6.1.2), in one field or several.
    for empty in [", chunked", "chunked,", "chunked , ,", " ,\tchunked\t, "] {
        let fields = format!("Host: a\r\nTransfer-Encoding: {empty}\r\n");
        assert_eq!(with_headers(&fields, chunked), 200, "{empty:?}");
    }
    let fields = "Host: a\r\nTransfer-Encoding: ,\r\nTransfer-Encoding: chunked\r\n";
    assert_eq!(with_headers(fields, chunked), 200);
    // RFC 9112 §6.3: chunked not last (or not there) leaves the body's end unknown: 400. A
    // coding under chunked is one not served: 501 (§6.1).
    let empty = (400, "empty transfer-encoding");
    let not_final = (400, "chunked is not the final transfer-encoding");
    let twice = (400, "chunked is applied more than once");
    let unserved = (501, "only the chunked transfer-encoding is served");
    for (fields, refused) in [
        ("Transfer-Encoding:\r\n", empty),
        ("Transfer-Encoding: ,\r\n", empty),
        ("Transfer-Encoding: , ,\r\nTransfer-Encoding: \r\n", empty),
        ("Transfer-Encoding: gzip\r\n", not_final),
        ("Transfer-Encoding: chunked, identity\r\n", not_final),
        ("Transfer-Encoding: chunked, gzip\r\n", not_final),
        ("Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n", not_final),
        ("Transfer-Encoding: chunked, , chunked\r\n", twice),
        ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", twice),
        ("Transfer-Encoding: gzip, chunked, chunked\r\n", twice),
        ("Transfer-Encoding: gzip, chunked\r\n", unserved),
        ("Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n", unserved),
    ] {
        let request = format!("POST /mcp HTTP/1.1\r\nHost: a\r\n{fields}\r\n{chunked}");
        match read(request.as_bytes()) {
            Err(ReadError::Status(status, why)) => assert_eq!((status, why), refused, "{fields:?}"),
            other => panic!("{fields:?} was read: {other:?}"),
        }
    }
}

#[test]
fn chunk_sizes_are_hex_digits_then_extensions() {
    let zeros = "0".repeat(19);
    for ok in [
        "5f",
        "5F",
        "05f",
        &format!("{zeros}5f"),
        "5f;x",
        "5f ; x = y",
        "5f\t;x;y=z",
        r#"5f;x="a;\" b""#,
    ] {
        assert_eq!(chunk_sized(ok), 200, "{ok:?}");
    }
    // A sign, whitespace other than around `;` and `=`, anything that is not a hex digit.
    for bad in [
        "", "+5f", "-5f", "  5f", "5f  ", "\u{a0}5f", "\u{b}5f", "5f\u{b}", "5 f", "5fg", "0x5f",
        "5f,x",
    ] {
        assert_eq!(chunk_sized(bad), 400, "{bad:?}");
    }
    // Extensions that are not `; name [= token or quoted-string]`.
    for bad in
        ["5f;", "5f; ", "5f;x ", "5f;x=", "5f;=y", "5f;x=y z", r#"5f;x="open"#, "5f;x=\"a\u{0}\""]
    {
        assert_eq!(chunk_sized(bad), 400, "{bad:?}");
    }
    // Over the body limit, or over any: 413, as a too long Content-Length.
    for big in ["3e9", "ffffffffffffffff", "10000000000000000", &"f".repeat(40)] {
        assert_eq!(chunk_sized(big), 413, "{big:?}");
    }
}

#[test]
fn a_host_is_a_uri_host_then_an_optional_port_or_400_whatever_is_allowed() {
    let host = |value: &str| match read_head(&format!("GET / HTTP/1.1\r\nHost:{value}\r\n\r\n")) {
        Ok(head) => Ok(head.header("host").map(String::from)),
        Err(ReadError::Status(status, why)) => Err((status, why)),
        Err(ReadError::Closed) => Err((0, "closed")),
    };
    for valid in ["localhost", "localhost:", "a:8080", "127.0.0.1:1", "[::1]", "[::1]:", "[v1.x:y]"]
    {
        assert_eq!(host(&format!(" {valid}")), Ok(Some(valid.into())), "{valid}");
    }
    for valid in ["A-b.c_d~e", "%41b", "!$&'()*+;=", "[::ffff:1.2.3.4]:80", "999.1.1.1"] {
        assert_eq!(host(&format!(" {valid}")), Ok(Some(valid.into())), "{valid}");
    }
    let invalid = Err((400, "invalid host header"));
    for value in ["", " ", " a b", " x@y", " localhost/evil", " [::1", " a,b", " :80", " a:b:1"] {
        assert_eq!(host(value), invalid, "{value:?}");
    }
    for value in [" [::1]x", " [::1]:x", " ::1", " [1.2.3.4]", " [v.x]", " %4", " %zz", " a?b"] {
        assert_eq!(host(value), invalid, "{value:?}");
    }
    // HTTP/1.0 too, and with an absolute-form target that names the host in its place.
    let old = read_head("GET / HTTP/1.0\r\nHost: a b\r\n\r\n").map(drop);
    assert!(matches!(old, Err(ReadError::Status(400, "invalid host header"))), "{old:?}");
    let absolute = read_head("GET http://a/ HTTP/1.1\r\nHost: x@y\r\n\r\n").map(drop);
    assert!(matches!(absolute, Err(ReadError::Status(400, "invalid host header"))), "{absolute:?}");
}

#[test]
fn one_host_and_no_cr_or_nul_in_values() {
    assert_eq!(status(b"GET /mcp HTTP/1.1\r\nHost: a\r\nX-A: a b\tc\r\n\r\n"), 200);
    assert_eq!(status(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.com\r\n\r\n"), 400);
    assert_eq!(status(b"GET /mcp HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n"), 400);
    assert_eq!(status(b"GET /mcp HTTP/1.1\r\nHost: a\r\nX-A: a\rb\r\n\r\n"), 400);
    assert_eq!(status(b"GET /mcp HTTP/1.1\r\nHost: a\r\nX-A: a\0b\r\n\r\n"), 400);
    assert_eq!(status(b"GET /mcp HTTP/1.1\r\nHost: a\r\nX-A: a\r\r\n\r\n"), 400);
}

#[test]
fn content_length_too_large_to_hold_is_413() {
    let length = |value: &str, body: &str| {
        with_headers(&format!("Host: a\r\nContent-Length: {value}\r\n"), body)
    };
    assert_eq!(length("5", "abcde"), 200);
    assert_eq!(length(&format!("{}5", "0".repeat(30)), "abcde"), 200);
    for big in ["1001", "9999999999999999999", "99999999999999999999", &"9".repeat(100)] {
        assert_eq!(length(big, ""), 413, "{big}");
    }
    for bad in ["", "+5", "-5", "5a", "5 5", "0x5", "\u{a0}5"] {
        assert_eq!(length(bad, "abcde"), 400, "{bad:?}");
    }
}

#[test]
fn a_value_loses_only_the_spaces_and_tabs_around_it() {
    for (raw, trimmed) in [
        (" \t a b \t", "a b"),
        ("", ""),
        (" \t ", ""),
        ("x", "x"),
        ("é \t", "é"),
        ("\u{a0}x\u{a0}", "\u{a0}x\u{a0}"),
        ("\u{c}x", "\u{c}x"),
    ] {
        assert_eq!(trim_whitespace(raw.as_bytes()), trimmed.as_bytes(), "{raw:?}");
    }
}

#[test]
fn the_token_table_is_rfc_9110_s_tchar() {
    for b in 0..=255u8 {
        let tchar = b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        assert_eq!(is_token(b), tchar, "{b:#04x}");
    }
}

#[test]
fn a_name_is_token_characters_before_a_colon_read_in_lowercase() {
    let why = |line: &str| match read_head(&format!("GET / HTTP/1.1\r\nHost: a\r\n{line}\r\n\r\n"))
    {
        Err(ReadError::Status(status, why)) => (status, why.to_string()),
        Ok(head) => (200, head.header("x-name-9").unwrap_or("-").to_string()),
        Err(ReadError::Closed) => panic!("{line:?}: closed"),
    };
    assert_eq!(why("X-NAME-9:  \tv  "), (200, "v".into()));
    assert_eq!(why("x-Name-9:v"), (200, "v".into()));
    assert_eq!(why("X-Name-9 : v"), (400, "malformed header name".into()));
    assert_eq!(why("X-Nä: v"), (400, "malformed header name".into()));
    assert_eq!(why(": v"), (400, "malformed header name".into()));
    assert_eq!(why("X Name: v"), (400, "malformed header name".into()));
    assert_eq!(why("X-Name-9"), (400, "header without a colon".into()));
    assert_eq!(why("X-Name 9"), (400, "header without a colon".into()));
}

#[test]
fn a_second_host_field_is_refused_wherever_it_comes() {
    let host = |headers: &str| match read_head(&format!("GET / HTTP/1.1\r\n{headers}\r\n")) {
        Ok(head) => Ok(head.header("host").map(String::from)),
        Err(ReadError::Status(status, why)) => Err((status, why)),
        Err(ReadError::Closed) => panic!("{headers:?}: closed"),
    };
    let twice = Err((400, "more than one host header"));
    assert_eq!(host("Host: a\r\nX-A: 1\r\n"), Ok(Some("a".into())));
    assert_eq!(host("Host: a\r\nHost: a\r\n"), twice);
    assert_eq!(host("X-A: 1\r\nHOST: a\r\nX-B: 2\r\nhost: b\r\nX-C: 3\r\n"), twice);
    assert_eq!(host("Host: a\r\nX-A: 1\r\nHost: b\r\nHost: c\r\n"), twice);
    assert_eq!(host("X-A: 1\r\n"), Err((400, "missing host header")));
}

#[test]
fn each_known_name_has_its_slot_and_host_is_the_one_checked_apart() {
    assert_eq!(KNOWN[HOST].0, b"host");
    assert!(HOST_AGAIN >= KNOWN.len());
    for (k, (name, single)) in KNOWN.iter().enumerate() {
        assert_eq!(known(name), Some((k, *single)), "{}", String::from_utf8_lossy(name));
    }
    assert_eq!(known(b"hos"), None);
    assert_eq!(known(b"Host"), None, "names are lowercased before they are looked up");
}

#[test]
fn a_field_that_names_one_thing_is_refused_twice_and_a_list_is_not() {
    let twice = |line: &str| match read_head(&format!(
        "GET / HTTP/1.1\r\nHost: a\r\n{line}\r\nX-A: 1\r\n{line}\r\n\r\n"
    )) {
        Ok(head) => {
            format!("read: {}", head.list(&line[..line.find(':').unwrap()].to_lowercase()).unwrap())
        }
        Err(ReadError::Status(_, why)) => why.to_string(),
        Err(ReadError::Closed) => "closed".to_string(),
    };
    let one_thing = "a field that names one thing is sent twice";
    for name in
        ["Origin", "Authorization", "Content-Type", "Mcp-Session-Id", "MCP-Protocol-Version"]
    {
        assert_eq!(twice(&format!("{name}: x")), one_thing, "{name}");
    }
    for name in ["Mcp-Method", "Mcp-Name", "Mcp-Param-X"] {
        assert_eq!(twice(&format!("{name}: x")), one_thing, "{name}");
    }
    assert_eq!(twice("Host: a"), "more than one host header");
    // The same length twice is one length; a list may come in several lines.
    assert_eq!(twice("Content-Length: 0"), "read: 0, 0");
    for name in ["Accept", "Traceparent", "Connection", "Expect", "X-Other"] {
        assert_eq!(twice(&format!("{name}: x")), "read: x, x", "{name}");
    }
}

#[test]
fn a_list_has_an_element_in_any_of_its_lines_in_any_case() {
    let head = read_head(
        "GET / HTTP/1.0\r\nConnection: foo, Keep-Alive \r\nExpect: x,\r\nExpect: 100-CONTINUE\r\n\r\n",
    );
    let head = head.unwrap_or_else(|e| panic!("{e:?}"));
    assert!(head.list_has("connection", "keep-alive") && head.keep_alive);
    assert!(head.list_has("expect", "100-continue"));
    assert!(!head.list_has("connection", "close"));
    assert!(!head.list_has("connection", "foo, keep-alive"), "elements, not the whole");
    assert!(!head.list_has("upgrade", "h2c"));
    let closing =
        read_head("GET / HTTP/1.1\r\nHost: a\r\nConnection: x\r\nConnection:close\r\n\r\n");
    assert!(!closing.unwrap_or_else(|e| panic!("{e:?}")).keep_alive);
}
