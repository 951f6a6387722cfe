//! JSON-RPC 2.0: classifying one parsed line, request ids and writing replies (the error
//! object is `error_code.rs`'s, with its codes).
//!
//! Everything that knows the shape of a JSON-RPC envelope lives here. Parsing borrows from
//! the line buffer: `id` and the known `params` members stay raw JSON text slices until a
//! handler decodes what it needs, and ids are echoed as the exact bytes the client sent.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::io::{self, Write};

use crate::wire::scanner::{self, MAX_DECODED_BYTES, Scanner, Syntax};
use serde_json::{Value, json};

pub use crate::wire::error_code::ErrorObject;
use crate::wire::params::ParamsField;

/// The `result` of a reply: a JSON value, or JSON already serialized (tool results are written
/// field by field rather than built as a map, which was most of a call's cost).
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A value, serialized when the reply is written.
    Value(Value),
    /// UTF-8 JSON text of one object.
    Json(Vec<u8>),
}

/// What a request handler produces: exactly one of a result or an error.
pub type Reply = Result<Payload, ErrorObject>;

/// A request id as the client wrote it: a JSON string literal or a JSON integer.
///
/// Keeping the raw text means a `u64::MAX` or a 40-digit integer is echoed exactly, and a
/// string with escapes comes back byte for byte. Ids are compared by that text too: it is
/// what the client sends again when it names the request, it needs no decoding to compare
/// or hash, and it tells apart ids a decoded `str` cannot hold (`"\ud800"`, `"\udc00"`).
/// It borrows from the input line; only an id that outlives its request (an open
/// subscription) is copied.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id<'a>(Cow<'a, str>);

impl<'a> Id<'a> {
    /// Accepts a string or an integer; null, booleans, floats, arrays and objects are not ids.
    #[inline]
    pub fn from_raw(text: &'a str) -> Option<Id<'a>> {
        let digits = text.strip_prefix('-').unwrap_or(text);
        let is_integer = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        (text.starts_with('"') || is_integer).then_some(Id(Cow::Borrowed(text)))
    }

    /// The id of a line too long to read, from its first bytes (`head`, as
    /// [`crate::wire::lines::LineReader`] leaves them): its top-level `id` member when that is
    /// whole there, followed by more of the line, and named once there; so a client still
    /// learns which of its requests was refused.
    pub fn in_head(head: &[u8]) -> Option<Id<'static>> {
        let (mut id, mut twice) = (None, false);
        head_members(head, |key, s| {
            let value = s.value()?;
            // A value that reaches the end of the head may be cut short (`12` of `123`).
            if key.as_deref() == Some("id") && s.peek().is_some() {
                twice |= id.replace(value).is_some();
            }
            Ok(())
        });
        id.filter(|_| !twice).and_then(Id::from_raw).map(Id::into_owned)
    }

    /// A copy that no longer borrows the input line.
    pub fn into_owned(self) -> Id<'static> {
        Id(Cow::Owned(self.0.into_owned()))
    }

    /// The id's JSON text, ready to splice into a reply.
    pub fn as_json(&self) -> &str {
        &self.0
    }

    /// The id as a JSON value; `null` for a string no `Value` can hold (a lone surrogate),
    /// so what goes back to the client is written from [`Id::as_json`] instead.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }
}

/// Whether the first bytes of a line too long to read (`head`, as
/// [`crate::wire::lines::LineReader`] leaves them) show a response: a top-level `result` or
/// `error` member there and no `method`, as a whole line is told. Like any response
/// from the client, such a line is never replied to.
pub fn response_in_head(head: &[u8]) -> bool {
    let (mut responds, mut method) = (false, false);
    head_members(head, |key, s| {
        // Noted before the value is read: a huge `result` is what made the line too long.
        match key.as_deref() {
            Some("result" | "error") => responds = true,
            Some("method") => method = true,
            _ => {}
        }
        s.value().map(drop)
    });
    responds && !method
}

/// Hands `member` each top-level member of the object that `head` (a line's first bytes)
/// begins, up to where the head is cut.
fn head_members<'a>(
    head: &'a [u8],
    member: impl FnMut(Option<Cow<'a, str>>, &mut Scanner<'a>) -> Result<(), Syntax>,
) {
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        // Cut inside a character: what comes before it.
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    // The head ends mid-message, so the scan always fails in the end; what it found stands.
    let _ = Scanner::new(text).object(member);
}

/// Maps and sets of ids are looked up by the id's text, whatever the id borrows from.
impl Borrow<str> for Id<'_> {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Id<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One JSON-RPC message, classified. Members stay borrowed from the input line.
#[derive(Debug)]
pub enum Message<'a> {
    /// A request: it gets exactly one response.
    Request {
        /// Echoed in the response.
        id: Id<'a>,
        /// The method name.
        method: Cow<'a, str>,
        /// `params`, as read.
        params: ParamsField<'a>,
    },
    /// A notification: it gets no response.
    Notification {
        /// The method name.
        method: Cow<'a, str>,
        /// `params`, as read.
        params: ParamsField<'a>,
    },
    /// A response from the client; only meaningful if it answers a request the server sent.
    Response {
        /// The id it answers, when it has one.
        id: Option<Id<'a>>,
    },
    /// A message without an `id` too malformed to act on (a member named twice, `method` not
    /// a string, a wrong `jsonrpc`, no `method` at all): never replied to.
    BadNotification,
    /// A response that is not exactly one JSON-RPC 2.0 response (a member named twice, both
    /// `result` and `error`, a wrong `jsonrpc`): never replied to, and never taken as an answer.
    BadResponse { id: Option<Id<'a>> },
    /// Not a valid message: replied to with its error (-32700 for text that is not JSON, -32600
    /// for JSON that is not a request) and the id when it could be read.
    Invalid {
        /// The id, when it could be read.
        id: Option<Id<'a>>,
        /// What is wrong.
        error: ErrorObject,
    },
}

/// A whole line: one message (perhaps an invalid one), or a batch of raw elements.
#[allow(clippy::large_enum_variant)] // see `ParamsField`: kept on the stack, never boxed
#[derive(Debug)]
pub enum Frame<'a> {
    /// One message.
    Single(Message<'a>),
    /// The raw text of each element.
    Batch(Vec<&'a str>),
}

/// The members of an envelope, each the raw JSON text of its value, read by the scanner in
/// one pass. A member that is present, even as `null`, is `Some`.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<&'a str>,
    /// Decoded as it is read when it is a string (`Some(None)` when it is not).
    method: Option<Option<Cow<'a, str>>>,
    params: ParamsField<'a>,
    result: Option<&'a str>,
    error: Option<&'a str>,
    /// A member other than `id` named twice.
    duplicate: bool,
    /// `id` named twice: which one the client meant cannot be known.
    id_twice: bool,
}

/// Whether a member's raw text is a JSON object.
pub fn is_object(raw: &str) -> bool {
    raw.starts_with('{')
}

/// A JSON string's contents, borrowed when it has no escapes. `None` if `raw` is not a string.
#[inline]
pub fn raw_str(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if inner.bytes().any(|b| b == b'\\') {
        serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// Text that is not JSON: replied to without an id ([`UnreadId`]), since none can be read.
fn unparseable() -> Message<'static> {
    Message::Invalid { id: None, error: ErrorObject::parse_error() }
}

/// A batch the server serves holds at most this many messages; a longer one is refused whole.
pub const MAX_BATCH: usize = 1024;

/// Parses one line (already known to be UTF-8) into a frame. A batch of more than
/// [`MAX_BATCH`] messages becomes one invalid request (no id), never a list as long as the
/// line allows (its elements are still checked to be JSON).
pub fn parse_line(line: &str) -> Frame<'_> {
    let mut scanner = Scanner::new(line);
    if scanner.peek() != Some(b'[') {
        return Frame::Single(parse_message(line));
    }
    let (mut items, mut count) = (Vec::new(), 0usize);
    let scanned = scanner
        .array(|item| {
            count += 1;
            if count <= MAX_BATCH {
                items.push(item);
            }
        })
        .and_then(|()| scanner.end());
    match scanned {
        Err(Syntax) => Frame::Single(unparseable()),
        Ok(()) if count > MAX_BATCH => {
            let why = format!("a batch holds at most {MAX_BATCH} messages");
            Frame::Single(Message::Invalid {
                id: None,
                error: ErrorObject::invalid_request().with_data(json!(why)),
            })
        }
        Ok(()) => Frame::Batch(items),
    }
}

/// Parses one message: a whole line, or one element of a batch. Syntax errors anywhere make
/// it a parse error; valid JSON that is not an object, names a member twice or nests too
/// deep is an invalid request, replied to with its id.
pub fn parse_message<'a>(text: &'a str) -> Message<'a> {
    let mut scanner = Scanner::new(text);
    if scanner.peek() != Some(b'{') {
        return if scanner::is_json(text) {
            Message::Invalid { id: None, error: ErrorObject::invalid_request() }
        } else {
            unparseable()
        };
    }
    // Most clients write `jsonrpc` first, as JSON-RPC's own examples do: that member is taken
    // whole, with one comparison.
    const HEAD: &str = r#"{"jsonrpc":"2.0","#;
    let head = text.starts_with(HEAD);
    let mut env = Envelope { jsonrpc: head.then_some(r#""2.0""#), ..Envelope::default() };
    // A key that is no `str` (a lone surrogate) names no member the envelope has.
    let member = |key: Option<Cow<'a, str>>, s: &mut Scanner<'a>| {
        let slot = match key.as_deref().unwrap_or_default() {
            "jsonrpc" => &mut env.jsonrpc,
            "id" => {
                env.id_twice |= env.id.replace(s.value()?).is_some();
                return Ok(());
            }
            "method" => {
                env.duplicate |= env.method.replace(s.string_value()?).is_some();
                return Ok(());
            }
            "result" => &mut env.result,
            "error" => &mut env.error,
            "params" => {
                env.duplicate |= !matches!(env.params, ParamsField::Absent);
                return env.params.scan(s);
            }
            _ => return s.value().map(drop),
        };
        env.duplicate |= slot.replace(s.value()?).is_some();
        Ok(())
    };
    let scanned =
        if head { scanner.object_after(HEAD.len(), member) } else { scanner.object(member) };
    if scanned.and_then(|()| scanner.end()).is_err() {
        return unparseable();
    }
    let refused = if scanner.too_deep() {
        Some(ErrorObject::too_deep())
    } else if scanner.weight() > MAX_DECODED_BYTES {
        Some(ErrorObject::too_heavy())
    } else {
        None
    };
    if let Some(error) = refused {
        // Valid JSON, so its id is answered (a message without one is a notification).
        let id = env.id.filter(|_| !env.id_twice).and_then(Id::from_raw);
        return match env.id {
            None => Message::BadNotification,
            Some(_) => Message::Invalid { id, error },
        };
    }
    classify(env)
}

/// Sorts an envelope that scanned as JSON. A response (no `method`, a `result` or an
/// `error`) and a message without an `id` member (a notification) are never replied to,
/// whatever they hold: no client waits for a reply to them.
fn classify(env: Envelope<'_>) -> Message<'_> {
    let version_ok =
        env.jsonrpc.is_some_and(|v| v == r#""2.0""# || raw_str(v).is_some_and(|v| v == "2.0"));
    let responds = env.result.is_some() || env.error.is_some();
    if env.method.is_none() && responds {
        let id = env.id.filter(|_| !env.id_twice).and_then(Id::from_raw);
        let exact = version_ok
            && !env.duplicate
            && !env.id_twice
            && env.result.is_some() != env.error.is_some();
        return if exact { Message::Response { id } } else { Message::BadResponse { id } };
    }
    let Some(id_raw) = env.id else {
        return match env.method {
            Some(Some(method)) if version_ok && !env.duplicate && !responds => {
                Message::Notification { method, params: env.params }
            }
            _ => Message::BadNotification,
        };
    };
    if env.duplicate || env.id_twice {
        // An id named once is still echoed, so the client can match the error to its request.
        let id = if env.id_twice { None } else { Id::from_raw(id_raw) };
        return Message::Invalid { id, error: ErrorObject::invalid_request() };
    }
    let Some(method) = env.method else {
        return Message::Invalid {
            id: Id::from_raw(id_raw),
            error: ErrorObject::invalid_request(),
        };
    };
    let id = Id::from_raw(id_raw);
    match (id, method) {
        (Some(id), Some(method)) if version_ok && !responds => {
            Message::Request { id, method, params: env.params }
        }
        (id, _) => Message::Invalid { id, error: ErrorObject::invalid_request() },
    }
}

/// How a reply names a request whose id could not be read (text that is not JSON, an id that
/// is no string or integer, a refused batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnreadId {
    /// `"id":null`, as JSON-RPC 2.0 says: MCP up to 2025-06-18 requires an `id`, and null is
    /// its only form there; also where no revision is known yet.
    #[default]
    Null,
    /// No `id` member: from MCP 2025-11-25 on an error's `id` is optional and, when present, a
    /// string or an integer, so a null one fails the schema (and a client may drop the reply).
    Omitted,
}

/// Writes one response object and `end`, which closes it: `}` in a batch, `}\n` for a line.
/// Pieces are written directly: no formatting machinery on the path every reply takes.
pub fn write_response(
    w: &mut dyn Write,
    id: Option<&Id>,
    reply: &Reply,
    end: &[u8],
) -> io::Result<()> {
    write_response_as(w, id, UnreadId::Null, reply, end)
}

/// [`write_response`], with an id that could not be read (`id` `None`) written as `unread`
/// says.
pub fn write_response_as(
    w: &mut dyn Write,
    id: Option<&Id>,
    unread: UnreadId,
    reply: &Reply,
    end: &[u8],
) -> io::Result<()> {
    let member: &[u8] = if reply.is_ok() { br#","result":"# } else { br#","error":"# };
    match (id, unread) {
        (Some(id), _) => {
            w.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
            w.write_all(id.as_json().as_bytes())?;
        }
        (None, UnreadId::Null) => w.write_all(br#"{"jsonrpc":"2.0","id":null"#)?,
        (None, UnreadId::Omitted) => w.write_all(br#"{"jsonrpc":"2.0""#)?,
    }
    w.write_all(member)?;
    match reply {
        Ok(Payload::Value(result)) => serde_json::to_writer(&mut *w, result)?,
        Ok(Payload::Json(result)) => w.write_all(result)?,
        Err(error) => error.write(w)?,
    }
    w.write_all(end)
}

/// Writes one notification from the server, newline-terminated.
pub fn write_notification(w: &mut dyn Write, method: &str, params: &Value) -> io::Result<()> {
    write_notification_with(w, method, &mut |w| {
        serde_json::to_writer(w, params).map_err(io::Error::from)
    })
}

/// Writes one notification whose `params` are written by `params`, newline-terminated.
pub fn write_notification_with(
    w: &mut dyn Write,
    method: &str,
    params: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    w.write_all(br#"{"jsonrpc":"2.0","method":"#)?;
    serde_json::to_writer(&mut *w, method)?;
    w.write_all(br#","params":"#)?;
    params(w)?;
    w.write_all(b"}\n")
}

/// A JSON-RPC response carrying `error`, to `id` (`null` when there is none), as the server
/// writes its own: members in the conventional order, the id as its raw text. No newline.
///
/// ```
/// use baremcp::{ErrorObject, Id};
/// use baremcp::__private::error_response;
///
/// let id = Id::from_raw(r#""\u0061""#);
/// assert_eq!(
///     error_response(id.as_ref(), ErrorObject::invalid_request()),
///     r#"{"jsonrpc":"2.0","id":"\u0061","error":{"code":-32600,"message":"invalid request"}}"#
/// );
/// ```
pub fn error_response(id: Option<&Id>, error: ErrorObject) -> String {
    let mut out = Vec::new();
    // Writing to a `Vec` cannot fail, and what is written is JSON, so UTF-8.
    let _ = write_response(&mut out, id, &Err(error), b"}");
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::error_code::ErrorCode;

    fn kind(line: &str) -> String {
        match parse_line(line) {
            Frame::Single(Message::Request { id, method, .. }) => format!("request {id} {method}"),
            Frame::Single(Message::Notification { method, .. }) => format!("notification {method}"),
            Frame::Single(Message::Response { id }) => format!("response {id:?}"),
            Frame::Single(Message::BadNotification) => "bad notification".into(),
            Frame::Single(Message::BadResponse { id }) => format!("bad response {id:?}"),
            Frame::Single(Message::Invalid { id, error }) => {
                format!("invalid {} {}", id.map_or("null".into(), |i| i.to_string()), error.code)
            }
            Frame::Batch(items) => format!("batch {}", items.len()),
        }
    }

    #[test]
    fn classifies_envelopes() {
        // `n` levels of objects in arrays: `[{"k":[{"k":...}]}]`.
        let deep = |n: usize| format!("{}{{}}{}", r#"[{"k":"#.repeat(n / 2), "}]".repeat(n / 2));
        let cases: &[(&str, &str)] = &[
            (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, "request 1 ping"),
            (r#"{"jsonrpc":"2.0","id":"a\"b","method":"p\u0069ng"}"#, r#"request "a\"b" ping"#),
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"x"}"#,
                "request 18446744073709551615 x",
            ),
            (
                r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"x"}"#,
                "request -9223372036854775808 x",
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "notification notifications/initialized",
            ),
            (r#"{"jsonrpc":"2.0","method":7}"#, "bad notification"),
            (r#"{"jsonrpc":"1.0","method":"x"}"#, "bad notification"),
            (r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, "invalid null -32600"),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, "invalid null -32600"),
            (r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#, "invalid null -32600"),
            (r#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#, "invalid null -32600"),
            (r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#, "invalid null -32600"),
            (r#"{"jsonrpc":"2.0","id":3,"method":5}"#, "invalid 3 -32600"),
            (r#"{"jsonrpc":"2.0","id":3,"method":"\ud800"}"#, "invalid 3 -32600"),
            (r#"{"id":3,"method":"x"}"#, "invalid 3 -32600"),
            (r#"{"jsonrpc":"2.0","id":3,"method":"x","result":{}}"#, "invalid 3 -32600"),
            (r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#, "invalid null -32600"),
            (r#"{"jsonrpc":"2.0","id":4,"result":{}}"#, r#"response Some(Id("4"))"#),
            (r#"{"foo":"bar"}"#, "bad notification"),
            ("{}", "bad notification"),
            (r#"{"jsonrpc":"2.0","method":"a","method":"b"}"#, "bad notification"),
            (r#"{"jsonrpc":"2.0","method":"a","params":{},"params":{}}"#, "bad notification"),
            (r#"{"jsonrpc":"2.0","method":"a","result":{}}"#, "bad notification"),
            (r#"{"jsonrpc":"2.0","result":{},"result":{}}"#, "bad response None"),
            (
                r#"{"jsonrpc":"2.0","id":4,"result":{},"result":{}}"#,
                r#"bad response Some(Id("4"))"#,
            ),
            (r#"{"jsonrpc":"2.0","id":4,"result":{},"error":{}}"#, r#"bad response Some(Id("4"))"#),
            (r#"{"jsonrpc":"1.0","id":4,"result":{}}"#, r#"bad response Some(Id("4"))"#),
            (r#"{"id":4,"error":{}}"#, r#"bad response Some(Id("4"))"#),
            (r#"{"jsonrpc":"2.0","id":4,"id":5,"result":{}}"#, "bad response None"),
            (r#"{"jsonrpc":"2.0","result":{}}"#, "response None"),
            ("42", "invalid null -32600"),
            ("42 x", "invalid null -32700"),
            (r#"{"jsonrpc":"2.0","id":1,"method":"x""#, "invalid null -32700"),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"x","params":{"\ud800":1,"a":{"\udc00":[]}}}"#,
                "request 3 x",
            ),
            (r#"{"jsonrpc":"2.0","id":3,"\ud800":1,"method":"x"}"#, "request 3 x"),
            (
                &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"x","params":{}}}"#, deep(127)),
                "request 3 x",
            ),
            (
                &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"x","params":{}}}"#, deep(128)),
                "invalid 3 -32600",
            ),
            (
                &format!(r#"{{"jsonrpc":"2.0","method":"x","params":{},"id":"z"}}"#, deep(500)),
                r#"invalid "z" -32600"#,
            ),
            (
                &format!(r#"{{"jsonrpc":"2.0","method":"x","params":{}}}"#, deep(500)),
                "bad notification",
            ),
            (
                &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"x","params":{}"#, deep(500)),
                "invalid null -32700",
            ),
            ("[1, 2]", "batch 2"),
            ("[1, 2", "invalid null -32700"),
        ];
        for &(line, want) in cases {
            assert_eq!(kind(line), want, "{line}");
        }
    }

    /// A line that starts with `{"jsonrpc":"2.0",` takes a shortcut; one space before it
    /// takes the general path. Both must classify every line alike, and find a parse error
    /// exactly where serde_json does.
    #[test]
    fn a_message_that_would_take_far_more_memory_than_its_size_is_refused_with_its_id() {
        let call = |arguments: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"t","arguments":{{"rows":{arguments}}}}}}}"#
            )
        };
        let refused = |line: &str| match parse_message(line) {
            Message::Invalid { id: Some(id), error } => {
                assert_eq!(id.to_string(), "7");
                assert!(error.message.contains("too large once decoded"), "{}", error.message);
                true
            }
            Message::Request { .. } => false,
            _ => panic!("neither a request nor refused"),
        };
        // One-member objects: 7 bytes each that decode into about 670 (a map node each).
        let objects = |n: usize| format!("[{}{{\"\":0}}]", r#"{"":0},"#.repeat(n - 1));
        assert!(refused(&call(&objects(600_000))), "4 MB that decode into 400 MB");
        assert!(!refused(&call(&objects(20_000))), "a small message is never refused");
        // Arrays in arrays: 2 bytes a level that take about 180.
        let nested = |levels: usize| format!("{}0{}", "[".repeat(levels), "]".repeat(levels));
        let stacks = |n: usize| format!("[{}]", vec![nested(100); n].join(","));
        assert!(refused(&call(&stacks(16_000))), "3.2 MB that decode into about 300 MB");
        assert!(!refused(&call(&stacks(4_000))), "0.8 MB that decode into about 75 MB");
        // What real data looks like is taken up to megabytes: numbers, rows of a table, text.
        assert!(!refused(&call(&format!("[{}0]", "0,".repeat(2_000_000)))));
        let row = r#"{"id":123,"name":"abcdefgh","v":1.5},"#;
        assert!(!refused(&call(&format!("[{}0]", row.repeat(200_000)))));
        assert!(!refused(&call(&format!("\"{}\"", "x".repeat(8 << 20)))));
        // A notification is dropped, as one nested too deep is.
        let note = r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a":ROWS}}"#;
        let heavy = note.replace("ROWS", &objects(600_000));
        assert!(matches!(parse_message(&heavy), Message::BadNotification));
    }

    #[test]
    fn the_common_head_is_only_a_shortcut() {
        let valid = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":{}}"#,
        ];
        let cases = [
            r#"{"jsonrpc":"2.0",}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0", "id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","jsonrpc":"1.0"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
        ];
        let texts = crate::wire::scanner::tests::random_texts(&valid, 20_000);
        for line in cases.iter().copied().chain(texts.iter().map(String::as_str)) {
            let general = kind(&format!(" {line}"));
            assert_eq!(kind(line), general, "{line:?}");
            let unparseable = matches!(parse_message(line), Message::Invalid { error, .. } if error.code == ErrorCode::PARSE_ERROR);
            assert_eq!(unparseable, serde_json::from_str::<Value>(line).is_err(), "{line:?}");
        }
    }

    #[test]
    fn reads_the_id_in_the_head_of_a_cut_line() {
        let head = |text: &str| Id::in_head(text.as_bytes()).map(|id| id.to_string());
        assert_eq!(
            head(r#"{"jsonrpc":"2.0","id":"a\"b","method":"x","params":{"p":"xx"#),
            Some(r#""a\"b""#.into())
        );
        assert_eq!(
            head(r#"{"jsonrpc":"2.0","params":{"p":[1,{"id":2}]},"id":7,"#),
            Some("7".into())
        );
        // Cut inside the id, named twice, not an id, or not there: none is guessed.
        for cut in [
            r#"{"id":12"#,
            r#"{"id":"ab"#,
            r#"{"id":1,"id":2,"#,
            r#"{"id":null,"#,
            r#"{"method":"x","p"#,
            "[1,",
        ] {
            assert_eq!(head(cut), None, "{cut}");
        }
        let mut bytes = r#"{"id":"é","p":"é"#.as_bytes().to_vec();
        bytes.pop();
        assert_eq!(Id::in_head(&bytes).map(|id| id.to_string()), Some(r#""é""#.into()));
    }

    #[test]
    fn a_response_is_told_by_its_head() {
        let responds = |text: &str| response_in_head(text.as_bytes());
        assert!(responds(r#"{"jsonrpc":"2.0","id":"baremcp-1","result":{"content":"xx"#));
        assert!(responds(r#"{"error":{"code":-1,"message":"xx"#));
        assert!(responds(r#"{"id":5,"result":{"#));
        // A method, or no result or error yet, is not a response (a request is refused).
        assert!(!responds(r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{"#));
        assert!(!responds(r#"{"jsonrpc":"2.0","id":1,"params":{"result":{"#));
        assert!(!responds(r#"{"jsonrpc":"2.0","id":1,"resu"#));
        assert!(!responds(r#"[{"id":1,"result":{"#));
    }

    #[test]
    fn ids_compare_and_echo_by_their_text() {
        let id = |raw| Id::from_raw(raw).unwrap();
        assert_eq!(id(r#""a""#), id(r#""a""#));
        assert_ne!(id(r#""a""#), id(r#""\u0061""#));
        assert_ne!(id(r#""\ud800""#), id(r#""\udc00""#));
        assert_ne!(id(r#""1""#), id("1"));
        assert_eq!(id(r#""\ud800""#).as_json(), r#""\ud800""#);
    }
}
