//! JSON-RPC errors: every code the server sends, named once, with when it is sent, and the
//! error object that carries one.

use std::fmt;
use std::io::{self, Write};

use serde_json::{Value, json};

use crate::wire::scanner::MAX_DECODED_BYTES;

/// The code of a JSON-RPC error, written as a JSON integer.
///
/// The server sends only the codes named here. A code a client sends, in its error response
/// to the server's own request ([`crate::ClientError::Rejected`]), may be any integer, so
/// the type holds any `i64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// -32700: the line is not JSON, or not UTF-8; replied to without an id (`UnreadId`).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: JSON that is not a valid request (a wrong `jsonrpc`, a member named twice, an
    /// id that is no string or integer, a refused batch), a line past the size limit or
    /// nested too deep, a request refused while too much waits on the client; over HTTP, the
    /// body of every refusal made before a message is read (limits, headers, authentication).
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: a method the server does not serve, or not in the request's era, or whose
    /// capability is not declared; over HTTP a 2026-07-28 request gets it with status 404.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: parameters the method cannot take, an unknown tool, prompt or task; in
    /// 2026-07-28 also a resource that does not exist.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: the server failed (a panicking handler, a task that cannot start).
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32000, HTTP: the server holds as many connections, or legacy sessions, as it may;
    /// sent with status 503.
    pub const AT_CAPACITY: ErrorCode = ErrorCode(-32000);
    /// -32001, HTTP: `Mcp-Session-Id` names no live legacy session (unknown, expired or
    /// deleted); sent with status 404, so the client initializes again.
    pub const SESSION_NOT_FOUND: ErrorCode = ErrorCode(-32001);
    /// -32002, MCP up to 2025-11-25: the resource does not exist (2026-07-28 sends
    /// [`ErrorCode::INVALID_PARAMS`] instead).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// -32020, MCP 2026-07-28 over HTTP: a header that repeats the body (`Mcp-Method`,
    /// `Mcp-Name`, `Mcp-Param-{Name}`) is missing or disagrees with it; sent with status 400.
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// -32021, MCP 2026-07-28: the request needs a client capability (or extension) it did
    /// not declare; over HTTP sent with status 400.
    pub const MISSING_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// -32022, MCP 2026-07-28: the request names a protocol version the server does not
    /// speak; over HTTP sent with status 400.
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

/// The integer, as it is written on the wire.
impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// A JSON integer, as the `code` member of an error object is.
impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.0)
    }
}

/// A JSON-RPC error: a code, a lowercase message without a trailing period, optional data.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorObject {
    /// The JSON-RPC error code, such as [`ErrorCode::INVALID_PARAMS`].
    pub code: ErrorCode,
    /// What went wrong, lowercase, without a trailing period.
    pub message: String,
    /// More about it, for a program to read.
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: None }
    }

    /// The same error with `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32602 with `message`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// -32600.
    pub fn invalid_request() -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, "invalid request")
    }

    /// -32601, with the method as data.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorCode::METHOD_NOT_FOUND, "method not found").with_data(json!(method))
    }

    /// A line longer than the limit, refused unread.
    pub fn too_large() -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, "message too large")
    }

    /// A request read while another waits on the client, past the bound on what may wait.
    pub fn busy() -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            "server busy: a request is waiting on the client, send this again after it",
        )
    }

    /// A batch whose replies so far reached `max` bytes: its remaining requests are not run.
    pub fn batch_reply_too_large(max: usize) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, "batch reply too large")
            .with_data(json!({ "maxBytes": max }))
    }

    /// Valid JSON nested deeper than the server reads (serde_json's limit too).
    pub fn too_deep() -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, "message nests deeper than 128 levels")
    }

    /// A message whose values, decoded, would take more than [`MAX_DECODED_BYTES`].
    pub(crate) fn too_heavy() -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            format!(
                "message too large once decoded: its values would take more than \
                 {MAX_DECODED_BYTES} bytes of memory"
            ),
        )
    }

    /// Text that is not JSON (or not UTF-8).
    pub fn parse_error() -> Self {
        Self::new(ErrorCode::PARSE_ERROR, "parse error")
    }

    /// -32603.
    pub fn internal() -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, "internal error")
    }

    /// Writes `{"code","message","data"?}` in that conventional order.
    pub(crate) fn write(&self, w: &mut dyn Write) -> io::Result<()> {
        w.write_all(br#"{"code":"#)?;
        serde_json::to_writer(&mut *w, &self.code)?;
        w.write_all(br#","message":"#)?;
        serde_json::to_writer(&mut *w, &self.message)?;
        if let Some(data) = &self.data {
            w.write_all(br#","data":"#)?;
            serde_json::to_writer(&mut *w, data)?;
        }
        w.write_all(b"}")
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_written_as_its_integer() {
        let code = ErrorCode::UNSUPPORTED_PROTOCOL_VERSION;
        assert_eq!(code.to_string(), "-32022");
        assert_eq!(serde_json::to_string(&code).unwrap(), "-32022");
        assert_eq!(serde_json::json!({ "code": code }), serde_json::json!({ "code": -32022 }));
    }
}
